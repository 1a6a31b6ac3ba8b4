//! What the app lends the memory: an `Embedder` (text to vector, for the vector channel and the
//! fact reader) and a `Writer` (a chat model for the background queue), and what the writer is
//! lent for. Both fail with [`MemoryError::ModelUnavailable`] or [`MemoryError::ModelFailed`].

use crate::MemoryError;

/// Turns text into a unit-length vector. Implemented by local models (see `cairn-embed`).
pub trait Embedder: Send + Sync {
    /// Recorded with every vector, so vectors of another model are never compared.
    fn model(&self) -> &str;
    fn dim(&self) -> usize;
    fn embed(&self, text: &str) -> Result<Vec<f32>, MemoryError>;
    /// A question's embedding, for models trained to embed questions and passages differently.
    fn embed_query(&self, query: &str) -> Result<Vec<f32>, MemoryError> {
        self.embed(query)
    }
    /// The cosine similarity of unrelated texts under this model (near 0 for most; e5's sit near
    /// 0.8). Similarities are rescaled from it to 0, so recall's and the fact reader's
    /// thresholds mean the same under every model.
    fn unrelated_similarity(&self) -> f32 {
        0.0
    }
}

/// A model the background queue asks to write (implemented over a chat model by the app).
pub trait Writer: Send + Sync {
    /// The model's reply to `instructions` (its system prompt) about `text`, at most
    /// `max_tokens` long; `Err` when it could not be asked (the queue tries again later).
    fn write(&self, instructions: &str, text: &str, max_tokens: u32)
        -> Result<String, MemoryError>;
}

/// What the background model writes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WriterUses {
    /// Trace summaries.
    pub summaries: bool,
    /// Learned policies, in its own words.
    pub policies: bool,
}

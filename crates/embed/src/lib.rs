//! Local sentence embeddings with all-MiniLM-L6-v2: a BERT encoder (six layers, 384 dimensions)
//! run in plain Rust over `matrixmultiply` (queries, and every input where the CPU has AVX-512
//! VNNI, over 16-bit integer kernels), its WordPiece
//! tokenizer, mean pooling and L2 normalisation. Loads `model.safetensors` and `vocab.txt` from a
//! folder; nothing is downloaded.

mod bert;
mod few_rows;
mod idle;
mod maths;
mod vnni;
mod wordpiece;

use std::path::{Path, PathBuf};

pub use bert::{Bert, Precision};
pub use idle::{IdleMiniLm, DIMENSIONS};
pub use wordpiece::WordPiece;

/// The model's name as recorded with every vector.
pub const MODEL_NAME: &str = "all-MiniLM-L6-v2";

/// Longest input, in tokens (the model was trained with 256).
const MAX_TOKENS: usize = 256;

/// Why the embedder could not load or run.
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: not an all-MiniLM-L6-v2 model: {message}")]
    BadModel { path: PathBuf, message: String },
}

/// all-MiniLM-L6-v2, loaded and ready.
pub struct MiniLm {
    tokenizer: WordPiece,
    bert: Bert,
}

impl MiniLm {
    /// Loads the model from a folder holding `model.safetensors` and `vocab.txt`.
    pub fn load(dir: &Path) -> Result<Self, EmbedError> {
        let vocab_path = dir.join("vocab.txt");
        let vocab = std::fs::read_to_string(&vocab_path).map_err(|source| EmbedError::Io {
            path: vocab_path.clone(),
            source,
        })?;
        let weights_path = dir.join("model.safetensors");
        let weights = std::fs::read(&weights_path).map_err(|source| EmbedError::Io {
            path: weights_path.clone(),
            source,
        })?;
        let bert = Bert::from_safetensors(&weights).map_err(|message| EmbedError::BadModel {
            path: weights_path,
            message,
        })?;
        let tokenizer = WordPiece::new(&vocab).map_err(|message| EmbedError::BadModel {
            path: vocab_path,
            message,
        })?;
        Ok(Self { tokenizer, bert })
    }

    /// The unit-length embedding of `text`.
    pub fn embed(&self, text: &str) -> Vec<f32> {
        self.embed_with(text, Precision::Fast)
    }

    /// [`MiniLm::embed`] at a chosen precision: `Exact` is what the fast path is measured against.
    pub fn embed_with(&self, text: &str, precision: Precision) -> Vec<f32> {
        let ids = self.tokenizer.encode(text, MAX_TOKENS);
        self.bert.embed(&ids, precision)
    }
}

impl cairn_memory::Embedder for MiniLm {
    fn model(&self) -> &str {
        MODEL_NAME
    }

    fn dim(&self) -> usize {
        self.bert.hidden()
    }

    fn embed(&self, text: &str) -> Result<Vec<f32>, cairn_memory::MemoryError> {
        Ok(MiniLm::embed(self, text))
    }
}

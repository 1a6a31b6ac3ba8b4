//! Model providers. A [`Provider`] has one streaming method: a [`ChatRequest`] in, a channel of
//! [`StreamEvent`]s out. Errors say what the caller does next ([`ProviderError::retry_after`]);
//! connection failures are retried with backoff before the first byte, and a stream that stops
//! sending is cut by a watchdog instead of being waited on forever.

mod anthropic;
mod error;
pub mod local;
mod openai;
pub mod toolcall;
mod transport;
mod types;

pub use anthropic::Anthropic;
pub use error::ProviderError;
pub use openai::OpenAiCompatible;
pub use types::{
    ChatRequest, Completion, FinishReason, Image, Message, Progress, Role, StreamEvent, ToolCall,
    ToolChoice, ToolSpec, Usage,
};

use tokio::sync::mpsc;

/// A model server.
pub trait Provider: Send + Sync {
    /// Starts one completion; events arrive on the channel until `Done` or an error.
    fn stream(&self, request: ChatRequest) -> mpsc::Receiver<Result<StreamEvent, ProviderError>>;

    /// Whether the model is one of Cairn's own, run on this device (small: the agent offers it
    /// a compact set of tools).
    fn on_device(&self) -> bool {
        false
    }
}

/// Drains a stream into a whole completion (for callers that do not render tokens as they come).
pub async fn collect(
    mut events: mpsc::Receiver<Result<StreamEvent, ProviderError>>,
) -> Result<Completion, ProviderError> {
    let mut completion = Completion::default();
    while let Some(event) = events.recv().await {
        if completion.apply(event?) {
            return Ok(completion);
        }
    }
    Err(ProviderError::Network(
        "the stream ended without finishing".into(),
    ))
}

//! What can go wrong talking to a language server. Each variant says what happens next: the tool
//! answers the model with it, and a server that exited is started again on the next call.

use std::time::Duration;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LspError {
    /// The command could not be started: the next call tries again.
    #[error("cannot start `{command}`: {message}")]
    Spawn { command: String, message: String },
    /// The process ended (crashed, or closed its output): started again on the next call.
    #[error("the server exited{0}")]
    Exited(String),
    /// No answer in time: the request is cancelled; the server is kept (it may be indexing).
    #[error("no answer within {}s", .0.as_secs())]
    Timeout(Duration),
    /// The server answered the request with an error.
    #[error("{message} (code {code})")]
    Rpc { code: i64, message: String },
    /// The server answered something this client cannot read.
    #[error("unexpected answer: {0}")]
    BadAnswer(String),
    /// Writing to the server failed (it is gone).
    #[error("cannot write to the server: {0}")]
    Io(String),
}

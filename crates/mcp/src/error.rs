//! Why an MCP server or one of its calls failed; every text is what the model (or Settings) is
//! shown, and says whether the server may come back.

/// A failure of an MCP server or of one call to it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The server did not start or did not complete the handshake (the hub tries again later).
    #[error("{0}")]
    Start(String),
    /// The server answered the call with a protocol error (the server stays up).
    #[error("{0}")]
    Call(String),
    /// The connection is gone (the server exited or the stream closed): the next call restarts
    /// the server.
    #[error("{0}")]
    Closed(String),
    /// The memory behind Cairn's own memory server could not do what a tool asked (the call
    /// answers with this sentence as a tool error; the server stays up).
    #[error("{0}")]
    Memory(String),
}

//! The small surface Cairn needs of an MCP session: its tools, a call, and whether it is still
//! alive. `rmcp_client` implements it with the official SDK; tests may implement it by hand.

use cairn_tools::BoxFuture;
use serde_json::Value;

use crate::Error;

/// One tool as its server lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct RemoteTool {
    pub name: String,
    pub description: String,
    /// The JSON schema of its arguments.
    pub input_schema: Value,
    /// `annotations.readOnlyHint`: the server says the tool changes nothing, so it runs without
    /// asking once the person has let one call of that server run.
    pub read_only: bool,
}

/// A started MCP session.
pub trait Connection: Send + Sync {
    /// The tools the server listed when it started.
    fn tools(&self) -> &[RemoteTool];
    /// The server's `instructions`, if it gave any.
    fn instructions(&self) -> Option<&str>;
    /// `tools/call`: the result as the protocol's JSON (`content`, `isError`, …).
    fn call(&self, tool: &str, arguments: Value) -> BoxFuture<'_, Result<Value, Error>>;
    /// Whether the connection has gone (the server exited).
    fn is_closed(&self) -> bool;
    /// The last lines the server wrote on stderr (empty for HTTP servers).
    fn stderr_tail(&self) -> String;
}

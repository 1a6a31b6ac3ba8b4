//! The agent's MCP client: the servers of `[mcp.servers.<name>]`, started when a session first
//! needs tools (waiting at most `mcp_wait_ms` for them), each server's tools offered to the model
//! as `mcp__<server>__<tool>` through [`McpHub`], a [`cairn_tools::ToolSource`]. The official SDK
//! (`rmcp`) stays behind [`Connection`]: the hub only knows how to list and call. The other way
//! round, [`serve_stdio`] offers Cairn's memory as MCP tools (`cairn mcp`). [`connect`] reaches one
//! server directly (`cairn mcp connect`).

mod connection;
mod error;
mod hub;
mod names;
mod remote;
mod render;
mod rmcp_client;
mod server;
mod sse;
mod tool;

pub use connection::{Connection, RemoteTool};
pub use error::Error;
pub use hub::{HubTools, McpHub, ServerState, ServerStatus, MCP_WAIT, RETRY_AFTER};
pub use names::exposed_names;
pub use render::render_result;
pub use rmcp_client::connect;
pub use server::{
    http_service, serve_stdio, session_count, McpSessions, MemoryBackend, MemoryServer,
    REMEMBER_TOOL, RESUME_TOOL, SEARCH_TOOL,
};

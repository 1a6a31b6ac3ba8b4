//! The agent's `lsp` tool: the language servers configured in `[lsp]` (or the common ones found on
//! the PATH), each started on first use in the project root and kept for the process (`hub`),
//! spoken to over stdio (`rpc`), with every file synced from disk before a request (`server`);
//! positions and symbol names (`text`); the six actions and their texts (`tool`).

mod error;
mod hub;
mod rpc;
mod server;
mod text;
mod tool;

pub use error::LspError;
pub use hub::LspHub;
pub use tool::Lsp;

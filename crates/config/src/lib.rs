//! Cairn's data home and configuration: where files live (`home`); the config file as written
//! (`raw`) read by `resolve` into a [`Config`] (`file`), its errors located by line (`locate`); the
//! `runtime.json` that tells the CLI and hooks where the running API is (`runtime`); and the login
//! entry that starts the app (`autostart`).

mod agents;
mod atomic;
pub mod autostart;
mod edit;
mod error;
mod errors;
mod file;
mod home;
mod locate;
mod lsp;
mod mcp;
mod provider;
mod raw;
mod redact;
mod resolve;
mod runtime;
mod secret;

pub use agents::AgentProfile;
pub use atomic::{write_atomically, write_private_atomically, Access};
pub use cairn_protocol::settings::{Language, LaunchMode, LogLevel, ProviderKind, Theme};
pub use edit::{edit_config_text, update_config_file, ConfigEdit, EditValue};
pub use error::ConfigError;
pub use file::{
    AgentConfig, ApiAgent, Config, MemoryEmbedder, SourceConfig, VoiceConfig, DEFAULT_PET_SHORTCUT,
};
pub use home::Home;
pub use lsp::{default_lsp_servers, LspConfig, LspServerConfig, DEFAULT_LSP_TIMEOUT};
pub use mcp::{McpServerConfig, McpTransport, DEFAULT_STARTUP_TIMEOUT, DEFAULT_TOOL_TIMEOUT};
pub use provider::{ProviderConfig, BUILTIN_LOCAL_PROVIDER};
pub use redact::redact_config_text;
pub use runtime::{read_runtime, remove_runtime_if_ours, write_runtime};
pub use secret::Secret;

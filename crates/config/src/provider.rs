//! `[providers.<name>]` as resolved: a model provider's dialect, address, key, models and how many
//! requests it answers at once; and the provider that needs no table, Cairn's own.

pub(crate) use cairn_protocol::settings::ProviderKind;

use crate::secret::Secret;

/// A model provider as configured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderConfig {
    pub kind: ProviderKind,
    pub base_url: String,
    pub api_key: Option<Secret>,
    pub models: Vec<String>,
    /// How many requests its server answers at once (Ollama's `OLLAMA_NUM_PARALLEL`,
    /// llama.cpp's `--parallel`); `None`: as many as are sent. Subagents and team members share
    /// what the conversation itself does not use.
    pub parallel: Option<u32>,
}

/// The provider that needs no configuring: Cairn's own models, run on this device
/// (`local/qwen2.5-coder-1.5b`). A `[providers.local]` table of another kind replaces it.
pub const BUILTIN_LOCAL_PROVIDER: &str = "local";

//! `[providers.<name>]` as resolved: a model provider's dialect, address, key, models and how many
//! requests it answers at once; and the provider that needs no table, Cairn's own.

use serde::Deserialize;

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

/// The wire dialect a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProviderKind {
    /// OpenAI-compatible chat completions.
    Openai,
    Anthropic,
    Ollama,
    /// A GGUF model run inside Cairn (`models` are catalogue names or `.gguf` paths).
    Local,
}

/// The provider that needs no configuring: Cairn's own models, run on this device
/// (`local/qwen2.5-coder-1.5b`). A `[providers.local]` table of another kind replaces it.
pub const BUILTIN_LOCAL_PROVIDER: &str = "local";

impl ProviderKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Openai => "openai",
            Self::Anthropic => "anthropic",
            Self::Ollama => "ollama",
            Self::Local => "local",
        }
    }

    pub(crate) fn default_base_url(self) -> &'static str {
        match self {
            Self::Openai => "https://api.openai.com/v1",
            Self::Anthropic => "https://api.anthropic.com",
            Self::Ollama => "http://127.0.0.1:11434",
            Self::Local => "",
        }
    }
}

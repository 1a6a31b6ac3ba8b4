//! The config file (`config.toml`): the raw shape as written (every field optional, unknown keys
//! refused), `${ENV_NAME}` expansion, and validation into a resolved [`Config`]. Every error names the
//! file line and the key.

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use crate::ConfigError;

/// The global shortcut that shows and hides the pet when the config names none.
pub const DEFAULT_PET_SHORTCUT: &str = "CommandOrControl+Shift+Space";

/// A resolved configuration: defaults applied, `${ENV}` references expanded, everything validated.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Port of the local API; `None` picks a free port each run.
    pub api_port: Option<u16>,
    /// `[mcp.servers.<name>]`, by name.
    pub mcp_servers: BTreeMap<String, crate::McpServerConfig>,
    /// `[agents.<name>]`: the agents `ask_agent` may hand a task to, by name.
    pub agent_profiles: BTreeMap<String, crate::AgentProfile>,
    /// `[lsp]`: the language servers of the `lsp` tool.
    pub lsp: crate::LspConfig,
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
    /// `[ui] language`: the desktop app's language, `en` (the default) or `zh-CN`.
    pub language: String,
    /// `[ui] launch`: which window the desktop app opens with.
    pub launch: LaunchMode,
    /// `[models] index`: the package index (PEP 691 simple API) Cairn's own models are installed
    /// from; PyPI when `None`.
    pub models_index: Option<String>,
}

/// `[ui] launch`: the pet alone, the workbench (the default), or whichever was in use last.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LaunchMode {
    Pet,
    #[default]
    Full,
    Last,
}

impl LaunchMode {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pet => "pet",
            Self::Full => "full",
            Self::Last => "last",
        }
    }
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
            MemoryEmbedder::Auto => self.language == "zh-CN" || written_in_cjk(),
            MemoryEmbedder::English => false,
            MemoryEmbedder::Multilingual => true,
        }
    }
}

/// The languages the desktop app speaks.
pub const UI_LANGUAGES: [&str; 2] = ["en", "zh-CN"];

/// `[ui] theme`: light, dark, or whatever the system uses (the default).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Theme {
    #[default]
    System,
    Light,
    Dark,
}

impl Theme {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::System => "system",
            Self::Light => "light",
            Self::Dark => "dark",
        }
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
            lsp: crate::LspConfig::default(),
            default_model: None,
            providers: BTreeMap::new(),
            pet_shortcut: DEFAULT_PET_SHORTCUT.to_owned(),
            log_level: LogLevel::default(),
            memory_summaries: false,
            memory_evolution: true,
            memory_model_policies: false,
            memory_embedder: MemoryEmbedder::Auto,
            agent: AgentConfig::default(),
            sources: BTreeMap::new(),
            voice: VoiceConfig::default(),
            auto_sync: true,
            theme: Theme::default(),
            language: "en".to_owned(),
            launch: LaunchMode::default(),
            models_index: None,
        }
    }
}

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

    fn default_base_url(self) -> &'static str {
        match self {
            Self::Openai => "https://api.openai.com/v1",
            Self::Anthropic => "https://api.anthropic.com",
            Self::Ollama => "http://127.0.0.1:11434",
            Self::Local => "",
        }
    }
}

/// How much the binaries log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogLevel {
    Error,
    Warn,
    #[default]
    Info,
    Debug,
    Trace,
}

impl LogLevel {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Error => "error",
            Self::Warn => "warn",
            Self::Info => "info",
            Self::Debug => "debug",
            Self::Trace => "trace",
        }
    }
}

/// A secret value (an API key). Its `Debug` output never shows the value, so it cannot reach a log by
/// accident.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// The value, for the one place that sends it (an HTTP header).
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(…)")
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    api: Option<RawApi>,
    agent: Option<RawAgent>,
    #[serde(default)]
    sources: BTreeMap<String, RawSource>,
    voice: Option<RawVoice>,
    sync: Option<RawSync>,
    #[serde(default)]
    providers: BTreeMap<String, RawProvider>,
    pet: Option<RawPet>,
    log: Option<RawLog>,
    memory: Option<RawMemory>,
    ui: Option<RawUi>,
    models: Option<RawModels>,
    mcp: Option<crate::mcp::RawMcp>,
    lsp: Option<crate::lsp::RawLsp>,
    #[serde(default)]
    agents: BTreeMap<String, crate::agents::RawProfile>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawModels {
    index: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawUi {
    theme: Option<Theme>,
    language: Option<Spanned<String>>,
    launch: Option<LaunchMode>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMemory {
    embedder: Option<MemoryEmbedder>,
    summaries: Option<bool>,
    evolution: Option<bool>,
    model_policies: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawApi {
    port: Option<u16>,
    #[serde(default)]
    keys: Vec<Spanned<String>>,
    #[serde(default)]
    agent_tools: Vec<String>,
    agent_yolo: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSync {
    auto: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawVoice {
    model: Option<String>,
    language: Option<String>,
    input: Option<String>,
    device: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSource {
    path: Option<String>,
    enabled: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAgent {
    model: Option<Spanned<String>>,
    yolo: Option<bool>,
    guard_folder: Option<bool>,
    workspace: Option<String>,
    bash_tool: Option<bool>,
    edit_tools: Option<bool>,
    ask_user_tool: Option<bool>,
    save_answer_tool: Option<bool>,
    fetch_content_tool: Option<bool>,
    unload_models: Option<bool>,
    search_memory_tool: Option<bool>,
    #[serde(default)]
    fetch_allow_hosts: Vec<String>,
    #[serde(default)]
    tools: Vec<toml::Value>,
    skills_dir: Option<String>,
    max_steps: Option<usize>,
    wall_seconds: Option<u64>,
    output_bytes: Option<u64>,
    completion_tokens: Option<u64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawProvider {
    kind: Option<ProviderKind>,
    base_url: Option<Spanned<String>>,
    api_key: Option<Spanned<String>>,
    #[serde(default)]
    models: Vec<String>,
    parallel: Option<u32>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPet {
    shortcut: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLog {
    level: Option<LogLevel>,
}

impl Config {
    /// Reads the config file at `path`. A missing file is the default config (`Ok(None)` is never
    /// returned for a file that exists).
    pub fn load(
        path: &Path,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<Self>, ConfigError> {
        match std::fs::read_to_string(path) {
            Ok(text) => Self::parse(&text, path, env).map(Some),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(ConfigError::io(path, e)),
        }
    }

    /// Parses config text; `path` only names the file in errors.
    pub fn parse(
        text: &str,
        path: &Path,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, ConfigError> {
        let at = Locator { text, path };
        let raw: RawConfig = toml::from_str(text)
            .map_err(|e| crate::errors::toml_error(text, path, e.message(), e.span()))?;

        let mut providers = BTreeMap::new();
        for (name, raw) in raw.providers {
            let kind = raw.kind.unwrap_or(ProviderKind::Openai);
            let base_url = match raw.base_url {
                Some(url) => {
                    let value = at.expand(&url, &format!("providers.{name}.base_url"), &env)?;
                    if !(value.starts_with("http://") || value.starts_with("https://")) {
                        return Err(at.error(
                            url.span(),
                            format!(
                                "`providers.{name}.base_url` must start with http:// or https://{}",
                                crate::errors::scheme_hint(&value)
                            ),
                        ));
                    }
                    value.trim_end_matches('/').to_owned()
                }
                None => kind.default_base_url().to_owned(),
            };
            let api_key = match raw.api_key {
                Some(key) => Some(Secret::new(at.expand(
                    &key,
                    &format!("providers.{name}.api_key"),
                    &env,
                )?)),
                None => None,
            };
            if raw.parallel == Some(0) {
                return Err(at.error_at_line(
                    at.line_of_key(&format!("providers.{name}")),
                    format!("`providers.{name}.parallel` must be at least 1"),
                ));
            }
            providers.insert(
                name,
                ProviderConfig {
                    kind,
                    base_url,
                    api_key,
                    models: raw.models,
                    parallel: raw.parallel,
                },
            );
        }

        let defaults = AgentConfig::default();
        let (model, agent) = match raw.agent {
            Some(a) => (
                a.model,
                AgentConfig {
                    yolo: a.yolo.unwrap_or(defaults.yolo),
                    guard_folder: a.guard_folder.unwrap_or(defaults.guard_folder),
                    workspace: a.workspace.filter(|w| !w.trim().is_empty()),
                    bash_tool: a.bash_tool.unwrap_or(defaults.bash_tool),
                    edit_tools: a.edit_tools.unwrap_or(defaults.edit_tools),
                    ask_user_tool: a.ask_user_tool.unwrap_or(defaults.ask_user_tool),
                    save_answer_tool: a.save_answer_tool.unwrap_or(defaults.save_answer_tool),
                    fetch_content_tool: a.fetch_content_tool.unwrap_or(defaults.fetch_content_tool),
                    unload_models: a.unload_models.unwrap_or(defaults.unload_models),
                    search_memory_tool: a.search_memory_tool.unwrap_or(defaults.search_memory_tool),
                    fetch_allow_hosts: a
                        .fetch_allow_hosts
                        .iter()
                        .map(|h| h.trim().to_lowercase())
                        .filter(|h| !h.is_empty())
                        .collect(),
                    tools: a.tools,
                    skills_dir: a.skills_dir,
                    max_steps: a.max_steps.unwrap_or(defaults.max_steps).max(1),
                    wall_seconds: a.wall_seconds,
                    output_bytes: a.output_bytes,
                    completion_tokens: a.completion_tokens,
                },
            ),
            None => (None, defaults),
        };
        let mut api_keys = Vec::new();
        for key in raw.api.iter().flat_map(|a| &a.keys) {
            let value = at.expand(key, "api.keys", &env)?;
            if value.trim().len() < 16 {
                return Err(at.error(
                    key.span(),
                    "`api.keys` entries must be at least 16 characters: a short key is guessable"
                        .to_owned(),
                ));
            }
            api_keys.push(Secret::new(value.trim()));
        }
        let mcp_servers = raw.mcp.unwrap_or_default().resolve(&at, &env)?;
        let agent_profiles = crate::agents::resolve(raw.agents, &at, &providers)?;
        let lsp = raw.lsp.unwrap_or_default().resolve(&at, &env)?;
        let default_model = match model {
            Some(model) => Some(at.model_ref(&model, "agent.model", &providers)?),
            None => None,
        };

        let pet_shortcut = match raw.pet.and_then(|p| p.shortcut) {
            Some(shortcut) if shortcut.get_ref().trim().is_empty() => {
                return Err(at.error(shortcut.span(), "`pet.shortcut` must not be empty".into()))
            }
            Some(shortcut) => shortcut.into_inner(),
            None => DEFAULT_PET_SHORTCUT.to_owned(),
        };

        let ui_language = match raw.ui.as_ref().and_then(|u| u.language.as_ref()) {
            None => "en".to_owned(),
            Some(code) => match UI_LANGUAGES
                .iter()
                .find(|l| l.eq_ignore_ascii_case(code.get_ref()))
            {
                Some(known) => (*known).to_owned(),
                None => {
                    return Err(at.error(
                        code.span(),
                        format!(
                            "`ui.language` must be one of {}, got {:?}",
                            UI_LANGUAGES.join(", "),
                            code.get_ref()
                        ),
                    ))
                }
            },
        };
        let models_index = match raw.models.and_then(|m| m.index) {
            Some(index) => {
                let url = index.get_ref().trim();
                if !(url.starts_with("https://") || url.starts_with("http://")) {
                    return Err(at.error(
                        index.span(),
                        format!(
                            "`models.index` must be an http(s) address{}",
                            crate::errors::scheme_hint(url)
                        ),
                    ));
                }
                Some(url.to_owned())
            }
            None => None,
        };
        Ok(Self {
            models_index,
            api_port: raw
                .api
                .as_ref()
                .and_then(|a| a.port)
                .filter(|port| *port != 0),
            api_keys,
            api_agent: raw
                .api
                .as_ref()
                .map_or_else(ApiAgent::default, |a| ApiAgent {
                    tools: a.agent_tools.clone(),
                    yolo: a.agent_yolo.unwrap_or(false),
                }),
            mcp_servers,
            agent_profiles,
            lsp,
            default_model,
            providers,
            pet_shortcut,
            log_level: raw.log.and_then(|l| l.level).unwrap_or_default(),
            memory_summaries: raw
                .memory
                .as_ref()
                .and_then(|m| m.summaries)
                .unwrap_or(false),
            memory_evolution: raw
                .memory
                .as_ref()
                .and_then(|m| m.evolution)
                .unwrap_or(true),
            memory_model_policies: raw
                .memory
                .as_ref()
                .and_then(|m| m.model_policies)
                .unwrap_or(false),
            memory_embedder: raw
                .memory
                .as_ref()
                .and_then(|m| m.embedder)
                .unwrap_or_default(),
            agent,
            auto_sync: raw.sync.and_then(|s| s.auto).unwrap_or(true),
            theme: raw.ui.as_ref().and_then(|u| u.theme).unwrap_or_default(),
            language: ui_language,
            launch: raw.ui.as_ref().and_then(|u| u.launch).unwrap_or_default(),
            voice: match raw.voice {
                Some(v) => {
                    let d = VoiceConfig::default();
                    VoiceConfig {
                        model: v.model.unwrap_or(d.model),
                        language: v.language.unwrap_or(d.language),
                        input: v.input.unwrap_or(d.input),
                        device: v.device,
                    }
                }
                None => VoiceConfig::default(),
            },
            sources: raw
                .sources
                .into_iter()
                .map(|(name, s)| {
                    (
                        name,
                        SourceConfig {
                            path: s.path,
                            enabled: s.enabled.unwrap_or(true),
                        },
                    )
                })
                .collect(),
        })
    }

    /// The default model as `provider/model`.
    pub fn default_model_name(&self) -> Option<String> {
        self.default_model
            .as_ref()
            .map(|(provider, model)| format!("{provider}/{model}"))
    }
}

/// Turns byte offsets in the config text into line-numbered errors.
pub(crate) struct Locator<'a> {
    text: &'a str,
    path: &'a Path,
}

impl Locator<'_> {
    fn line(&self, offset: usize) -> usize {
        crate::errors::line_at(self.text, offset)
    }

    /// The line of the table `[key]` (1 when it is written some other way).
    pub(crate) fn line_of_key(&self, key: &str) -> usize {
        let header = format!("[{key}]");
        self.text
            .find(&header)
            .map_or(1, |offset| self.line(offset))
    }

    pub(crate) fn error_at_line(&self, line: usize, message: String) -> ConfigError {
        ConfigError::Invalid {
            file: PathBuf::from(self.path),
            line,
            message,
        }
    }

    pub(crate) fn error(&self, span: Range<usize>, message: String) -> ConfigError {
        self.error_at_line(self.line(span.start), message)
    }

    /// Replaces each `${NAME}` with the environment variable's value; an unset variable is an error.
    pub(crate) fn expand(
        &self,
        value: &Spanned<String>,
        key: &str,
        env: &impl Fn(&str) -> Option<String>,
    ) -> Result<String, ConfigError> {
        let mut out = String::new();
        let mut rest = value.get_ref().as_str();
        while let Some(start) = rest.find("${") {
            out.push_str(&rest[..start]);
            let after = &rest[start + 2..];
            let Some(end) = after.find('}') else {
                return Err(self.error(
                    value.span(),
                    format!("`{key}` has an unclosed ${{…}} reference"),
                ));
            };
            let name = &after[..end];
            let valid_name =
                !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !valid_name {
                return Err(self.error(
                    value.span(),
                    format!("`{key}` has a ${{…}} reference that is not an environment variable name (letters, digits and _)"),
                ));
            }
            match env(name) {
                Some(v) => out.push_str(&v),
                None => {
                    return Err(self.error(
                        value.span(),
                        format!("`{key}` refers to ${{{name}}}, but the environment variable {name} is not set"),
                    ))
                }
            }
            rest = &after[end + 1..];
        }
        out.push_str(rest);
        Ok(out)
    }

    pub(crate) fn model_ref(
        &self,
        model: &Spanned<String>,
        key: &str,
        providers: &BTreeMap<String, ProviderConfig>,
    ) -> Result<(String, String), ConfigError> {
        let value = model.get_ref();
        let Some((provider, id)) = value
            .split_once('/')
            .filter(|(p, m)| !p.is_empty() && !m.is_empty())
        else {
            return Err(self.error(
                model.span(),
                format!(
                    "`{key}` must be written provider/model (e.g. openai/gpt-4o), got {value:?}"
                ),
            ));
        };
        if !providers.contains_key(provider) && provider != BUILTIN_LOCAL_PROVIDER {
            let known: Vec<&str> = providers.keys().map(String::as_str).collect();
            let known = if known.is_empty() {
                "no providers are configured; add a [providers.NAME] table".to_owned()
            } else {
                format!("configured providers: {}", known.join(", "))
            };
            return Err(self.error(
                model.span(),
                format!("`{key}` names provider {provider:?}, which is not configured ({known})"),
            ));
        }
        Ok((provider.to_owned(), id.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_env(_: &str) -> Option<String> {
        None
    }

    fn parse(text: &str) -> Result<Config, ConfigError> {
        Config::parse(text, Path::new("/home/ada/.cairn/config.toml"), no_env)
    }

    fn error_text(text: &str) -> String {
        match parse(text) {
            Ok(config) => format!("unexpectedly valid: {config:?}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn an_empty_file_is_the_default_config() -> Result<(), ConfigError> {
        let config = parse("")?;
        assert_eq!(config.api_port, None);
        assert_eq!(config.default_model, None);
        assert_eq!(config.pet_shortcut, DEFAULT_PET_SHORTCUT);
        assert_eq!(config.log_level, LogLevel::Info);
        assert_eq!(
            config,
            Config::default(),
            "no file and an empty file mean the same"
        );
        Ok(())
    }

    #[test]
    fn a_full_config_resolves_with_env_references() -> Result<(), ConfigError> {
        let text = r#"
[api]
port = 18990

[agent]
model = "local/qwen2.5"

[providers.local]
kind = "openai"
base_url = "http://127.0.0.1:${PORT}/v1/"
api_key = "${LOCAL_KEY}"
models = ["qwen2.5", "smollm2"]

[providers.claude]
kind = "anthropic"

[pet]
shortcut = "Alt+Space"

[log]
level = "debug"

[memory]
summaries = true
evolution = false
model_policies = true
embedder = "all-minilm-l6-v2"

[ui]
theme = "dark"
language = "zh-cn"
launch = "pet"
"#;
        let env = |name: &str| match name {
            "PORT" => Some("8080".to_owned()),
            "LOCAL_KEY" => Some("sk-local".to_owned()),
            _ => None,
        };
        let config = Config::parse(text, Path::new("c.toml"), env)?;
        assert_eq!(config.api_port, Some(18990));
        assert_eq!(
            config.default_model,
            Some(("local".to_owned(), "qwen2.5".to_owned()))
        );
        let local = &config.providers["local"];
        assert_eq!(local.base_url, "http://127.0.0.1:8080/v1");
        assert_eq!(local.api_key.as_ref().map(Secret::expose), Some("sk-local"));
        assert_eq!(local.models, vec!["qwen2.5", "smollm2"]);
        let claude = &config.providers["claude"];
        assert_eq!(claude.kind, ProviderKind::Anthropic);
        assert_eq!(claude.base_url, "https://api.anthropic.com");
        assert_eq!(config.pet_shortcut, "Alt+Space");
        assert_eq!(config.log_level, LogLevel::Debug);
        assert!(config.memory_summaries);
        assert!(!config.memory_evolution);
        assert!(config.memory_model_policies);
        assert_eq!(config.memory_embedder, MemoryEmbedder::English);
        assert!(
            !config.multilingual_memory(|| true),
            "asked for English, though the app and its memories speak Chinese"
        );
        assert_eq!(config.theme, Theme::Dark);
        assert_eq!(config.language, "zh-CN");
        assert_eq!(config.launch, LaunchMode::Pet);
        Ok(())
    }

    #[test]
    fn an_unknown_language_says_which_ones_exist() {
        let err = error_text("[ui]\nlanguage = \"klingon\"\n");
        assert!(err.contains(":2:"), "{err}");
        assert!(err.contains("must be one of en, zh-CN"), "{err}");
    }

    #[test]
    fn an_unknown_key_names_the_key_and_the_line() {
        let err = error_text("[api]\nport = 1\n\n[agent]\nmodle = \"x/y\"\n");
        assert!(err.starts_with("/home/ada/.cairn/config.toml:5:"), "{err}");
        assert!(err.contains("unknown field `modle`"), "{err}");
    }

    #[test]
    fn a_bad_value_names_the_key_and_the_line() {
        let err = error_text("[api]\nport = 70000\n");
        assert!(err.contains("config.toml:2:"), "{err}");

        let err = error_text("[providers.x]\nkind = \"gemini\"\n");
        assert!(err.contains("config.toml:2:"), "{err}");
        assert!(err.contains("gemini"), "{err}");

        let err = error_text("[providers.x]\nbase_url = \"ftp://host\"\n");
        assert!(err.contains("config.toml:2:"), "{err}");
        assert!(err.contains("`providers.x.base_url`"), "{err}");

        let err = error_text("[log]\nlevel = \"loud\"\n");
        assert!(err.contains("config.toml:2:"), "{err}");

        let err = error_text("[ui]\ntheme = \"purple\"\n");
        assert!(err.contains("config.toml:2:"), "{err}");
        let err = error_text("[ui]\nfont = \"big\"\n");
        assert!(err.contains("unknown field `font`"), "{err}");
    }

    #[test]
    fn a_missing_environment_variable_is_an_error_not_an_empty_key() {
        let err = error_text("[providers.openai]\n\napi_key = \"${OPENAI_API_KEY}\"\n");
        assert!(err.contains("config.toml:3:"), "{err}");
        assert!(err.contains("`providers.openai.api_key`"), "{err}");
        assert!(
            err.contains("environment variable OPENAI_API_KEY is not set"),
            "{err}"
        );
    }

    #[test]
    fn the_default_model_must_name_a_configured_provider() {
        let err = error_text("[agent]\nmodel = \"openai/gpt-4o\"\n");
        assert!(err.contains("config.toml:2:"), "{err}");
        assert!(err.contains("no providers are configured"), "{err}");

        let err = error_text("[agent]\nmodel = \"gpt-4o\"\n");
        assert!(err.contains("provider/model"), "{err}");
    }

    #[test]
    fn a_syntax_error_names_the_line() {
        let err = error_text("[api]\nport = \n");
        assert!(err.contains("config.toml:2:"), "{err}");
    }

    #[test]
    fn secrets_never_show_in_debug_output() -> Result<(), ConfigError> {
        let env = |_: &str| Some("sk-very-secret".to_owned());
        let config = Config::parse(
            "[providers.o]\napi_key = \"${K}\"\n",
            Path::new("c.toml"),
            env,
        )?;
        let debug = format!("{config:?}");
        assert!(!debug.contains("sk-very-secret"), "{debug}");
        Ok(())
    }

    #[test]
    fn the_models_index_is_an_address() -> Result<(), ConfigError> {
        assert_eq!(parse("")?.models_index, None);
        let config = parse("[models]\nindex = \"https://mirror.example/simple\"\n")?;
        assert_eq!(
            config.models_index.as_deref(),
            Some("https://mirror.example/simple")
        );
        let error = error_text("[models]\nindex = \"mirror.example\"\n");
        assert!(
            error.contains("`models.index` must be an http(s) address"),
            "{error}"
        );
        Ok(())
    }

    #[test]
    fn a_missing_file_is_no_config() -> Result<(), ConfigError> {
        let dir = tempfile::tempdir().map_err(|e| ConfigError::io("tmp", e))?;
        assert_eq!(Config::load(&dir.path().join("none.toml"), no_env)?, None);
        Ok(())
    }
}

//! The settings as the Settings page shows them (never a key's value) and the changes it sends.

use serde::{Deserialize, Serialize};

wire_enum! {
    /// The wire dialect a provider speaks.
    pub enum ProviderKind {
        /// OpenAI-compatible chat completions.
        Openai = "openai",
        Anthropic = "anthropic",
        Ollama = "ollama",
        /// A GGUF model run inside Cairn (`models` are catalogue names or `.gguf` paths).
        Local = "local",
    }
}

impl ProviderKind {
    /// The address a provider of this kind has when none is configured.
    pub fn default_base_url(self) -> &'static str {
        match self {
            Self::Openai => "https://api.openai.com/v1",
            Self::Anthropic => "https://api.anthropic.com",
            Self::Ollama => "http://127.0.0.1:11434",
            Self::Local => "",
        }
    }
}

wire_enum! {
    /// `[ui] theme`: light, dark, or whatever the system uses (the default).
    #[derive(Default)]
    pub enum Theme {
        #[default]
        System = "system",
        Light = "light",
        Dark = "dark",
    }
}

wire_enum! {
    /// How much the binaries log.
    #[derive(Default)]
    pub enum LogLevel {
        Error = "error",
        Warn = "warn",
        #[default]
        Info = "info",
        Debug = "debug",
        Trace = "trace",
    }
}

wire_enum! {
    /// `[ui] launch`: the pet alone, the workbench (the default), or whichever was in use last.
    #[derive(Default)]
    pub enum LaunchMode {
        Pet = "pet",
        #[default]
        Full = "full",
        Last = "last",
    }
}

wire_enum! {
    /// The languages the desktop app speaks.
    #[derive(Default)]
    pub enum Language {
        #[default]
        English = "en",
        SimplifiedChinese = "zh-CN",
    }
}

wire_enum! {
    /// How Cairn reaches an MCP server.
    pub enum McpTransportKind {
        /// A child process speaking JSON-RPC on its stdin and stdout.
        Stdio = "stdio",
        /// The current HTTP transport (`streamableHttp` is read too).
        StreamableHttp = "streamable_http" | "streamableHttp",
        /// The older HTTP transport: server-sent events.
        Sse = "sse",
    }
}

/// A provider as the settings page shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProviderSettings {
    pub name: String,
    pub kind: ProviderKind,
    pub base_url: String,
    pub api_key_set: bool,
    pub models: Vec<String>,
}

/// An installed whisper model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VoiceModelInfo {
    pub name: String,
    pub multilingual: bool,
    pub bytes: u64,
}

/// Everything the settings page edits.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Settings {
    pub config_file: String,
    /// The config file's error, when it does not load (the other fields are then the defaults).
    pub config_error: Option<String>,
    pub providers: Vec<ProviderSettings>,
    /// `provider/model`.
    pub default_model: Option<String>,
    pub voice_model: String,
    pub voice_language: String,
    pub voice_input: String,
    pub voice_models: Vec<VoiceModelInfo>,
    pub theme: Theme,
    pub pet_shortcut: String,
    pub log_level: LogLevel,
    pub language: Language,
    /// The local embedding model recall uses, and whether it is installed.
    pub embedding_model: String,
    pub embedding_installed: bool,
    pub launch: LaunchMode,
    /// Whether the desktop session starts Cairn at login.
    pub start_at_login: bool,
    /// The MCP servers whose tools the agent uses, in name order.
    #[serde(default)]
    pub mcp_servers: Vec<McpServerSettings>,
    /// How far the agent goes without asking.
    #[serde(default)]
    pub agent: AgentInput,
    /// The memory's background models, one per slot.
    #[serde(default)]
    pub slots: Vec<SlotSetting>,
}

/// A model slot of the memory's background writing (`[models] summary`, `evolution`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ModelSlot {
    /// Summaries and a dream's episode notes.
    Summary,
    /// Learned policies in the model's words.
    Evolution,
}

impl ModelSlot {
    pub const ALL: [ModelSlot; 2] = [Self::Summary, Self::Evolution];

    /// Its key under `[models]`.
    pub fn key(self) -> &'static str {
        match self {
            Self::Summary => "summary",
            Self::Evolution => "evolution",
        }
    }
}

/// One slot as Settings shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SlotSetting {
    pub slot: ModelSlot,
    /// `provider/model` as the config names it; `None`: the slot's default.
    pub model: Option<String>,
    /// What the slot uses now (`provider/model`); `None`: the default model.
    pub in_use: Option<String>,
}

/// How far the agent goes without asking, and where new tasks work.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentInput {
    /// Ask before overwriting a file or working outside the task's folder (on by default).
    pub guard_folder: bool,
    /// Ask before every command and file change (`yolo = false`; off by default).
    pub ask_always: bool,
    /// Where new tasks work until the person picks a folder (a full path).
    pub workspace: String,
}

impl Default for AgentInput {
    fn default() -> Self {
        Self {
            guard_folder: true,
            ask_always: false,
            workspace: String::new(),
        }
    }
}

/// A folder's subfolders, for choosing where a task works.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FolderListing {
    /// The folder (a full path).
    pub path: String,
    /// The folder above it, if any.
    pub parent: Option<String>,
    /// Its subfolders' names, hidden ones left out, in name order.
    pub folders: Vec<String>,
}

/// An MCP server as the Settings page shows it: what the config file says (`${NAME}` references
/// as written), with the names of its environment variables and headers but never their values.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct McpServerSettings {
    pub name: String,
    pub kind: McpTransportKind,
    pub command: String,
    pub args: Vec<String>,
    pub cwd: String,
    pub url: String,
    pub env: Vec<String>,
    pub headers: Vec<String>,
    pub enabled: bool,
    /// Seconds; `None`: the default.
    pub startup_timeout: Option<f64>,
    pub tool_timeout: Option<f64>,
    /// Empty: every tool.
    pub enabled_tools: Vec<String>,
    pub disabled_tools: Vec<String>,
}

/// An MCP server as the form sends it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct McpServerInput {
    pub name: String,
    pub kind: McpTransportKind,
    pub command: String,
    pub args: Vec<String>,
    pub cwd: String,
    pub url: String,
    /// `NAME=value` sets a variable; `NAME` alone keeps the value configured; a name left out is
    /// removed.
    pub env: Vec<String>,
    /// The same, for HTTP headers.
    pub headers: Vec<String>,
    pub enabled: bool,
    pub startup_timeout: Option<f64>,
    pub tool_timeout: Option<f64>,
    pub enabled_tools: Vec<String>,
    pub disabled_tools: Vec<String>,
}

wire_enum! {
    /// Where an MCP server is in its life.
    pub enum McpServerState {
        Disabled = "disabled",
        /// Not needed yet.
        Idle = "idle",
        Starting = "starting",
        Ready = "ready",
        Failed = "failed",
    }
}

/// How an MCP server is doing now.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct McpStatus {
    pub name: String,
    pub state: McpServerState,
    /// Its tools as the model sees them (`mcp__server__tool`).
    pub tools: Vec<String>,
    /// Why it failed or stopped, with the end of what it printed on stderr.
    pub error: Option<String>,
}

/// A provider as the form sends it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProviderInput {
    pub name: String,
    pub kind: ProviderKind,
    /// Empty: the kind's default address.
    pub base_url: String,
    /// Written as given (`${ENV_VAR}` recommended); empty keeps the key already configured.
    pub api_key: String,
    /// Removes the configured key.
    #[serde(default)]
    pub clear_key: bool,
    pub models: Vec<String>,
}

/// Appearance and behaviour.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AppearanceInput {
    pub theme: Theme,
    pub pet_shortcut: String,
    pub log_level: LogLevel,
    /// Unchanged when absent.
    #[serde(default)]
    pub language: Option<Language>,
    /// Unchanged when absent.
    #[serde(default)]
    pub launch: Option<LaunchMode>,
}

/// Speech input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VoiceInput {
    pub model: String,
    pub language: String,
    pub input: String,
}

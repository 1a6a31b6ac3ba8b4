//! Wire and domain types shared by the UI (wasm) and the backend: what the API, the Tauri commands and
//! the CLI exchange. Plain serde data, no behaviour beyond small formatting helpers.

use serde::{Deserialize, Serialize};

pub mod calendar;
pub mod memory;
pub mod openai;
pub mod settings;

/// The answer of `GET /api/v1/health`, the only route that needs no token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Health {
    /// Always `"ok"` when the server answers at all.
    pub status: String,
    /// The Cairn version serving the request.
    pub version: String,
}

/// What `$CAIRN_HOME/runtime.json` holds while the app or `cairn serve` is running.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuntimeInfo {
    /// Base URL of the local API, e.g. `http://127.0.0.1:41234`.
    pub api_url: String,
    /// The per-run bearer token.
    pub token: String,
    /// Process id of the server.
    pub pid: u32,
}

/// Everything `cairn status --json` prints and `GET /api/v1/status` returns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatusReport {
    pub version: String,
    pub paths: Paths,
    pub config: ConfigStatus,
    pub api: ApiStatus,
    /// The model used when none is chosen, as `provider/model`.
    pub default_model: Option<String>,
    pub providers: Vec<ProviderStatus>,
}

impl StatusReport {
    /// True when a chat could be sent: the config is valid and names a model of a configured provider.
    pub fn can_chat(&self) -> bool {
        self.config.valid && self.default_model.is_some()
    }
}

/// Where Cairn keeps its files.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Paths {
    pub home: String,
    pub config: String,
    pub runtime: String,
    pub logs: String,
    pub models: String,
    pub data: String,
}

/// Whether the config file exists and parses.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConfigStatus {
    pub exists: bool,
    pub valid: bool,
    /// The first error, naming the file line and the key, when `valid` is false.
    pub error: Option<String>,
}

/// Whether a Cairn API (the desktop app or `cairn serve`) is answering.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiStatus {
    pub running: bool,
    pub url: Option<String>,
    pub pid: Option<u32>,
}

/// One configured model provider, without its key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProviderStatus {
    pub name: String,
    /// `openai`, `anthropic` or `ollama`.
    pub kind: String,
    pub base_url: String,
    pub models: Vec<String>,
    /// Whether an API key is configured (its value is never reported).
    pub api_key_set: bool,
}

/// The error body every API route and Tauri command returns on failure.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiError {
    /// A stable code the UI can branch on, e.g. `unauthorized`, `forbidden_origin`.
    pub code: String,
    /// A sentence for a person.
    pub message: String,
}

impl ApiError {
    pub fn new(code: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            code: code.into(),
            message: message.into(),
        }
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.message, self.code)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_status_event_round_trips() -> Result<(), serde_json::Error> {
        for status in [
            TurnStatus::LoadingModel {
                model: "qwen".into(),
            },
            TurnStatus::ReadingContext {
                tokens: 1840,
                done: 828,
            },
            TurnStatus::Waiting {
                model: "mock/long-model".into(),
            },
            TurnStatus::Thinking,
        ] {
            let event = ChatEvent::Status { status };
            let json = serde_json::to_string(&event)?;
            assert_eq!(serde_json::from_str::<ChatEvent>(&json)?, event);
        }
        let json = serde_json::to_value(ChatEvent::Status {
            status: TurnStatus::ReadingContext {
                tokens: 10,
                done: 5,
            },
        })?;
        assert_eq!(json["kind"], "status");
        assert_eq!(json["status"]["state"], "reading_context");
        assert!(TurnStatus::Thinking.same_stage(&TurnStatus::Thinking));
        assert!(!TurnStatus::Thinking.same_stage(&TurnStatus::Waiting { model: "m".into() }));
        Ok(())
    }

    #[test]
    fn a_recalled_memory_carries_the_words_it_matched_and_older_ones_still_read(
    ) -> Result<(), serde_json::Error> {
        let recalled = RecalledMemory {
            id: 3,
            source: "claude-code".into(),
            date: "2026-12-04".into(),
            snippet: "The staging database password rotates every 90 days".into(),
            score: 1.4,
            channels: "fts #1, vec #1".into(),
            reason: "kept: above the relative threshold".into(),
            words: vec!["staging".into(), "database".into()],
            close_in_meaning: true,
        };
        let json = serde_json::to_string(&recalled)?;
        assert_eq!(serde_json::from_str::<RecalledMemory>(&json)?, recalled);
        // A task saved before the words were kept reads with none.
        let old = r#"{"id":1,"source":"codex","date":"2026-01-01","snippet":"s","score":1.0,"channels":"fts #1","reason":"kept"}"#;
        let read: RecalledMemory = serde_json::from_str(old)?;
        assert!(read.words.is_empty() && !read.close_in_meaning);
        Ok(())
    }

    #[test]
    fn a_model_server_address_needs_its_scheme_and_a_host() {
        assert_eq!(base_url_problem(""), None);
        assert_eq!(base_url_problem("http://127.0.0.1:8080/v1"), None);
        assert_eq!(base_url_problem(" https://api.openai.com/v1 "), None);
        assert!(base_url_problem("localhost:11434")
            .is_some_and(|p| p.starts_with("Start the address with http://")));
        assert!(base_url_problem("127.0.0.1:8080/v1").is_some());
        assert!(base_url_problem("http://").is_some_and(|p| p.contains("host")));
        assert!(base_url_problem("http://my host/v1").is_some());
    }

    fn report(valid: bool, model: Option<&str>) -> StatusReport {
        StatusReport {
            version: "0.1.0".into(),
            paths: Paths {
                home: "h".into(),
                config: "c".into(),
                runtime: "r".into(),
                logs: "l".into(),
                models: "m".into(),
                data: "d".into(),
            },
            config: ConfigStatus {
                exists: true,
                valid,
                error: None,
            },
            api: ApiStatus {
                running: false,
                url: None,
                pid: None,
            },
            default_model: model.map(str::to_owned),
            providers: vec![],
        }
    }

    #[test]
    fn chat_needs_a_valid_config_and_a_model() {
        assert!(report(true, Some("openai/gpt-4o")).can_chat());
        assert!(!report(false, Some("openai/gpt-4o")).can_chat());
        assert!(!report(true, None).can_chat());
    }

    #[test]
    fn runtime_info_uses_the_documented_field_names() {
        let info = RuntimeInfo {
            api_url: "http://127.0.0.1:1".into(),
            token: "t".into(),
            pid: 7,
        };
        let json = serde_json::to_value(&info).unwrap_or_default();
        assert_eq!(json["api_url"], "http://127.0.0.1:1");
        assert_eq!(json["token"], "t");
        assert_eq!(json["pid"], 7);
    }
}

/// What the desktop's chat stream carries, one event at a time (over a Tauri channel).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ChatEvent {
    /// Memories recalled before the request.
    Recalled {
        hits: usize,
        /// What was recalled, and why.
        #[serde(default)]
        items: Vec<RecalledMemory>,
    },
    /// A piece of the answer.
    Text { text: String },
    /// Something the person should know that is not the answer (a wrap-up, a compaction).
    Notice { text: String },
    /// The harness told the model that a background job ended (`text`, its mark first): shown as
    /// the harness's, not the person's. A wake-up turn opens with it.
    JobNote { text: String },
    /// The model request failed (`reason`) and is sent again after `after_ms`; the reply shows
    /// it until something arrives.
    Retrying { reason: String, after_ms: u64 },
    /// What the turn is doing while no words arrive (loading the model, reading the context,
    /// waiting, thinking): the reply's status line shows it with the seconds it has taken.
    Status { status: TurnStatus },
    /// A tool call starts; `display` is its one-line description (`🛠️  bash: ls`).
    Tool {
        call_id: String,
        name: String,
        display: String,
    },
    /// What a running call is doing (an asked agent's words and tool calls), as it happens.
    ToolProgress { call_id: String, text: String },
    /// A tool call ended with `output` (as the model reads it).
    ToolDone {
        call_id: String,
        output: String,
        failed: bool,
    },
    /// The turn was stopped by the person.
    Stopped,
    /// A call waits for the person's approval (`approve`).
    Approval {
        request: u64,
        tool: String,
        display: String,
    },
    /// ask_user waits for answers (`answer_question`).
    Question {
        request: u64,
        questions: Vec<AskQuestion>,
    },
    /// The turn ended.
    Done {
        steps: usize,
        input_tokens: u64,
        output_tokens: u64,
        /// The turn as captured in memory, for rating the reply.
        #[serde(default)]
        turn_id: Option<i64>,
    },
    /// The turn failed; `message` says why, `class` what the person can do about it.
    Failed {
        message: String,
        #[serde(default)]
        class: FailureKind,
    },
}

/// What a turn is doing while the person sees no words yet.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum TurnStatus {
    /// Cairn's own model is being loaded into memory.
    LoadingModel { model: String },
    /// The model reads the prompt: `done` of `tokens` evaluated so far.
    ReadingContext { tokens: u64, done: u64 },
    /// The request is sent; nothing has come back yet.
    Waiting { model: String },
    /// The model reasons before it answers.
    Thinking,
    /// A tool runs (`name`).
    RunningTool { name: String },
}

impl TurnStatus {
    /// Whether `other` is the same stage (its counter keeps running as the numbers move).
    pub fn same_stage(&self, other: &Self) -> bool {
        std::mem::discriminant(self) == std::mem::discriminant(other)
    }
}

/// What kind of failure ended a turn: what the person can do next. Every failure can be retried.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// The model server refused the key: fix it in Settings.
    Auth,
    /// The server asked to slow down: retry in a moment.
    RateLimited,
    /// The conversation does not fit the model's context, even summarised.
    Context,
    /// The server could not be reached, failed or stopped sending: retry, or check its address.
    Connection,
    /// The server rejected the request (an unknown model, a bad parameter): check Settings.
    Rejected,
    /// The model's reply could not be used (cut off, empty, a loop): retry, perhaps reworded.
    Generation,
    /// Cairn's own model cannot run on this machine (its host program missing, its file not
    /// loading, memory short): reinstall it, or pick another model in Settings.
    LocalModel,
    /// Anything else.
    #[default]
    Other,
}

impl FailureKind {
    /// Whether the fix is likely in the model's settings (its key, address or name).
    pub fn points_to_settings(self) -> bool {
        matches!(
            self,
            Self::Auth | Self::Connection | Self::Rejected | Self::LocalModel
        )
    }
}

/// A task's background job, as its jobs strip shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskJob {
    /// `job1`, `job2`, … (the task's one sequence).
    pub id: String,
    pub command: String,
    /// `running`, `exited`, `killed`, `stopped`, or for a subagent `finished` (it reported) or
    /// `failed`.
    pub state: String,
    pub exit_code: Option<i32>,
    pub elapsed_ms: u64,
}

/// A task's team, as the workbench shows it: who is on it, and its room as a conversation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskTeam {
    /// The members in tree order (the lead is not listed).
    pub members: Vec<TeamMember>,
    /// The room's messages, oldest first.
    pub room: Vec<TeamMessage>,
}

/// A member of a task's team.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TeamMember {
    pub name: String,
    pub role: String,
    /// Who added it (`lead`, or a member's name).
    pub parent: String,
    /// `working`, `waiting for a slot`, `finished` or `idle`.
    pub state: String,
    /// The end of its stream: its words and its calls, as they came.
    pub output: String,
}

/// A message of a team's room.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TeamMessage {
    pub from: String,
    /// A name, or `all`.
    pub to: String,
    pub text: String,
    /// A member's report to whoever added it.
    pub report: bool,
}

/// A question put by ask_user, as the form shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AskQuestion {
    pub question: String,
    /// `choice`, `multi`, `text` or `confirm`.
    pub kind: String,
    pub options: Vec<String>,
    pub default: Option<String>,
}

/// One event of one task, as `GET /api/v1/events` streams it: every task's, whoever started it
/// (the workbench, the pet, the local API).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskEvent {
    pub task: String,
    #[serde(flatten)]
    pub event: ChatEvent,
}

/// A task (a stored conversation) as the task list shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskSummary {
    pub session: String,
    pub title: String,
    pub created_at: i64,
    pub updated_at: i64,
    pub archived: bool,
    pub pinned: bool,
    /// The task's standing goal as `/goal` describes it ("Goal (active): …"), if it has one.
    #[serde(default)]
    pub goal: Option<String>,
    /// Where the task works (a full path); empty until it is kept with the task.
    #[serde(default)]
    pub folder: String,
}

/// A stored conversation as the stream shows it: the person's words and Cairn's replies, each
/// reply's texts and tool calls in the order they happened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TranscriptMessage {
    pub from_person: bool,
    /// The person's words are one text; a reply alternates texts and the calls between them.
    pub parts: Vec<ReplyPart>,
    /// The names of the files attached to a person's message.
    #[serde(default)]
    pub attachments: Vec<String>,
    /// The person stopped this reply.
    #[serde(default)]
    pub stopped: bool,
    /// What was recalled from memory before this reply, and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub recalled: Vec<RecalledMemory>,
}

/// One piece of a message, in order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ReplyPart {
    Text {
        text: String,
    },
    Tool(TranscriptTool),
    /// Where the task was compacted: what came before is what the person saw; the model goes on
    /// from this summary.
    Compacted {
        summary: String,
    },
    /// The harness told the model that a background job ended.
    JobNote {
        text: String,
    },
}

impl TranscriptMessage {
    /// Its texts, a paragraph each.
    pub fn text(&self) -> String {
        let texts: Vec<&str> = self
            .parts
            .iter()
            .filter_map(|p| match p {
                ReplyPart::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        texts.join("\n\n")
    }

    /// The mark a compaction left, in place of a message.
    pub fn compaction(summary: impl Into<String>) -> Self {
        Self {
            from_person: false,
            parts: vec![ReplyPart::Compacted {
                summary: summary.into(),
            }],
            attachments: Vec::new(),
            stopped: false,
            recalled: Vec::new(),
        }
    }

    pub fn is_compaction(&self) -> bool {
        matches!(self.parts.first(), Some(ReplyPart::Compacted { .. }))
    }

    /// Its tool calls, in order.
    pub fn tools(&self) -> impl Iterator<Item = &TranscriptTool> {
        self.parts.iter().filter_map(|p| match p {
            ReplyPart::Tool(tool) => Some(tool),
            _ => None,
        })
    }
}

/// One tool call of a stored reply.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TranscriptTool {
    pub call_id: String,
    pub name: String,
    pub display: String,
    pub output: String,
    pub failed: bool,
}

/// A memory recalled before a request, as the "recalled from memory" block shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecalledMemory {
    pub id: i64,
    pub source: String,
    pub date: String,
    pub snippet: String,
    pub score: f64,
    /// Which recall channels found it, with ranks.
    pub channels: String,
    /// Why it was kept.
    pub reason: String,
    /// The question's own words the memory holds (the plain "why": "Matches your words …").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub words: Vec<String>,
    /// Whether it is close to the question in meaning.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub close_in_meaning: bool,
}

/// What is wrong with a model server's address as a person typed it, if anything (an empty
/// address is the kind's default). Checked where it is typed, and again where it is saved.
pub fn base_url_problem(url: &str) -> Option<&'static str> {
    let url = url.trim();
    if url.is_empty() {
        return None;
    }
    let rest = url
        .strip_prefix("http://")
        .or_else(|| url.strip_prefix("https://"));
    match rest {
        None => Some("Start the address with http:// or https://, e.g. http://127.0.0.1:8080/v1."),
        Some(host)
            if host.is_empty() || host.starts_with('/') || host.contains(char::is_whitespace) =>
        {
            Some("The address needs a host after http://, e.g. http://127.0.0.1:8080/v1.")
        }
        Some(_) => None,
    }
}

/// What a connection test of a configured provider found (Settings, the first run, `/model`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConnectionTest {
    pub ok: bool,
    /// The models the server lists (empty when it cannot list them).
    pub models: Vec<String>,
    pub message: String,
}

/// What the pet shows: a badge (tasks running, or finished in the last five minutes), up to six
/// of them, and the task a message typed into the pet continues (`None`: a new one), named so
/// the bubble can say which.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PetState {
    pub badge: usize,
    pub tasks: Vec<PetTask>,
    pub continues: Option<PetTask>,
}

/// A task in the pet's list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PetTask {
    pub session: String,
    pub title: String,
    pub running: bool,
}

/// Counts of one source's scan (the `--json` summary's shape).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceReport {
    pub source: String,
    pub conversations: usize,
    pub turns_seen: usize,
    pub turns_added: usize,
    pub turns_skipped: usize,
    pub turns_failed: usize,
    pub lines_malformed: usize,
    /// Files that could not be read (the watermark waits for them).
    pub files_failed: usize,
    /// Files read (incremental scans skip unchanged ones).
    pub files_read: usize,
    /// Bytes of the files read.
    pub bytes_read: u64,
}

impl SourceReport {
    pub fn add(&mut self, other: &SourceReport) {
        self.conversations += other.conversations;
        self.turns_seen += other.turns_seen;
        self.turns_added += other.turns_added;
        self.turns_skipped += other.turns_skipped;
        self.turns_failed += other.turns_failed;
        self.lines_malformed += other.lines_malformed;
        self.files_failed += other.files_failed;
        self.files_read += other.files_read;
        self.bytes_read += other.bytes_read;
    }
}

/// What a scan of other agents' history reports as it goes (streamed to the Sources page).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum ScanProgress {
    SourceStarted {
        source: String,
        files: usize,
    },
    /// One more file done; `report` is the source's counts so far.
    File {
        source: String,
        done: usize,
        files: usize,
        report: SourceReport,
    },
    SourceDone {
        report: SourceReport,
    },
    /// The scan was stopped before the end (checkpoints keep what was done).
    Stopped,
}

/// A source as `cairn sources list` shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SourceInfo {
    pub name: String,
    pub label: String,
    pub detected: bool,
    pub enabled: bool,
    /// Where it reads.
    pub path: String,
    pub files: usize,
    /// From the last scans' checkpoints.
    pub conversations: usize,
    pub turns: usize,
    pub last_sync: Option<i64>,
    pub watermark: Option<i64>,
}

/// Whether Cairn's hooks are in an agent's hook file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HookStatus {
    pub agent: String,
    /// The hook file (it may not exist yet).
    pub path: std::path::PathBuf,
    /// Every event Cairn hooks into has Cairn's entry.
    pub installed: bool,
}

/// An attachment as the composer sends it with a message: the file's name and its bytes as a data
/// URL.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AttachmentInput {
    pub name: String,
    pub data_url: String,
}

/// What one of Cairn's own models is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ModelKind {
    /// Answers and calls tools (`local/<name>`).
    Language,
    /// Turns text into vectors for the memory's search by meaning.
    Embedding,
    /// Transcribes the microphone.
    Speech,
}

/// One of Cairn's own models, as `cairn models list` and Settings show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LocalModelInfo {
    /// The name in the catalogue (`local/<name>` for a language model).
    pub name: String,
    pub kind: ModelKind,
    /// The upstream model's own name.
    pub label: String,
    pub licence: String,
    pub note: String,
    /// Its files' size once installed.
    pub bytes: u64,
    /// Whether this is the model of its kind Cairn uses when none is configured.
    pub default: bool,
    pub installed: bool,
    /// Installed, of its pinned size and checksum.
    pub whole: bool,
    /// In memory in this process now.
    pub loaded: bool,
    pub path: String,
    /// Why it cannot run on this machine even when whole (a language model whose host program
    /// is missing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cannot_run: Option<String>,
}

/// How an install of one of Cairn's models is going, for a progress bar.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct InstallProgress {
    pub phase: InstallPhase,
    /// Bytes done in this phase, of `total`.
    pub done: u64,
    pub total: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InstallPhase {
    Download,
    /// Joining the parts into the model file and checking it.
    Assemble,
    Done,
}

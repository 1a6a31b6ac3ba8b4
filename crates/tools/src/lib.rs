//! The agent's built-in tools. Every tool answers with text: an ordinary failure (a missing file,
//! an ambiguous edit) is the tool's output, worded as agent-tools.md words it. The runtime owns
//! what surrounds a call (permissions, result ids, caps, parallelism); the tools own the work.

pub mod access;
pub mod ask;
mod bash;
pub mod counters;
pub mod declared;
pub mod diff;
pub mod edit;
mod fetch_content;
mod files;
pub mod jobs;
pub mod loop_detector;
mod process;
mod save_answer;
pub mod search_memory;
mod skills;
pub mod texts;
mod toolbox;
mod unload;

use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde_json::Value;
pub use tokio_util::sync::CancellationToken;

pub use access::Protected;
pub use ask::{Answer, AskUser, Asker, Question, QuestionKind};
pub use bash::{reading_command, Bash};
pub use counters::{Counter, Counters};
pub use declared::{DeclaredParameter, DeclaredTool, DeclaredToolDef};
pub use fetch_content::FetchContent;
pub use files::{sha_of, write_atomically, EditFile, ReadFile, WriteFile};
pub use jobs::{
    Inbox, JobInfo, JobList, JobOutput, JobSend, JobState, JobStop, Jobs, SubagentEnd, SubagentWork,
};
pub use loop_detector::{runaway, LoopDetector, LoopVerdict};
pub use save_answer::SaveAnswer;
pub use skills::ReadSkill;
pub use toolbox::{BoxFuture, ToolSource, Toolbox, ToolboxOptions};
pub use unload::{ModelServer, UnloadModel};

/// What the model is told about a tool.
#[derive(Debug, Clone, PartialEq)]
pub struct Declaration {
    pub name: String,
    pub description: String,
    pub parameters: Value,
}

/// What a result is, for the runtime's context hygiene (headers, dedupe).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ResultKind {
    #[default]
    Plain,
    /// A window of a file: `path` as the model named it, `absolute` for dedupe, lines `from..=to`
    /// of `of`, `sha` of the whole content.
    Read {
        path: String,
        absolute: PathBuf,
        from: usize,
        to: usize,
        of: usize,
        sha: String,
        /// The whole file was shown.
        full: bool,
    },
    /// A file written or edited: its new `sha`.
    Edit { path: String, sha: String },
}

/// A tool's answer.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ToolOutput {
    pub text: String,
    /// Anything but success (shown as a failed call by front ends; still the model's result).
    pub failed: bool,
    pub kind: ResultKind,
}

impl ToolOutput {
    pub fn ok(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            ..Self::default()
        }
    }

    pub fn failed(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            failed: true,
            kind: ResultKind::Plain,
        }
    }
}

/// The text the current step's message and the conversation's last answer (for save_answer).
#[derive(Debug, Clone, Default)]
pub struct Answers {
    /// The text of the model message that made the call.
    pub this_message: String,
    /// The last answer of the conversation as it stood when the turn started.
    pub previous: Option<String>,
}

/// Everything a call may use; built by the runtime for each step.
#[derive(Clone)]
pub struct ToolContext {
    /// Where relative paths and commands start.
    pub cwd: PathBuf,
    /// The conversation the call belongs to.
    pub session: String,
    /// Cancelled when the turn is stopped.
    pub cancel: CancellationToken,
    /// `maxOutput`: characters a tool returns at most.
    pub max_output: usize,
    /// bash's timeout (30 s).
    pub bash_timeout: Duration,
    /// Who answers ask_user; `None` when nobody can be asked.
    pub asker: Option<Arc<dyn Asker>>,
    pub answers: Answers,
    /// The runtime's background jobs (the session's are those of `session`).
    pub jobs: Arc<Jobs>,
    /// The conversation the turn started from, one line per question, answer and tool call (no
    /// tool output), newest kept within `max_output`: filled only for a step that hands a task
    /// to another agent (`ask_agent` with `with_context`).
    pub conversation: String,
    /// Where a long call shows what it is doing while it runs (an asked agent's words and tool
    /// calls); `None` when nobody follows.
    pub progress: Option<Progress>,
}

/// Reports a running call's progress to whoever follows the turn (best effort: never blocks).
pub type Progress = Arc<dyn Fn(&str) + Send + Sync>;

impl ToolContext {
    pub fn new(cwd: PathBuf) -> Self {
        Self {
            cwd,
            session: String::new(),
            cancel: CancellationToken::new(),
            max_output: DEFAULT_MAX_OUTPUT,
            bash_timeout: Duration::from_secs(30),
            asker: None,
            answers: Answers::default(),
            jobs: Arc::default(),
            conversation: String::new(),
            progress: None,
        }
    }

    /// `path` resolved against the working directory.
    pub fn resolve(&self, path: &str) -> PathBuf {
        let p = Path::new(path);
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            self.cwd.join(p)
        }
    }

    /// `text` cut to `max_output` characters, saying so.
    pub fn truncate(&self, text: String) -> String {
        truncate_chars(text, self.max_output)
    }
}

/// `maxOutput` by default: large, since the runtime caps what the model sees and keeps the rest.
pub const DEFAULT_MAX_OUTPUT: usize = 1 << 20;

/// A boxed future, so tools can live behind `dyn Tool`.
pub type ToolFuture<'a> = Pin<Box<dyn Future<Output = ToolOutput> + Send + 'a>>;

/// A tool the model may call.
pub trait Tool: Send + Sync {
    fn name(&self) -> &str;
    fn declaration(&self) -> Declaration;
    /// Whether the call changes something and so asks first when `yolo` is off.
    fn needs_permission(&self, _input: &Value, _ctx: &ToolContext) -> bool {
        false
    }
    /// Whether the call overwrites a file or reaches outside the task's folder (`ctx.cwd`): it
    /// asks first when the folder is guarded, even under `yolo`.
    fn leaves_folder(&self, _input: &Value, _ctx: &ToolContext) -> bool {
        false
    }
    /// Whether the call waits on the person (it then runs alone).
    fn waits_on_user(&self) -> bool {
        false
    }
    /// The file the call reads or writes, so two calls on one file run in order.
    fn target_file(&self, _input: &Value) -> Option<String> {
        None
    }
    /// What the model is told when the person refuses the call.
    fn rejected(&self, _input: &Value) -> String {
        texts::rejected(self.name())
    }
    /// The terminal display line announcing the call.
    fn display(&self, input: &Value) -> String;
    /// Which turn counter a response adds to.
    fn counter(&self) -> Option<Counter> {
        None
    }
    fn run<'a>(&'a self, input: Value, ctx: &'a ToolContext) -> ToolFuture<'a>;
}

/// The call's input as `T`, or the text telling the model what was wrong.
pub(crate) fn parse<T: DeserializeOwned>(tool: &str, input: Value) -> Result<T, String> {
    serde_json::from_value(input).map_err(|e| format!("[{tool}: invalid arguments — {e}]"))
}

/// A string field of the input, for display lines.
pub fn field<'a>(input: &'a Value, key: &str) -> &'a str {
    input.get(key).and_then(Value::as_str).unwrap_or("")
}

/// `text` cut to at most `max` characters (on a char boundary), with the truncation said.
pub fn truncate_chars(mut text: String, max: usize) -> String {
    if let Some((cut, _)) = text.char_indices().nth(max) {
        text.truncate(cut);
        text.push('\n');
        text.push_str(&texts::fill(texts::TRUNCATED, &[("n", &max.to_string())]));
    }
    text
}

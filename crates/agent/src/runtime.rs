//! The runtime: settings, sessions held in memory, and `submit(Op)` → a stream of `Event`s. A turn
//! runs in its own task; stop, answers and approvals reach it through the same `submit`.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use cairn_llm::{Message, Provider, Role, Usage};
use cairn_memory::MemoryStore;
use cairn_tools::{Answer, CancellationToken, Counters, Jobs, LoopDetector, Question, Toolbox};
use serde::{Deserialize, Serialize};
use tokio::sync::{mpsc, oneshot};

use crate::context::ContextState;
use crate::error::{AgentError, FailureKind};
use crate::prompt::system_prompt;
use crate::sessions::{title_of, Session, SessionError, SessionMark, SessionRecall, SessionStore};
pub use cairn_protocol::RecalledMemory;

/// What the runtime is asked to do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Op {
    /// A person's message in a session (created on first use). A turn already running in the
    /// session is stopped first.
    UserMessage {
        session: String,
        text: String,
        /// Images attached to the message (kept as files).
        images: Vec<cairn_llm::Image>,
    },
    /// Run the session's last message again (`/restart`): what followed it is dropped, the
    /// message (with its images) goes to the model anew.
    Restart { session: String },
    /// Stop the session's running turn: commands are killed, questions cancelled.
    Stop { session: String },
    /// The answer to a `Question` event.
    Answer { request: u64, answer: Answer },
    /// The decision on an `ApprovalRequest` event.
    Approve { request: u64, allow: bool },
    /// Replace the session's history by a summary (`/compact`).
    Compact { session: String },
    /// Deliver the notes of the session's background jobs that ended: a turn of its own, marked
    /// as the harness's (nothing happens when there are none, or a turn is running: that turn
    /// reads them at its next step).
    Wake { session: String },
}

/// What happens, in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Event {
    /// Memories recalled before the request (`hits` of them, rendered as `injection`), with
    /// why each was chosen.
    Recalled {
        hits: usize,
        injection: String,
        items: Vec<RecalledMemory>,
    },
    Text(String),
    Reasoning(String),
    /// A background job ended and the model is told (its note, mark first), as the harness's
    /// message: at a step boundary, or opening a turn of its own.
    JobNote {
        text: String,
    },
    /// A tool call is about to run; `display` is the terminal line announcing it.
    ToolCall {
        call_id: String,
        name: String,
        arguments: String,
        display: String,
    },
    /// What a running call is doing (an asked agent's words and tool calls), as it happens.
    ToolProgress {
        call_id: String,
        text: String,
    },
    /// A call waits for the person's approval (answer with `Op::Approve`).
    ApprovalRequest {
        request: u64,
        call_id: String,
        tool: String,
        display: String,
    },
    /// ask_user waits for the person (answer with `Op::Answer`).
    Question {
        request: u64,
        call_id: String,
        questions: Vec<Question>,
    },
    /// A call's result, as the model reads it.
    ToolResult {
        call_id: String,
        name: String,
        output: String,
        failed: bool,
    },
    /// The model request failed (`reason`) and is sent again after `after_ms`.
    Retrying {
        reason: String,
        after_ms: u64,
    },
    /// What the turn does while no words come (waiting for the model, thinking, loading or
    /// reading the context on Cairn's own model): a status line for the person.
    Status(cairn_protocol::TurnStatus),
    /// The model was asked again (a thinking-only or cut-off reply).
    Nudged {
        reason: String,
    },
    /// A limit was reached; the tools were withdrawn for a last answer.
    WrappedUp {
        limit: String,
    },
    /// The history was replaced by a summary.
    Compacted {
        summary: String,
    },
    /// The turn ended with this answer.
    TurnComplete {
        answer: String,
        usage: Usage,
        steps: usize,
        counters: Counters,
        /// The turn as captured in memory, to be rated (`None` when it was not captured).
        turn_id: Option<i64>,
        /// The answer was given over a failed tool call that nothing got past: the line under
        /// it saying so (the front ends treat the turn as not done: the CLI exits 1).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        unresolved: Option<String>,
    },
    /// The turn was stopped (`Op::Stop`, or a new message in the session).
    Stopped {
        counters: Counters,
    },
    /// The turn failed (`message` says why, `kind` what the person can do); the session keeps
    /// the person's message and what ran.
    Error {
        message: String,
        #[serde(default)]
        kind: FailureKind,
    },
}

impl Event {
    /// The event that ends a turn that failed with `error`.
    pub fn failed(error: &AgentError) -> Self {
        Self::Error {
            // A provider's error may quote what it was sent (a proxy echoing the key).
            message: cairn_memory::redact(&error.to_string()).into_owned(),
            kind: error.kind(),
        }
    }
}

/// What one prompt may spend (agent-loop.json `budgets`; unset by default).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Budgets {
    pub wall_seconds: Option<u64>,
    pub output_bytes: Option<u64>,
    pub completion_tokens: Option<u64>,
}

/// Whether the agent of a session manages team members now.
pub type ManagerCheck = Arc<dyn Fn(&str) -> bool + Send + Sync>;

/// How the runtime works.
#[derive(Clone)]
pub struct AgentSettings {
    pub provider: Arc<dyn Provider>,
    pub model: String,
    /// The project root and the directory the session started in (for the environment block,
    /// and where tools work).
    pub project_root: PathBuf,
    pub started_in: PathBuf,
    /// agent-loop.json `steps.default`: a runaway backstop.
    pub max_steps: usize,
    /// agent-loop.json `nudges.max`: asks in a row.
    pub max_nudges: usize,
    /// agent-loop.json `parallel.max`.
    pub max_parallel: usize,
    pub budgets: Budgets,
    /// Memories recalled before each request.
    pub recall_limit: usize,
    /// Today's date as `YYYY-MM-DD` (injected for tests).
    pub today: Arc<dyn Fn() -> String + Send + Sync>,
    /// Where sessions are kept between runs; in memory only when `None`.
    pub sessions: Option<SessionStore>,
    /// The built-in tools declared to the model (`recall` is added by the runtime).
    pub tools: Toolbox,
    /// `yolo: true` (the default): calls run without asking.
    pub yolo: bool,
    /// A call that overwrites a file or reaches outside the task's folder asks first, whatever
    /// `yolo` says (where someone can answer: [`AgentSettings::interactive`]).
    pub guard_folder: bool,
    /// Whether someone can answer (approvals, ask_user); a one-shot run cannot.
    pub interactive: bool,
    /// Whether turns are captured into the memory (the person's are; a subagent's, a team
    /// member's or an asked agent's are machine-written and report back to one that is).
    pub capture: bool,
    /// Whether the agent of a session manages team members now (its writing and executing calls
    /// are then refused: it gives work away).
    pub manages: Option<ManagerCheck>,
    /// `maxOutput` for tools.
    pub max_output: usize,
    pub bash_timeout: Duration,
    /// A small model (Cairn's own, on this device): the system prompt says when a tool is worth
    /// calling, and the caller offers it fewer tools.
    pub compact: bool,
    /// The most tokens one step's reply may have: a local server (llama.cpp, Ollama) sets no
    /// limit of its own, and a reply that runs on never ends.
    pub step_max_tokens: u32,
}

impl AgentSettings {
    pub fn new(
        provider: Arc<dyn Provider>,
        model: impl Into<String>,
        project_root: PathBuf,
    ) -> Self {
        Self {
            provider,
            model: model.into(),
            started_in: project_root.clone(),
            project_root,
            max_steps: 200,
            max_nudges: 2,
            max_parallel: 4,
            budgets: Budgets::default(),
            recall_limit: 6,
            today: Arc::new(cairn_memory::today),
            sessions: None,
            tools: Toolbox::default(),
            yolo: true,
            guard_folder: false,
            interactive: true,
            manages: None,
            capture: true,
            max_output: cairn_tools::DEFAULT_MAX_OUTPUT,
            bash_timeout: Duration::from_secs(30),
            compact: false,
            step_max_tokens: 8192,
        }
    }
}

/// A session's live state.
pub(crate) struct SessionState {
    pub messages: Vec<Message>,
    /// [`crate::Session::earlier`].
    pub earlier: Vec<Message>,
    pub context: ContextState,
    pub detector: LoopDetector,
    /// The permission mode the model was last told of.
    pub told_yolo: Option<bool>,
    /// [`crate::Session::recalls`].
    pub recalls: Vec<SessionRecall>,
    /// The MCP servers whose instructions the model was given in this session.
    pub told_mcp: Vec<String>,
    /// Where the session's tools work (its task's folder), as the model was last told.
    pub folder: PathBuf,
}

impl SessionState {
    /// How many of the person's and the model's messages it holds, those before a compaction
    /// included: the place in the transcript of the next one (what marks and recalls record).
    pub fn transcript_len(&self) -> usize {
        self.earlier
            .iter()
            .chain(&self.messages)
            .filter(|m| m.role != Role::System)
            .count()
    }
}

/// A reply the person gives while a turn waits.
pub(crate) enum Reply {
    Answer(Answer),
    Approve(bool),
}

/// The agent runtime.
#[derive(Clone)]
pub struct Runtime {
    pub(crate) settings: AgentSettings,
    pub(crate) memory: Option<Arc<MemoryStore>>,
    sessions: Arc<Mutex<HashMap<String, Arc<tokio::sync::Mutex<SessionState>>>>>,
    running: Arc<Mutex<HashMap<String, CancellationToken>>>,
    pub(crate) pending: Arc<Mutex<HashMap<u64, oneshot::Sender<Reply>>>>,
    pub(crate) next_request: Arc<AtomicU64>,
    /// The sessions' background jobs.
    pub(crate) jobs: Arc<Jobs>,
    /// Folders set for sessions ([`Runtime::set_folder`]), taken up at their next turn.
    folders: Arc<Mutex<HashMap<String, PathBuf>>>,
}

impl Runtime {
    /// A runtime; with `memory`, every turn recalls from it and is captured into it.
    pub fn new(settings: AgentSettings, memory: Option<Arc<MemoryStore>>) -> Self {
        Self {
            settings,
            memory,
            sessions: Arc::default(),
            running: Arc::default(),
            pending: Arc::default(),
            next_request: Arc::new(AtomicU64::new(1)),
            jobs: Arc::default(),
            folders: Arc::default(),
        }
    }

    /// Makes `folder` where `session`'s tools work from its next turn on (the model is told);
    /// kept with the session. A turn running now goes on where it started.
    pub fn set_folder(&self, session: &str, folder: PathBuf) {
        if let Ok(mut folders) = self.folders.lock() {
            if folders.get(session) == Some(&folder) {
                return;
            }
            folders.insert(session.to_owned(), folder.clone());
        }
        if let Some(store) = &self.settings.sessions {
            if let Err(e) = store.update(session, |s| s.folder = Some(folder)) {
                tracing::warn!("the task's folder was not saved: {e}");
            }
        }
    }

    /// Where `session`'s tools work: the folder set for it, else the one stored with it, else
    /// where the runtime started.
    pub fn folder(&self, session: &str) -> PathBuf {
        self.folder_set(session)
            .or_else(|| self.settings.sessions.as_ref()?.folder(session))
            .unwrap_or_else(|| self.settings.started_in.clone())
    }

    fn folder_set(&self, session: &str) -> Option<PathBuf> {
        self.folders.lock().ok()?.get(session).cloned()
    }

    /// The same runtime keeping its background jobs in `jobs` (shared with the runtimes that come
    /// after it, so a change of model does not lose them).
    pub fn with_jobs(mut self, jobs: Arc<Jobs>) -> Self {
        self.jobs = jobs;
        self
    }

    /// The sessions' background jobs (their wake-ups: [`Jobs::wakeups`]).
    pub fn jobs(&self) -> &Arc<Jobs> {
        &self.jobs
    }

    /// The same runtime where nobody can be asked: calls that would ask are rejected and
    /// ask_user answers that nobody can be asked (a one-shot run).
    pub fn one_shot(mut self) -> Self {
        self.settings.interactive = false;
        self
    }

    pub fn settings(&self) -> &AgentSettings {
        &self.settings
    }

    /// Runs `op`. A message's events end with `TurnComplete`, `Stopped` or `Error`; a compaction's
    /// with `Compacted` or `Error`; the other ops close their stream at once.
    pub fn submit(&self, op: Op) -> mpsc::Receiver<Event> {
        let (tx, rx) = mpsc::channel(256);
        match op {
            Op::UserMessage {
                session,
                text,
                images,
            } => {
                let this = self.clone();
                tokio::spawn(async move { this.user_message(session, text, images, tx).await });
            }
            Op::Restart { session } => {
                let this = self.clone();
                tokio::spawn(async move { this.restart(session, tx).await });
            }
            Op::Compact { session } => {
                let this = self.clone();
                tokio::spawn(async move {
                    let state = this.state(&session);
                    let mut state = state.lock().await;
                    let upto = state.messages.len();
                    match this.compact(&session, &mut state, upto).await {
                        Ok(summary) => {
                            let _ = tx.send(Event::Compacted { summary }).await;
                        }
                        Err(error) => {
                            let _ = tx.send(Event::failed(&error)).await;
                        }
                    }
                });
            }
            Op::Wake { session } => {
                let this = self.clone();
                tokio::spawn(async move { this.wake(session, tx).await });
            }
            Op::Stop { session } => self.stop(&session),
            Op::Answer { request, answer } => self.reply(request, Reply::Answer(answer)),
            Op::Approve { request, allow } => self.reply(request, Reply::Approve(allow)),
        }
        rx
    }

    fn stop(&self, session: &str) {
        if let Some(token) = self
            .running
            .lock()
            .ok()
            .and_then(|r| r.get(session).cloned())
        {
            token.cancel();
        }
    }

    fn reply(&self, request: u64, reply: Reply) {
        let waiting = self
            .pending
            .lock()
            .ok()
            .and_then(|mut p| p.remove(&request));
        if let Some(waiting) = waiting {
            let _ = waiting.send(reply);
        }
    }

    /// A request id for an approval or a question.
    pub(crate) fn request_id(&self) -> u64 {
        self.next_request.fetch_add(1, Ordering::Relaxed)
    }

    /// Drops the last person's message and what followed it, then sends it again.
    async fn restart(&self, session: String, tx: mpsc::Sender<Event>) {
        self.stop(&session);
        let last = {
            let state = self.state(&session);
            let mut state = state.lock().await;
            let at = state.messages.iter().rposition(|m| {
                m.role == cairn_llm::Role::User && !crate::is_runtime_text(&m.content)
            });
            at.map(|at| {
                let message = state.messages[at].clone();
                state.messages.truncate(at);
                (crate::words_of(&message).to_owned(), message.images)
            })
        };
        match last {
            Some((text, images)) => self.user_message(session, text, images, tx).await,
            None => {
                let _ = tx
                    .send(Event::failed(&AgentError::Request(
                        "Nothing to re-run: this task has no message yet.".into(),
                    )))
                    .await;
            }
        }
    }

    /// A turn opened by the notes of the session's jobs that ended, once the turn running in the
    /// session (if any) has let go of it; nothing happens when no note is left by then.
    async fn wake(&self, session: String, tx: mpsc::Sender<Event>) {
        let state = self.state(&session);
        let mut state = state.lock().await;
        let notes = self.jobs.take_notes(&session);
        if notes.is_empty() {
            return;
        }
        let text = notes.join("\n\n");
        let _ = tx.send(Event::JobNote { text: text.clone() }).await;
        self.run_turn(&session, &text, Vec::new(), &mut state, &tx)
            .await;
    }

    async fn user_message(
        &self,
        session: String,
        text: String,
        images: Vec<cairn_llm::Image>,
        tx: mpsc::Sender<Event>,
    ) {
        // A new message stops the turn running in the session, then waits for it to let go.
        self.stop(&session);
        let state = self.state(&session);
        let mut state = state.lock().await;
        self.run_turn(&session, &text, images, &mut state, &tx)
            .await;
    }

    /// Runs a turn of `session` (stoppable while it runs); a failure is kept with the session and
    /// ends the events.
    async fn run_turn(
        &self,
        session: &str,
        text: &str,
        images: Vec<cairn_llm::Image>,
        state: &mut SessionState,
        tx: &mpsc::Sender<Event>,
    ) {
        let cancel = CancellationToken::new();
        if let Ok(mut running) = self.running.lock() {
            running.insert(session.to_owned(), cancel.clone());
        }
        let outcome = self.turn(session, text, images, state, &cancel, tx).await;
        if let Ok(mut running) = self.running.lock() {
            running.remove(session);
        }
        if let Err(error) = outcome {
            let message = error.to_string();
            // The turn's own failure is what the person is told (a failed write is logged).
            let _ = self.save(session, text, state, Some(("generation", &message)), None);
            let _ = tx.send(Event::failed(&error)).await;
        }
    }

    /// Starts `session` from a conversation held by someone else (a caller of the OpenAI-compatible
    /// API, which sends the whole conversation each time): the system prompt with the caller's
    /// `instructions` after it, then `history`. Whatever the session held in memory is replaced.
    pub fn seed(&self, session: &str, instructions: &str, history: Vec<Message>) {
        let mut state = self.fresh_state(session, None);
        if !instructions.trim().is_empty() {
            if let Some(system) = state.messages.first_mut() {
                system.content.push_str("\n\n");
                system.content.push_str(instructions.trim());
            }
        }
        state.messages.extend(history);
        if let Ok(mut sessions) = self.sessions.lock() {
            sessions.insert(session.to_owned(), Arc::new(tokio::sync::Mutex::new(state)));
        }
    }

    /// Lets go of a session's live state (a seeded conversation once answered), and stops the
    /// background jobs it started: nobody is left to read them.
    pub fn forget(&self, session: &str) {
        if let Ok(mut sessions) = self.sessions.lock() {
            sessions.remove(session);
        }
        self.jobs.end_session(session);
    }

    /// The session's live state, loaded from disk (or started) on first use.
    fn state(&self, session: &str) -> Arc<tokio::sync::Mutex<SessionState>> {
        let Ok(mut sessions) = self.sessions.lock() else {
            return Arc::new(tokio::sync::Mutex::new(self.fresh_state(session, None)));
        };
        sessions
            .entry(session.to_owned())
            .or_insert_with(|| {
                let stored = self
                    .settings
                    .sessions
                    .as_ref()
                    .and_then(|s| s.load(session));
                Arc::new(tokio::sync::Mutex::new(self.fresh_state(session, stored)))
            })
            .clone()
    }

    fn fresh_state(&self, session: &str, stored: Option<Session>) -> SessionState {
        let folder = self
            .folder_set(session)
            .or_else(|| stored.as_ref()?.folder.clone())
            .unwrap_or_else(|| self.settings.started_in.clone());
        match stored {
            Some(s) if !s.messages.is_empty() => SessionState {
                folder,
                messages: s.messages,
                earlier: s.earlier,
                context: s.context,
                detector: LoopDetector::default(),
                told_yolo: Some(s.yolo),
                recalls: s.recalls,
                told_mcp: Vec::new(),
            },
            _ => SessionState {
                messages: vec![self.system_message(&folder)],
                folder,
                earlier: Vec::new(),
                context: ContextState::default(),
                detector: LoopDetector::default(),
                told_yolo: None,
                recalls: Vec::new(),
                told_mcp: Vec::new(),
            },
        }
    }

    /// The session's standing goal for this turn, counted against its budget (see [`crate::goal`]).
    pub(crate) fn goal_for_turn(&self, session: &str) -> Option<String> {
        let store = self.settings.sessions.as_ref()?;
        // Most tasks have no active goal: then the session file is neither parsed whole nor
        // rewritten here.
        store.goal(session).filter(|g| !g.paused)?;
        let mut note = None;
        if let Err(e) = store.update(session, |s| note = crate::goal::take_turn(&mut s.goal)) {
            tracing::warn!("the goal was not updated: {e}");
        }
        note
    }

    /// The system prompt for a session working in `folder`: the runtime's project, or the task's
    /// own folder when it has one elsewhere.
    pub(crate) fn system_message(&self, folder: &std::path::Path) -> Message {
        let (root, cwd) = if folder == self.settings.started_in {
            (self.settings.project_root.as_path(), folder)
        } else {
            (folder, folder)
        };
        Message::new(
            Role::System,
            system_prompt(root, cwd, self.settings.compact, &(self.settings.today)()),
        )
    }

    /// Writes the session to disk: after every step, so a killed process loses at most one. A
    /// failed write is logged and returned: the step after tries again, and a turn whose last
    /// write fails ends with it ([`FailureKind::Storage`](cairn_protocol::FailureKind)).
    pub(crate) fn save(
        &self,
        session: &str,
        first_text: &str,
        state: &SessionState,
        error: Option<(&str, &str)>,
        mark: Option<String>,
    ) -> Result<(), AgentError> {
        let Some(store) = &self.settings.sessions else {
            return Ok(());
        };
        let now = cairn_memory::now_ms();
        let mut record = store
            .load(session)
            .unwrap_or_else(|| Session::empty(session, self.settings.yolo, now));
        // A task made for its goal before anything was said takes its title from its first words.
        if record.title.is_empty() {
            record.title = title_of(first_text);
        }
        record.messages = state.messages.clone();
        record.earlier = state.earlier.clone();
        record.context = state.context.clone();
        record.recalls = state.recalls.clone();
        record.yolo = self.settings.yolo;
        // A folder chosen while this turn ran stays chosen.
        record.folder = Some(
            self.folder_set(session)
                .unwrap_or_else(|| state.folder.clone()),
        );
        record.updated_at = now;
        if let Some((place, message)) = error {
            record.errors.push(SessionError {
                at: now,
                place: place.to_owned(),
                message: message.to_owned(),
            });
        }
        if let Some(text) = mark {
            record.marks.push(SessionMark {
                at: now,
                message_index: state.messages.len(),
                position: Some(state.transcript_len()),
                text,
            });
        }
        store.save(&record).inspect_err(|e| {
            tracing::warn!("the session was not saved: {e}");
        })
    }
}

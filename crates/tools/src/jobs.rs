//! Background jobs (agent-loop.json `jobs`): commands a session left running — bash with
//! `background: true`, or one still running at its timeout — and subagents (task with
//! `background: true`), each with an id of the session's one sequence (job1, job2, …), its output
//! (a subagent's words and calls) in a temporary file, and the tools that list, read, stop and
//! (a subagent) message them. A job that ends leaves a note (the spec's mark first) that wakes its session: the
//! runtime reads it at the next step boundary of a running turn, or starts a turn of its own.

use std::collections::HashMap;
use std::fs::File;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::{json, Value};
use tokio::process::{Child, Command};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::texts::{
    fill, JOBS_FULL, JOB_ALREADY_ENDED, JOB_ENDED, JOB_NO_NEW_OUTPUT, JOB_SEND_EMPTY,
    JOB_SEND_ENDED, JOB_SEND_NOT_SUBAGENT, JOB_SENT, JOB_STOPPED, MARK_COMMAND, MARK_SUBAGENT,
    MARK_TO_SUBAGENT, NO_JOBS, SUBAGENT_REPORT, UNKNOWN_JOB,
};
use crate::{field, parse, Declaration, Tool, ToolContext, ToolFuture, ToolOutput};

/// How many background commands a session may have running at once (`jobs.running_max`).
pub const RUNNING_MAX: usize = 8;
/// Finished jobs kept per session, oldest forgotten first (`jobs.finished_kept`).
pub const FINISHED_KEPT: usize = 50;
/// Of a finished command's unread output, how much its note carries (`jobs.note_tail_chars`).
pub const NOTE_TAIL_CHARS: usize = 4000;

/// How a job is doing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JobState {
    Running,
    Exited(i32),
    /// Ended by a signal (or its status could not be read).
    Killed,
    /// Stopped with job_stop or with its session.
    Stopped,
    /// A subagent that gave its report.
    Finished,
    /// A subagent whose run failed.
    Failed,
}

impl JobState {
    /// "exited with code 0", "was stopped", …
    fn how(&self) -> String {
        match self {
            Self::Running => "is running".into(),
            Self::Exited(code) => format!("exited with code {code}"),
            Self::Killed => "was killed".into(),
            Self::Stopped => "was stopped".into(),
            Self::Finished => "finished".into(),
            Self::Failed => "failed".into(),
        }
    }

    fn label(&self) -> String {
        match self {
            Self::Running => "running".into(),
            Self::Exited(code) => format!("exit {code}"),
            Self::Killed => "killed".into(),
            Self::Stopped => "stopped".into(),
            Self::Finished => "done".into(),
            Self::Failed => "failed".into(),
        }
    }
}

/// One job as a list shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobInfo {
    pub id: String,
    pub command: String,
    pub state: JobState,
    pub elapsed: Duration,
}

struct Job {
    id: String,
    command: String,
    started: Instant,
    ended: Mutex<Option<Instant>>,
    state: Mutex<JobState>,
    /// Where its stdout and stderr go (read with positioned reads only: it writes at the file's
    /// position).
    output: File,
    /// Bytes of the output already given to the model.
    read: Mutex<u64>,
    /// Cancelled to stop it.
    stop: CancellationToken,
    /// Its process group (a command's).
    group: Option<u32>,
    /// Where job_send's messages go (a subagent's).
    inbox: Option<Inbox>,
}

impl Job {
    fn state(&self) -> JobState {
        lock(&self.state).clone()
    }

    fn elapsed(&self) -> Duration {
        lock(&self.ended)
            .unwrap_or_else(Instant::now)
            .duration_since(self.started)
    }

    /// The output not read yet (marked read now), from its end when longer than `max` chars.
    fn unread(&self, max: usize) -> String {
        let mut read = lock(&self.read);
        let bytes = self.output.metadata().and_then(|m| {
            crate::process::read_range(&self.output, *read, m.len().saturating_sub(*read))
        });
        let bytes = match bytes {
            Ok(bytes) => bytes,
            Err(e) => return format!("[error: the output cannot be read: {e}]"),
        };
        *read += bytes.len() as u64;
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let chars = text.chars().count();
        if chars <= max {
            return text;
        }
        let tail: String = text.chars().skip(chars - max).collect();
        format!("[… {} earlier characters not shown …]\n{tail}", chars - max)
    }

    /// Its last `max_bytes` of output, leaving what the model has read as it is.
    fn tail(&self, max_bytes: u64) -> String {
        let bytes = self.output.metadata().and_then(|m| {
            let from = m.len().saturating_sub(max_bytes);
            crate::process::read_range(&self.output, from, m.len() - from)
        });
        match bytes {
            Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
            Err(e) => format!("[error: the output cannot be read: {e}]"),
        }
    }
}

#[derive(Default)]
struct SessionJobs {
    next: u64,
    jobs: Vec<Arc<Job>>,
    /// Wake-up notes not delivered yet, in the order the jobs ended.
    notes: Vec<String>,
}

impl SessionJobs {
    fn running(&self) -> usize {
        self.jobs
            .iter()
            .filter(|j| j.state() == JobState::Running)
            .count()
    }
}

/// Hands a message to a running subagent; false when it cannot take it.
pub type Inbox = Arc<dyn Fn(&str) -> bool + Send + Sync>;

/// How a subagent's run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SubagentEnd {
    /// Its answer.
    Report(String),
    Failed(String),
    Stopped,
}

/// A subagent's run: given where to write what it says and does, and the token that stops it.
pub type SubagentWork =
    std::pin::Pin<Box<dyn std::future::Future<Output = SubagentEnd> + Send + 'static>>;

/// Every session's jobs, for one runtime.
pub struct Jobs {
    sessions: Mutex<HashMap<String, SessionJobs>>,
    woken: mpsc::UnboundedSender<String>,
    wakeups: Mutex<Option<mpsc::UnboundedReceiver<String>>>,
}

impl Default for Jobs {
    fn default() -> Self {
        let (woken, wakeups) = mpsc::unbounded_channel();
        Self {
            sessions: Mutex::default(),
            woken,
            wakeups: Mutex::new(Some(wakeups)),
        }
    }
}

/// Nothing a session left running outlives the runtime that ran it.
impl Drop for Jobs {
    fn drop(&mut self) {
        self.stop_all();
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

fn seconds(elapsed: Duration) -> String {
    format!("{} s", elapsed.as_secs())
}

impl Jobs {
    /// The sessions a job woke, in order (taken once, by whoever starts their wake-up turns).
    pub fn wakeups(&self) -> Option<mpsc::UnboundedReceiver<String>> {
        lock(&self.wakeups).take()
    }

    /// The notes of `session`'s jobs that ended since the last call.
    pub fn take_notes(&self, session: &str) -> Vec<String> {
        lock(&self.sessions)
            .get_mut(session)
            .map(|s| std::mem::take(&mut s.notes))
            .unwrap_or_default()
    }

    /// Leaves `note` for `session` (read at its next step boundary, or waking it), as a job's.
    pub fn deliver(&self, session: &str, note: String) {
        lock(&self.sessions)
            .entry(session.to_owned())
            .or_default()
            .notes
            .push(note);
        let _ = self.woken.send(session.to_owned());
    }

    /// Whether `session` has notes waiting.
    pub fn has_notes(&self, session: &str) -> bool {
        lock(&self.sessions)
            .get(session)
            .is_some_and(|s| !s.notes.is_empty())
    }

    /// `session`'s jobs, oldest first.
    pub fn list(&self, session: &str) -> Vec<JobInfo> {
        lock(&self.sessions)
            .get(session)
            .map(|s| {
                s.jobs
                    .iter()
                    .map(|job| JobInfo {
                        id: job.id.clone(),
                        command: job.command.clone(),
                        state: job.state(),
                        elapsed: job.elapsed(),
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// How many of `session`'s jobs run now.
    pub fn running_in(&self, session: &str) -> usize {
        lock(&self.sessions)
            .get(session)
            .map_or(0, SessionJobs::running)
    }

    /// How many jobs run now, across sessions.
    pub fn running(&self) -> usize {
        lock(&self.sessions)
            .values()
            .map(SessionJobs::running)
            .sum()
    }

    /// The end of job `id`'s output (at most `max_bytes`), for a person to look at: what the
    /// model has read stays as it is. `None`: no such job.
    pub fn peek(&self, session: &str, id: &str, max_bytes: u64) -> Option<String> {
        Some(self.find(session, id)?.tail(max_bytes))
    }

    /// Stops job `id` of `session` as job_stop does (a person asked); false when it does not run.
    pub fn stop(&self, session: &str, id: &str) -> bool {
        match self.find(session, id) {
            Some(job) if job.state() == JobState::Running => {
                job.stop.cancel();
                true
            }
            _ => false,
        }
    }

    fn find(&self, session: &str, id: &str) -> Option<Arc<Job>> {
        lock(&self.sessions)
            .get(session)?
            .jobs
            .iter()
            .find(|j| j.id == id)
            .cloned()
    }

    /// Stops every job of `session` and forgets them (the session was deleted).
    pub fn end_session(&self, session: &str) {
        if let Some(ended) = lock(&self.sessions).remove(session) {
            for job in ended.jobs {
                job.stop.cancel();
            }
        }
    }

    /// Stops every job of every session at once (the app quits: there is no waiting for their
    /// watchers).
    pub fn stop_all(&self) {
        for jobs in lock(&self.sessions).values() {
            for job in jobs.jobs.iter().filter(|j| j.state() == JobState::Running) {
                job.stop.cancel();
                crate::process::kill_group(job.group);
            }
        }
    }

    /// A new id of `session`'s sequence, or the refusal when it runs [`RUNNING_MAX`] commands.
    pub(crate) fn reserve(&self, session: &str) -> Result<String, String> {
        let mut sessions = lock(&self.sessions);
        let jobs = sessions.entry(session.to_owned()).or_default();
        let commands = jobs
            .jobs
            .iter()
            .filter(|j| j.inbox.is_none() && j.state() == JobState::Running)
            .count();
        if commands >= RUNNING_MAX {
            return Err(fill(JOBS_FULL, &[("n", &RUNNING_MAX.to_string())]));
        }
        jobs.next += 1;
        Ok(format!("job{}", jobs.next))
    }

    /// Starts a subagent as a job of `session` (`description` says what it works on): `work`
    /// runs it, writing what it says and does to the file it is given, until it reports, fails,
    /// or the token stops it. Its id, or why it cannot start.
    pub fn start_subagent(
        self: &Arc<Self>,
        session: &str,
        description: &str,
        inbox: Inbox,
        work: impl FnOnce(File, CancellationToken) -> SubagentWork,
    ) -> Result<String, String> {
        let output = tempfile::tempfile()
            .map_err(|e| format!("[error: no file for the subagent's output: {e}]"))?;
        let writer = output
            .try_clone()
            .map_err(|e| format!("[error: no file for the subagent's output: {e}]"))?;
        let id = {
            let mut sessions = lock(&self.sessions);
            let jobs = sessions.entry(session.to_owned()).or_default();
            jobs.next += 1;
            format!("job{}", jobs.next)
        };
        let job = Arc::new(Job {
            id: id.clone(),
            command: format!("subagent: {description}"),
            started: Instant::now(),
            ended: Mutex::new(None),
            state: Mutex::new(JobState::Running),
            output,
            read: Mutex::new(0),
            stop: CancellationToken::new(),
            group: None,
            inbox: Some(inbox),
        });
        self.register(session, job.clone());
        let run = work(writer, job.stop.clone());
        let jobs = Arc::downgrade(self);
        let session = session.to_owned();
        tokio::spawn(async move {
            let end = run.await;
            let state = match &end {
                SubagentEnd::Report(_) => JobState::Finished,
                SubagentEnd::Failed(_) => JobState::Failed,
                SubagentEnd::Stopped => JobState::Stopped,
            };
            *lock(&job.ended) = Some(Instant::now());
            let note = match &end {
                SubagentEnd::Report(report) => Some(format!(
                    "{}\n{SUBAGENT_REPORT}\n{}",
                    end_line(MARK_SUBAGENT, &job, &state),
                    report.trim_end()
                )),
                SubagentEnd::Failed(reason) => Some(format!(
                    "{}\n{}",
                    end_line(MARK_SUBAGENT, &job, &state),
                    reason.trim_end()
                )),
                SubagentEnd::Stopped => None,
            };
            ended(&jobs, &session, &job, state, note);
        });
        Ok(id)
    }

    /// Adds `job` to `session`'s list, forgetting the oldest finished ones past the limit.
    fn register(&self, session: &str, job: Arc<Job>) {
        let mut sessions = lock(&self.sessions);
        let jobs = sessions.entry(session.to_owned()).or_default();
        jobs.jobs.push(job);
        let finished = jobs
            .jobs
            .iter()
            .filter(|j| j.state() != JobState::Running)
            .count();
        let mut excess = finished.saturating_sub(FINISHED_KEPT);
        jobs.jobs.retain(|j| {
            let forget = excess > 0 && j.state() != JobState::Running;
            if forget {
                excess -= 1;
            }
            !forget
        });
    }

    /// Starts `command` (`bash -c`) in the background for `ctx`'s session; its id.
    pub fn start(self: &Arc<Self>, command: &str, ctx: &ToolContext) -> Result<String, String> {
        let id = self.reserve(&ctx.session)?;
        let mut bash = Command::new("bash");
        bash.arg("-c").arg(command);
        let (spawned, output) = crate::process::spawn_into_file(bash, ctx)
            .map_err(|e| format!("[error: bash cannot be started: {e}]"))?;
        self.adopt(&ctx.session, id.clone(), command, spawned, output, 0);
        Ok(id)
    }

    /// Keeps `child` (its output going to `output`, of which `read` bytes were already shown)
    /// running as job `id` of `session`, and watches for its end.
    pub(crate) fn adopt(
        self: &Arc<Self>,
        session: &str,
        id: String,
        command: &str,
        mut child: Child,
        output: File,
        read: u64,
    ) {
        let job = Arc::new(Job {
            id,
            command: command.to_owned(),
            started: Instant::now(),
            ended: Mutex::new(None),
            state: Mutex::new(JobState::Running),
            output,
            read: Mutex::new(read),
            stop: CancellationToken::new(),
            group: child.id(),
            inbox: None,
        });
        self.register(session, job.clone());
        let jobs = Arc::downgrade(self);
        let session = session.to_owned();
        tokio::spawn(async move {
            let group = job.group;
            let state = tokio::select! {
                status = child.wait() => match status.ok().and_then(|s| s.code()) {
                    Some(code) => JobState::Exited(code),
                    None => JobState::Killed,
                },
                _ = job.stop.cancelled() => JobState::Stopped,
            };
            // What it left running in its group goes with it.
            crate::process::kill_group(group);
            if state == JobState::Stopped {
                let _ = child.wait().await;
            }
            *lock(&job.ended) = Some(Instant::now());
            // A job the model stopped itself wakes nobody.
            let note = (state != JobState::Stopped).then(|| note(&job, &state));
            ended(&jobs, &session, &job, state, note);
        });
    }
}

/// Records a job's end and leaves its note for its session (waking it); its end and its note
/// appear together, so nobody sees it ended without its note.
fn ended(
    jobs: &std::sync::Weak<Jobs>,
    session: &str,
    job: &Job,
    state: JobState,
    note: Option<String>,
) {
    let Some(jobs) = jobs.upgrade() else {
        *lock(&job.state) = state;
        return;
    };
    {
        let mut sessions = lock(&jobs.sessions);
        *lock(&job.state) = state;
        match (sessions.get_mut(session), note) {
            (Some(entry), Some(note)) => entry.notes.push(note),
            _ => return,
        }
    }
    let _ = jobs.woken.send(session.to_owned());
}

/// `<mark>\n<id> (<command>) <how> after <elapsed>.`
fn end_line(mark: &str, job: &Job, state: &JobState) -> String {
    format!(
        "{mark}\n{}",
        fill(
            JOB_ENDED,
            &[
                ("id", &job.id),
                ("command", &job.command),
                ("how", &state.how()),
                ("elapsed", &seconds(job.elapsed())),
            ],
        )
    )
}

/// The wake-up message of a job that ended.
fn note(job: &Job, state: &JobState) -> String {
    let mut text = end_line(MARK_COMMAND, job, state);
    let unread = job.unread(NOTE_TAIL_CHARS);
    text.push('\n');
    if unread.trim().is_empty() {
        text.push_str(JOB_NO_NEW_OUTPUT);
    } else {
        text.push_str(unread.trim_end());
    }
    text
}

#[derive(Deserialize)]
struct JobId {
    id: String,
}

/// The session's job that a call's `id` names, or what to answer when there is none.
fn job_named(tool: &str, input: Value, ctx: &ToolContext) -> Result<Arc<Job>, String> {
    let input: JobId = parse(tool, input)?;
    ctx.jobs
        .find(&ctx.session, &input.id)
        .ok_or_else(|| fill(UNKNOWN_JOB, &[("id", &input.id)]))
}

fn id_parameters(what: &str) -> Value {
    json!({
        "type": "object",
        "properties": {"id": {"type": "string", "description": what}},
        "required": ["id"]
    })
}

/// `job_list`: the session's jobs.
pub struct JobList;

impl Tool for JobList {
    fn name(&self) -> &str {
        "job_list"
    }

    fn declaration(&self) -> Declaration {
        Declaration {
            name: "job_list".into(),
            description: "List this session's background jobs: id, state, time and command.".into(),
            parameters: json!({"type": "object", "properties": {}}),
        }
    }

    fn display(&self, _input: &Value) -> String {
        "🛠️  job_list".into()
    }

    fn run<'a>(&'a self, _input: Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let jobs = ctx.jobs.list(&ctx.session);
            if jobs.is_empty() {
                return ToolOutput::ok(NO_JOBS);
            }
            let lines: Vec<String> = jobs
                .iter()
                .map(|j| {
                    format!(
                        "{}  {}  {}  {}",
                        j.id,
                        j.state.label(),
                        seconds(j.elapsed),
                        j.command
                    )
                })
                .collect();
            ToolOutput::ok(lines.join("\n"))
        })
    }
}

/// `job_output`: what a job printed since it was last read, and how it is doing.
pub struct JobOutput;

impl Tool for JobOutput {
    fn name(&self) -> &str {
        "job_output"
    }

    fn declaration(&self) -> Declaration {
        Declaration {
            name: "job_output".into(),
            description: "Read what a background job printed since you last read it, and whether it is still running.".into(),
            parameters: id_parameters("The job's id, e.g. job1."),
        }
    }

    fn display(&self, input: &Value) -> String {
        format!("🛠️  job_output: {}", field(input, "id"))
    }

    fn run<'a>(&'a self, input: Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let job = match job_named("job_output", input, ctx) {
                Ok(job) => job,
                Err(refusal) => return ToolOutput::failed(refusal),
            };
            let state = job.state();
            let unread = job.unread(ctx.max_output);
            let head = format!(
                "[{} {} after {}: {}]",
                job.id,
                state.how(),
                seconds(job.elapsed()),
                job.command
            );
            let body = if unread.is_empty() {
                JOB_NO_NEW_OUTPUT.to_owned()
            } else {
                unread
            };
            ToolOutput::ok(format!("{head}\n{body}"))
        })
    }
}

/// `job_stop`: stops a job (and what it started).
pub struct JobStop;

impl Tool for JobStop {
    fn name(&self) -> &str {
        "job_stop"
    }

    fn declaration(&self) -> Declaration {
        Declaration {
            name: "job_stop".into(),
            description: "Stop a background job and every process it started.".into(),
            parameters: id_parameters("The job's id, e.g. job1."),
        }
    }

    fn display(&self, input: &Value) -> String {
        format!("🛠️  job_stop: {}", field(input, "id"))
    }

    fn run<'a>(&'a self, input: Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let job = match job_named("job_stop", input, ctx) {
                Ok(job) => job,
                Err(refusal) => return ToolOutput::failed(refusal),
            };
            let state = job.state();
            if state != JobState::Running {
                return ToolOutput::ok(fill(
                    JOB_ALREADY_ENDED,
                    &[("id", &job.id), ("how", &state.how())],
                ));
            }
            job.stop.cancel();
            // Its end is recorded by its watcher; wait for it briefly so a list shows it.
            for _ in 0..50 {
                if job.state() != JobState::Running {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            ToolOutput::ok(fill(JOB_STOPPED, &[("id", &job.id)]))
        })
    }
}

/// `job_send`: a message to a running subagent, read at its next step.
pub struct JobSend;

#[derive(Deserialize)]
struct SendInput {
    id: String,
    #[serde(default)]
    message: String,
}

impl Tool for JobSend {
    fn name(&self) -> &str {
        "job_send"
    }

    fn declaration(&self) -> Declaration {
        Declaration {
            name: "job_send".into(),
            description: "Tell a subagent you started (task with background: true) something while it works: it reads the message at its next step.".into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "id": {"type": "string", "description": "The subagent's job id, e.g. job2."},
                    "message": {"type": "string", "description": "What it should know or do."}
                },
                "required": ["id", "message"]
            }),
        }
    }

    fn display(&self, input: &Value) -> String {
        format!("🛠️  job_send: {}", field(input, "id"))
    }

    fn run<'a>(&'a self, input: Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let input: SendInput = match parse("job_send", input) {
                Ok(input) => input,
                Err(e) => return ToolOutput::failed(e),
            };
            let Some(job) = ctx.jobs.find(&ctx.session, &input.id) else {
                return ToolOutput::failed(fill(UNKNOWN_JOB, &[("id", &input.id)]));
            };
            let id = [("id", job.id.as_str())];
            let Some(inbox) = &job.inbox else {
                return ToolOutput::failed(fill(JOB_SEND_NOT_SUBAGENT, &id));
            };
            let state = job.state();
            if state != JobState::Running {
                return ToolOutput::failed(fill(
                    JOB_SEND_ENDED,
                    &[("id", &job.id), ("how", &state.how())],
                ));
            }
            let message = input.message.trim();
            if message.is_empty() {
                return ToolOutput::failed(fill(JOB_SEND_EMPTY, &id));
            }
            if inbox(&format!("{MARK_TO_SUBAGENT}\n{message}")) {
                ToolOutput::ok(fill(JOB_SENT, &id))
            } else {
                ToolOutput::failed(fill(
                    JOB_SEND_ENDED,
                    &[("id", &job.id), ("how", "finished")],
                ))
            }
        })
    }
}

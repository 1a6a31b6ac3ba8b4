//! The chat, one home for tasks and their turns whoever asks (the desktop's commands, the CLI, the
//! HTTP tasks API): the agent runtime built from the config on first use and rebuilt after a
//! change of model, the tasks with a turn running now (which the pet's view counts), the agent's
//! events as the UI's [`ChatEvent`]s, and compaction. A turn whose listener has gone is stopped.
//! Every event of every turn is also published to subscribers ([`Chat::subscribe`]: the windows
//! and the local API's event stream), and a turn may run with nobody but them listening
//! ([`Chat::start_detached`]: a task created over the API). So is every change to the task list
//! ([`TaskChanged`]: a turn starts or ends, a task is renamed or deleted), so no front end polls
//! for tasks; and the progress of scans of other agents' history ([`Chat::publish_scan`]).
//! What a task is (made, renamed, deleted) is in `chat_tasks.rs`.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use cairn_agent::{Event, Op, Runtime};
use cairn_protocol::{
    self as wire, AskQuestion, ChatEvent, NoticeAbout, ScanProgress, TaskChanged, TaskEvent,
    TaskJob,
};
use cairn_tools::{Answer, JobState, Jobs, QuestionKind};
use tokio::sync::{broadcast, mpsc};

use crate::{Cairn, Error, ModelChoice};

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// The runtime in `slot`, built from the config (keeping its jobs in `jobs`) when there is none;
/// a terminal's with its model and, for one turn, with nobody to ask.
fn current_runtime(
    slot: &Mutex<Option<Runtime>>,
    cairn: &Cairn,
    project_root: &std::path::Path,
    jobs: &Arc<Jobs>,
    terminal: Option<&TerminalChat>,
) -> Result<Runtime, Error> {
    let mut slot = slot
        .lock()
        .map_err(|_| Error::Internal("the runtime lock was poisoned".into()))?;
    if let Some(runtime) = slot.as_ref() {
        return Ok(runtime.clone());
    }
    let choice = terminal.map(|t| t.model.clone()).unwrap_or_default();
    let mut runtime = cairn
        .agent_runtime(choice, project_root.to_path_buf())?
        .with_jobs(jobs.clone());
    if terminal.is_some_and(|t| t.one_shot) {
        runtime = runtime.one_shot();
    }
    *slot = Some(runtime.clone());
    Ok(runtime)
}

/// What subscribers of [`Chat::subscribe`] receive: a task's event, or a scan's progress.
#[derive(Debug, Clone, PartialEq)]
pub enum Published {
    /// `attended`: the turn was started by someone who streams its events (the workbench, the
    /// CLI); not for a task created over the API or a job's wake-up, which only subscribers see.
    Task {
        event: TaskEvent,
        attended: bool,
    },
    Scan(ScanProgress),
    /// A task was made, changed, or deleted, or a turn started or ended in it.
    TaskChanged(TaskChanged),
}

/// How a chat run from a terminal (`cairn agent`) differs from the app's: its model comes from
/// the command line, its new tasks work in the folder it was started in, and it runs the turns
/// that jobs' ends wake itself (printing them), so the chat does not follow the wake-ups.
#[derive(Debug, Clone, Default)]
pub struct TerminalChat {
    /// The model given on the command line; what it leaves out comes from the config.
    pub model: ModelChoice,
    /// One turn with nobody to ask: calls that would ask are refused, ask_user answers itself.
    pub one_shot: bool,
}

/// The conversations of one app (or one server): its runtime and its running turns.
pub struct Chat {
    cairn: Cairn,
    /// Where the agent's tools start (the folder the app was started in).
    project_root: PathBuf,
    /// Built on the first message that finds a model configured; kept for the session history.
    runtime: Arc<Mutex<Option<Runtime>>>,
    /// The tasks' background jobs, kept across runtimes.
    jobs: Arc<Jobs>,
    /// Whether the jobs' wake-ups are followed yet (from the first runtime on).
    following: std::sync::atomic::AtomicBool,
    /// Sessions with a turn running now.
    running: Arc<Mutex<HashSet<String>>>,
    /// Where every turn's events are published.
    hub: broadcast::Sender<Published>,
    /// Folders chosen for tasks that have no file yet (kept across runtimes).
    folders: Mutex<std::collections::HashMap<String, PathBuf>>,
    /// Set when a terminal drives the chat.
    terminal: Option<TerminalChat>,
    /// The scan of other agents' history in progress, whichever door started it.
    scans: crate::scans::Scans,
}

impl Chat {
    pub fn new(cairn: Cairn, project_root: PathBuf) -> Self {
        Self {
            cairn,
            project_root,
            runtime: Arc::default(),
            jobs: Arc::default(),
            following: std::sync::atomic::AtomicBool::new(false),
            running: Arc::default(),
            hub: broadcast::channel(1024).0,
            folders: Mutex::default(),
            scans: crate::scans::Scans::default(),
            terminal: None,
        }
    }

    /// The chat of a terminal started in `folder` (see [`TerminalChat`]).
    pub fn in_terminal(cairn: Cairn, folder: PathBuf, terminal: TerminalChat) -> Self {
        Self {
            terminal: Some(terminal),
            ..Self::new(cairn, folder)
        }
    }

    /// The core the chat runs on.
    pub fn cairn(&self) -> &Cairn {
        &self.cairn
    }

    /// The scans of other agents' history (one at a time): pause, resume, stop.
    pub fn scans(&self) -> &crate::scans::Scans {
        &self.scans
    }

    /// Scans every detected, enabled source (or only `only`; `full` rereads every file), one
    /// scan at a time whichever door starts it; its progress goes to `on_progress` and to the
    /// subscribers. One report per source scanned. Blocking.
    pub fn scan_sources(
        &self,
        only: Option<&str>,
        full: bool,
        on_progress: &mut dyn FnMut(ScanProgress),
    ) -> Result<Vec<cairn_protocol::SourceReport>, Error> {
        self.scans.run(&self.cairn, only, full, &mut |progress| {
            self.publish_scan(progress.clone());
            on_progress(progress);
        })
    }

    /// Tells the subscribers how task `session` is now.
    pub(crate) fn publish_task(&self, session: &str) {
        publish_task(&self.hub, &self.cairn, &self.running, session);
    }

    /// Tells the subscribers that task `session` is gone.
    pub(crate) fn publish_removed(&self, session: &str) {
        let _ = self.hub.send(Published::TaskChanged(TaskChanged::Removed {
            session: session.to_owned(),
        }));
    }

    /// Where task `session` works: the folder chosen for it, else the one kept with it, else the
    /// folder a new task works in ([`Cairn::default_folder`]; a terminal's: where it started).
    pub fn task_folder(&self, session: &str) -> PathBuf {
        lock(&self.folders)
            .get(session)
            .cloned()
            .or_else(|| self.cairn.session_store().folder(session))
            .unwrap_or_else(|| match self.terminal {
                Some(_) => self.project_root.clone(),
                None => self.cairn.default_folder(),
            })
    }

    /// Moves task `session` to `folder` (checked: an existing folder), from its next turn on;
    /// the folder as it will be used.
    pub fn set_task_folder(&self, session: &str, folder: &str) -> Result<PathBuf, Error> {
        if let Some(problem) = cairn_agent::session_id_problem(session, "task") {
            return Err(Error::Invalid(problem));
        }
        let folder = self.cairn.checked_folder(folder)?;
        lock(&self.folders).insert(session.to_owned(), folder.clone());
        let built = lock(&self.runtime).clone();
        match built {
            Some(runtime) => runtime.set_folder(session, folder.clone()),
            None => {
                self.cairn
                    .session_store()
                    .update(session, |s| s.folder = Some(folder.clone()))
                    .map_err(Error::Agent)?;
            }
        }
        self.publish_task(session);
        Ok(folder)
    }

    /// Every task's events from now on, in the order they happen. A subscriber that falls more
    /// than 1,024 events behind misses the oldest (and is told how many).
    pub fn subscribe(&self) -> broadcast::Receiver<Published> {
        self.hub.subscribe()
    }

    /// Tells the subscribers how a scan of other agents' history is going.
    pub fn publish_scan(&self, progress: ScanProgress) {
        // Nobody subscribed is not an error.
        let _ = self.hub.send(Published::Scan(progress));
    }

    /// Starts `text` in `session` (created on first use) and runs the turn to its end with
    /// nobody but the subscribers listening: a turn only the local API's clients follow.
    pub fn start_detached(&self, session: &str, text: &str) -> Result<(), Error> {
        if text.trim().is_empty() {
            return Err(Error::Invalid("the message is empty".into()));
        }
        let mut turn = self.submit(
            session,
            Op::UserMessage {
                session: session.to_owned(),
                text: text.to_owned(),
                images: Vec::new(),
            },
        )?;
        turn.attended = false;
        tokio::spawn(async move { while turn.next().await.is_some() {} });
        Ok(())
    }

    /// The agent runtime, built from the config file on first use. Until a model is configured
    /// every call explains how to configure one, and the next call reads the config again.
    pub fn runtime(&self) -> Result<Runtime, Error> {
        let runtime = current_runtime(
            &self.runtime,
            &self.cairn,
            &self.project_root,
            &self.jobs,
            self.terminal.as_ref(),
        )?;
        self.follow_wakeups();
        Ok(runtime)
    }

    /// The tasks' background jobs.
    pub fn jobs(&self) -> &Arc<Jobs> {
        &self.jobs
    }

    /// Task `session`'s background jobs, oldest first.
    pub fn task_jobs(&self, session: &str) -> Vec<TaskJob> {
        self.jobs
            .list(session)
            .into_iter()
            .map(|job| {
                let (state, exit_code) = match job.state {
                    JobState::Running => (wire::JobState::Running, None),
                    JobState::Exited(code) => (wire::JobState::Exited, Some(code)),
                    JobState::Killed => (wire::JobState::Killed, None),
                    JobState::Stopped => (wire::JobState::Stopped, None),
                    JobState::Finished => (wire::JobState::Finished, None),
                    JobState::Failed => (wire::JobState::Failed, None),
                };
                TaskJob {
                    id: job.id,
                    command: job.command,
                    state,
                    exit_code,
                    elapsed_ms: u64::try_from(job.elapsed.as_millis()).unwrap_or(u64::MAX),
                }
            })
            .collect()
    }

    /// Opens a turn for each task a finished job woke (from the first call made where an async
    /// runtime runs). The turn waits for one running in the task to end (which may have read the
    /// note at a step boundary: then nothing happens); a note that arrives while a wake-up turn
    /// runs opens the next one. The turns' events go to the subscribers, as a detached turn's do.
    /// The follower holds the chat's parts weakly: it ends with the chat, and so do the jobs.
    fn follow_wakeups(&self) {
        let Ok(handle) = tokio::runtime::Handle::try_current() else {
            return;
        };
        if self.terminal.is_some() {
            return;
        }
        if self
            .following
            .swap(true, std::sync::atomic::Ordering::SeqCst)
        {
            return;
        }
        let Some(mut wakeups) = self.jobs.wakeups() else {
            return;
        };
        let (slot, jobs) = (Arc::downgrade(&self.runtime), Arc::downgrade(&self.jobs));
        let (cairn, root) = (self.cairn.clone(), self.project_root.clone());
        let (running, hub) = (self.running.clone(), self.hub.clone());
        let waking: Arc<Mutex<HashSet<String>>> = Arc::default();
        handle.spawn(async move {
            while let Some(session) = wakeups.recv().await {
                let (Some(slot), Some(jobs)) = (slot.upgrade(), jobs.upgrade()) else {
                    return;
                };
                // One wake-up turn at a time per task.
                if !lock(&waking).insert(session.clone()) {
                    continue;
                }
                let Ok(runtime) = current_runtime(&slot, &cairn, &root, &jobs, None) else {
                    lock(&waking).remove(&session);
                    continue;
                };
                let (running, hub, waking) = (running.clone(), hub.clone(), waking.clone());
                let cairn = cairn.clone();
                tokio::spawn(async move {
                    loop {
                        // Its notes may have been read already, at a step boundary of a turn
                        // that was running: then there is nothing to wake for.
                        if !runtime.jobs().has_notes(&session) {
                            lock(&waking).remove(&session);
                            return;
                        }
                        if let Ok(mut running) = running.lock() {
                            running.insert(session.clone());
                        }
                        publish_task(&hub, &cairn, &running, &session);
                        let events = runtime.submit(Op::Wake {
                            session: session.clone(),
                        });
                        let mut turn = ChatTurn {
                            events,
                            attended: false,
                            session: session.clone(),
                            runtime: runtime.clone(),
                            running: running.clone(),
                            hub: hub.clone(),
                            cairn: cairn.clone(),
                            finished: false,
                        };
                        while turn.next().await.is_some() {}
                        drop(turn);
                        lock(&waking).remove(&session);
                        // A note that came while this turn ran, and found it busy, goes next.
                        if !runtime.jobs().has_notes(&session)
                            || !lock(&waking).insert(session.clone())
                        {
                            return;
                        }
                    }
                });
            }
        });
    }

    /// Drops the runtime, so the next message builds it from the (changed) config file.
    pub fn reset(&self) {
        if let Ok(mut slot) = self.runtime.lock() {
            *slot = None;
        }
    }

    /// Starts `op` (a message or a restart) in `session`; its events come from the turn.
    pub fn submit(&self, session: &str, op: Op) -> Result<ChatTurn, Error> {
        // A task id becomes a file name: refused before anything runs, at every door.
        if let Some(problem) = cairn_agent::session_id_problem(session, "task") {
            return Err(Error::Invalid(problem));
        }
        // The turns captured so far may be written in Chinese: recall follows them.
        self.cairn.follow_embedder();
        let runtime = self.runtime()?;
        runtime.set_folder(session, self.task_folder(session));
        if let Ok(mut running) = self.running.lock() {
            running.insert(session.to_owned());
        }
        self.publish_task(session);
        let events = runtime.submit(op);
        Ok(ChatTurn {
            events,
            attended: true,
            session: session.to_owned(),
            runtime,
            running: self.running.clone(),
            hub: self.hub.clone(),
            cairn: self.cairn.clone(),
            finished: false,
        })
    }

    /// Delivers the notes of task `session`'s background jobs that ended, in a turn of its own
    /// (for a chat that does not follow the wake-ups itself: a terminal's).
    pub fn wake(&self, session: &str) -> Result<ChatTurn, Error> {
        self.submit(
            session,
            Op::Wake {
                session: session.to_owned(),
            },
        )
    }

    /// `/compact`: the task's history summarised for the model; the summary.
    pub async fn compact(&self, session: &str) -> Result<String, Error> {
        compact(&self.runtime()?, session).await
    }

    /// Stops the turn running in `session`: its commands are killed, its question cancelled.
    pub fn stop(&self, session: &str) -> Result<(), Error> {
        self.runtime()?.submit(Op::Stop {
            session: session.to_owned(),
        });
        Ok(())
    }

    /// The person's decision on an approval request.
    pub fn approve(&self, request: u64, allow: bool) -> Result<(), Error> {
        self.runtime()?.submit(Op::Approve { request, allow });
        Ok(())
    }

    /// The person's answers to `ask_user` (one per question), or `None` to decline.
    pub fn answer(&self, request: u64, answers: Option<Vec<String>>) -> Result<(), Error> {
        let answer = match answers {
            Some(answers) => Answer::Answered(answers),
            None => Answer::Declined,
        };
        self.runtime()?.submit(Op::Answer { request, answer });
        Ok(())
    }

    /// Withdraws an `ask_user` question nobody will answer (the input ended, or `/abort`).
    pub fn cancel_question(&self, request: u64) -> Result<(), Error> {
        self.runtime()?.submit(Op::Answer {
            request,
            answer: Answer::Cancelled,
        });
        Ok(())
    }

    /// The sessions with a turn running now (what the pet's badge counts, with the tasks finished
    /// lately: `Cairn::pet_state`).
    pub fn running(&self) -> HashSet<String> {
        self.running.lock().map(|r| r.clone()).unwrap_or_default()
    }
}

/// `/compact` on `runtime`: the session's history summarised for the model; the summary.
pub async fn compact(runtime: &Runtime, session: &str) -> Result<String, Error> {
    let mut events = runtime.submit(Op::Compact {
        session: session.to_owned(),
    });
    match events.recv().await {
        Some(Event::Compacted { summary }) => Ok(summary),
        Some(Event::Error { message, .. }) => Err(Error::Compact(message)),
        _ => Err(Error::Compact("the compaction did not finish".into())),
    }
}

/// One running turn: its events as the UI shows them. Dropped before it ends (nobody listens any
/// more), it stops the turn.
pub struct ChatTurn {
    events: mpsc::Receiver<Event>,
    /// Whether someone streams its events (see [`Published::Task`]).
    attended: bool,
    session: String,
    runtime: Runtime,
    running: Arc<Mutex<HashSet<String>>>,
    hub: broadcast::Sender<Published>,
    /// To read the task as it is once the turn ends.
    cairn: Cairn,
    finished: bool,
}

impl ChatTurn {
    /// The next event worth showing; `None` once the turn has ended.
    pub async fn next(&mut self) -> Option<ChatEvent> {
        loop {
            let Some(event) = self.events.recv().await else {
                self.finished = true;
                return None;
            };
            if matches!(
                event,
                Event::TurnComplete { .. } | Event::Stopped { .. } | Event::Error { .. }
            ) {
                self.finished = true;
            }
            if let Some(shown) = chat_event(event) {
                // Nobody subscribed is not an error.
                let _ = self.hub.send(Published::Task {
                    event: TaskEvent {
                        task: self.session.clone(),
                        event: shown.clone(),
                    },
                    attended: self.attended,
                });
                return Some(shown);
            }
        }
    }
}

impl Drop for ChatTurn {
    fn drop(&mut self) {
        if !self.finished {
            self.runtime.submit(Op::Stop {
                session: self.session.clone(),
            });
        }
        if let Ok(mut running) = self.running.lock() {
            running.remove(&self.session);
        }
        publish_task(&self.hub, &self.cairn, &self.running, &self.session);
    }
}

/// Tells `hub`'s subscribers how task `session` is now: as stored, or (a turn that has just
/// started in a task not stored yet) a new task.
fn publish_task(
    hub: &broadcast::Sender<Published>,
    cairn: &Cairn,
    running: &Mutex<HashSet<String>>,
    session: &str,
) {
    if hub.receiver_count() == 0 {
        return;
    }
    let running = lock(running).contains(session);
    let task = cairn
        .task_summary(session)
        .unwrap_or_else(|| crate::tasks::unstored(session, cairn_memory::now_ms()));
    // Nobody subscribed is not an error.
    let _ = hub.send(Published::TaskChanged(TaskChanged::Updated {
        task,
        running,
    }));
}

/// An agent event as the UI shows it; `None` for what it does not show (the model's reasoning).
pub fn chat_event(event: Event) -> Option<ChatEvent> {
    Some(match event {
        Event::Recalled { hits, items, .. } => ChatEvent::Recalled { hits, items },
        Event::Text(text) => ChatEvent::Text { text },
        Event::JobNote { text } => ChatEvent::JobNote { text },
        Event::ToolProgress { call_id, text } => ChatEvent::ToolProgress { call_id, text },
        Event::Reasoning(_) => return None,
        Event::Retrying { reason, after_ms } => ChatEvent::Retrying { reason, after_ms },
        Event::Status(status) => ChatEvent::Status { status },
        Event::Nudged { reason } => ChatEvent::Notice {
            text: format!("The reply was {reason}; Cairn asked the model again."),
            about: Some(NoticeAbout::Nudged { reason }),
        },
        Event::WrappedUp { limit } => ChatEvent::Notice {
            text: format!("The {limit} was reached; the model was asked for a final answer."),
            about: Some(NoticeAbout::WrappedUp { limit }),
        },
        Event::ToolCall {
            call_id,
            name,
            display,
            ..
        } => ChatEvent::Tool {
            call_id,
            name,
            display,
        },
        Event::ToolResult {
            call_id,
            output,
            failed,
            ..
        } => ChatEvent::ToolDone {
            call_id,
            output,
            failed,
        },
        Event::ApprovalRequest {
            request,
            tool,
            display,
            ..
        } => ChatEvent::Approval {
            request,
            tool,
            display,
        },
        Event::Question {
            request, questions, ..
        } => ChatEvent::Question {
            request,
            questions: questions
                .into_iter()
                .map(|q| AskQuestion {
                    question: q.question,
                    kind: match q.kind {
                        QuestionKind::Choice => wire::QuestionKind::Choice,
                        QuestionKind::Multi => wire::QuestionKind::Multi,
                        QuestionKind::Text => wire::QuestionKind::Text,
                        QuestionKind::Confirm => wire::QuestionKind::Confirm,
                    },
                    options: q.options,
                    default: q.default,
                })
                .collect(),
        },
        Event::Compacted { .. } => ChatEvent::Notice {
            text: "The earlier conversation was summarised to fit the model's context.".into(),
            about: Some(NoticeAbout::Compacted),
        },
        Event::Stopped { counters } => ChatEvent::Stopped {
            tools: counters.recap(),
        },
        Event::TurnComplete {
            usage,
            steps,
            turn_id,
            counters,
            unresolved,
            ..
        } => ChatEvent::Done {
            steps,
            input_tokens: usage.input_tokens,
            output_tokens: usage.output_tokens,
            turn_id,
            tools: counters.recap(),
            unresolved,
        },
        Event::Error { message, kind } => ChatEvent::Failed {
            message,
            class: kind,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasoning_is_not_shown_and_text_is() {
        assert_eq!(chat_event(Event::Reasoning("thinking".into())), None);
        assert_eq!(
            chat_event(Event::Text("Hello".into())),
            Some(ChatEvent::Text {
                text: "Hello".into()
            })
        );
    }
}

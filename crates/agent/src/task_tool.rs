//! `task`: hands part of the work to a subagent — a fresh Cairn agent on the same model, in the
//! same project, with the same tools but `task` — and gets its report back: at once, or, with
//! `background: true`, as a job of the session (agent-loop.json `jobs`) whose report wakes the
//! session when it ends, that job_output reads, job_send tells something, and job_stop stops.

use std::io::Write;
use std::sync::Arc;

use cairn_tools::texts::{fill, SUBAGENT_JOBS_STOPPED, SUBAGENT_STARTED};
use cairn_tools::{
    field, CancellationToken, Declaration, Inbox, SubagentEnd, Tool, ToolContext, ToolFuture,
    ToolOutput,
};
use serde_json::{json, Value};

use crate::{AgentError, Capacity, Event, Op, Runtime, Slot, ASK_WATCHDOG};

/// The step backstop of a subagent (`jobs.subagent_steps`).
pub const SUBAGENT_STEPS: usize = 50;

/// Starts a subagent's runtime (its calls refused when they would need someone to approve them:
/// nobody can, inside it), or says why it cannot start ([`AgentError::Start`]).
pub type SubagentStarter = Arc<dyn Fn() -> Result<Runtime, AgentError> + Send + Sync>;

pub struct Task {
    start: SubagentStarter,
    /// The model's slots beside the conversation's own; `None`: as many as are needed.
    capacity: Option<Capacity>,
}

impl Task {
    pub fn new(start: SubagentStarter, capacity: Option<Capacity>) -> Self {
        Self { start, capacity }
    }
}

const DESCRIPTION: &str = "Hand a self-contained part of the work to a subagent: a fresh agent with your tools (but task) in this project, that does not see this conversation. It works until done and reports back. Use it for a search or a piece of work whose details you do not need in your own context, or, with background: true, for work that can go on while you do something else (its report then comes to you when it finishes; job_output shows its progress, job_send tells it something, job_stop stops it).";

impl Tool for Task {
    fn name(&self) -> &str {
        "task"
    }

    fn declaration(&self) -> Declaration {
        Declaration {
            name: "task".into(),
            description: DESCRIPTION.into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "description": {"type": "string", "description": "What it works on, in a few words."},
                    "prompt": {"type": "string", "description": "The task, complete and self-contained: what to do, where, and what to report."},
                    "background": {"type": "boolean", "description": "Run it as a background job and go on working (default false: wait for its report)."}
                },
                "required": ["description", "prompt"]
            }),
        }
    }

    fn needs_permission(&self, _input: &Value, _ctx: &ToolContext) -> bool {
        true
    }

    fn display(&self, input: &Value) -> String {
        let background = input.get("background").and_then(Value::as_bool) == Some(true);
        format!(
            "🤖 task: {}{}",
            title(input),
            if background { " (background)" } else { "" }
        )
    }

    fn run<'a>(&'a self, input: Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let prompt = field(&input, "prompt").trim().to_owned();
            let title = title(&input);
            if prompt.is_empty() {
                return ToolOutput::failed(
                    "[task: the prompt is empty — say what the subagent must do and report]",
                );
            }
            // A background subagent is not started where the model cannot serve it beside this
            // conversation and the subagents already running (agent-loop.json `capacity`); one
            // waited for runs while this conversation waits, on the slot it leaves.
            let in_background = input.get("background").and_then(Value::as_bool) == Some(true);
            let slot = match self.capacity.as_ref().filter(|_| in_background) {
                None => None,
                Some(capacity) => match capacity.try_take() {
                    Some(slot) => Some(slot),
                    None if capacity.parallel <= 1 => {
                        return ToolOutput::failed(
                            "[task: this model serves one request at a time, so a subagent cannot run beside you. Do the work yourself.]",
                        )
                    }
                    None => {
                        return ToolOutput::failed(format!(
                            "[task: this model serves {} requests at once and all are busy: no subagent can start now. Do the work yourself, or wait for a subagent to finish.]",
                            capacity.parallel
                        ))
                    }
                },
            };
            let runtime = match (self.start)() {
                Ok(runtime) => runtime,
                Err(reason) => {
                    return ToolOutput::failed(format!(
                        "[task: the subagent cannot start: {reason}]"
                    ))
                }
            };
            let session = crate::ask_tool::fresh_session("task");
            // The subagent works in the task's folder.
            runtime.set_folder(&session, ctx.cwd.clone());
            if in_background {
                return background(runtime, session, &title, prompt, slot, ctx);
            }
            let show = |text: &str| {
                if let Some(progress) = &ctx.progress {
                    progress(text);
                }
            };
            match run_subagent(&runtime, &session, prompt, &ctx.cancel, &show).await {
                SubagentEnd::Report(report) => ToolOutput::ok(ctx.truncate(report)),
                SubagentEnd::Failed(reason) => ToolOutput::failed(ctx.truncate(reason)),
                SubagentEnd::Stopped => ToolOutput::failed("[task: the subagent was stopped]"),
            }
        })
    }
}

/// The description, or the prompt's first line.
fn title(input: &Value) -> String {
    let description = field(input, "description").trim();
    if description.is_empty() {
        field(input, "prompt")
            .lines()
            .next()
            .unwrap_or_default()
            .to_owned()
    } else {
        description.to_owned()
    }
}

/// Starts the subagent as a job of the session; what the model is told.
fn background(
    runtime: Runtime,
    session: String,
    title: &str,
    prompt: String,
    slot: Option<Slot>,
    ctx: &ToolContext,
) -> ToolOutput {
    let runtime = Arc::new(runtime);
    // Open while it runs: a message sent after that is refused, never lost.
    let open = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let inbox: Inbox = {
        let (jobs, session, open) = (runtime.jobs().clone(), session.clone(), open.clone());
        Arc::new(move |message: &str| {
            if !open.load(std::sync::atomic::Ordering::SeqCst) {
                return false;
            }
            jobs.deliver(&session, message.to_owned());
            true
        })
    };
    let started = ctx.jobs.start_subagent(
        &ctx.session,
        title,
        inbox,
        move |log: std::fs::File, stop: CancellationToken| {
            Box::pin(async move {
                let log = std::sync::Mutex::new(log);
                // Best effort: the log is for reading along.
                let write = |text: &str| {
                    if let Ok(mut log) = log.lock() {
                        let _ = log.write_all(text.as_bytes());
                    }
                };
                let end = run_subagent(&runtime, &session, prompt, &stop, &write).await;
                open.store(false, std::sync::atomic::Ordering::SeqCst);
                drop(slot);
                end
            })
        },
    );
    match started {
        Ok(id) => ToolOutput::ok(fill(
            SUBAGENT_STARTED,
            &[("id", &id), ("description", title)],
        )),
        Err(refusal) => ToolOutput::failed(refusal),
    }
}

/// Runs `prompt` as one turn of a fresh `session` of `runtime`, showing its words and calls as
/// they come, until its report, its failure, `stop`, or [`ASK_WATCHDOG`] of silence. Its own
/// background commands stop when it ends, and its report says so.
pub(crate) async fn run_subagent(
    runtime: &Runtime,
    session: &str,
    prompt: String,
    stop: &CancellationToken,
    show: &(dyn Fn(&str) + Sync),
) -> SubagentEnd {
    let mut events = runtime.submit(Op::UserMessage {
        session: session.to_owned(),
        text: prompt,
        images: Vec::new(),
    });
    let mut said = String::new();
    let end = loop {
        let event = tokio::select! {
            event = tokio::time::timeout(ASK_WATCHDOG, events.recv()) => event,
            _ = stop.cancelled() => {
                stop_turn(runtime, session, &mut events).await;
                break SubagentEnd::Stopped;
            }
        };
        match event {
            Ok(Some(Event::Text(text))) => {
                show(&text);
                said.push_str(&text);
            }
            Ok(Some(Event::ToolCall { display, .. })) => show(&format!("\n{display}\n")),
            Ok(Some(Event::ToolProgress { text, .. })) => show(&text),
            Ok(Some(Event::JobNote { text })) => show(&format!("\n{text}\n")),
            Ok(Some(Event::TurnComplete { answer, .. })) => {
                // A message that came during its last step is read before it reports.
                if runtime.jobs().has_notes(session) {
                    said.clear();
                    events = runtime.submit(Op::Wake {
                        session: session.to_owned(),
                    });
                    continue;
                }
                let report = if answer.trim().is_empty() {
                    said
                } else {
                    answer
                };
                break if report.trim().is_empty() {
                    SubagentEnd::Failed("[task: the subagent gave no report]".into())
                } else {
                    SubagentEnd::Report(report.trim().to_owned())
                };
            }
            Ok(Some(Event::Stopped { .. })) => break SubagentEnd::Stopped,
            Ok(Some(Event::Error { message, .. })) => {
                break SubagentEnd::Failed(format!("[task: the subagent failed: {message}]"))
            }
            Ok(Some(_)) => {}
            Ok(None) => {
                break SubagentEnd::Failed(
                    "[task: the subagent's run ended without a report]".into(),
                )
            }
            Err(_) => {
                runtime.submit(Op::Stop {
                    session: session.to_owned(),
                });
                break SubagentEnd::Failed(format!(
                    "[task: the subagent showed no sign of life for {} s]",
                    ASK_WATCHDOG.as_secs()
                ));
            }
        }
    };
    let left: Vec<String> = runtime
        .jobs()
        .list(session)
        .into_iter()
        .filter(|j| j.state == cairn_tools::JobState::Running)
        .map(|j| j.id)
        .collect();
    runtime.jobs().end_session(session);
    if left.is_empty() {
        return end;
    }
    let stopped = fill(SUBAGENT_JOBS_STOPPED, &[("ids", &left.join(", "))]);
    match end {
        SubagentEnd::Report(report) => SubagentEnd::Report(format!("{report}\n{stopped}")),
        SubagentEnd::Failed(reason) => SubagentEnd::Failed(format!("{reason}\n{stopped}")),
        SubagentEnd::Stopped => SubagentEnd::Stopped,
    }
}

/// Stops the subagent's turn and waits (briefly) until it has let go: nothing it does outlives
/// the stop.
async fn stop_turn(
    runtime: &Runtime,
    session: &str,
    events: &mut tokio::sync::mpsc::Receiver<Event>,
) {
    let wait = async {
        loop {
            runtime.submit(Op::Stop {
                session: session.to_owned(),
            });
            match tokio::time::timeout(std::time::Duration::from_millis(200), events.recv()).await {
                Ok(None | Some(Event::Stopped { .. } | Event::TurnComplete { .. })) => return,
                Ok(Some(Event::Error { .. })) => return,
                _ => {}
            }
        }
    };
    let _ = tokio::time::timeout(std::time::Duration::from_secs(5), wait).await;
}

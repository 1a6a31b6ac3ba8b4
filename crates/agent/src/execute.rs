//! Running one step's tool calls: at most `parallel.max` together, a call that waits on the person
//! alone, two calls on one file in order; permissions; the loop detector; context hygiene on
//! every result; counters.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cairn_llm::{Message, ToolCall};
use cairn_tools::texts::fill;
use cairn_tools::{
    Answer, Answers, Asker, CancellationToken, Counters, LoopVerdict, Question, Tool, ToolContext,
    ToolOutput,
};
use futures_util::future::join_all;
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

use crate::context::recall_arguments;
use crate::runtime::{Event, Reply, Runtime, SessionState};
use crate::spent::Spent;
use crate::texts::{BAD_ARGUMENTS, NOT_RUN_STOPPED, UNKNOWN_TOOL};

/// The calls of one model step and what save_answer may write.
pub(crate) struct StepCalls {
    pub session: String,
    pub calls: Vec<ToolCall>,
    pub this_message: String,
    pub previous_answer: Option<String>,
}

pub(crate) enum Outcome {
    Continue,
    Cancelled,
    LoopStopped(String),
}

pub(crate) struct StepOutcome {
    pub end: Outcome,
    /// Time spent waiting for the person.
    pub waited: Duration,
    /// The calls as captured into memory.
    pub captured: Vec<cairn_memory::ToolCall>,
    /// The ids of the calls the person, the mode or a rule refused, and of questions to the
    /// person: theirs to decide, not failures for the model to fix.
    pub refused: Vec<String>,
}

/// A call ready to run.
struct Planned {
    call: ToolCall,
    input: Value,
    tool: Option<Arc<dyn Tool>>,
    /// Its answer when it cannot run (bad JSON, unknown tool).
    early: Option<ToolOutput>,
}

/// The conversation in `messages` as another agent is told it: the person's words, the answers,
/// one line per tool call (never its output), newest kept within `max` characters.
fn conversation(messages: &[cairn_llm::Message], max: usize) -> String {
    use cairn_llm::Role;
    let mut lines: Vec<String> = Vec::new();
    for m in messages {
        match m.role {
            Role::User if !crate::is_runtime_text(&m.content) => {
                let words = crate::words_of(m).trim();
                if !words.is_empty() {
                    lines.push(format!("Person: {words}"));
                }
            }
            Role::Assistant => {
                if !m.content.trim().is_empty() {
                    lines.push(format!("You: {}", m.content.trim()));
                }
                for call in &m.tool_calls {
                    lines.push(format!("(called {} {})", call.name, call.arguments));
                }
            }
            _ => {}
        }
    }
    let mut kept: Vec<String> = Vec::new();
    let mut size = 0;
    for line in lines.into_iter().rev() {
        size += line.chars().count() + 1;
        if size > max {
            break;
        }
        kept.push(line);
    }
    kept.reverse();
    kept.join("\n")
}

impl Runtime {
    pub(crate) async fn run_calls(
        &self,
        step: StepCalls,
        state: &mut SessionState,
        cancel: &CancellationToken,
        tx: &mpsc::Sender<Event>,
        counters: &mut Counters,
        spent: &mut Spent,
    ) -> StepOutcome {
        let hands_off = step.calls.iter().any(|c| c.name == "ask_agent");
        let ctx = ToolContext {
            progress: None,
            conversation: if hands_off {
                conversation(&state.messages, self.settings.max_output)
            } else {
                String::new()
            },
            cwd: state.folder.clone(),
            session: step.session,
            cancel: cancel.clone(),
            max_output: self.settings.max_output,
            bash_timeout: self.settings.bash_timeout,
            asker: None,
            jobs: self.jobs.clone(),
            answers: Answers {
                this_message: step.this_message,
                previous: step.previous_answer,
            },
        };
        let waited = Arc::new(std::sync::Mutex::new(Duration::ZERO));
        let mut outcome = StepOutcome {
            end: Outcome::Continue,
            waited: Duration::ZERO,
            captured: Vec::new(),
            refused: Vec::new(),
        };
        let planned: Vec<Planned> = step.calls.into_iter().map(|c| self.plan(c)).collect();
        let mut batches: Vec<Vec<Planned>> = Vec::new();
        let mut files: HashSet<String> = HashSet::new();
        for p in planned {
            let alone = p.tool.as_ref().is_some_and(|t| t.waits_on_user());
            let file = p
                .tool
                .as_ref()
                .and_then(|t| t.target_file(&p.input))
                .map(|f| ctx.resolve(&f).display().to_string());
            let clash = file.as_ref().is_some_and(|f| files.contains(f));
            let start_new = match batches.last() {
                None => true,
                Some(last) => {
                    alone
                        || clash
                        || last.len() >= self.settings.max_parallel.max(1)
                        || last
                            .iter()
                            .any(|q| q.tool.as_ref().is_some_and(|t| t.waits_on_user()))
                }
            };
            if start_new {
                batches.push(Vec::new());
                files.clear();
            }
            if let Some(f) = file {
                files.insert(f);
            }
            if let Some(last) = batches.last_mut() {
                last.push(p);
            }
        }

        for batch in batches {
            if cancel.is_cancelled() {
                for p in batch {
                    state
                        .messages
                        .push(Message::tool_result(&p.call.id, NOT_RUN_STOPPED));
                }
                outcome.end = Outcome::Cancelled;
                continue;
            }
            let runs = batch
                .iter()
                .map(|p| self.run_one(p, &ctx, tx, waited.clone()));
            let results = join_all(runs).await;
            for (p, output) in batch.into_iter().zip(results) {
                if matches!(outcome.end, Outcome::LoopStopped(_)) {
                    state
                        .messages
                        .push(Message::tool_result(&p.call.id, NOT_RUN_STOPPED));
                    continue;
                }
                let mut output = output;
                // Not run by the person's choice or a rule (a team's lead gives work away).
                let not_run = |t: &Arc<dyn Tool>| {
                    output.text == t.rejected(&p.input)
                        || output.text == crate::team::texts::MANAGER
                };
                if p.tool
                    .as_ref()
                    .is_some_and(|t| t.waits_on_user() || (output.failed && not_run(t)))
                {
                    outcome.refused.push(p.call.id.clone());
                }
                let is_recall = p.tool.is_none() && p.early.is_none();
                if is_recall {
                    let (id, start, end) = recall_arguments(&p.input);
                    output.text = state.context.recall(&id, start, end);
                }
                // A result's id is new each time: the same result again is the same text after it.
                match state.detector.record(
                    &p.call.name,
                    &p.call.arguments,
                    without_result_id(&output.text),
                    output.failed,
                ) {
                    LoopVerdict::Fine => {}
                    LoopVerdict::Notice(notice) => {
                        output.text.push('\n');
                        output.text.push_str(notice);
                    }
                    LoopVerdict::Stop(error) => {
                        output.text = error.clone();
                        output.failed = true;
                        outcome.end = Outcome::LoopStopped(error);
                    }
                }
                if let Some(counter) = p.tool.as_ref().and_then(|t| t.counter()) {
                    counters.add(counter);
                }
                spent.output_bytes += output.text.len() as u64;
                let shown = if is_recall {
                    output.text.clone()
                } else {
                    state.context.insert(
                        &p.call.name,
                        &p.call.arguments,
                        &output.text,
                        &output.kind,
                    )
                };
                // `recall` shows a result of this session by an id that means nothing in another:
                // the memory keeps the call that made the result, not the recall.
                if !is_recall {
                    outcome.captured.push(cairn_memory::ToolCall {
                        id: p.call.id.clone(),
                        name: p.call.name.clone(),
                        input: p.input.clone(),
                        output: Some(without_result_id(&output.text).to_owned()),
                        is_error: output.failed,
                    });
                }
                let _ = tx
                    .send(Event::ToolResult {
                        call_id: p.call.id.clone(),
                        name: p.call.name.clone(),
                        output: shown.clone(),
                        failed: output.failed,
                    })
                    .await;
                state.messages.push(Message::tool_result(&p.call.id, shown));
            }
            if cancel.is_cancelled() && matches!(outcome.end, Outcome::Continue) {
                outcome.end = Outcome::Cancelled;
            }
        }
        outcome.waited = waited.lock().map(|w| *w).unwrap_or_default();
        outcome
    }

    fn plan(&self, call: ToolCall) -> Planned {
        let arguments = if call.arguments.trim().is_empty() {
            "{}"
        } else {
            call.arguments.as_str()
        };
        let input: Value = match serde_json::from_str(arguments) {
            Ok(v) => v,
            Err(e) => {
                let text = fill(
                    BAD_ARGUMENTS,
                    &[("name", &call.name), ("error", &e.to_string())],
                );
                return Planned {
                    call,
                    input: Value::Null,
                    tool: None,
                    early: Some(ToolOutput::failed(text)),
                };
            }
        };
        let tool = self.settings.tools.get(&call.name);
        let early = if tool.is_none() && call.name != "recall" {
            let mut names = self.settings.tools.names();
            names.push("recall".to_owned());
            Some(ToolOutput::failed(fill(
                UNKNOWN_TOOL,
                &[("name", &call.name), ("names", &names.join(", "))],
            )))
        } else {
            None
        };
        Planned {
            call,
            input,
            tool,
            early,
        }
    }

    /// One call: announced, approved when it must be, run.
    async fn run_one(
        &self,
        p: &Planned,
        ctx: &ToolContext,
        tx: &mpsc::Sender<Event>,
        waited: Arc<std::sync::Mutex<Duration>>,
    ) -> ToolOutput {
        let display = match &p.tool {
            Some(tool) => tool.display(&p.input),
            None => format!("{}: {}", p.call.name, p.call.arguments),
        };
        let _ = tx
            .send(Event::ToolCall {
                call_id: p.call.id.clone(),
                name: p.call.name.clone(),
                arguments: p.call.arguments.clone(),
                display: display.clone(),
            })
            .await;
        if let Some(early) = &p.early {
            return early.clone();
        }
        let Some(tool) = &p.tool else {
            // recall: answered from the session's stored results by the caller.
            return ToolOutput::ok("");
        };
        if let Some(manages) = &self.settings.manages {
            if manages(&ctx.session) && crate::team::manager_may_not(tool.as_ref(), &p.input, ctx) {
                return ToolOutput::failed(crate::team::texts::MANAGER);
            }
        }
        let guarded = self.settings.guard_folder
            && self.settings.interactive
            && tool.leaves_folder(&p.input, ctx);
        if guarded || (tool.needs_permission(&p.input, ctx) && !self.settings.yolo) {
            if !self.settings.interactive {
                return ToolOutput::failed(tool.rejected(&p.input));
            }
            let request = self.request_id();
            let (reply_tx, reply_rx) = oneshot::channel();
            if let Ok(mut pending) = self.pending.lock() {
                pending.insert(request, reply_tx);
            }
            let _ = tx
                .send(Event::ApprovalRequest {
                    request,
                    call_id: p.call.id.clone(),
                    tool: tool.name().to_owned(),
                    display,
                })
                .await;
            let asked = Instant::now();
            let allowed = tokio::select! {
                reply = reply_rx => matches!(reply, Ok(Reply::Approve(true))),
                _ = ctx.cancel.cancelled() => false,
            };
            if let Ok(mut w) = waited.lock() {
                *w += asked.elapsed();
            }
            if ctx.cancel.is_cancelled() {
                return ToolOutput::failed(NOT_RUN_STOPPED);
            }
            if !allowed {
                return ToolOutput::failed(tool.rejected(&p.input));
            }
        }
        let mut ctx = ctx.clone();
        let (call_id, progress_tx) = (p.call.id.clone(), tx.clone());
        ctx.progress = Some(Arc::new(move |text: &str| {
            let _ = progress_tx.try_send(Event::ToolProgress {
                call_id: call_id.clone(),
                text: text.to_owned(),
            });
        }));
        if tool.waits_on_user() && self.settings.interactive {
            ctx.asker = Some(Arc::new(EventAsker {
                runtime: self.clone(),
                call_id: p.call.id.clone(),
                tx: tx.clone(),
                waited,
            }));
        }
        tool.run(p.input.clone(), &ctx).await
    }
}

/// Puts ask_user's questions to the front end as a `Question` event and waits for `Op::Answer`.
struct EventAsker {
    runtime: Runtime,
    call_id: String,
    tx: mpsc::Sender<Event>,
    waited: Arc<std::sync::Mutex<Duration>>,
}

impl Asker for EventAsker {
    fn ask(
        &self,
        questions: Vec<Question>,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Answer> + Send>> {
        let runtime = self.runtime.clone();
        let call_id = self.call_id.clone();
        let tx = self.tx.clone();
        let waited = self.waited.clone();
        Box::pin(async move {
            let request = runtime.request_id();
            let (reply_tx, reply_rx) = oneshot::channel();
            if let Ok(mut pending) = runtime.pending.lock() {
                pending.insert(request, reply_tx);
            }
            let asked = Instant::now();
            let _ = tx
                .send(Event::Question {
                    request,
                    call_id,
                    questions,
                })
                .await;
            let answer = match reply_rx.await {
                Ok(Reply::Answer(answer)) => answer,
                _ => Answer::Cancelled,
            };
            if let Ok(mut w) = waited.lock() {
                *w += asked.elapsed();
            }
            answer
        })
    }
}

/// `text` without the `[#0004 …]` line that starts a recalled result.
fn without_result_id(text: &str) -> &str {
    match text.split_once('\n') {
        Some((first, rest)) if first.starts_with("[#") && first.ends_with(']') => rest,
        _ => text,
    }
}

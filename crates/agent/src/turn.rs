//! One turn: recall, then model steps with their tool calls until the model answers, a limit
//! wraps it up, the person stops it or the loop detector ends it; then capture. Also `/compact`.

use std::time::Instant;

use cairn_llm::{
    ChatRequest, Completion, FinishReason, Message, Role, StreamEvent, ToolChoice, ToolSpec,
};
use cairn_memory::{render_injection, SearchQuery, TurnCompletion, TurnStart};
use cairn_tools::texts::fill;
use cairn_tools::{CancellationToken, Counters};
use tokio::sync::mpsc;

use crate::context::{recall_declaration, ContextState};
use crate::error::AgentError;
use crate::execute::{Outcome, StepCalls};
use crate::honesty::{OpenFailure, Verdict};
use crate::prompt::{folder_name, user_message};
use crate::runtime::{RecalledMemory, Runtime, SessionState};
use crate::sessions::SessionRecall;
use crate::spent::Spent;
use crate::texts::{
    ANNOUNCED_REASON, COMPACT_ACK, COMPACT_REQUEST, COMPACT_SUMMARY, CUT_OFF_ERROR, EMPTY_ERROR,
    MARK_STOPPED, MARK_WRAPPED, MODE_ASK, MODE_YOLO, NOTE_FOLDER, NOTE_MCP, NOTE_MODE,
    NOT_RUN_WRAP_UP, NUDGE_CUT_OFF, NUDGE_EMPTY, NUDGE_THINKING_ONLY, OUTPUT_LIMIT, STEP_LIMIT,
    TIME_LIMIT, TOKEN_LIMIT, WRAP_UP,
};

/// Why a model step failed.
enum StepError {
    /// The conversation no longer fits the model's context.
    Overflow(AgentError),
    Other(AgentError),
}

impl From<StepError> for AgentError {
    fn from(e: StepError) -> Self {
        match e {
            StepError::Overflow(e) | StepError::Other(e) => e,
        }
    }
}

/// How one model step ended.
enum StepEnd {
    Done(Completion),
    Cancelled(Completion),
}

/// One turn's working state, carried from its preparation through the step loop to its end.
struct TurnRun<'a> {
    session: &'a str,
    /// What the person (or a job's note) said.
    text: &'a str,
    cancel: &'a CancellationToken,
    tx: &'a mpsc::Sender<Event>,
    /// The turn as captured in memory, while it is being captured.
    turn_id: Option<i64>,
    offer_tools: bool,
    /// The conversation's last answer before this turn (save_answer's "previous answer").
    previous_answer: Option<String>,
    /// Where this turn's messages begin (earlier ones are sent without their reasoning).
    turn_start: usize,
    /// Whether the history was already summarised once in this turn.
    compacted: bool,
    started: Instant,
    spent: Spent,
    counters: Counters,
    usage: cairn_llm::Usage,
    /// Nudges in a row.
    nudges: usize,
    reasoning: String,
    captured_calls: Vec<cairn_memory::ToolCall>,
    /// The tools of the latest step.
    tools: Vec<ToolSpec>,
    /// A failed call nothing has got past yet, and whether the model was told it again.
    open_failure: OpenFailure,
    /// What the next step may answer with: a call is required after a step announced and not
    /// taken.
    next_choice: ToolChoice,
    /// The line put under an answer given over a failure still open.
    unresolved: Option<String>,
}

/// How a turn's step loop ended.
enum TurnEnd {
    /// The model answered (after a wrap-up too, the transcript marked already).
    Answered(String),
    /// The person stopped the turn: the partial reply.
    Stopped(Completion),
    /// The reply could not be used (a loop stopped, cut off, empty): why.
    Unusable(String),
}

/// What a turn does after a model step.
enum AfterStep {
    /// Another step.
    Next,
    End(TurnEnd),
}

impl Runtime {
    pub(crate) async fn turn(
        &self,
        session: &str,
        text: &str,
        images: Vec<cairn_llm::Image>,
        state: &mut SessionState,
        cancel: &CancellationToken,
        tx: &mpsc::Sender<Event>,
    ) -> Result<(), AgentError> {
        let mut run = self.prepare(session, text, images, state, cancel, tx).await;
        let end = self.step_loop(&mut run, state).await?;
        self.finish(run, state, end).await
    }

    /// Before the first step: recall, the capture started, the notes for the model, and the
    /// person's message added to the conversation.
    async fn prepare<'a>(
        &self,
        session: &'a str,
        text: &'a str,
        images: Vec<cairn_llm::Image>,
        state: &mut SessionState,
        cancel: &'a CancellationToken,
        tx: &'a mpsc::Sender<Event>,
    ) -> TurnRun<'a> {
        // A wake-up's note is the harness's, not the person's: nothing is recalled for it, and
        // it is not captured as something the person asked.
        let machine = crate::is_job_note(text);
        let recalled = if machine {
            None
        } else {
            self.recall(session, text)
        };
        if let Some((hits, injection, items)) = &recalled {
            let _ = tx
                .send(Event::Recalled {
                    hits: *hits,
                    injection: injection.clone(),
                    items: items.clone(),
                })
                .await;
        }
        // Where the turn works: looked up once (it may read the session's file).
        let folder = self.folder(session);
        // Whether the message names a file of the folder: a small model's turns look (once).
        let names_files = self.settings.compact && crate::tool_need::names_files(text, &folder);
        let open_failure = OpenFailure::new(names_files, self.settings.compact);
        let turn_id = if machine {
            None
        } else {
            self.start_capture(session, text, &folder)
        };
        let offer_tools = crate::tool_need::offers_tools(
            self.settings.compact,
            text,
            names_files,
            &state.messages,
        );
        let previous_answer = last_answer(&state.messages);
        let note = self.turn_note(session, folder, offer_tools, state).await;
        // Kept with the session, so a reopened task still shows what this reply recalled.
        if let Some((_, _, items)) = &recalled {
            let position = state.transcript_len();
            state.recalls.retain(|r| r.position != position);
            state.recalls.push(SessionRecall {
                position,
                items: items.clone(),
            });
        }
        let injection = recalled.map(|(_, i, _)| i).unwrap_or_default();
        let today = (self.settings.today)();
        let system = state.messages.first().filter(|m| m.role == Role::System);
        let date_note = crate::prompt::needs_date_note(system.map(|m| m.content.as_str()), &today)
            .then_some(today);
        let turn_start = state.messages.len();
        let mut message = Message::new(
            Role::User,
            user_message(
                text,
                date_note.as_deref(),
                &note,
                &injection,
                self.settings.compact,
            ),
        );
        message.images = images;
        if message.content != text {
            message.words = Some(text.to_owned());
        }
        state.messages.push(message);
        TurnRun {
            session,
            text,
            cancel,
            tx,
            turn_id,
            offer_tools,
            previous_answer,
            turn_start,
            compacted: false,
            started: Instant::now(),
            spent: Spent::default(),
            counters: Counters::default(),
            usage: cairn_llm::Usage::default(),
            nudges: 0,
            reasoning: String::new(),
            captured_calls: Vec::new(),
            open_failure,
            next_choice: ToolChoice::Auto,
            unresolved: None,
            tools: self.tool_specs(offer_tools, &state.context),
        }
    }

    /// What the model is told with the person's message: a changed permission mode, a changed
    /// folder, the standing goal, and the instructions of MCP servers not told yet.
    async fn turn_note(
        &self,
        session: &str,
        folder: std::path::PathBuf,
        offer_tools: bool,
        state: &mut SessionState,
    ) -> String {
        let mut note = String::new();
        if state.told_yolo != Some(self.settings.yolo) && state.told_yolo.is_some() {
            let (mode, mode_text) = if self.settings.yolo {
                ("yolo", MODE_YOLO)
            } else {
                ("ask", MODE_ASK)
            };
            note = fill(NOTE_MODE, &[("mode", mode), ("mode_text", mode_text)]);
        }
        state.told_yolo = Some(self.settings.yolo);
        if folder != state.folder {
            if !note.is_empty() {
                note.push('\n');
            }
            note.push_str(&fill(NOTE_FOLDER, &[("name", &folder_name(&folder))]));
            state.folder = folder;
        }
        if let Some(goal) = self.goal_for_turn(session) {
            if !note.is_empty() {
                note.push('\n');
            }
            note.push_str(&goal);
        }
        if offer_tools {
            // MCP servers still starting get a moment (`mcp_wait_ms`) to offer their tools; the
            // instructions of one that connected are told once per session.
            self.settings.tools.settle().await;
            for (server, instructions) in self.settings.tools.instructions() {
                if state.told_mcp.contains(&server) {
                    continue;
                }
                if !note.is_empty() {
                    note.push('\n');
                }
                note.push_str(&fill(NOTE_MCP, &[("instructions", instructions.trim())]));
                state.told_mcp.push(server);
            }
        }
        note
    }

    /// Model steps with their tool calls until the model answers, a limit wraps the turn up, the
    /// person stops it or its reply cannot be used.
    async fn step_loop(
        &self,
        run: &mut TurnRun<'_>,
        state: &mut SessionState,
    ) -> Result<TurnEnd, AgentError> {
        loop {
            if let Some(limit) = self.limit_reached(&run.spent, run.started) {
                return self.wrap_up(run, state, limit).await;
            }
            run.spent.steps += 1;
            run.tools = self.tool_specs(run.offer_tools, &state.context);
            let choice = std::mem::take(&mut run.next_choice);
            let step = match self
                .step(
                    state,
                    run.turn_start,
                    &run.tools,
                    choice,
                    run.cancel,
                    run.tx,
                )
                .await
            {
                Ok(end) => end,
                // Too long for the model: the earlier turns become a summary, once per turn.
                Err(StepError::Overflow(error)) => {
                    if run.compacted || run.turn_start <= 1 {
                        return Err(error);
                    }
                    run.compacted = true;
                    let summary = self.compact(run.session, state, run.turn_start).await?;
                    run.turn_start = 3;
                    let _ = run.tx.send(Event::Compacted { summary }).await;
                    continue;
                }
                Err(StepError::Other(error)) => return Err(error),
            };
            let completion = match step {
                StepEnd::Done(c) => c,
                StepEnd::Cancelled(c) => return Ok(TurnEnd::Stopped(c)),
            };
            match self.after_step(run, state, completion).await {
                AfterStep::Next => continue,
                AfterStep::End(end) => return Ok(end),
            }
        }
    }

    /// A limit was reached: the model is asked for a last answer, and a tool call in it is not run.
    async fn wrap_up(
        &self,
        run: &mut TurnRun<'_>,
        state: &mut SessionState,
        limit: &str,
    ) -> Result<TurnEnd, AgentError> {
        let _ = run
            .tx
            .send(Event::WrappedUp {
                limit: limit.into(),
            })
            .await;
        state.messages.push(Message::new(
            Role::User,
            WRAP_UP.replace("{{limit}}", limit),
        ));
        let last = match self
            .step(
                state,
                run.turn_start,
                &run.tools,
                ToolChoice::Auto,
                run.cancel,
                run.tx,
            )
            .await
        {
            Ok(end) => end,
            Err(e) => return Err(e.into()),
        };
        let last = match last {
            StepEnd::Done(c) => c,
            StepEnd::Cancelled(c) => return Ok(TurnEnd::Stopped(c)),
        };
        add_usage(&mut run.usage, last.usage);
        let mut message = assistant_message(&last);
        // A tool call in that reply is not run.
        let unrun: Vec<Message> = last
            .tool_calls
            .iter()
            .map(|c| Message::tool_result(&c.id, NOT_RUN_WRAP_UP))
            .collect();
        message.reasoning = none_if_empty(&last.reasoning);
        state.messages.push(message);
        state.messages.extend(unrun);
        let mark = fill(MARK_WRAPPED, &[("limit", limit)]);
        // finish() writes the session again and ends the turn with a failed write.
        let _ = self.save(run.session, run.text, state, None, Some(mark));
        Ok(TurnEnd::Answered(last.text))
    }

    /// After a model step: its tool calls run, a nudge when it said nothing or was cut off, or
    /// the turn ends.
    async fn after_step(
        &self,
        run: &mut TurnRun<'_>,
        state: &mut SessionState,
        mut completion: Completion,
    ) -> AfterStep {
        read_calls_written_as_text(&mut completion, &run.tools, run.spent.steps);
        add_usage(&mut run.usage, completion.usage);
        run.spent.completion_tokens += completion.usage.output_tokens;
        run.reasoning.push_str(&completion.reasoning);

        if !completion.tool_calls.is_empty() && completion.finish != FinishReason::Length {
            run.nudges = 0;
            return self.run_step_calls(run, state, &completion).await;
        }

        let nothing_said = completion.text.trim().is_empty() && completion.tool_calls.is_empty();
        let cut_off = completion.finish == FinishReason::Length;
        if (nothing_said || cut_off) && run.nudges < self.settings.max_nudges {
            run.nudges += 1;
            let (reason, nudge) = if cut_off {
                ("cut off", NUDGE_CUT_OFF)
            } else if completion.reasoning.trim().is_empty() {
                ("empty", NUDGE_EMPTY)
            } else {
                ("thinking only", NUDGE_THINKING_ONLY)
            };
            let _ = run
                .tx
                .send(Event::Nudged {
                    reason: reason.into(),
                })
                .await;
            if !completion.text.is_empty() {
                let mut message = assistant_message(&completion);
                message.tool_calls.clear();
                state.messages.push(message);
            }
            state.messages.push(Message::new(Role::User, nudge));
            return AfterStep::Next;
        }
        // The nudges ran out: a fragment or nothing is not an answer, and is not remembered.
        if cut_off || nothing_said {
            let message = if cut_off { CUT_OFF_ERROR } else { EMPTY_ERROR };
            return AfterStep::End(TurnEnd::Unusable(message.to_owned()));
        }
        let mut message = assistant_message(&completion);
        message.tool_calls.clear();
        state.messages.push(message);
        let mut answer = completion.text;
        // Only a model that has tools can be asked to use them.
        let verdict = if !run.tools.is_empty() {
            run.open_failure.on_answer(&answer)
        } else {
            Verdict::Done
        };
        match verdict {
            Verdict::Done => {}
            // Answered over a failed call, or claiming a change no tool made: the model is told
            // once, with what to do, rather than the turn ending on a claim the tools contradict.
            Verdict::Retell { told, reason } => {
                let _ = run
                    .tx
                    .send(Event::Nudged {
                        reason: reason.into(),
                    })
                    .await;
                state.messages.push(Message::new(Role::User, told));
                return AfterStep::Next;
            }
            // Only the next step announced: it is asked for again with a call required. The
            // announcement leaves the history (the person saw it): a small model that reads it
            // again before the call's result only repeats it.
            Verdict::TakeStep => {
                let _ = run
                    .tx
                    .send(Event::Nudged {
                        reason: ANNOUNCED_REASON.into(),
                    })
                    .await;
                state.messages.pop();
                run.next_choice = ToolChoice::Required;
                return AfterStep::Next;
            }
            // Still failing: the reply says so whatever the model claimed.
            Verdict::Unresolved(line) => {
                let shown = format!("\n\n{line}");
                let _ = run.tx.send(Event::Text(shown.clone())).await;
                if let Some(last) = state.messages.last_mut() {
                    last.content.push_str(&shown);
                }
                answer.push_str(&shown);
                run.unresolved = Some(line);
            }
        }
        AfterStep::End(TurnEnd::Answered(answer))
    }

    /// Runs the tool calls of a step; the notes of jobs that ended meanwhile are told after them.
    async fn run_step_calls(
        &self,
        run: &mut TurnRun<'_>,
        state: &mut SessionState,
        completion: &Completion,
    ) -> AfterStep {
        state.messages.push(assistant_message(completion));
        let calls = StepCalls {
            session: run.session.to_owned(),
            calls: completion.tool_calls.clone(),
            this_message: completion.text.clone(),
            previous_answer: run.previous_answer.clone(),
        };
        let outcome = self
            .run_calls(
                calls,
                state,
                run.cancel,
                run.tx,
                &mut run.counters,
                &mut run.spent,
            )
            .await;
        // A call of a tool the step did not offer (an unknown name) is no work to finish.
        let offered = |name: &str| run.tools.iter().any(|t| t.name == name);
        for call in outcome.captured.iter().filter(|c| offered(&c.name)) {
            run.open_failure.record(
                &call.name,
                call.input["command"].as_str(),
                call.output.as_deref().unwrap_or_default(),
                call.is_error,
                outcome.refused.contains(&call.id),
            );
        }
        run.captured_calls.extend(outcome.captured.iter().cloned());
        run.spent.waited += outcome.waited;
        match outcome.end {
            Outcome::Continue => {
                // Jobs that ended meanwhile are told at this step boundary.
                for note in self.jobs.take_notes(run.session) {
                    let _ = run.tx.send(Event::JobNote { text: note.clone() }).await;
                    state.messages.push(Message::new(Role::User, note));
                }
                // A failed write is logged; the next step's write tries again.
                let _ = self.save(run.session, run.text, state, None, None);
                AfterStep::Next
            }
            Outcome::Cancelled => AfterStep::End(TurnEnd::Stopped(Completion::default())),
            Outcome::LoopStopped(message) => AfterStep::End(TurnEnd::Unusable(message)),
        }
    }

    /// After the step loop: the session saved, the capture completed, and the event that ends
    /// the turn.
    async fn finish(
        &self,
        run: TurnRun<'_>,
        state: &mut SessionState,
        end: TurnEnd,
    ) -> Result<(), AgentError> {
        let (session, text, tx) = (run.session, run.text, run.tx);
        match end {
            TurnEnd::Stopped(partial) => {
                self.capture_stopped(run.turn_id, &partial, run.reasoning, run.captured_calls);
                self.stopped(session, text, state, partial, run.counters, tx)
                    .await
            }
            TurnEnd::Unusable(message) => {
                // The unusable reply is what the person is told (a failed write is logged).
                let _ = self.save(session, text, state, Some(("generation", &message)), None);
                self.capture_failed(run.turn_id);
                let _ = tx
                    .send(Event::failed(&AgentError::Generation(message)))
                    .await;
                Ok(())
            }
            TurnEnd::Answered(answer) => {
                let saved = self.save(session, text, state, None, None);
                let captured = self.finish_capture(
                    run.turn_id,
                    &answer,
                    run.reasoning,
                    run.captured_calls,
                    "completed",
                );
                // An answer that could not be written ends the turn as a failure the person
                // sees (the task would come back without it), not as done.
                let end = match saved {
                    Ok(()) => Event::TurnComplete {
                        answer,
                        usage: run.usage,
                        steps: run.spent.steps,
                        counters: run.counters,
                        turn_id: run.turn_id.filter(|_| captured),
                        unresolved: run.unresolved,
                    },
                    Err(e) => Event::failed(&e),
                };
                let _ = tx.send(end).await;
                Ok(())
            }
        }
    }

    /// The limit spent, if any (agent-loop.json: checked between steps).
    fn limit_reached(&self, spent: &Spent, started: Instant) -> Option<&'static str> {
        let budgets = &self.settings.budgets;
        if spent.steps >= self.settings.max_steps {
            return Some(STEP_LIMIT);
        }
        let worked = started.elapsed().saturating_sub(spent.waited);
        if budgets.wall_seconds.is_some_and(|s| worked.as_secs() >= s) {
            return Some(TIME_LIMIT);
        }
        if budgets
            .output_bytes
            .is_some_and(|b| spent.output_bytes >= b)
        {
            return Some(OUTPUT_LIMIT);
        }
        if budgets
            .completion_tokens
            .is_some_and(|t| spent.completion_tokens >= t)
        {
            return Some(TOKEN_LIMIT);
        }
        None
    }

    /// Ends a stopped turn: the partial reply kept, the transcript marked.
    async fn stopped(
        &self,
        session: &str,
        text: &str,
        state: &mut SessionState,
        partial: Completion,
        counters: Counters,
        tx: &mpsc::Sender<Event>,
    ) -> Result<(), AgentError> {
        if !partial.text.is_empty() {
            state
                .messages
                .push(Message::new(Role::Assistant, partial.text.clone()));
        }
        let end = match self.save(session, text, state, None, Some(MARK_STOPPED.to_owned())) {
            Ok(()) => Event::Stopped { counters },
            Err(e) => Event::failed(&e),
        };
        let _ = tx.send(end).await;
        Ok(())
    }

    /// The tools of the next step: none when the turn offers none, else the toolbox's, and
    /// `recall` once a result was shortened.
    pub(crate) fn tool_specs(&self, offer: bool, context: &ContextState) -> Vec<ToolSpec> {
        if !offer {
            return Vec::new();
        }
        let mut specs: Vec<ToolSpec> = self
            .settings
            .tools
            .declarations()
            .into_iter()
            .map(|d| ToolSpec {
                name: d.name,
                description: d.description,
                parameters: d.parameters,
            })
            .collect();
        if !specs.is_empty() && context.shortened {
            let recall = recall_declaration();
            specs.push(ToolSpec {
                name: recall.name,
                description: recall.description,
                parameters: recall.parameters,
            });
        }
        specs
    }

    /// One model request, streaming its text and reasoning out as it comes; reasoning of earlier
    /// turns is not sent. A tool call whose arguments run away stops the generation.
    async fn step(
        &self,
        state: &SessionState,
        turn_start: usize,
        tools: &[ToolSpec],
        tool_choice: ToolChoice,
        cancel: &CancellationToken,
        tx: &mpsc::Sender<Event>,
    ) -> Result<StepEnd, StepError> {
        let messages = state
            .messages
            .iter()
            .enumerate()
            .map(|(i, m)| {
                let mut m = m.clone();
                if i < turn_start {
                    m.reasoning = None;
                }
                m
            })
            .collect();
        let request = ChatRequest {
            model: self.settings.model.clone(),
            messages,
            tools: tools.to_vec(),
            max_tokens: Some(self.settings.step_max_tokens),
            tool_choice,
        };
        // Until its first words the person sees what the turn waits for.
        let _ = tx
            .send(Event::Status(cairn_protocol::TurnStatus::Waiting {
                model: self.settings.model.clone(),
            }))
            .await;
        let mut stream = self.settings.provider.stream(request);
        let mut completion = Completion::default();
        let mut thinking = false;
        loop {
            let event = tokio::select! {
                event = stream.recv() => event,
                _ = cancel.cancelled() => return Ok(StepEnd::Cancelled(completion)),
            };
            let Some(event) = event else {
                return Err(StepError::Other(AgentError::Generation(
                    "the model stream ended without finishing".into(),
                )));
            };
            let event = event.map_err(|e| match e {
                cairn_llm::ProviderError::ContextOverflow(_) => StepError::Overflow(e.into()),
                e => StepError::Other(e.into()),
            })?;
            match &event {
                StreamEvent::Text(t) => {
                    let _ = tx.send(Event::Text(t.clone())).await;
                }
                StreamEvent::Reasoning(t) => {
                    if !thinking {
                        thinking = true;
                        let _ = tx
                            .send(Event::Status(cairn_protocol::TurnStatus::Thinking))
                            .await;
                    }
                    let _ = tx.send(Event::Reasoning(t.clone())).await;
                }
                StreamEvent::Progress(progress) => {
                    let status = match progress.clone() {
                        cairn_llm::Progress::LoadingModel { model } => {
                            cairn_protocol::TurnStatus::LoadingModel { model }
                        }
                        cairn_llm::Progress::ReadingPrompt { tokens, done } => {
                            cairn_protocol::TurnStatus::ReadingContext { tokens, done }
                        }
                    };
                    let _ = tx.send(Event::Status(status)).await;
                }
                StreamEvent::Retrying { reason, after_ms } => {
                    let _ = tx
                        .send(Event::Retrying {
                            reason: reason.clone(),
                            after_ms: *after_ms,
                        })
                        .await;
                }
                _ => {}
            }
            let index = match &event {
                StreamEvent::ToolCall { index, .. } => Some(*index),
                _ => None,
            };
            let done = completion.apply(event);
            if let Some(call) = index.and_then(|i| completion.tool_calls.get(i)) {
                if let Some(error) = cairn_tools::runaway(&call.arguments) {
                    return Err(StepError::Other(AgentError::Generation(error)));
                }
            }
            if done {
                return Ok(StepEnd::Done(completion));
            }
        }
    }

    /// Replaces the history before message `upto` by the model's summary of it, then the table
    /// of the files read; what follows `upto` (a turn in progress) is kept as it is.
    pub(crate) async fn compact(
        &self,
        session: &str,
        state: &mut SessionState,
        upto: usize,
    ) -> Result<String, AgentError> {
        let upto = upto.min(state.messages.len());
        let kept = state.messages.split_off(upto);
        let mut messages = state.messages.clone();
        for m in &mut messages {
            m.reasoning = None;
        }
        messages.push(Message::new(Role::User, COMPACT_REQUEST));
        let request = ChatRequest {
            model: self.settings.model.clone(),
            messages,
            tools: Vec::new(),
            max_tokens: None,
            tool_choice: Default::default(),
        };
        let summary = match cairn_llm::collect(self.settings.provider.stream(request)).await {
            Ok(completion) => completion.text,
            Err(e) => {
                state.messages.extend(kept);
                return Err(e.into());
            }
        };
        let table = state.context.compact();
        let mut carried = format!("{COMPACT_SUMMARY}\n\n{}", summary.trim());
        if !table.is_empty() {
            carried.push_str("\n\n");
            carried.push_str(&table);
        }
        // What was summarised stays on disk for the transcript, the summary marking the place.
        let summarised = std::mem::replace(
            &mut state.messages,
            vec![
                self.system_message(&state.folder),
                Message::new(Role::User, carried.clone()),
                Message::new(Role::Assistant, COMPACT_ACK),
            ],
        );
        state
            .earlier
            .extend(summarised.into_iter().filter(|m| m.role != Role::System));
        state.messages.extend(kept);
        self.save(session, "", state, None, None)?;
        Ok(carried)
    }

    /// Relevant memories from other sessions, rendered for the model.
    fn recall(&self, session: &str, text: &str) -> Option<(usize, String, Vec<RecalledMemory>)> {
        let memory = self.memory.as_ref()?;
        let mut query = SearchQuery::new(text).limit(self.settings.recall_limit);
        query.exclude_session = Some(session.to_owned());
        match memory.search(&query) {
            Ok(result) if !result.hits.is_empty() => {
                let items = result
                    .hits
                    .iter()
                    .map(|hit| RecalledMemory {
                        id: hit.memory.id,
                        source: hit.memory.source.clone(),
                        date: cairn_memory::date(hit.memory.created_at),
                        snippet: cairn_memory::snippet(hit.memory.text.trim(), 240),
                        score: hit.score,
                        channels: hit
                            .channels
                            .iter()
                            .map(|c| format!("{} #{}", c.channel, c.rank + 1))
                            .collect::<Vec<_>>()
                            .join(", "),
                        reason: hit.reason.clone(),
                        words: hit.words.clone(),
                        close_in_meaning: hit.close_in_meaning,
                    })
                    .collect();
                Some((result.hits.len(), render_injection(&result.hits), items))
            }
            Ok(_) => None,
            Err(e) => {
                tracing::warn!("recall failed, continuing without it: {e}");
                None
            }
        }
    }

    fn start_capture(&self, session: &str, text: &str, folder: &std::path::Path) -> Option<i64> {
        let memory = self.memory.as_ref().filter(|_| self.settings.capture)?;
        memory
            .start_turn(TurnStart {
                session: session.to_owned(),
                request: text.to_owned(),
                source: Some("cairn".into()),
                idempotency_key: None,
                started_at: None,
                workspace: Some(folder.display().to_string()),
            })
            .map_err(|e| tracing::warn!("the turn was not captured: {e}"))
            .ok()
    }

    /// A turn that ended in an error still keeps what the person said (a fact told, a task
    /// asked), with no answer and none of the failed calls.
    fn capture_failed(&self, turn_id: Option<i64>) {
        let _ = self.finish_capture(turn_id, "", String::new(), Vec::new(), "failed");
    }

    /// A turn the person stopped keeps what it said and did so far; its status says it was
    /// stopped, which rates it as going badly (the task abandoned).
    fn capture_stopped(
        &self,
        turn_id: Option<i64>,
        partial: &Completion,
        reasoning: String,
        calls: Vec<cairn_memory::ToolCall>,
    ) {
        let _ = self.finish_capture(
            turn_id,
            &partial.text,
            reasoning,
            calls,
            cairn_memory::STOPPED,
        );
    }

    /// Completes the turn's capture; whether it is in memory now.
    #[must_use]
    fn finish_capture(
        &self,
        turn_id: Option<i64>,
        answer: &str,
        reasoning: String,
        tool_calls: Vec<cairn_memory::ToolCall>,
        status: &str,
    ) -> bool {
        let (Some(memory), Some(turn_id)) = (&self.memory, turn_id) else {
            return false;
        };
        let done = TurnCompletion {
            answer: answer.to_owned(),
            reasoning: (!reasoning.is_empty()).then_some(reasoning),
            tool_calls,
            status: Some(status.to_owned()),
            ..TurnCompletion::default()
        };
        match memory.complete_turn(turn_id, done) {
            Ok(_) => true,
            Err(e) => {
                tracing::warn!("the turn was not captured: {e}");
                false
            }
        }
    }
}

use crate::runtime::Event;

/// The assistant message for a completion, its reasoning kept.
fn assistant_message(c: &Completion) -> Message {
    let mut message = Message::new(Role::Assistant, c.text.clone());
    message.tool_calls = c.tool_calls.clone();
    message.reasoning = none_if_empty(&c.reasoning);
    message
}

fn none_if_empty(text: &str) -> Option<String> {
    (!text.is_empty()).then(|| text.to_owned())
}

/// The conversation's last answer (for save_answer's "previous answer").
fn last_answer(messages: &[Message]) -> Option<String> {
    messages
        .iter()
        .rev()
        .find(|m| m.role == Role::Assistant && m.tool_calls.is_empty() && !m.content.is_empty())
        .map(|m| m.content.clone())
}

fn add_usage(total: &mut cairn_llm::Usage, more: cairn_llm::Usage) {
    total.input_tokens += more.input_tokens;
    total.output_tokens += more.output_tokens;
}

/// A reply with no tool calls whose text is calls to offered tools (a server that does not parse
/// its model's tool-call syntax passes it on as text): the calls are made, and the text keeps only
/// what was written for the person.
fn read_calls_written_as_text(completion: &mut Completion, tools: &[ToolSpec], step: usize) {
    if !completion.tool_calls.is_empty() || tools.is_empty() {
        return;
    }
    let offered: Vec<String> = tools.iter().map(|t| t.name.clone()).collect();
    let reply = cairn_llm::toolcall::parse(&completion.text, &offered);
    if reply.calls.is_empty() {
        return;
    }
    tracing::debug!(
        "{} tool call(s) written as text are made",
        reply.calls.len()
    );
    completion.text = reply.text;
    completion.tool_calls = reply
        .calls
        .into_iter()
        .enumerate()
        .map(|(i, call)| cairn_llm::ToolCall {
            id: format!("text_call_{step}_{i}"),
            name: call.name,
            arguments: call.arguments,
        })
        .collect();
    if completion.finish != FinishReason::Length {
        completion.finish = FinishReason::ToolCalls;
    }
}

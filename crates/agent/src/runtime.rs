//! The runtime: sessions held in memory, one turn at a time per `submit`, streamed as events.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use cairn_llm::{
    ChatRequest, Completion, FinishReason, Message, Provider, Role, StreamEvent, Usage,
};
use cairn_memory::{render_injection, MemoryStore, SearchQuery, TurnCompletion, TurnStart};
use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;

use crate::prompt::{system_prompt, user_message};
use crate::sessions::{title_of, Session, SessionError, SessionStore};
use crate::texts::{NUDGE_CUT_OFF, NUDGE_THINKING_ONLY, STEP_LIMIT, WRAP_UP};

/// What the runtime is asked to do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Op {
    /// A person's message in a session (created on first use).
    UserMessage { session: String, text: String },
}

/// What happens, in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Event {
    /// Memories recalled before the request (`hits` of them, rendered as `injection`).
    Recalled {
        hits: usize,
        injection: String,
    },
    Text(String),
    Reasoning(String),
    /// The model was asked again (a thinking-only or cut-off reply).
    Nudged {
        reason: String,
    },
    /// The step backstop was reached; the tools were withdrawn for a last answer.
    WrappedUp {
        limit: String,
    },
    /// The turn ended with this answer.
    TurnComplete {
        answer: String,
        usage: Usage,
        steps: usize,
    },
    /// The turn failed; the session keeps the person's message.
    Error {
        message: String,
    },
}

/// How the runtime works.
#[derive(Clone)]
pub struct AgentSettings {
    pub provider: Arc<dyn Provider>,
    pub model: String,
    /// The project root and the directory the session started in (for the environment block).
    pub project_root: PathBuf,
    pub started_in: PathBuf,
    /// agent-loop.json `steps.default`: a runaway backstop.
    pub max_steps: usize,
    /// agent-loop.json `nudges.max`: asks in a row.
    pub max_nudges: usize,
    /// Memories recalled before each request.
    pub recall_limit: usize,
    /// Today's date as `YYYY-MM-DD` (injected for tests).
    pub today: Arc<dyn Fn() -> String + Send + Sync>,
    /// Where sessions are kept between runs; in memory only when `None`.
    pub sessions: Option<SessionStore>,
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
            recall_limit: 6,
            today: Arc::new(cairn_memory::today),
            sessions: None,
        }
    }
}

/// The agent runtime.
#[derive(Clone)]
pub struct Runtime {
    settings: AgentSettings,
    memory: Option<Arc<MemoryStore>>,
    sessions: Arc<Mutex<HashMap<String, Vec<Message>>>>,
}

impl Runtime {
    /// A runtime; with `memory`, every turn recalls from it and is captured into it.
    pub fn new(settings: AgentSettings, memory: Option<Arc<MemoryStore>>) -> Self {
        Self {
            settings,
            memory,
            sessions: Arc::default(),
        }
    }

    /// Runs `op`; the events end with `TurnComplete` or `Error`.
    pub fn submit(&self, op: Op) -> mpsc::Receiver<Event> {
        let (tx, rx) = mpsc::channel(256);
        let this = self.clone();
        tokio::spawn(async move {
            match op {
                Op::UserMessage { session, text } => {
                    if let Err(message) = this.turn(&session, &text, &tx).await {
                        this.remember_error(&session, &text, &message);
                        let _ = tx.send(Event::Error { message }).await;
                    }
                }
            }
        });
        rx
    }

    async fn turn(
        &self,
        session: &str,
        text: &str,
        tx: &mpsc::Sender<Event>,
    ) -> Result<(), String> {
        let recalled = self.recall(session, text);
        if let Some((hits, injection)) = &recalled {
            let _ = tx
                .send(Event::Recalled {
                    hits: *hits,
                    injection: injection.clone(),
                })
                .await;
        }
        let turn_id = self.memory.as_ref().and_then(|memory| {
            memory
                .start_turn(TurnStart {
                    session: session.to_owned(),
                    request: text.to_owned(),
                    source: Some("cairn".into()),
                    idempotency_key: None,
                    started_at: None,
                    workspace: Some(self.settings.project_root.display().to_string()),
                })
                .map_err(|e| tracing::warn!("the turn was not captured: {e}"))
                .ok()
        });

        let mut messages = self.history(session);
        let injection = recalled.map(|(_, i)| i).unwrap_or_default();
        messages.push(Message::new(
            Role::User,
            user_message(text, &(self.settings.today)(), &injection),
        ));

        let mut usage = Usage::default();
        let mut nudges = 0;
        let mut steps = 0;
        let mut reasoning = String::new();
        let answer = loop {
            if steps >= self.settings.max_steps {
                let _ = tx
                    .send(Event::WrappedUp {
                        limit: STEP_LIMIT.into(),
                    })
                    .await;
                messages.push(Message::new(
                    Role::User,
                    WRAP_UP.replace("{{limit}}", STEP_LIMIT),
                ));
                let last = self.step(&messages, tx).await?;
                add_usage(&mut usage, last.usage);
                break last.text;
            }
            steps += 1;
            let completion = self.step(&messages, tx).await?;
            add_usage(&mut usage, completion.usage);
            reasoning.push_str(&completion.reasoning);
            let thinking_only =
                completion.text.trim().is_empty() && completion.tool_calls.is_empty();
            let cut_off = completion.finish == FinishReason::Length;
            if (thinking_only || cut_off) && nudges < self.settings.max_nudges {
                nudges += 1;
                let (reason, nudge) = if cut_off {
                    ("cut off", NUDGE_CUT_OFF)
                } else {
                    ("thinking only", NUDGE_THINKING_ONLY)
                };
                let _ = tx
                    .send(Event::Nudged {
                        reason: reason.into(),
                    })
                    .await;
                if !completion.text.is_empty() {
                    messages.push(Message::new(Role::Assistant, completion.text.clone()));
                }
                messages.push(Message::new(Role::User, nudge));
                continue;
            }
            break completion.text;
        };

        messages.push(Message::new(Role::Assistant, answer.clone()));
        self.store_history(session, text, messages);
        if let (Some(memory), Some(turn_id)) = (&self.memory, turn_id) {
            let done = TurnCompletion {
                answer: answer.clone(),
                reasoning: (!reasoning.is_empty()).then_some(reasoning),
                ..TurnCompletion::default()
            };
            if let Err(e) = memory.complete_turn(turn_id, done) {
                tracing::warn!("the turn was not captured: {e}");
            }
        }
        let _ = tx
            .send(Event::TurnComplete {
                answer,
                usage,
                steps,
            })
            .await;
        Ok(())
    }

    /// One model request, streaming its text and reasoning out as it comes.
    async fn step(
        &self,
        messages: &[Message],
        tx: &mpsc::Sender<Event>,
    ) -> Result<Completion, String> {
        let request = ChatRequest {
            model: self.settings.model.clone(),
            messages: messages.to_vec(),
            tools: Vec::new(),
            max_tokens: None,
        };
        let mut stream = self.settings.provider.stream(request);
        let mut completion = Completion::default();
        while let Some(event) = stream.recv().await {
            let event = event.map_err(|e| e.to_string())?;
            match &event {
                StreamEvent::Text(t) => {
                    let _ = tx.send(Event::Text(t.clone())).await;
                }
                StreamEvent::Reasoning(t) => {
                    let _ = tx.send(Event::Reasoning(t.clone())).await;
                }
                _ => {}
            }
            if completion.apply(event) {
                return Ok(completion);
            }
        }
        Err("the model stream ended without finishing".into())
    }

    /// Relevant memories from other sessions, rendered for the model.
    fn recall(&self, session: &str, text: &str) -> Option<(usize, String)> {
        let memory = self.memory.as_ref()?;
        let mut query = SearchQuery::new(text).limit(self.settings.recall_limit);
        query.exclude_session = Some(session.to_owned());
        match memory.search(&query) {
            Ok(result) if !result.hits.is_empty() => {
                Some((result.hits.len(), render_injection(&result.hits)))
            }
            Ok(_) => None,
            Err(e) => {
                tracing::warn!("recall failed, continuing without it: {e}");
                None
            }
        }
    }

    fn history(&self, session: &str) -> Vec<Message> {
        let cached = self
            .sessions
            .lock()
            .ok()
            .and_then(|s| s.get(session).cloned());
        let stored = || {
            self.settings
                .sessions
                .as_ref()?
                .load(session)
                .map(|s| s.messages)
        };
        cached.or_else(stored).unwrap_or_else(|| {
            vec![Message::new(
                Role::System,
                system_prompt(&self.settings.project_root, &self.settings.started_in),
            )]
        })
    }

    fn store_history(&self, session: &str, first_text: &str, messages: Vec<Message>) {
        if let Some(store) = &self.settings.sessions {
            let now = cairn_memory::now_ms();
            let mut record = stored_or_new(store, session, first_text, now);
            record.messages = messages.clone();
            record.updated_at = now;
            if let Err(e) = store.save(&record) {
                tracing::warn!("the session was not saved: {e}");
            }
        }
        if let Ok(mut sessions) = self.sessions.lock() {
            sessions.insert(session.to_owned(), messages);
        }
    }

    /// Keeps a failed turn's error with the session (the person's message is kept too).
    fn remember_error(&self, session: &str, text: &str, message: &str) {
        let Some(store) = &self.settings.sessions else {
            return;
        };
        let now = cairn_memory::now_ms();
        let mut record = stored_or_new(store, session, text, now);
        if record.messages.is_empty() {
            record.messages = self.history(session);
        }
        record.errors.push(SessionError {
            at: now,
            message: message.to_owned(),
        });
        record.updated_at = now;
        if let Err(e) = store.save(&record) {
            tracing::warn!("the session was not saved: {e}");
        }
    }
}

/// The stored session, or a new one titled after `first_text`.
fn stored_or_new(store: &SessionStore, id: &str, first_text: &str, now: i64) -> Session {
    store.load(id).unwrap_or_else(|| Session {
        id: id.to_owned(),
        title: title_of(first_text),
        created_at: now,
        updated_at: now,
        archived: false,
        messages: Vec::new(),
        errors: Vec::new(),
    })
}

fn add_usage(total: &mut Usage, more: Usage) {
    total.input_tokens += more.input_tokens;
    total.output_tokens += more.output_tokens;
}

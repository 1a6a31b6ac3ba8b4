//! The OpenAI-compatible chat other programs talk to (`/v1/chat/completions`): the caller sends the
//! whole conversation each time. Model `cairn` is Cairn's agent with its tools and memory;
//! `cairn/<provider>/<model>` the same agent on that model. When the caller brings its own tools,
//! the caller is the agent: the model gets the memory Cairn recalls and the caller's tools, and its
//! tool calls go back to the caller. Either way the exchange is captured into memory.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use cairn_agent::{Event, Op, Runtime};
use cairn_llm::{ChatRequest, Message, Role, StreamEvent, ToolCall, ToolChoice, ToolSpec};
use cairn_memory::{render_injection, MemoryStore, SearchQuery, TurnCompletion, TurnStart};
use cairn_protocol::openai::{ChatCompletionRequest, ChatMessage};
use cairn_protocol::ModelKind;
use tokio::sync::mpsc;

use crate::{Cairn, Error, ModelChoice};

/// The model name that means Cairn's agent on the default model.
pub const CAIRN_MODEL: &str = "cairn";
/// What captured exchanges are filed under.
const SOURCE: &str = "openai-api";

/// A streamed answer: the model's events, or why it broke off.
pub type CompatStream = mpsc::Receiver<Result<StreamEvent, String>>;

/// Agent runtimes kept warm at most (one per model asked for, the least recently used let go).
const WARM_RUNTIMES: usize = 4;

/// The endpoint's state: one agent runtime per model asked for, kept warm between requests.
pub struct CompatChat {
    cairn: Cairn,
    project_root: PathBuf,
    /// Most recently used last.
    runtimes: Mutex<Vec<(String, Runtime)>>,
}

impl CompatChat {
    pub fn new(cairn: Cairn, project_root: PathBuf) -> Self {
        Self {
            cairn,
            project_root,
            runtimes: Mutex::default(),
        }
    }

    /// The models a caller may name: `cairn`, then `cairn/<provider>/<model>` for every model of the
    /// config's providers and every installed local model.
    pub fn models(&self) -> Vec<String> {
        let mut models = vec![CAIRN_MODEL.to_owned()];
        if let Ok(config) = self.cairn.load_config() {
            for (name, provider) in &config.providers {
                models.extend(provider.models.iter().map(|m| format!("cairn/{name}/{m}")));
            }
            if let Some((provider, model)) = &config.default_model {
                let default = format!("cairn/{provider}/{model}");
                if !models.contains(&default) {
                    models.push(default);
                }
            }
        }
        models.extend(
            self.cairn
                .local_models()
                .into_iter()
                .filter(|m| m.kind == ModelKind::Language && m.installed)
                .map(|m| format!("cairn/{}/{}", cairn_config::BUILTIN_LOCAL_PROVIDER, m.name)),
        );
        models
    }

    /// Starts answering `request`; fails at once when the model or the conversation is unusable.
    /// Only a model [`CompatChat::models`] lists can be named: a name is never a path to open or
    /// a provider to invent.
    pub fn complete(&self, request: ChatCompletionRequest) -> Result<CompatStream, Error> {
        let choice = model_choice(&request.model)?;
        if !self.models().iter().any(|m| m == request.model.trim()) {
            return Err(unknown_model(&request.model));
        }
        let Some(last) = request.messages.last() else {
            return Err(Error::Invalid(
                "messages is empty: send at least one user message".into(),
            ));
        };
        if request.tools.is_empty() {
            if last.role != "user" {
                return Err(Error::Invalid(format!(
                    "the last message is the {}'s: Cairn's agent answers a user message (send tools to run your own tool loop)",
                    last.role
                )));
            }
            self.run_agent(&request, choice)
        } else {
            self.run_model(request, choice)
        }
    }

    /// Cairn's agent on the conversation: its earlier messages seeded, the last one asked.
    fn run_agent(
        &self,
        request: &ChatCompletionRequest,
        choice: ModelChoice,
    ) -> Result<CompatStream, Error> {
        let runtime = self.runtime(&request.model, choice)?;
        let session = crate::mint_task_id();
        let (instructions, mut history) = conversation(&request.messages);
        let prompt = history.pop().map(|m| m.content).unwrap_or_default();
        runtime.seed(&session, &instructions, history);
        let mut events = runtime.submit(Op::UserMessage {
            session: session.clone(),
            text: prompt,
            images: Vec::new(),
        });
        let (tx, rx) = mpsc::channel(64);
        let teams = self.cairn.teams.clone();
        tokio::spawn(async move {
            while let Some(event) = events.recv().await {
                let out = match event {
                    Event::Text(text) => Ok(StreamEvent::Text(text)),
                    Event::TurnComplete { usage, .. } => {
                        let _ = tx.send(Ok(StreamEvent::Usage(usage))).await;
                        Ok(StreamEvent::Done(cairn_llm::FinishReason::Stop))
                    }
                    Event::Stopped { .. } => Ok(StreamEvent::Done(cairn_llm::FinishReason::Stop)),
                    Event::Error { message, .. } => Err(message),
                    _ => continue,
                };
                if tx.send(out).await.is_err() {
                    // The caller hung up: stop the turn.
                    runtime.submit(Op::Stop {
                        session: session.clone(),
                    });
                    break;
                }
            }
            // The caller has its answer: whatever the turn started in the background ends with it.
            runtime.forget(&session);
            teams.end(&session);
        });
        Ok(rx)
    }

    /// The model alone, with the caller's tools and the memory Cairn recalls for the last user
    /// message; a final answer is captured.
    fn run_model(
        &self,
        request: ChatCompletionRequest,
        choice: ModelChoice,
    ) -> Result<CompatStream, Error> {
        let (provider, model) = self.cairn.provider(choice)?;
        let memory = self.cairn.memory().ok();
        let asked = request
            .messages
            .iter()
            .rev()
            .find(|m| m.role == "user")
            .map(ChatMessage::text)
            .unwrap_or_default();
        let mut messages = request
            .messages
            .iter()
            .map(to_llm_message)
            .collect::<Vec<_>>();
        if let Some(injection) = memory.as_ref().and_then(|m| recall(m, &asked)) {
            let at = messages
                .iter()
                .position(|m| m.role != Role::System)
                .unwrap_or(messages.len());
            messages.insert(at, Message::new(Role::System, injection));
        }
        let (tool_choice, only) = tool_choice(request.tool_choice.as_ref());
        let tools = request
            .tools
            .iter()
            .filter(|t| only.as_ref().is_none_or(|name| t.function.name == *name))
            .map(|t| ToolSpec {
                name: t.function.name.clone(),
                description: t.function.description.clone(),
                parameters: if t.function.parameters.is_null() {
                    serde_json::json!({"type": "object", "properties": {}})
                } else {
                    t.function.parameters.clone()
                },
            })
            .collect();
        let chat = ChatRequest {
            model,
            messages,
            tools,
            max_tokens: request.max_completion_tokens.or(request.max_tokens),
            tool_choice,
        };
        let ends_with_user = request.messages.last().is_some_and(|m| m.role == "user");
        let mut events = provider.stream(chat);
        let (tx, rx) = mpsc::channel(64);
        tokio::spawn(async move {
            let mut answer = String::new();
            while let Some(event) = events.recv().await {
                let event = event.map_err(|e| cairn_memory::redact(&e.to_string()).into_owned());
                if let Ok(StreamEvent::Text(text)) = &event {
                    answer.push_str(text);
                }
                let finished = matches!(event, Ok(StreamEvent::Done(_)) | Err(_));
                let stop = matches!(event, Ok(StreamEvent::Done(cairn_llm::FinishReason::Stop)));
                if tx.send(event).await.is_err() {
                    break;
                }
                if finished {
                    // An answer to the person's own message is a turn worth keeping; steps of
                    // the caller's tool loop are not.
                    if stop && ends_with_user && !answer.trim().is_empty() {
                        if let Some(memory) = memory {
                            let request = asked.clone();
                            let answer = answer.clone();
                            let _ = tokio::task::spawn_blocking(move || {
                                capture(&memory, &request, &answer)
                            })
                            .await;
                        }
                    }
                    break;
                }
            }
        });
        Ok(rx)
    }

    /// The warm runtime for `model`, built on first use.
    fn runtime(&self, model: &str, choice: ModelChoice) -> Result<Runtime, Error> {
        let mut runtimes = self
            .runtimes
            .lock()
            .map_err(|_| Error::Internal("the runtimes lock was poisoned".into()))?;
        let model = model.trim();
        if let Some(at) = runtimes.iter().position(|(name, _)| name == model) {
            let warm = runtimes.remove(at);
            let runtime = warm.1.clone();
            runtimes.push(warm);
            return Ok(runtime);
        }
        let runtime = self.cairn.api_runtime(choice, self.project_root.clone())?;
        if runtimes.len() >= WARM_RUNTIMES {
            runtimes.remove(0);
        }
        runtimes.push((model.to_owned(), runtime.clone()));
        Ok(runtime)
    }
}

/// What the caller's `tool_choice` asks: whether a call is required, and of which one tool
/// (`"none"` offers none: the empty name matches no tool).
fn tool_choice(asked: Option<&serde_json::Value>) -> (ToolChoice, Option<String>) {
    match asked {
        Some(serde_json::Value::String(choice)) if choice == "required" => {
            (ToolChoice::Required, None)
        }
        Some(serde_json::Value::String(choice)) if choice == "none" => {
            (ToolChoice::Auto, Some(String::new()))
        }
        Some(serde_json::Value::Object(named)) => match named["function"]["name"].as_str() {
            Some(name) => (ToolChoice::Required, Some(name.to_owned())),
            None => (ToolChoice::Auto, None),
        },
        _ => (ToolChoice::Auto, None),
    }
}

/// `cairn` or `cairn/<provider>/<model>`.
fn model_choice(model: &str) -> Result<ModelChoice, Error> {
    let model = model.trim();
    if model == CAIRN_MODEL {
        return Ok(ModelChoice::default());
    }
    match model.strip_prefix("cairn/") {
        Some(rest) if rest.contains('/') => Ok(ModelChoice {
            model: Some(rest.to_owned()),
            ..ModelChoice::default()
        }),
        _ => Err(unknown_model(model)),
    }
}

fn unknown_model(model: &str) -> Error {
    let mut shown: String = model.trim().chars().take(80).collect();
    if model.trim().chars().count() > 80 {
        shown.push('…');
    }
    Error::NotFound(format!(
        "the model {shown:?} does not exist: use \"cairn\" or \"cairn/<provider>/<model>\" for a model GET /v1/models lists"
    ))
}

/// The caller's system messages as one text, and the rest of the conversation.
fn conversation(messages: &[ChatMessage]) -> (String, Vec<Message>) {
    let instructions = messages
        .iter()
        .filter(|m| matches!(m.role.as_str(), "system" | "developer"))
        .map(ChatMessage::text)
        .collect::<Vec<_>>()
        .join("\n\n");
    let history = messages
        .iter()
        .filter(|m| !matches!(m.role.as_str(), "system" | "developer"))
        .map(to_llm_message)
        .collect();
    (instructions, history)
}

fn to_llm_message(message: &ChatMessage) -> Message {
    let role = match message.role.as_str() {
        "system" | "developer" => Role::System,
        "assistant" => Role::Assistant,
        "tool" => Role::Tool,
        _ => Role::User,
    };
    let mut out = Message::new(role, message.text());
    out.tool_call_id = message.tool_call_id.clone();
    out.tool_calls = message
        .tool_calls
        .iter()
        .map(|c| ToolCall {
            id: c.id.clone(),
            name: c.function.name.clone(),
            arguments: c.function.arguments.clone(),
        })
        .collect();
    out
}

/// The memory worth showing the model before it answers `asked`, as the agent's own injection.
fn recall(memory: &Arc<MemoryStore>, asked: &str) -> Option<String> {
    if asked.trim().is_empty() {
        return None;
    }
    match memory.search(&SearchQuery::new(asked)) {
        Ok(result) if !result.hits.is_empty() => Some(render_injection(&result.hits)),
        Ok(_) => None,
        Err(e) => {
            tracing::warn!("recall failed, answering without it: {e}");
            None
        }
    }
}

fn capture(memory: &MemoryStore, request: &str, answer: &str) {
    let started = memory.start_turn(TurnStart {
        session: format!("{SOURCE}-{}", std::process::id()),
        request: request.to_owned(),
        source: Some(SOURCE.into()),
        idempotency_key: None,
        started_at: None,
        workspace: None,
    });
    let done = started.and_then(|turn| {
        memory.complete_turn(
            turn,
            TurnCompletion {
                answer: answer.to_owned(),
                ..TurnCompletion::default()
            },
        )
    });
    if let Err(e) = done {
        tracing::warn!("the exchange was not captured: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_callers_tool_choice_is_read_as_openai_defines_it() {
        assert_eq!(tool_choice(None), (ToolChoice::Auto, None));
        assert_eq!(tool_choice(Some(&json!("auto"))), (ToolChoice::Auto, None));
        assert_eq!(
            tool_choice(Some(&json!("required"))),
            (ToolChoice::Required, None)
        );
        assert_eq!(
            tool_choice(Some(&json!("none"))),
            (ToolChoice::Auto, Some(String::new()))
        );
        assert_eq!(
            tool_choice(Some(
                &json!({"type": "function", "function": {"name": "get_weather"}})
            )),
            (ToolChoice::Required, Some("get_weather".into()))
        );
    }
}

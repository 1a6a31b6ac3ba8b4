//! `ask_agent` (agent-tools.md): hands a task to one of the config's agents (`[agents.<name>]`),
//! a Cairn agent run in-process with its own model, permission mode and tools, in a fresh session
//! per call; its answer is the call's result. Asked agents may ask others, two levels deep.

use std::sync::Arc;
use std::time::Duration;

use cairn_tools::{field, Declaration, Tool, ToolContext, ToolFuture, ToolOutput};
use serde_json::{json, Value};

use crate::{AgentError, Event, Op, Runtime};

/// How deep asked agents may nest (`MM_ASK_DEPTH`).
pub const MAX_ASK_DEPTH: usize = 2;
/// Silence from the asked agent longer than this ends the call (its watchdog).
pub const ASK_WATCHDOG: Duration = Duration::from_secs(300);

const DESCRIPTION: &str = "Hand a task to another agent and get its answer back. Use it when a task fits one of the agents below better than you, or to get a second opinion. The prompt must be complete and self-contained: the agent does not see this conversation unless with_context is true.";

/// Starts the runtime of agent `name` (one level deeper than the asking one), or says why it
/// cannot start ([`AgentError::Start`]).
pub type AgentStarter = Arc<dyn Fn(&str) -> Result<Runtime, AgentError> + Send + Sync>;

/// One agent the tool offers.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct AskableAgent {
    pub name: String,
    /// Its description, or `(no description)`.
    pub purpose: String,
    /// `provider/model`, or `the default model`.
    pub model: String,
}

/// The tool, over the agents in name order.
pub struct AskAgent {
    agents: Vec<AskableAgent>,
    /// How deep the asking agent is (0: the person's own).
    depth: usize,
    start: AgentStarter,
}

impl AskAgent {
    pub fn new(agents: Vec<AskableAgent>, depth: usize, start: AgentStarter) -> Self {
        let mut agents = agents;
        agents.sort();
        Self {
            agents,
            depth,
            start,
        }
    }

    fn names(&self) -> String {
        let names: Vec<&str> = self.agents.iter().map(|a| a.name.as_str()).collect();
        names.join(", ")
    }
}

impl Tool for AskAgent {
    fn name(&self) -> &str {
        "ask_agent"
    }

    fn declaration(&self) -> Declaration {
        let list: Vec<String> = self
            .agents
            .iter()
            .map(|a| format!("  {} — {}", a.name, a.purpose))
            .collect();
        Declaration {
            name: "ask_agent".into(),
            description: format!("{DESCRIPTION}\nAgents:\n{}", list.join("\n")),
            parameters: json!({
                "type": "object",
                "properties": {
                    "agent": {"type": "string", "description": "The agent's name."},
                    "prompt": {"type": "string", "description": "The task, complete and self-contained."},
                    "with_context": {"type": "boolean", "description": "Send this conversation before the prompt (default false)."}
                },
                "required": ["agent", "prompt"]
            }),
        }
    }

    fn needs_permission(&self, _input: &Value, _ctx: &ToolContext) -> bool {
        true
    }

    fn display(&self, input: &Value) -> String {
        let first = field(input, "prompt").lines().next().unwrap_or_default();
        let agent = field(input, "agent");
        match self.agents.iter().find(|a| a.name == agent) {
            Some(known) => format!("🗣 ask_agent: {agent} ({}) — {first}", known.model),
            None => format!("🗣 ask_agent: {agent} — {first}"),
        }
    }

    fn run<'a>(&'a self, input: Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let agent = field(&input, "agent").trim().to_owned();
            let prompt = field(&input, "prompt").trim().to_owned();
            if !self.agents.iter().any(|a| a.name == agent) {
                return ToolOutput::failed(format!(
                    "[ask_agent: unknown agent \"{agent}\" — agents: {}]",
                    self.names()
                ));
            }
            if prompt.is_empty() {
                return ToolOutput::failed(format!(
                    "[ask_agent: the prompt is empty — say what {agent} must do]"
                ));
            }
            if self.depth >= MAX_ASK_DEPTH {
                return ToolOutput::failed(format!(
                    "[ask_agent: {agent} cannot be asked from here: asked agents nest at most {MAX_ASK_DEPTH} levels deep — do the task yourself]"
                ));
            }
            let with_context = input.get("with_context").and_then(Value::as_bool) == Some(true);
            let task = if with_context && !ctx.conversation.is_empty() {
                format!(
                    "The conversation so far:\n{}\n\nYour task:\n{prompt}",
                    ctx.conversation
                )
            } else {
                prompt
            };
            let runtime = match (self.start)(&agent) {
                Ok(started) => started,
                Err(reason) => {
                    return ToolOutput::failed(format!("[ask_agent: {agent} failed: {reason}]"))
                }
            };
            ask(&runtime, &agent, task, ctx).await
        })
    }
}

/// A new in-memory session's name: `prefix` and the time in nanoseconds.
pub(crate) fn fresh_session(prefix: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!("{prefix}-{nanos}")
}

/// Runs `task` in a fresh session of `runtime` until its answer, its failure, the asking turn's
/// stop, or [`ASK_WATCHDOG`] of silence.
async fn ask(runtime: &Runtime, agent: &str, task: String, ctx: &ToolContext) -> ToolOutput {
    let session = fresh_session(&format!("ask-{agent}"));
    // The asked agent works in the asking task's folder.
    runtime.set_folder(&session, ctx.cwd.clone());
    let mut events = runtime.submit(Op::UserMessage {
        session: session.clone(),
        text: task,
        images: Vec::new(),
    });
    let mut said = String::new();
    let stopped = |said: &str, why: &str| {
        let mut text = said.trim_end().to_owned();
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(&format!(
            "[ask_agent: {agent} stopped before finishing: {why}]"
        ));
        ToolOutput::failed(ctx.truncate(text))
    };
    loop {
        let event = tokio::select! {
            event = tokio::time::timeout(ASK_WATCHDOG, events.recv()) => event,
            _ = ctx.cancel.cancelled() => {
                runtime.submit(Op::Stop { session });
                return stopped(&said, "the turn was stopped");
            }
        };
        let event = match event {
            Ok(Some(event)) => event,
            Ok(None) => return stopped(&said, "its run ended without an answer"),
            Err(_) => {
                runtime.submit(Op::Stop { session });
                let why = format!("no sign of life for {} s", ASK_WATCHDOG.as_secs());
                return stopped(&said, &why);
            }
        };
        let show = |text: &str| {
            if let Some(progress) = &ctx.progress {
                progress(text);
            }
        };
        match event {
            Event::Text(text) => {
                show(&text);
                said.push_str(&text);
            }
            // Its tool calls stream through the turn, titled with its name.
            Event::ToolCall { display, .. } => show(&format!("\n{agent} · {display}\n")),
            // What an agent it asked in turn is doing.
            Event::ToolProgress { text, .. } => show(&text),
            Event::TurnComplete { answer, .. } => {
                let answer = if answer.trim().is_empty() {
                    said
                } else {
                    answer
                };
                if answer.trim().is_empty() {
                    return ToolOutput::failed(format!("[ask_agent: {agent} gave no answer]"));
                }
                return ToolOutput::ok(ctx.truncate(answer.trim().to_owned()));
            }
            Event::Stopped { .. } => return stopped(&said, "it was stopped"),
            Event::Error { message, .. } => {
                return ToolOutput::failed(format!("[ask_agent: {agent} failed: {message}]"))
            }
            _ => {}
        }
    }
}

//! The request, message and stream types every provider shares.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    User,
    Assistant,
    Tool,
}

/// A tool call the model asked for; `arguments` is the JSON text as the model wrote it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    pub content: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// For a tool result: the call it answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// For an assistant message: the reasoning it came with (sent back within the current turn only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<String>,
    /// Images the person attached to a user message, kept as files (read when a request is sent).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<Image>,
    /// For a user message that carries more than the person wrote (the date, recalled memories):
    /// the person's own words, which a reopened task shows. Never sent to a model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub words: Option<String>,
}

/// An attached image: its MIME type and the file holding its bytes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Image {
    pub media_type: String,
    pub path: std::path::PathBuf,
}

impl Image {
    /// The file's bytes as base64, or `None` when it can no longer be read.
    pub fn base64(&self) -> Option<String> {
        use base64::Engine;
        match std::fs::read(&self.path) {
            Ok(bytes) => Some(base64::engine::general_purpose::STANDARD.encode(bytes)),
            Err(e) => {
                tracing::warn!("the attached image {} is gone: {e}", self.path.display());
                None
            }
        }
    }

    /// What the model is told in place of an image whose file is gone.
    pub fn missing_text(&self) -> String {
        format!(
            "[an attached image is no longer available: {}]",
            self.path.display()
        )
    }
}

impl Message {
    pub fn new(role: Role, content: impl Into<String>) -> Self {
        Self {
            role,
            content: content.into(),
            tool_calls: Vec::new(),
            tool_call_id: None,
            reasoning: None,
            images: Vec::new(),
            words: None,
        }
    }

    pub fn tool_result(call_id: impl Into<String>, content: impl Into<String>) -> Self {
        Self {
            role: Role::Tool,
            content: content.into(),
            tool_calls: Vec::new(),
            tool_call_id: Some(call_id.into()),
            reasoning: None,
            images: Vec::new(),
            words: None,
        }
    }
}

/// A tool the model may call, with its JSON Schema.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    pub parameters: serde_json::Value,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatRequest {
    pub model: String,
    pub messages: Vec<Message>,
    #[serde(default)]
    pub tools: Vec<ToolSpec>,
    #[serde(default)]
    pub max_tokens: Option<u32>,
    #[serde(default)]
    pub tool_choice: ToolChoice,
}

/// Whether the model may answer in words or must call one of the offered tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolChoice {
    /// Words or calls, as the model decides.
    #[default]
    Auto,
    /// A call (OpenAI's `"required"`, Anthropic's `{"type": "any"}`); Cairn's own model is held
    /// to the call grammar from its first token.
    Required,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
}

/// Why the model stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    #[default]
    Stop,
    /// It wants its tool calls run.
    ToolCalls,
    /// It hit the output limit mid-reply.
    Length,
    /// A content filter stopped it.
    Filtered,
}

/// What Cairn's own model does before its first words.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Progress {
    /// The model file is being loaded into memory.
    LoadingModel { model: String },
    /// The prompt is being read: `done` of `tokens` (those not already in the cache).
    ReadingPrompt { tokens: u64, done: u64 },
}

/// One piece of a streamed reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum StreamEvent {
    Text(String),
    Reasoning(String),
    /// A tool call begins (`id`, `name`) or continues (`arguments` appended), by its index.
    ToolCall {
        index: usize,
        id: Option<String>,
        name: Option<String>,
        arguments: String,
    },
    Usage(Usage),
    Done(FinishReason),
    /// Cairn's own model says what it does before it answers (for the person, not the reply).
    Progress(Progress),
    /// The request failed (`reason`) and is sent again after `after_ms`: a notice for the person,
    /// not part of the reply.
    Retrying {
        reason: String,
        after_ms: u64,
    },
}

/// A whole reply assembled from its events.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Completion {
    pub text: String,
    pub reasoning: String,
    pub tool_calls: Vec<ToolCall>,
    pub usage: Usage,
    pub finish: FinishReason,
}

impl Completion {
    /// Adds one event; returns true when the reply is finished.
    pub fn apply(&mut self, event: StreamEvent) -> bool {
        match event {
            StreamEvent::Text(t) => self.text.push_str(&t),
            StreamEvent::Reasoning(t) => self.reasoning.push_str(&t),
            StreamEvent::ToolCall {
                index,
                id,
                name,
                arguments,
            } => {
                while self.tool_calls.len() <= index {
                    self.tool_calls.push(ToolCall {
                        id: String::new(),
                        name: String::new(),
                        arguments: String::new(),
                    });
                }
                let call = &mut self.tool_calls[index];
                if let Some(id) = id {
                    call.id = id;
                }
                if let Some(name) = name {
                    call.name.push_str(&name);
                }
                call.arguments.push_str(&arguments);
            }
            StreamEvent::Usage(u) => self.usage = u,
            StreamEvent::Retrying { .. } | StreamEvent::Progress(_) => {}
            StreamEvent::Done(reason) => {
                self.finish = reason;
                return true;
            }
        }
        false
    }
}

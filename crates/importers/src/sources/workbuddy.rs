//! WorkBuddy: `${WORKBUDDY_CONFIG_DIR:-~/.workbuddy}/projects/**/*.jsonl`, one conversation per
//! file, in shapes that drift between versions, so every record is read tolerantly: the role comes
//! from `role`, `message.role`, `author.role` or the record's `type`/`kind`; content is a string,
//! `{text}` or a list of blocks (text, thinking, Anthropic-style `tool_use`/`tool_result`, or
//! OpenAI-style `tool_calls`); tool calls and results may also be records of their own, paired by
//! call id or, lacking one, by tool name. The person's text may wrap the real query in
//! `<user_query>` among reminder blocks: only the query is the person's. Compaction records
//! (summaries written for the model) are not the conversation.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::source::read_transcript;
use crate::turn::{git_root, strip_tag_blocks, unix_ms, Piece, TurnBuilder};
use crate::{HistorySource, ImportError, ImportedConversation, SourceEnv, SourceId};

/// WorkBuddy projects' transcripts.
pub struct WorkBuddy {
    root: PathBuf,
}

/// Blocks around the person's words that the agent adds.
const REMINDER_TAGS: &[&str] = &[
    "system-reminder",
    "system_reminder",
    "reminder",
    "user_info",
    "additional_data",
    "attached_files",
    "project_layout",
    "environment_context",
    "environment_details",
    "rules",
    "memories",
];

/// What a record is, by its role or type.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Role {
    Person,
    Model,
    ToolCall,
    ToolResult,
    Skip,
}

impl WorkBuddy {
    pub const ID: SourceId = SourceId {
        name: "workbuddy",
        label: "WorkBuddy",
    };

    pub fn new(env: &SourceEnv) -> Self {
        let root = Self::ID.folder(env, || {
            env.dir("WORKBUDDY_CONFIG_DIR", ".workbuddy")
                .join("projects")
        });
        Self { root }
    }

    /// Reads records already parsed (for tests and fuzzing): `file_stem` names the file.
    pub fn conversation(&self, records: &[Value], file_stem: &str) -> ImportedConversation {
        let id = records
            .iter()
            .find_map(|r| {
                [
                    "sessionId",
                    "session_id",
                    "conversationId",
                    "conversation_id",
                ]
                .iter()
                .find_map(|k| r.get(*k).and_then(Value::as_str))
                .filter(|s| !s.is_empty())
            })
            .unwrap_or(file_stem)
            .to_owned();
        let workspace = records
            .iter()
            .find_map(|r| {
                [
                    "cwd",
                    "projectRoot",
                    "projectPath",
                    "workspaceRoot",
                    "workspace",
                ]
                .iter()
                .find_map(|k| match r.get(*k) {
                    Some(Value::String(s)) => Some(s.as_str()),
                    Some(Value::Object(o)) => o.get("path").and_then(Value::as_str),
                    _ => None,
                })
                .filter(|s| !s.is_empty())
            })
            .map(str::to_owned);
        let title = records
            .iter()
            .rev()
            .filter(|r| record_role(r) == Role::Skip && !compaction(r))
            .find_map(|r| {
                ["customTitle", "title"]
                    .iter()
                    .find_map(|k| r.get(*k).and_then(Value::as_str))
                    .filter(|s| !s.trim().is_empty())
            })
            .map(str::to_owned);

        let mut reader = Reader {
            builder: TurnBuilder::new(&id),
            pending: Vec::new(),
            calls: 0,
            last_at: 0,
        };
        for record in records {
            reader.record(record);
        }
        ImportedConversation {
            id,
            title,
            git_root: workspace.as_deref().and_then(git_root),
            workspace,
            turns: reader.builder.finish(),
            malformed: 0,
        }
    }
}

/// Reads records in order into turns, pairing tool results that carry no call id.
struct Reader {
    builder: TurnBuilder,
    /// Calls still waiting for their result: (id, name).
    pending: Vec<(String, String)>,
    calls: usize,
    last_at: i64,
}

impl Reader {
    fn record(&mut self, record: &Value) {
        if !record.is_object() || compaction(record) {
            return;
        }
        let message = record.get("message").filter(|m| m.is_object());
        let at = [
            "timestamp",
            "time",
            "created_at",
            "createdAt",
            "updatedAt",
            "updated_at",
            "ts",
        ]
        .iter()
        .find_map(|k| record.get(*k).and_then(unix_ms))
        .or_else(|| message.and_then(|m| m.get("timestamp")).and_then(unix_ms))
        .unwrap_or(self.last_at);
        self.last_at = at;
        let role = record_role(record);
        let content = ["content", "text"]
            .iter()
            .find_map(|k| record.get(*k))
            .or_else(|| message.and_then(|m| m.get("content").or_else(|| m.get("text"))))
            .or_else(|| record.get("message").filter(|m| m.is_string()))
            .unwrap_or(&Value::Null);
        match role {
            Role::Person => {
                if let Value::Array(blocks) = content {
                    for b in blocks {
                        if block_type(b) == "tool_result" {
                            self.result(b, at);
                        }
                    }
                }
                let text = person_words(&text_of(content));
                if !text.is_empty() {
                    let id = ["uuid", "id", "messageId"]
                        .iter()
                        .find_map(|k| record.get(*k).or_else(|| message.and_then(|m| m.get(*k))))
                        .and_then(Value::as_str)
                        .map(str::to_owned);
                    self.pending.clear();
                    self.builder.push(Piece::Person { id, text, at });
                }
            }
            Role::Model => {
                match content {
                    Value::Array(blocks) => {
                        for b in blocks {
                            match block_type(b) {
                                "thinking" | "reasoning" => self.builder.push(Piece::Reasoning {
                                    text: b
                                        .get("thinking")
                                        .or_else(|| b.get("reasoning"))
                                        .or_else(|| b.get("text"))
                                        .map(text_of)
                                        .unwrap_or_default(),
                                }),
                                "tool_use" | "tool_call" | "toolCall" | "function_call" => {
                                    self.call(b, at)
                                }
                                "tool_result" => self.result(b, at),
                                _ => self.builder.push(Piece::Answer {
                                    text: text_of(b),
                                    at,
                                }),
                            }
                        }
                    }
                    other => self.builder.push(Piece::Answer {
                        text: text_of(other),
                        at,
                    }),
                }
                let tool_calls = record
                    .get("tool_calls")
                    .or_else(|| message.and_then(|m| m.get("tool_calls")))
                    .and_then(Value::as_array);
                for call in tool_calls.into_iter().flatten() {
                    self.call(call, at);
                }
            }
            Role::ToolCall => self.call(record, at),
            Role::ToolResult => match content {
                // A tool-role message of result blocks.
                Value::Array(blocks) if blocks.iter().any(|b| block_type(b) == "tool_result") => {
                    for b in blocks.iter().filter(|b| block_type(b) == "tool_result") {
                        self.result(b, at);
                    }
                }
                _ => self.result(record, at),
            },
            Role::Skip => {}
        }
    }

    /// A tool call: a record or block naming the tool, its input and (usually) a call id.
    fn call(&mut self, v: &Value, at: i64) {
        self.calls += 1;
        let function = v.get("function").filter(|f| f.is_object());
        let name = [
            v.get("name"),
            function.and_then(|f| f.get("name")),
            v.pointer("/tool/name"),
            v.get("toolName"),
            v.get("tool"),
        ]
        .into_iter()
        .flatten()
        .find_map(Value::as_str)
        .unwrap_or("tool")
        .to_owned();
        let id = call_id(v)
            .or_else(|| v.get("id").and_then(Value::as_str).map(str::to_owned))
            .unwrap_or_else(|| format!("call#{}", self.calls));
        let input = [
            v.get("input"),
            v.get("arguments"),
            v.get("args"),
            v.get("parameters"),
            function.and_then(|f| f.get("arguments")),
        ]
        .into_iter()
        .flatten()
        .find(|i| !i.is_null())
        .map(json_or_text)
        .unwrap_or(Value::Null);
        self.pending.push((id.clone(), name.clone()));
        self.builder.push(Piece::ToolCall {
            id,
            name,
            input,
            at,
        });
    }

    /// A tool result, paired by call id, else with the latest waiting call of the same tool, else
    /// with the latest waiting call.
    fn result(&mut self, v: &Value, at: i64) {
        let name = ["name", "toolName", "functionName", "tool_name"]
            .iter()
            .find_map(|k| v.get(*k).and_then(Value::as_str))
            .or_else(|| v.pointer("/tool/name").and_then(Value::as_str));
        // By call id; else (no id, or one no call has) the latest waiting call of the same tool,
        // else the latest waiting call.
        let explicit = call_id(v);
        let index = explicit
            .as_ref()
            .and_then(|id| self.pending.iter().rposition(|(p, _)| p == id))
            .or_else(|| name.and_then(|n| self.pending.iter().rposition(|(_, p)| p == n)))
            .or_else(|| self.pending.len().checked_sub(1));
        let Some((id, _)) = index
            .filter(|i| *i < self.pending.len())
            .map(|i| self.pending.remove(i))
        else {
            return; // no call is waiting for it
        };
        let output = [
            v.get("output"),
            v.get("result"),
            v.get("content"),
            v.pointer("/message/content"),
        ]
        .into_iter()
        .flatten()
        .find(|o| !o.is_null())
        .map(output_text)
        .unwrap_or_default();
        let is_error = ["is_error", "isError", "error"]
            .iter()
            .any(|k| v.get(*k).and_then(Value::as_bool) == Some(true))
            || v.get("status")
                .and_then(Value::as_str)
                .is_some_and(|s| s == "error" || s == "failed");
        self.builder.push(Piece::ToolResult {
            id,
            output,
            is_error,
            at,
        });
    }
}

/// A record written for compaction (a summary of earlier turns for the model).
fn compaction(record: &Value) -> bool {
    let flag = |k: &str| record.get(k).and_then(Value::as_bool) == Some(true);
    if flag("isCompactSummary")
        || flag("isCompacted")
        || flag("isMeta")
        || flag("isVisibleInTranscriptOnly")
    {
        return true;
    }
    let kind = ["type", "kind", "event_type", "subtype"]
        .iter()
        .filter_map(|k| record.get(*k).and_then(Value::as_str))
        .any(|t| {
            let t = t.to_ascii_lowercase();
            t == "summary" || t.contains("compact")
        });
    kind
}

/// A record's role from `role`, `message.role`, `author.role`, else its type.
fn record_role(record: &Value) -> Role {
    let explicit = [
        record.get("role"),
        record.pointer("/message/role"),
        record.pointer("/author/role"),
    ]
    .into_iter()
    .flatten()
    .find_map(Value::as_str);
    if let Some(role) = explicit.map(role_of).filter(|r| *r != Role::Skip) {
        return role;
    }
    if explicit.is_some() {
        return Role::Skip;
    }
    ["type", "kind", "event_type"]
        .iter()
        .filter_map(|k| record.get(*k).and_then(Value::as_str))
        .map(role_of)
        .find(|r| *r != Role::Skip)
        .unwrap_or(Role::Skip)
}

fn role_of(name: &str) -> Role {
    let n = name.to_ascii_lowercase().replace('-', "_");
    let n = n
        .strip_suffix("_message")
        .or_else(|| n.strip_suffix("_msg"))
        .unwrap_or(&n)
        .to_owned();
    match n.as_str() {
        "user" | "human" => Role::Person,
        "assistant" | "ai" | "model" | "bot" | "agent" => Role::Model,
        "tool"
        | "function"
        | "tool_result"
        | "toolresult"
        | "function_result"
        | "function_call_result"
        | "function_call_output"
        | "tool_output"
        | "tool_response"
        | "function_response" => Role::ToolResult,
        "tool_call" | "toolcall" | "tool_use" | "function_call" => Role::ToolCall,
        _ => Role::Skip,
    }
}

fn block_type(block: &Value) -> &str {
    block.get("type").and_then(Value::as_str).unwrap_or("text")
}

fn call_id(v: &Value) -> Option<String> {
    [
        "callId",
        "call_id",
        "tool_call_id",
        "toolCallId",
        "tool_use_id",
        "toolUseId",
    ]
    .iter()
    .find_map(|k| v.get(*k).and_then(Value::as_str))
    .filter(|s| !s.is_empty())
    .map(str::to_owned)
}

/// Text of a content value: a string, `{text}` (or `{text: {value}}`), or a list of text blocks.
fn text_of(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter(|b| matches!(block_type(b), "text" | "input_text" | "output_text"))
            .map(text_of)
            .filter(|t| !t.trim().is_empty())
            .collect::<Vec<_>>()
            .join("\n\n"),
        Value::Object(o) => match o
            .get("text")
            .or_else(|| o.get("content"))
            .or_else(|| o.get("value"))
        {
            Some(inner) if inner.is_string() || inner.is_object() || inner.is_array() => {
                text_of(inner)
            }
            _ => String::new(),
        },
        _ => String::new(),
    }
}

/// A tool output as text: a string, text blocks, or anything else as JSON.
fn output_text(output: &Value) -> String {
    match output {
        Value::String(s) => s.clone(),
        Value::Array(items)
            if items
                .iter()
                .all(|i| i.is_object() && i.get("text").is_some()) =>
        {
            text_of(output)
        }
        Value::Object(o) if o.get("text").is_some_and(Value::is_string) => text_of(output),
        Value::Object(o) if o.get("content").is_some() => {
            o.get("content").map(output_text).unwrap_or_default()
        }
        other => other.to_string(),
    }
}

fn json_or_text(value: &Value) -> Value {
    match value {
        Value::String(s) => serde_json::from_str::<Value>(s)
            .ok()
            .filter(|v| v.is_object() || v.is_array())
            .unwrap_or_else(|| value.clone()),
        other => other.clone(),
    }
}

/// The person's words: the `<user_query>` when the text has one, else the text without the
/// reminder blocks around it.
fn person_words(text: &str) -> String {
    let mut queries = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("<user_query>") {
        let body = rest.get(start + "<user_query>".len()..).unwrap_or("");
        match body.find("</user_query>") {
            Some(end) => {
                queries.push(body.get(..end).unwrap_or("").trim().to_owned());
                rest = body.get(end + "</user_query>".len()..).unwrap_or("");
            }
            None => {
                queries.push(body.trim().to_owned());
                rest = "";
            }
        }
    }
    if !queries.is_empty() {
        return queries
            .into_iter()
            .filter(|q| !q.is_empty())
            .collect::<Vec<_>>()
            .join("\n\n");
    }
    strip_tag_blocks(text, REMINDER_TAGS)
}

impl HistorySource for WorkBuddy {
    fn id(&self) -> SourceId {
        Self::ID
    }

    fn roots(&self) -> Vec<PathBuf> {
        vec![self.root.clone()]
    }

    fn read(&self, file: &Path) -> Result<Vec<ImportedConversation>, ImportError> {
        let transcript = read_transcript(file)?;
        let mut conversation = self.conversation(&transcript.records, &transcript.stem);
        conversation.malformed = transcript.malformed;
        Ok(vec![conversation])
    }
}

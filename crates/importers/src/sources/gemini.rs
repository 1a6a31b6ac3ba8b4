//! Gemini CLI: `~/.gemini/tmp/<sha256 of the project path>/chats/session-*.json` (one document
//! `{sessionId, projectHash, startTime, lastUpdated, messages}`) and the newer `session-*.jsonl`
//! (a header line, one line per message, a message written again when it changes, and
//! `{"$set": …}` lines patching the header). `user` messages are the person's, `gemini` messages
//! carry the answer, thoughts and tool calls with their results; `info`/`error` lines are the UI's.
//! Only a hash of the project path is on disk, so there is no workspace unless a record names one.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::source::{files_under, has_extension, parse_json_lines};
use crate::turn::{git_root, strip_tag_blocks, unix_ms, Piece, TurnBuilder};
use crate::{HistorySource, ImportError, ImportedConversation, SourceEnv, SourceId};

/// Gemini CLI chat recordings.
pub struct Gemini {
    root: PathBuf,
}

impl Gemini {
    pub const ID: SourceId = SourceId {
        name: "gemini",
        label: "Gemini CLI",
    };

    pub fn new(env: &SourceEnv) -> Self {
        let root = Self::ID.folder(env, || {
            // Gemini CLI resolves its home from GEMINI_CLI_HOME when set.
            let home = env
                .vars
                .get("GEMINI_CLI_HOME")
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
                .unwrap_or_else(|| env.home.clone());
            home.join(".gemini").join("tmp")
        });
        Self { root }
    }

    /// Reads records already parsed (for tests and fuzzing): the whole document of a `.json`
    /// file as one record, or the lines of a `.jsonl` file. `file_stem` names the file.
    pub fn conversation(&self, records: &[Value], file_stem: &str) -> ImportedConversation {
        let mut header = Map::new();
        let mut messages: Vec<&Value> = Vec::new();
        let mut by_id: HashMap<&str, usize> = HashMap::new();
        for record in records {
            let Value::Object(fields) = record else {
                continue;
            };
            if let Some(Value::Object(set)) = fields.get("$set") {
                for (key, value) in set {
                    if key == "messages" {
                        for m in value.as_array().into_iter().flatten() {
                            upsert(m, &mut messages, &mut by_id);
                        }
                    } else {
                        header.insert(key.clone(), value.clone());
                    }
                }
                continue;
            }
            if fields.contains_key("type") && !fields.contains_key("messages") {
                upsert(record, &mut messages, &mut by_id);
                continue;
            }
            for (key, value) in fields {
                if key == "messages" {
                    for m in value.as_array().into_iter().flatten() {
                        upsert(m, &mut messages, &mut by_id);
                    }
                } else {
                    header.insert(key.clone(), value.clone());
                }
            }
        }

        let id = header
            .get("sessionId")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .unwrap_or(file_stem)
            .to_owned();
        let title = header
            .get("summary")
            .or_else(|| header.get("title"))
            .and_then(Value::as_str)
            .filter(|s| !s.trim().is_empty())
            .map(str::to_owned);
        let workspace = ["projectPath", "projectRoot", "cwd", "directory"]
            .iter()
            .find_map(|k| header.get(*k).and_then(Value::as_str))
            .or_else(|| {
                header
                    .get("directories")
                    .and_then(Value::as_array)
                    .and_then(|d| d.first())
                    .and_then(Value::as_str)
            })
            .filter(|s| !s.is_empty())
            .map(str::to_owned);

        let mut builder = TurnBuilder::new(&id);
        for m in messages {
            let at = m.get("timestamp").and_then(unix_ms).unwrap_or(0);
            match m["type"].as_str().unwrap_or("") {
                "user" => {
                    let shown = m.get("displayContent").map(parts_text).unwrap_or_default();
                    let text = if shown.trim().is_empty() {
                        parts_text(&m["content"])
                    } else {
                        shown
                    };
                    let text = person_words(&text);
                    if !text.is_empty() {
                        builder.push(Piece::Person {
                            id: m.get("id").and_then(Value::as_str).map(str::to_owned),
                            text,
                            at,
                        });
                    }
                }
                "gemini" | "model" | "assistant" => {
                    for thought in m["thoughts"].as_array().into_iter().flatten() {
                        builder.push(Piece::Reasoning {
                            text: thought_text(thought),
                        });
                    }
                    builder.push(Piece::Answer {
                        text: parts_text(&m["content"]),
                        at,
                    });
                    for (i, call) in m["toolCalls"].as_array().into_iter().flatten().enumerate() {
                        let call_at = call.get("timestamp").and_then(unix_ms).unwrap_or(at);
                        let call_id = call
                            .get("id")
                            .and_then(Value::as_str)
                            .map(str::to_owned)
                            .unwrap_or_else(|| {
                                format!("{}#{i}", m["id"].as_str().unwrap_or("call"))
                            });
                        builder.push(Piece::ToolCall {
                            id: call_id.clone(),
                            name: call
                                .get("name")
                                .or_else(|| call.get("displayName"))
                                .and_then(Value::as_str)
                                .unwrap_or("tool")
                                .to_owned(),
                            input: args(&call["args"]),
                            at: call_at,
                        });
                        if let Some((output, is_error)) = tool_output(call) {
                            builder.push(Piece::ToolResult {
                                id: call_id,
                                output,
                                is_error,
                                at: call_at,
                            });
                        }
                    }
                }
                _ => {}
            }
        }
        ImportedConversation {
            id,
            title,
            git_root: workspace.as_deref().and_then(git_root),
            workspace,
            turns: builder.finish(),
            malformed: 0,
        }
    }
}

/// Adds a message, or replaces the one with the same id where it was (a JSONL file writes a
/// message again when it changes; a `$set` of the messages never drops what was said).
fn upsert<'a>(m: &'a Value, messages: &mut Vec<&'a Value>, by_id: &mut HashMap<&'a str, usize>) {
    if !m.is_object() {
        return;
    }
    if let Some(id) = m.get("id").and_then(Value::as_str) {
        if let Some(slot) = by_id.get(id).and_then(|&i| messages.get_mut(i)) {
            *slot = m;
            return;
        }
        by_id.insert(id, messages.len());
    }
    messages.push(m);
}

/// The text of a content value: a string, or parts `[{text}]` (thought parts left out).
fn parts_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| match p {
                Value::String(s) => Some(s.as_str()),
                p if p["thought"].as_bool() == Some(true) => None,
                p => p.get("text").and_then(Value::as_str),
            })
            .filter(|t| !t.trim().is_empty())
            .collect::<Vec<_>>()
            .join("\n\n"),
        Value::Object(_) => content
            .get("text")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned(),
        _ => String::new(),
    }
}

/// The person's words: a compression snapshot or the CLI's own context is not; the contents
/// of `@`-referenced files appended to the query are cut off.
fn person_words(text: &str) -> String {
    let t = text.trim();
    if t.starts_with("<state_snapshot>")
        || t.starts_with("This is the Gemini CLI. We are setting up the context for our chat.")
    {
        return String::new();
    }
    let t = t
        .find("--- Content from referenced files ---")
        .and_then(|at| t.get(..at))
        .unwrap_or(t);
    strip_tag_blocks(t, &["state_snapshot", "session_context"])
}

/// A thought: `{subject, description}` (or a plain string).
fn thought_text(thought: &Value) -> String {
    if let Some(s) = thought.as_str() {
        return s.to_owned();
    }
    let subject = thought["subject"].as_str().unwrap_or("").trim();
    let description = thought["description"].as_str().unwrap_or("").trim();
    match (subject.is_empty(), description.is_empty()) {
        (false, false) => format!("{subject}: {description}"),
        (false, true) => subject.to_owned(),
        _ => description.to_owned(),
    }
}

fn args(value: &Value) -> Value {
    match value {
        Value::String(s) => serde_json::from_str::<Value>(s)
            .ok()
            .filter(|v| v.is_object() || v.is_array())
            .unwrap_or_else(|| value.clone()),
        other => other.clone(),
    }
}

/// A tool call's result as text, and whether it failed: the `functionResponse` parts the model
/// got back (`response.output` / `response.error`), else what the UI showed, else the status.
fn tool_output(call: &Value) -> Option<(String, bool)> {
    let status = call["status"].as_str().unwrap_or("");
    let mut is_error = matches!(status, "error" | "cancelled");
    let mut texts = Vec::new();
    let parts: Vec<&Value> = match &call["result"] {
        Value::Array(parts) => parts.iter().collect(),
        Value::Null => Vec::new(),
        other => vec![other],
    };
    for part in parts {
        match part {
            Value::String(s) => texts.push(s.clone()),
            part => {
                let response = part.pointer("/functionResponse/response").unwrap_or(part);
                if let Some(error) = response.get("error").filter(|e| !e.is_null()) {
                    is_error = true;
                    texts.push(
                        error
                            .as_str()
                            .map(str::to_owned)
                            .unwrap_or_else(|| error.to_string()),
                    );
                } else if let Some(output) = response.get("output") {
                    texts.push(
                        output
                            .as_str()
                            .map(str::to_owned)
                            .unwrap_or_else(|| output.to_string()),
                    );
                } else if let Some(text) = part.get("text").and_then(Value::as_str) {
                    texts.push(text.to_owned());
                } else if !response.is_null() {
                    texts.push(response.to_string());
                }
            }
        }
    }
    let mut output = texts.join("\n");
    if output.trim().is_empty() {
        output = match &call["resultDisplay"] {
            Value::String(s) => s.clone(),
            Value::Null => String::new(),
            other => other.to_string(),
        };
    }
    if output.trim().is_empty() {
        // Nothing came back: a failed or cancelled call says so; one still running has no result.
        if !is_error {
            return None;
        }
        output = status.to_owned();
    }
    Some((output, is_error))
}

impl HistorySource for Gemini {
    fn id(&self) -> SourceId {
        Self::ID
    }

    fn roots(&self) -> Vec<PathBuf> {
        vec![self.root.clone()]
    }

    fn files(&self) -> Vec<PathBuf> {
        let root = self.root.clone();
        files_under(&self.root, &|p| {
            let in_chats = p
                .strip_prefix(&root)
                .is_ok_and(|rel| rel.parent().is_some_and(|d| d.iter().any(|c| c == "chats")));
            in_chats
                && p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("session-"))
                && (has_extension(p, "json") || has_extension(p, "jsonl"))
        })
    }

    fn read(&self, file: &Path) -> Result<Vec<ImportedConversation>, ImportError> {
        let bytes = std::fs::read(file).map_err(|e| ImportError::io(file, e))?;
        let stem = file
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let (records, malformed) = if has_extension(file, "json") {
            match serde_json::from_slice::<Value>(&bytes) {
                Ok(doc) if doc.is_object() => (vec![doc], 0),
                Ok(_) => (Vec::new(), 1),
                // Not one document: JSONL under the old name, or a document cut short (one
                // damaged record, nothing to read).
                Err(_) => {
                    let first = bytes
                        .split(|b| *b == b'\n')
                        .find(|l| !l.iter().all(u8::is_ascii_whitespace))
                        .unwrap_or(&[]);
                    if serde_json::from_slice::<Value>(first).is_ok_and(|v| v.is_object()) {
                        parse_json_lines(&bytes)
                    } else {
                        (Vec::new(), 1)
                    }
                }
            }
        } else {
            parse_json_lines(&bytes)
        };
        let mut conversation = self.conversation(&records, &stem);
        conversation.malformed = malformed;
        Ok(vec![conversation])
    }
}

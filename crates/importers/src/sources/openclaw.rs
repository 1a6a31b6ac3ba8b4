//! OpenClaw: SQLite files under `${OPENCLAW_STATE_DIR:-~/.openclaw}` (any `*.db` / `*.sqlite`,
//! the agent's `workspace*` folders, `node_modules` and hidden folders left out). A file is read
//! by the tables it has:
//!
//! - a conversation store, `conversations(id, workspace_path, created_at)` +
//!   `messages(id, conversation_id, role, content, created_at)`: one conversation per
//!   `conversation_id`, messages in time order; the person's turn id is the message id;
//! - a memory plugin store, `chunks(session_key, turn_id, seq, role, content, created_at, …)`:
//!   one conversation per `session_key`, chunks in `turn_id`, `seq` order; consecutive chunks of
//!   one role in a turn are one message, and the person's turn id is the `turn_id`.
//!
//! Other SQLite files (OpenClaw's own search index, caches) have neither and read as nothing.
//! Content is text, or JSON blocks (`text`, `thinking`, `tool_use`/`toolCall`, `tool_result`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use rusqlite::types::ValueRef;
use rusqlite::Connection;
use serde_json::Value;

use super::sqlite::{columns, open_read_only, value_text, value_time};
use crate::source::has_extension;
use crate::turn::{content_text, git_root, json_time, Piece, TurnBuilder};
use crate::{HistorySource, ImportError, ImportedConversation, SourceEnv, SourceId};

/// OpenClaw's SQLite conversation and memory stores.
pub struct OpenClaw {
    /// The state folder.
    root: PathBuf,
}

/// One stored message (a row, or a memory store's run of chunks).
#[derive(Debug, Clone, PartialEq)]
struct StoredMessage {
    /// Its own id (a message id, or the memory store's turn id).
    id: Option<String>,
    role: String,
    /// Text, or JSON blocks.
    content: String,
    /// Unix ms.
    at: i64,
}

impl OpenClaw {
    pub const ID: SourceId = SourceId {
        name: "openclaw",
        label: "OpenClaw",
    };

    /// The source in `env`: the `openclaw` override, else `${OPENCLAW_STATE_DIR:-~/.openclaw}`.
    pub fn new(env: &SourceEnv) -> Self {
        let root = Self::ID.folder(env, || env.dir("OPENCLAW_STATE_DIR", ".openclaw"));
        Self { root }
    }

    /// Reads one conversation's messages already in order (for tests and fuzzing): objects
    /// `{id, role, content, created_at}` as the stores' rows hold them (content text, or JSON
    /// blocks as text or as JSON; time in seconds, ms or ISO).
    pub fn conversation(
        &self,
        id: &str,
        workspace: Option<String>,
        messages: &[Value],
    ) -> ImportedConversation {
        let messages: Vec<StoredMessage> = messages
            .iter()
            .map(|m| StoredMessage {
                id: match &m["id"] {
                    Value::String(s) => Some(s.clone()),
                    Value::Number(n) => Some(n.to_string()),
                    _ => None,
                },
                role: m["role"].as_str().unwrap_or("").trim().to_lowercase(),
                content: match &m["content"] {
                    Value::String(s) => s.clone(),
                    Value::Null => String::new(),
                    other => other.to_string(),
                },
                at: json_time(&m["created_at"]),
            })
            .collect();
        self.conversation_of(id, workspace, &messages)
    }

    fn conversation_of(
        &self,
        id: &str,
        workspace: Option<String>,
        messages: &[StoredMessage],
    ) -> ImportedConversation {
        let mut builder = TurnBuilder::new(id);
        // Tool results without a call id go to the oldest call still waiting.
        let mut pending: Vec<String> = Vec::new();
        let mut calls = 0usize;
        for m in messages {
            let blocks = blocks_of(&m.content);
            match m.role.as_str() {
                "user" | "human" => {
                    for b in blocks.iter().filter(|b| is_result(b)) {
                        let id = b["tool_use_id"]
                            .as_str()
                            .or_else(|| b["toolCallId"].as_str())
                            .unwrap_or("");
                        pending.retain(|p| p != id);
                        builder.push(Piece::ToolResult {
                            id: id.to_owned(),
                            output: content_text(&b["content"]),
                            is_error: b["is_error"]
                                .as_bool()
                                .or_else(|| b["isError"].as_bool())
                                .unwrap_or(false),
                            at: m.at,
                        });
                    }
                    let text = texts(&blocks);
                    if !text.trim().is_empty() {
                        pending.clear();
                        builder.push(Piece::Person {
                            id: m.id.clone(),
                            text,
                            at: m.at,
                        });
                    }
                }
                "assistant" | "ai" | "model" => {
                    for b in &blocks {
                        match b["type"].as_str().unwrap_or("text") {
                            "text" | "output_text" => builder.push(Piece::Answer {
                                text: b["text"].as_str().unwrap_or("").to_owned(),
                                at: m.at,
                            }),
                            "thinking" | "reasoning" => builder.push(Piece::Reasoning {
                                text: b["thinking"]
                                    .as_str()
                                    .or_else(|| b["text"].as_str())
                                    .unwrap_or("")
                                    .to_owned(),
                            }),
                            "tool_use" | "toolCall" | "tool_call" => {
                                calls += 1;
                                let id = b["id"]
                                    .as_str()
                                    .map(str::to_owned)
                                    .unwrap_or_else(|| format!("call-{calls}"));
                                pending.push(id.clone());
                                builder.push(Piece::ToolCall {
                                    id,
                                    name: b["name"].as_str().unwrap_or("tool").to_owned(),
                                    input: b
                                        .get("input")
                                        .or_else(|| b.get("arguments"))
                                        .cloned()
                                        .unwrap_or(Value::Null),
                                    at: m.at,
                                });
                            }
                            _ => {}
                        }
                    }
                }
                "tool" | "toolresult" | "tool_result" | "function" => {
                    let id = blocks
                        .iter()
                        .find_map(|b| {
                            b["tool_use_id"]
                                .as_str()
                                .or_else(|| b["toolCallId"].as_str())
                        })
                        .map(str::to_owned)
                        .or_else(|| (!pending.is_empty()).then(|| pending.remove(0)));
                    if let Some(id) = id {
                        pending.retain(|p| *p != id);
                        let output = match blocks.iter().find(|b| is_result(b)) {
                            Some(b) => content_text(&b["content"]),
                            None => texts(&blocks),
                        };
                        builder.push(Piece::ToolResult {
                            id,
                            output,
                            is_error: false,
                            at: m.at,
                        });
                    }
                }
                _ => {} // system prompts and anything unknown
            }
        }
        ImportedConversation {
            id: id.to_owned(),
            title: None,
            git_root: workspace.as_deref().and_then(git_root),
            workspace,
            turns: builder.finish(),
            malformed: 0,
        }
    }

    /// The conversation store of a file: messages streamed in conversation, time order.
    fn read_conversations(&self, conn: &Connection) -> Vec<ImportedConversation> {
        let cols = columns(conn, "messages");
        let has = |c: &str| cols.iter().any(|x| x == c);
        if !(has("conversation_id") && has("role") && has("content")) {
            return Vec::new();
        }
        let workspaces = conversation_workspaces(conn);
        let id = if has("id") { "id" } else { "NULL" };
        let at = if has("created_at") {
            "created_at"
        } else {
            "NULL"
        };
        // rowid keeps insertion order among messages of the same instant.
        let sql = |tiebreak: &str| {
            format!(
                "SELECT conversation_id, {id}, role, content, {at} FROM messages \
                 ORDER BY conversation_id, {at}, {tiebreak}"
            )
        };
        let stmt = conn
            .prepare(&sql("rowid"))
            .or_else(|_| conn.prepare(&sql(id)));
        let Ok(mut stmt) = stmt else {
            return Vec::new();
        };
        let Ok(mut rows) = stmt.query([]) else {
            return Vec::new();
        };
        let mut groups = Grouper::new(|k: String, ms: Vec<StoredMessage>| {
            let workspace = workspaces.get(&k).cloned();
            self.conversation_of(&k, workspace, &ms)
        });
        stream(&mut rows, &mut groups);
        groups.finish()
    }

    /// The memory plugin store of a file: chunks streamed in session, turn, seq order; runs of
    /// one role within a turn joined into one message.
    fn read_chunks(&self, conn: &Connection) -> Vec<ImportedConversation> {
        let cols = columns(conn, "chunks");
        let has = |c: &str| cols.iter().any(|x| x == c);
        if !(has("session_key") && has("role") && has("content")) {
            return Vec::new();
        }
        let col = |c: &'static str| if has(c) { c } else { "NULL" };
        let sql = format!(
            "SELECT session_key, {turn}, role, content, {at} FROM chunks ORDER BY session_key, {turn}, {seq}, rowid",
            turn = col("turn_id"),
            at = col("created_at"),
            seq = col("seq"),
        );
        let Ok(mut stmt) = conn.prepare(&sql) else {
            return Vec::new();
        };
        let Ok(mut rows) = stmt.query([]) else {
            return Vec::new();
        };
        let mut groups = Grouper::new(|k: String, chunks: Vec<StoredMessage>| {
            self.conversation_of(&k, None, &join_chunks(chunks))
        });
        stream(&mut rows, &mut groups);
        groups.finish()
    }
}

/// Feeds rows `(group key, id, role, content, time)` to the grouper.
fn stream<F: Fn(String, Vec<StoredMessage>) -> ImportedConversation>(
    rows: &mut rusqlite::Rows<'_>,
    groups: &mut Grouper<F>,
) {
    loop {
        let row = match rows.next() {
            Ok(Some(row)) => row,
            Ok(None) | Err(_) => break,
        };
        let read = (|| -> rusqlite::Result<(String, Option<StoredMessage>)> {
            let key = value_text(row.get_ref(0)?).unwrap_or_default();
            let message = message_of(
                row.get_ref(1)?,
                row.get_ref(2)?,
                row.get_ref(3)?,
                row.get_ref(4)?,
            );
            Ok((key, message))
        })();
        match read {
            Ok((key, Some(message))) => groups.push(key, message),
            Ok((key, None)) => groups.malformed(key),
            Err(_) => groups.malformed_current(),
        }
    }
}

/// Consecutive chunks of one role in one turn as one message (the turn id kept as its id; a
/// second person message in the same turn gets `<turn>:<n>`).
fn join_chunks(chunks: Vec<StoredMessage>) -> Vec<StoredMessage> {
    let mut out: Vec<StoredMessage> = Vec::new();
    let mut people: HashMap<String, usize> = HashMap::new();
    for chunk in chunks {
        if let Some(last) = out.last_mut() {
            if last.role == chunk.role && last.id == chunk.id && !is_json_blocks(&chunk.content) {
                last.content.push('\n');
                last.content.push_str(&chunk.content);
                continue;
            }
        }
        let mut chunk = chunk;
        if chunk.role == "user" {
            if let Some(turn) = chunk.id.clone() {
                let n = people.entry(turn.clone()).or_insert(0);
                *n += 1;
                if *n > 1 {
                    chunk.id = Some(format!("{turn}:{n}"));
                }
            }
        }
        out.push(chunk);
    }
    out
}

/// Rows grouped by conversation as they stream in (the query orders them by it); each group is
/// built into a conversation as soon as the next one starts.
struct Grouper<F: Fn(String, Vec<StoredMessage>) -> ImportedConversation> {
    build: F,
    current: Option<(String, Vec<StoredMessage>, usize)>,
    done: Vec<ImportedConversation>,
}

impl<F: Fn(String, Vec<StoredMessage>) -> ImportedConversation> Grouper<F> {
    fn new(build: F) -> Self {
        Self {
            build,
            current: None,
            done: Vec::new(),
        }
    }

    /// Makes `key` the current group.
    fn at(&mut self, key: String) -> &mut (String, Vec<StoredMessage>, usize) {
        if self.current.as_ref().is_some_and(|(k, _, _)| *k != key) {
            self.flush();
        }
        self.current.get_or_insert_with(|| (key, Vec::new(), 0))
    }

    fn push(&mut self, key: String, message: StoredMessage) {
        self.at(key).1.push(message);
    }

    fn malformed(&mut self, key: String) {
        self.at(key).2 += 1;
    }

    /// A row that could not be read at all: counted in the current group.
    fn malformed_current(&mut self) {
        if let Some((_, _, malformed)) = self.current.as_mut() {
            *malformed += 1;
        }
    }

    fn flush(&mut self) {
        if let Some((key, messages, malformed)) = self.current.take() {
            let mut conversation = (self.build)(key, messages);
            conversation.malformed += malformed;
            self.done.push(conversation);
        }
    }

    fn finish(mut self) -> Vec<ImportedConversation> {
        self.flush();
        self.done
    }
}

/// A message from its columns; `None` when its role or content cannot be read.
fn message_of(
    id: ValueRef<'_>,
    role: ValueRef<'_>,
    content: ValueRef<'_>,
    at: ValueRef<'_>,
) -> Option<StoredMessage> {
    let role = value_text(role)?;
    let content = match content {
        ValueRef::Text(b) | ValueRef::Blob(b) => std::str::from_utf8(b).ok()?.to_owned(),
        ValueRef::Null => String::new(),
        _ => return None,
    };
    Some(StoredMessage {
        id: value_text(id),
        role: role.trim().to_lowercase(),
        content,
        at: value_time(at),
    })
}

/// conversation id → its workspace folder.
fn conversation_workspaces(conn: &Connection) -> HashMap<String, String> {
    let cols = columns(conn, "conversations");
    let has = |c: &str| cols.iter().any(|x| x == c);
    let Some(folder) = ["workspace_path", "workspace", "cwd"]
        .into_iter()
        .find(|c| has(c))
    else {
        return HashMap::new();
    };
    if !has("id") {
        return HashMap::new();
    }
    let Ok(mut stmt) = conn.prepare(&format!("SELECT id, {folder} FROM conversations")) else {
        return HashMap::new();
    };
    stmt.query_map([], |row| {
        Ok((value_text(row.get_ref(0)?), value_text(row.get_ref(1)?)))
    })
    .map(|rows| {
        rows.flatten()
            .filter_map(|(id, folder)| Some((id?, folder.filter(|f| !f.is_empty())?)))
            .collect()
    })
    .unwrap_or_default()
}

fn is_json_blocks(content: &str) -> bool {
    let t = content.trim_start();
    (t.starts_with('[') || t.starts_with('{'))
        && serde_json::from_str::<Value>(t).is_ok_and(|v| v.is_array() || v.get("type").is_some())
}

/// A content column as blocks: JSON blocks when it holds them, else one text block.
fn blocks_of(content: &str) -> Vec<Value> {
    if is_json_blocks(content) {
        match serde_json::from_str::<Value>(content.trim_start()) {
            Ok(Value::Array(blocks)) => {
                return blocks
                    .into_iter()
                    .map(|b| match b {
                        Value::String(s) => serde_json::json!({ "type": "text", "text": s }),
                        b => b,
                    })
                    .collect()
            }
            Ok(block) => return vec![block],
            Err(_) => {}
        }
    }
    vec![serde_json::json!({ "type": "text", "text": content })]
}

fn is_result(b: &Value) -> bool {
    matches!(b["type"].as_str(), Some("tool_result" | "toolResult"))
}

/// The text blocks, joined.
fn texts(blocks: &[Value]) -> String {
    blocks
        .iter()
        .filter(|b| matches!(b["type"].as_str(), None | Some("text" | "input_text")))
        .filter_map(|b| b["text"].as_str())
        .filter(|t| !t.trim().is_empty())
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// Every `*.db` / `*.sqlite` under `root`, skipping hidden folders, `node_modules` and the
/// agent's `workspace*` folders (the person's own files, not OpenClaw's state).
fn database_files(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            let skipped =
                name.starts_with('.') || name == "node_modules" || name.starts_with("workspace");
            match entry.file_type() {
                Ok(t) if t.is_dir() && !skipped => stack.push(path),
                Ok(t)
                    if t.is_file()
                        && (has_extension(&path, "db") || has_extension(&path, "sqlite")) =>
                {
                    out.push(path);
                }
                _ => {}
            }
        }
    }
    out.sort();
    out
}

impl HistorySource for OpenClaw {
    fn id(&self) -> SourceId {
        Self::ID
    }

    fn roots(&self) -> Vec<PathBuf> {
        vec![self.root.clone()]
    }

    fn files(&self) -> Vec<PathBuf> {
        database_files(&self.root)
    }

    /// Every conversation of the stores the file has (none for other databases).
    fn read(&self, file: &Path) -> Result<Vec<ImportedConversation>, ImportError> {
        let conn = open_read_only(file)?;
        let mut out = self.read_conversations(&conn);
        out.extend(self.read_chunks(&conn));
        Ok(out)
    }
}

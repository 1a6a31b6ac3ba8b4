//! Hermes Agent: `${HERMES_HOME:-~/.hermes}`, two shapes of the same history.
//!
//! - `state.db` (SQLite): `messages(id, session_id, role, content, tool_calls, tool_name,
//!   timestamp, active, …)` and optionally `sessions(id, cwd | model_config, title, …)`. Rows with
//!   `active = 0` are not the live conversation (rewound or compressed away) and are skipped.
//! - `sessions/**/*.jsonl` (gateway transcripts): one message a line, `{role, content, …}` or
//!   wrapped as `{payload: {role, content}}` / `{message: {role, content}}`; content a string,
//!   `{text}` or a list of blocks. A `session_meta` line carries the session's settings.
//!
//! The same conversation can be in both. `state.db` wins: reading a transcript whose session id
//! is in `state.db` returns nothing. Injected text (skill preambles, the background review
//! prompts and the replies to them) is not the person's words.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OptionalExtension};
use serde_json::Value;

use super::sqlite::{columns, open_read_only, value_json, value_text, value_time};
use crate::source::{files_under, has_extension, json_lines};
use crate::turn::{content_text, git_root, json_time, Piece, TurnBuilder};
use crate::{HistorySource, ImportError, ImportedConversation, SourceEnv, SourceId};

/// Hermes Agent's history: `state.db` and the gateway's JSONL transcripts.
pub struct Hermes {
    /// `HERMES_HOME`.
    root: PathBuf,
}

/// The openings of the prompts Hermes's background review writes into a session as a user message.
const HARNESS_PROMPTS: [&str; 2] = [
    "Review the conversation above and update the skill library",
    "Review the conversation above and consider saving to memory",
];

/// What a skill invocation's preamble says before the person's own instruction.
const SKILL_INSTRUCTION: &str =
    "The user has provided the following instruction alongside the skill invocation:";

impl Hermes {
    pub const ID: SourceId = SourceId {
        name: "hermes",
        label: "Hermes",
    };

    /// The source in `env`: the `hermes` override, else `${HERMES_HOME:-~/.hermes}`.
    pub fn new(env: &SourceEnv) -> Self {
        let root = Self::ID.folder(env, || env.dir("HERMES_HOME", ".hermes"));
        Self { root }
    }

    /// Reads one session's messages already parsed (for tests and fuzzing), in order: each an
    /// object with `role`, `content`, optional `id`, `timestamp`, `tool_calls` (OpenAI style),
    /// `tool_call_id`, `tool_name`, `reasoning`; wrapped `payload`/`message` records are
    /// unwrapped; `session_meta` records give the workspace (`cwd`).
    pub fn conversation(&self, records: &[Value], id: &str) -> ImportedConversation {
        let mut workspace = None;
        let mut title = None;
        let mut builder = TurnBuilder::new(id);
        // After an injected prompt, the model's reply to it is not part of any turn.
        let mut muted = false;
        let mut pending: Vec<String> = Vec::new();
        for record in records {
            let message = unwrap_record(record);
            let role = message["role"]
                .as_str()
                .or_else(|| record["type"].as_str())
                .unwrap_or("");
            if role == "session_meta" || record["type"] == "session_meta" {
                let meta = if record["payload"].is_object() {
                    &record["payload"]
                } else {
                    record
                };
                workspace = workspace.or_else(|| cwd_of(meta));
                title = title.or_else(|| meta["title"].as_str().map(str::to_owned));
                continue;
            }
            workspace = workspace.or_else(|| cwd_of(message));
            let at = json_time(if message["timestamp"].is_null() {
                &record["timestamp"]
            } else {
                &message["timestamp"]
            });
            let text = content_of(message);
            match role {
                "user" | "human" => match person_words(&text) {
                    Some(words) if !words.is_empty() => {
                        muted = false;
                        pending.clear();
                        let id = message["id"]
                            .as_str()
                            .map(str::to_owned)
                            .or_else(|| message["id"].as_i64().map(|i| i.to_string()))
                            .or_else(|| message["message_id"].as_str().map(str::to_owned));
                        builder.push(Piece::Person {
                            id,
                            text: words,
                            at,
                        });
                    }
                    Some(_) => {}
                    None => muted = true,
                },
                "assistant" | "ai" | "model" if !muted => {
                    if let Some(reasoning) = message["reasoning"]
                        .as_str()
                        .or_else(|| message["reasoning_content"].as_str())
                    {
                        builder.push(Piece::Reasoning {
                            text: reasoning.to_owned(),
                        });
                    }
                    builder.push(Piece::Answer { text, at });
                    for (i, call) in tool_calls(&message["tool_calls"]).iter().enumerate() {
                        let function = if call["function"].is_object() {
                            &call["function"]
                        } else {
                            call
                        };
                        let id = call["id"].as_str().map(str::to_owned).unwrap_or_else(|| {
                            format!("{}#{i}", message["id"].as_str().unwrap_or("call"))
                        });
                        pending.push(id.clone());
                        let input = match &function["arguments"] {
                            Value::String(s) => {
                                serde_json::from_str(s).unwrap_or_else(|_| Value::String(s.clone()))
                            }
                            Value::Null => function.get("args").cloned().unwrap_or(Value::Null),
                            other => other.clone(),
                        };
                        builder.push(Piece::ToolCall {
                            id,
                            name: function["name"].as_str().unwrap_or("tool").to_owned(),
                            input,
                            at,
                        });
                    }
                }
                "tool" | "function" if !muted => {
                    // Paired by id; a result without one goes to the oldest call still waiting.
                    let id = match message["tool_call_id"].as_str() {
                        Some(id) => {
                            pending.retain(|p| p != id);
                            Some(id.to_owned())
                        }
                        None if !pending.is_empty() => Some(pending.remove(0)),
                        None => None,
                    };
                    if let Some(id) = id {
                        builder.push(Piece::ToolResult {
                            id,
                            output: text,
                            is_error: message["finish_reason"] == "error",
                            at,
                        });
                    }
                }
                _ => {}
            }
        }
        ImportedConversation {
            id: id.to_owned(),
            title,
            git_root: workspace.as_deref().and_then(git_root),
            workspace,
            turns: builder.finish(),
            malformed: 0,
        }
    }

    /// Every session of a `state.db`, its messages streamed in order.
    fn read_db(&self, file: &Path) -> Result<Vec<ImportedConversation>, ImportError> {
        let conn = open_read_only(file)?;
        let cols = columns(&conn, "messages");
        let has = |c: &str| cols.iter().any(|x| x == c);
        if !(has("session_id") && has("role") && has("content")) {
            return Ok(Vec::new());
        }
        let col = |c: &'static str| if has(c) { c } else { "NULL" };
        let id = if has("id") { "id" } else { "rowid" };
        let order_time = if has("timestamp") { "timestamp, " } else { "" };
        let live = if has("active") {
            "WHERE active IS NULL OR active != 0"
        } else {
            ""
        };
        let sql = format!(
            "SELECT session_id, {id}, role, content, {}, {}, {}, {}, {}, {} FROM messages {live} \
             ORDER BY session_id, {order_time}{id}",
            col("tool_calls"),
            col("tool_name"),
            col("tool_call_id"),
            col("timestamp"),
            col("reasoning"),
            col("finish_reason"),
        );
        let sessions = session_info(&conn);
        let Ok(mut stmt) = conn.prepare(&sql) else {
            return Ok(Vec::new());
        };
        let Ok(mut rows) = stmt.query([]) else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        let mut current: Option<(String, Vec<Value>, usize)> = None;
        loop {
            let row = match rows.next() {
                Ok(Some(row)) => row,
                Ok(None) | Err(_) => break,
            };
            let record = (|| -> rusqlite::Result<(String, Value)> {
                let session = value_text(row.get_ref(0)?).unwrap_or_default();
                let content = match row.get_ref(3)? {
                    rusqlite::types::ValueRef::Null => Value::Null,
                    v => {
                        let text = value_text(v).unwrap_or_default();
                        // Multimodal content is stored as a JSON list of blocks.
                        match text.trim_start().starts_with('[') {
                            true => serde_json::from_str(&text).unwrap_or(Value::String(text)),
                            false => Value::String(text),
                        }
                    }
                };
                let mut message = serde_json::json!({
                    "id": value_text(row.get_ref(1)?),
                    "role": value_text(row.get_ref(2)?),
                    "content": content,
                    "tool_calls": value_json(row.get_ref(4)?),
                    "tool_name": value_text(row.get_ref(5)?),
                    "tool_call_id": value_text(row.get_ref(6)?),
                    "reasoning": value_text(row.get_ref(8)?),
                    "finish_reason": value_text(row.get_ref(9)?),
                });
                message["timestamp"] = Value::from(value_time(row.get_ref(7)?));
                Ok((session, message))
            })();
            let Ok((session, message)) = record else {
                if let Some((_, _, malformed)) = current.as_mut() {
                    *malformed += 1;
                }
                continue;
            };
            if current.as_ref().is_some_and(|(s, _, _)| *s != session) {
                if let Some(done) = current.take() {
                    out.push(self.finish_db_session(done, &sessions));
                }
            }
            current
                .get_or_insert_with(|| (session, Vec::new(), 0))
                .1
                .push(message);
        }
        if let Some(done) = current.take() {
            out.push(self.finish_db_session(done, &sessions));
        }
        Ok(out)
    }

    fn finish_db_session(
        &self,
        (id, messages, malformed): (String, Vec<Value>, usize),
        sessions: &HashMap<String, (Option<String>, Option<String>)>,
    ) -> ImportedConversation {
        let mut conversation = self.conversation(&messages, &id);
        if let Some((cwd, title)) = sessions.get(&id) {
            if let Some(cwd) = cwd.clone() {
                conversation.git_root = git_root(&cwd);
                conversation.workspace = Some(cwd);
            }
            conversation.title = title.clone().or(conversation.title);
        }
        conversation.malformed = malformed;
        conversation
    }

    /// The `state.db` that goes with a transcript: `<home>/state.db` for `<home>/sessions/…`.
    fn state_db_for(&self, file: &Path) -> PathBuf {
        file.ancestors()
            .find(|a| a.file_name().is_some_and(|n| n == "sessions"))
            .and_then(Path::parent)
            .map(|home| home.join("state.db"))
            .unwrap_or_else(|| self.root.join("state.db"))
    }
}

/// session id → (cwd, title), from the optional `sessions` table.
fn session_info(conn: &Connection) -> HashMap<String, (Option<String>, Option<String>)> {
    let cols = columns(conn, "sessions");
    let has = |c: &str| cols.iter().any(|x| x == c);
    if !has("id") {
        return HashMap::new();
    }
    let col = |c: &'static str| if has(c) { c } else { "NULL" };
    let sql = format!(
        "SELECT id, {}, {}, {} FROM sessions",
        col("cwd"),
        col("model_config"),
        col("title")
    );
    let Ok(mut stmt) = conn.prepare(&sql) else {
        return HashMap::new();
    };
    stmt.query_map([], |row| {
        let config = value_json(row.get_ref(2)?);
        let cwd = value_text(row.get_ref(1)?)
            .filter(|c| !c.is_empty())
            .or_else(|| config.and_then(|c| c["cwd"].as_str().map(str::to_owned)))
            .filter(|c| !c.is_empty());
        Ok((
            value_text(row.get_ref(0)?).unwrap_or_default(),
            (cwd, value_text(row.get_ref(3)?).filter(|t| !t.is_empty())),
        ))
    })
    .map(|rows| rows.flatten().collect())
    .unwrap_or_default()
}

/// Whether a `state.db` holds the session (an unreadable one holds nothing).
fn db_has_session(db: &Path, session: &str) -> bool {
    let Ok(conn) = open_read_only(db) else {
        return false;
    };
    let found = |sql: &str| {
        conn.query_row(sql, [session], |_| Ok(()))
            .optional()
            .ok()
            .flatten()
            .is_some()
    };
    found("SELECT 1 FROM messages WHERE session_id = ?1 LIMIT 1")
        || found("SELECT 1 FROM sessions WHERE id = ?1")
}

/// The message of a record: the record itself, or its `payload` / `message` object.
fn unwrap_record(record: &Value) -> &Value {
    if record["role"].is_string() {
        record
    } else if record["payload"]["role"].is_string() {
        &record["payload"]
    } else if record["message"].is_object() {
        &record["message"]
    } else {
        record
    }
}

/// A message's text: `content` (string, `{text}` or a list of blocks), else `text`.
fn content_of(message: &Value) -> String {
    match &message["content"] {
        Value::Null => message["text"].as_str().unwrap_or("").to_owned(),
        content => content_text(content),
    }
}

/// Tool calls as a list (stored as JSON, or as a JSON string inside JSON).
fn tool_calls(v: &Value) -> Vec<Value> {
    match v {
        Value::Array(calls) => calls.clone(),
        Value::String(s) => serde_json::from_str::<Vec<Value>>(s).unwrap_or_default(),
        _ => Vec::new(),
    }
}

fn cwd_of(v: &Value) -> Option<String> {
    v["cwd"]
        .as_str()
        .or_else(|| v["model_config"]["cwd"].as_str())
        .filter(|c| !c.is_empty())
        .map(str::to_owned)
}

/// The person's words of a user message; `None` when the whole message was injected by Hermes
/// (its reply is then not a turn either).
fn person_words(text: &str) -> Option<String> {
    let trimmed = text.trim();
    if HARNESS_PROMPTS.iter().any(|p| trimmed.starts_with(p)) {
        return None;
    }
    if trimmed.starts_with("[SYSTEM:") {
        // A skill's preamble: the person's instruction, if any, follows it.
        return trimmed
            .split_once(SKILL_INSTRUCTION)
            .map(|(_, words)| words.trim().to_owned())
            .filter(|w| !w.is_empty());
    }
    Some(trimmed.to_owned())
}

impl HistorySource for Hermes {
    fn id(&self) -> SourceId {
        Self::ID
    }

    fn roots(&self) -> Vec<PathBuf> {
        vec![self.root.clone()]
    }

    /// `state.db`, then every transcript under `sessions/`.
    fn files(&self) -> Vec<PathBuf> {
        let mut out = Vec::new();
        let db = self.root.join("state.db");
        if db.is_file() {
            out.push(db);
        }
        out.extend(files_under(&self.root.join("sessions"), &|p| {
            has_extension(p, "jsonl")
        }));
        out
    }

    /// A `.db` file: every session in it. A transcript: its session, or nothing when `state.db`
    /// holds that session (it is read from there, once).
    fn read(&self, file: &Path) -> Result<Vec<ImportedConversation>, ImportError> {
        if has_extension(file, "db") {
            return self.read_db(file);
        }
        let (records, malformed) = json_lines(file)?;
        let stem = file
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let id = records
            .iter()
            .find_map(|r| {
                r["session_id"]
                    .as_str()
                    .or_else(|| r["payload"]["session_id"].as_str())
                    .or_else(|| r["sessionId"].as_str())
            })
            .map(str::to_owned)
            .unwrap_or_else(|| stem.strip_prefix("session_").unwrap_or(&stem).to_owned());
        let db = self.state_db_for(file);
        if db.is_file() && db_has_session(&db, &id) {
            return Ok(Vec::new());
        }
        let mut conversation = self.conversation(&records, &id);
        conversation.malformed = malformed;
        Ok(vec![conversation])
    }
}

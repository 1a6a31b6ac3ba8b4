//! OpenCode: v1.2+ keeps history in SQLite, `${XDG_DATA_HOME:-~/.local/share}/opencode/opencode.db`
//! (`session`, `message`, `part`; WAL, written while we read); older versions kept the same JSON as
//! files under `storage/` (`session/<project>/<id>.json`, `message/<session>/<id>.json`,
//! `part/<message>/<id>.json`). A message holds no text: its parts do (`text`, `reasoning`, `tool`
//! with call and result in one part; `file`, `step-*`, `patch`, `compaction`… are skipped).
//! Synthetic text parts are injected by OpenCode, not anyone's words. A session found in both the
//! database and `storage/` is read from the database only.

use std::path::{Path, PathBuf};

use rusqlite::OptionalExtension;
use serde_json::Value;

use super::sqlite::{columns, open_read_only, value_json, value_text, value_time};
use crate::source::has_extension;
use crate::turn::{git_root, json_time, Piece, TurnBuilder};
use crate::{HistorySource, ImportError, ImportedConversation, SourceEnv, SourceId};

/// OpenCode's history: its database and, for older versions, its `storage/` folder.
pub struct OpenCode {
    /// The data folder (`…/opencode`), or a `storage/` folder itself.
    root: PathBuf,
}

/// One message of a session with its parts, in order. Both carry their `id` (the database keeps
/// ids in columns; they are put back into the JSON).
pub type MessageWithParts = (Value, Vec<Value>);

impl OpenCode {
    pub const ID: SourceId = SourceId {
        name: "opencode",
        label: "OpenCode",
    };

    /// The source in `env`: the `opencode` override, else `${XDG_DATA_HOME:-~/.local/share}/opencode`.
    pub fn new(env: &SourceEnv) -> Self {
        let root = Self::ID.folder(env, || {
            env.dir("XDG_DATA_HOME", ".local/share").join("opencode")
        });
        Self { root }
    }

    /// The `storage/` folder: `<root>/storage`, or the root itself when it is one.
    fn storage(&self) -> PathBuf {
        let inner = self.root.join("storage");
        if !inner.is_dir() && self.root.join("session").is_dir() {
            return self.root.clone();
        }
        inner
    }

    /// Reads a session already parsed (for tests and fuzzing): the session JSON and its messages
    /// with their parts, in any order (they are sorted by time, then id).
    pub fn conversation(
        &self,
        session: &Value,
        messages: &[MessageWithParts],
    ) -> ImportedConversation {
        let id = session["id"].as_str().unwrap_or("").to_owned();
        let workspace = session["directory"]
            .as_str()
            .filter(|d| !d.is_empty())
            .map(str::to_owned);
        let title = session["title"]
            .as_str()
            .filter(|t| !t.is_empty())
            .map(str::to_owned);
        let mut order: Vec<&MessageWithParts> = messages.iter().collect();
        order.sort_by(|(a, _), (b, _)| {
            let key = |m: &Value| {
                (
                    json_time(&m["time"]["created"]),
                    m["id"].as_str().unwrap_or("").to_owned(),
                )
            };
            key(a).cmp(&key(b))
        });
        let mut builder = TurnBuilder::new(&id);
        for (message, parts) in order {
            pieces(message, parts, &mut builder);
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

    /// Every session of an `opencode.db`.
    fn read_db(&self, file: &Path) -> Result<Vec<ImportedConversation>, ImportError> {
        let conn = open_read_only(file)?;
        let session_cols = columns(&conn, "session");
        if !["id", "directory"]
            .iter()
            .all(|c| session_cols.iter().any(|s| s == c))
            || columns(&conn, "message").is_empty()
            || columns(&conn, "part").is_empty()
        {
            return Ok(Vec::new());
        }
        let title = if session_cols.iter().any(|c| c == "title") {
            "title"
        } else {
            "NULL"
        };
        let created = if session_cols.iter().any(|c| c == "time_created") {
            "time_created"
        } else {
            "0"
        };
        let sessions: Vec<(String, Option<String>, Option<String>)> = match conn.prepare(&format!(
            "SELECT id, directory, {title} FROM session ORDER BY {created}, id"
        )) {
            Ok(mut stmt) => stmt
                .query_map([], |row| {
                    Ok((
                        value_text(row.get_ref(0)?).unwrap_or_default(),
                        value_text(row.get_ref(1)?),
                        value_text(row.get_ref(2)?),
                    ))
                })
                .map(|rows| rows.flatten().collect())
                .unwrap_or_default(),
            Err(_) => return Ok(Vec::new()),
        };
        let (Ok(mut message_stmt), Ok(mut part_stmt)) = (
            conn.prepare("SELECT id, time_created, data FROM message WHERE session_id = ?1 ORDER BY time_created, id"),
            conn.prepare("SELECT id, data FROM part WHERE message_id = ?1 ORDER BY id"),
        ) else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        for (id, directory, title) in sessions {
            let mut malformed = 0;
            let mut messages = Vec::new();
            let rows = message_stmt.query_map([&id], |row| {
                Ok((
                    value_text(row.get_ref(0)?).unwrap_or_default(),
                    value_time(row.get_ref(1)?),
                    value_json(row.get_ref(2)?),
                ))
            });
            let rows: Vec<_> = match rows {
                Ok(rows) => rows.collect(),
                Err(_) => continue,
            };
            for row in rows {
                let Ok((message_id, time_created, Some(Value::Object(mut data)))) = row else {
                    malformed += 1;
                    continue;
                };
                data.insert("id".into(), Value::String(message_id.clone()));
                let mut message = Value::Object(data);
                if message["time"]["created"].is_null() {
                    message["time"] = serde_json::json!({ "created": time_created });
                }
                let mut parts = Vec::new();
                if let Ok(part_rows) = part_stmt.query_map([&message_id], |row| {
                    Ok((
                        value_text(row.get_ref(0)?).unwrap_or_default(),
                        value_json(row.get_ref(1)?),
                    ))
                }) {
                    for part in part_rows {
                        match part {
                            Ok((part_id, Some(Value::Object(mut data)))) => {
                                data.entry("id").or_insert(Value::String(part_id));
                                parts.push(Value::Object(data));
                            }
                            _ => malformed += 1,
                        }
                    }
                }
                messages.push((message, parts));
            }
            let session = serde_json::json!({ "id": id, "directory": directory, "title": title });
            let mut conversation = self.conversation(&session, &messages);
            conversation.malformed = malformed;
            out.push(conversation);
        }
        Ok(out)
    }

    /// One session of the `storage/` layout, from its session file.
    fn read_storage(&self, file: &Path) -> Result<Vec<ImportedConversation>, ImportError> {
        let bytes = std::fs::read(file).map_err(|e| ImportError::io(file, e))?;
        let stem = file
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let session = match serde_json::from_slice::<Value>(&bytes) {
            Ok(v) if v.is_object() && v["id"].is_string() => v,
            _ => {
                return Ok(vec![ImportedConversation {
                    id: stem,
                    malformed: 1,
                    ..Default::default()
                }])
            }
        };
        let id = session["id"].as_str().unwrap_or("").to_owned();
        // <storage>/session/<project>/<id>.json
        let storage = file
            .ancestors()
            .find(|a| a.file_name().is_some_and(|n| n == "session"))
            .and_then(Path::parent)
            .map(Path::to_path_buf)
            .unwrap_or_else(|| self.storage());
        if let Some(db) = storage.parent().map(|p| p.join("opencode.db")) {
            if db.is_file() && db_has_session(&db, &id) {
                return Ok(Vec::new()); // the database holds it: read from there
            }
        }
        let mut malformed = 0;
        let mut messages = Vec::new();
        // v2 layout, then the older one (`session/message/<session>/`, `session/part/<session>/<message>/`).
        let message_dirs = [
            storage.join("message").join(&id),
            storage.join("session/message").join(&id),
        ];
        if let Some(dir) = message_dirs.iter().find(|d| d.is_dir()) {
            for path in json_files(dir) {
                let Some(mut message) = read_json(&path) else {
                    malformed += 1;
                    continue;
                };
                let message_id = message["id"]
                    .as_str()
                    .map(str::to_owned)
                    .unwrap_or_else(|| {
                        path.file_stem()
                            .map(|s| s.to_string_lossy().into_owned())
                            .unwrap_or_default()
                    });
                message["id"] = Value::String(message_id.clone());
                let part_dirs = [
                    storage.join("part").join(&message_id),
                    storage.join("session/part").join(&id).join(&message_id),
                ];
                let mut parts = Vec::new();
                for part_dir in part_dirs.iter().filter(|d| d.is_dir()) {
                    for part_path in json_files(part_dir) {
                        match read_json(&part_path) {
                            Some(part) => parts.push(part),
                            None => malformed += 1,
                        }
                    }
                }
                messages.push((message, parts));
            }
        }
        let mut conversation = self.conversation(&session, &messages);
        conversation.malformed = malformed;
        Ok(vec![conversation])
    }
}

/// The pieces of one message and its parts.
fn pieces(message: &Value, parts: &[Value], builder: &mut TurnBuilder) {
    let at = json_time(&message["time"]["created"]);
    match message["role"].as_str().unwrap_or("") {
        "user" => {
            let text = parts
                .iter()
                .filter(|p| p["type"] == "text" && !is_injected(p))
                .filter_map(|p| p["text"].as_str())
                .map(str::trim)
                .filter(|t| !t.is_empty())
                .collect::<Vec<_>>()
                .join("\n\n");
            builder.push(Piece::Person {
                id: message["id"].as_str().map(str::to_owned),
                text,
                at,
            });
        }
        "assistant" => {
            // A compaction summary is OpenCode's own recap, not an answer to the person.
            if message["summary"].as_bool() == Some(true) {
                return;
            }
            for part in parts {
                let part_at = |key: &str| {
                    let t = json_time(&part["time"][key]);
                    if t > 0 {
                        t
                    } else {
                        at
                    }
                };
                match part["type"].as_str().unwrap_or("") {
                    "text" if !is_injected(part) => builder.push(Piece::Answer {
                        text: part["text"].as_str().unwrap_or("").to_owned(),
                        at: part_at("end").max(part_at("start")),
                    }),
                    "reasoning" => builder.push(Piece::Reasoning {
                        text: part["text"].as_str().unwrap_or("").to_owned(),
                    }),
                    "tool" => {
                        let state = &part["state"];
                        let id = part["callID"]
                            .as_str()
                            .or_else(|| part["id"].as_str())
                            .unwrap_or("tool")
                            .to_owned();
                        let start = json_time(&state["time"]["start"]);
                        let end = json_time(&state["time"]["end"]);
                        builder.push(Piece::ToolCall {
                            id: id.clone(),
                            name: part["tool"].as_str().unwrap_or("tool").to_owned(),
                            input: state.get("input").cloned().unwrap_or(Value::Null),
                            at: if start > 0 { start } else { at },
                        });
                        let result = match state["status"].as_str() {
                            Some("completed") => Some((text_of(&state["output"]), false)),
                            Some("error") => Some((text_of(&state["error"]), true)),
                            _ => None,
                        };
                        if let Some((output, is_error)) = result {
                            builder.push(Piece::ToolResult {
                                id,
                                output,
                                is_error,
                                at: if end > 0 { end } else { at },
                            });
                        }
                    }
                    _ => {}
                }
            }
        }
        _ => {}
    }
}

/// Text OpenCode wrote itself into a message (synthetic or ignored parts).
fn is_injected(part: &Value) -> bool {
    part["synthetic"].as_bool() == Some(true) || part["ignored"].as_bool() == Some(true)
}

/// A tool output as text: a string as is, anything else as JSON.
fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// The `.json` files of a folder, sorted by name (OpenCode's ids sort in creation order).
fn json_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.is_file() && has_extension(p, "json"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

/// A JSON object from a file, or `None` when it cannot be read or parsed.
fn read_json(path: &Path) -> Option<Value> {
    let bytes = std::fs::read(path).ok()?;
    serde_json::from_slice::<Value>(&bytes)
        .ok()
        .filter(Value::is_object)
}

/// Whether the database holds the session (any error: it does not).
fn db_has_session(db: &Path, id: &str) -> bool {
    let Ok(conn) = open_read_only(db) else {
        return false;
    };
    conn.query_row("SELECT 1 FROM session WHERE id = ?1", [id], |_| Ok(()))
        .optional()
        .ok()
        .flatten()
        .is_some()
}

impl HistorySource for OpenCode {
    fn id(&self) -> SourceId {
        Self::ID
    }

    fn roots(&self) -> Vec<PathBuf> {
        vec![self.root.clone()]
    }

    /// `opencode*.db` in the data folder (one file, every session), then one session file per
    /// session of `storage/`.
    fn files(&self) -> Vec<PathBuf> {
        let mut out: Vec<PathBuf> = std::fs::read_dir(&self.root)
            .map(|entries| {
                entries
                    .flatten()
                    .map(|e| e.path())
                    .filter(|p| {
                        p.is_file()
                            && has_extension(p, "db")
                            && p.file_name()
                                .is_some_and(|n| n.to_string_lossy().starts_with("opencode"))
                    })
                    .collect()
            })
            .unwrap_or_default();
        out.sort();
        let sessions = self.storage().join("session");
        if let Ok(projects) = std::fs::read_dir(&sessions) {
            let mut files = Vec::new();
            for project in projects.flatten() {
                let path = project.path();
                // The older layout kept messages and parts under session/ too.
                if !path.is_dir()
                    || ["message", "part", "share", "diff"]
                        .iter()
                        .any(|n| project.file_name() == *n)
                {
                    continue;
                }
                files.extend(json_files(&path));
            }
            files.sort();
            out.extend(files);
        }
        out
    }

    fn read(&self, file: &Path) -> Result<Vec<ImportedConversation>, ImportError> {
        if has_extension(file, "db") {
            self.read_db(file)
        } else {
            self.read_storage(file)
        }
    }
}

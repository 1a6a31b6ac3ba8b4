//! Cursor, both of them.
//!
//! The IDE keeps its chats in SQLite, `<User>/globalStorage/state.vscdb` (Linux
//! `~/.config/Cursor/User`, macOS `~/Library/Application Support/Cursor/User`), table
//! `cursorDiskKV(key, value)`: `composerData:<composerId>` (a chat: name, times, the ordered
//! `fullConversationHeadersOnly` bubble ids, or an inline `conversation` in older versions) and
//! `bubbleId:<composerId>:<bubbleId>` (one message: `type` 1 person / 2 model, `text`, thinking,
//! `toolFormerData` with the call and its result). The file can be gigabytes: chats are streamed
//! one at a time and their bubbles fetched by key. `workspaceStorage/<hash>/state.vscdb` lists the
//! composers of each workspace (`composer.composerData`), and `workspace.json` beside it names the
//! folder.
//!
//! The agent CLI writes JSONL transcripts, `~/.cursor/projects/<project>/agent-transcripts/`
//! (`<id>.jsonl`, `<id>/<id>.jsonl`, sub-agents in `<id>/subagents/<sub>.jsonl`), lines
//! `{role, message: {content: [text | thinking | tool_use | tool_result]}}`, no ids and no times.
//! The person's words are inside `<user_query>`; the other wrapper blocks are injected context.
//! The CLI's `~/.cursor/chats/<hash>/<id>/store.db` (content-addressed blobs and a `meta` row with
//! the chat's name and creation time) is not read: the transcripts hold the conversation.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use rusqlite::Connection;
use serde_json::Value;

use super::sqlite::{columns, open_read_only, value_json, value_text};
use crate::source::{files_under, has_extension, read_transcript};
use crate::turn::{content_text, git_root, json_time, stable_id, Piece, TurnBuilder};
use crate::{HistorySource, ImportError, ImportedConversation, SourceEnv, SourceId};

/// The Cursor IDE's chats (composers), from its global `state.vscdb`.
pub struct CursorIde {
    /// The `User` folder.
    root: PathBuf,
}

impl CursorIde {
    pub const ID: SourceId = SourceId {
        name: "cursor",
        label: "Cursor",
    };

    /// The source in `env`: the `cursor` override, else Cursor's `User` folder for this OS.
    pub fn new(env: &SourceEnv) -> Self {
        let root = Self::ID.folder(env, || {
            if cfg!(target_os = "macos") {
                env.home.join("Library/Application Support/Cursor/User")
            } else if cfg!(windows) {
                env.dir("APPDATA", "AppData/Roaming").join("Cursor/User")
            } else {
                env.dir("XDG_CONFIG_HOME", ".config").join("Cursor/User")
            }
        });
        Self { root }
    }

    /// Reads one chat already parsed (for tests and fuzzing): its `composerData` value and its
    /// bubbles in conversation order (an inline `conversation` is used when `bubbles` is empty).
    pub fn conversation(
        &self,
        composer: &Value,
        bubbles: &[Value],
        workspace: Option<String>,
    ) -> ImportedConversation {
        let id = composer["composerId"].as_str().unwrap_or("").to_owned();
        let fallback_at = json_time(&composer["createdAt"]);
        let inline = composer["conversation"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        let bubbles = if bubbles.is_empty() { inline } else { bubbles };
        let mut builder = TurnBuilder::new(&id);
        for bubble in bubbles {
            bubble_pieces(bubble, fallback_at, &mut builder);
        }
        ImportedConversation {
            id,
            title: composer["name"]
                .as_str()
                .filter(|n| !n.is_empty())
                .map(str::to_owned),
            git_root: workspace.as_deref().and_then(git_root),
            workspace,
            turns: builder.finish(),
            malformed: 0,
        }
    }
}

/// The pieces of one bubble. Times missing from old bubbles fall back to the chat's creation.
fn bubble_pieces(bubble: &Value, fallback_at: i64, builder: &mut TurnBuilder) {
    let at = match json_time(&bubble["createdAt"]) {
        0 => fallback_at,
        t => t,
    };
    let text = bubble["text"].as_str().unwrap_or("").to_owned();
    match bubble["type"].as_i64() {
        Some(1) => builder.push(Piece::Person {
            id: bubble["bubbleId"].as_str().map(str::to_owned),
            text,
            at,
        }),
        Some(2) => {
            if let Some(thinking) = bubble["thinking"]["text"].as_str() {
                builder.push(Piece::Reasoning {
                    text: thinking.to_owned(),
                });
            }
            for block in bubble["allThinkingBlocks"].as_array().into_iter().flatten() {
                if let Some(thinking) = block["text"]
                    .as_str()
                    .or_else(|| block["thinking"].as_str())
                {
                    builder.push(Piece::Reasoning {
                        text: thinking.to_owned(),
                    });
                }
            }
            builder.push(Piece::Answer { text, at });
            let tool = &bubble["toolFormerData"];
            if tool.is_object() {
                let id = tool["toolCallId"]
                    .as_str()
                    .filter(|i| !i.is_empty())
                    .or_else(|| bubble["bubbleId"].as_str())
                    .unwrap_or("tool")
                    .to_owned();
                builder.push(Piece::ToolCall {
                    id: id.clone(),
                    name: tool["name"].as_str().unwrap_or("tool").to_owned(),
                    input: embedded_json(&tool["params"]),
                    at,
                });
                let status = tool["status"].as_str().unwrap_or("");
                let is_error = matches!(status, "error" | "failed");
                if !tool["result"].is_null() || is_error {
                    builder.push(Piece::ToolResult {
                        id,
                        output: tool_output(&tool["result"]),
                        is_error,
                        at,
                    });
                }
            }
        }
        _ => {}
    }
}

/// A value Cursor stores as a JSON string inside the JSON: parsed when it parses.
fn embedded_json(v: &Value) -> Value {
    match v {
        Value::String(s) => serde_json::from_str(s).unwrap_or_else(|_| v.clone()),
        other => other.clone(),
    }
}

/// A tool result as text: the `output` of a terminal result, else the result as written.
fn tool_output(result: &Value) -> String {
    if let Some(output) = embedded_json(result)["output"].as_str() {
        return output.to_owned();
    }
    match result {
        Value::String(raw) => raw.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// composerId → the workspace folder, from every `workspaceStorage/<hash>/state.vscdb` beside the
/// global one (missing or unreadable ones are skipped).
fn workspace_folders(user: &Path) -> HashMap<String, String> {
    let mut map = HashMap::new();
    let Ok(entries) = std::fs::read_dir(user.join("workspaceStorage")) else {
        return map;
    };
    for entry in entries.flatten() {
        let dir = entry.path();
        let Some(folder) = std::fs::read(dir.join("workspace.json"))
            .ok()
            .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
            .and_then(|w| w["folder"].as_str().and_then(file_url_path))
        else {
            continue;
        };
        let db = dir.join("state.vscdb");
        if !db.is_file() {
            continue;
        }
        let Ok(conn) = open_read_only(&db) else {
            continue;
        };
        let Ok(value) = conn.query_row(
            "SELECT value FROM ItemTable WHERE key = 'composer.composerData'",
            [],
            |row| Ok(value_json(row.get_ref(0)?)),
        ) else {
            continue;
        };
        for composer in value
            .as_ref()
            .and_then(|v| v["allComposers"].as_array())
            .into_iter()
            .flatten()
        {
            if let Some(id) = composer["composerId"].as_str() {
                map.insert(id.to_owned(), folder.clone());
            }
        }
    }
    map
}

/// The path of a `file://` URL, percent-decoded (`None` for other schemes: remote folders).
fn file_url_path(url: &str) -> Option<String> {
    let rest = url.strip_prefix("file://")?;
    let bytes = rest.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (b, hex) {
            (b'%', Some(decoded)) => {
                out.push(decoded);
                i += 3;
            }
            _ => {
                out.push(b);
                i += 1;
            }
        }
    }
    let path = String::from_utf8_lossy(&out).into_owned();
    // file:///c%3A/Users/… on Windows.
    let path = match path.as_bytes() {
        [b'/', drive, b':', ..] if drive.is_ascii_alphabetic() => path[1..].to_owned(),
        _ => path,
    };
    (!path.is_empty()).then_some(path)
}

/// Every composer of a global `state.vscdb`, streamed.
fn read_composers(
    source: &CursorIde,
    conn: &Connection,
    folders: &HashMap<String, String>,
) -> Vec<ImportedConversation> {
    let (Ok(mut composers), Ok(mut bubble)) = (
        conn.prepare("SELECT key, value FROM cursorDiskKV WHERE key LIKE 'composerData:%'"),
        conn.prepare("SELECT value FROM cursorDiskKV WHERE key = ?1"),
    ) else {
        return Vec::new();
    };
    let Ok(mut rows) = composers.query([]) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    loop {
        let row = match rows.next() {
            Ok(Some(row)) => row,
            Ok(None) | Err(_) => break,
        };
        let key = row.get_ref(0).ok().and_then(value_text).unwrap_or_default();
        let key_id = key.strip_prefix("composerData:").unwrap_or(&key).to_owned();
        let Some(mut composer) = row
            .get_ref(1)
            .ok()
            .and_then(value_json)
            .filter(Value::is_object)
        else {
            out.push(ImportedConversation {
                id: key_id,
                malformed: 1,
                ..Default::default()
            });
            continue;
        };
        if !composer["composerId"].is_string() {
            composer["composerId"] = Value::String(key_id.clone());
        }
        let id = composer["composerId"].as_str().unwrap_or("").to_owned();
        let mut malformed = 0;
        let mut bubbles = Vec::new();
        for header in composer["fullConversationHeadersOnly"]
            .as_array()
            .into_iter()
            .flatten()
        {
            let Some(bubble_id) = header["bubbleId"].as_str() else {
                continue;
            };
            let found = bubble.query_row([format!("bubbleId:{id}:{bubble_id}")], |row| {
                Ok(value_json(row.get_ref(0)?))
            });
            match found {
                Ok(Some(mut b)) if b.is_object() => {
                    if !b["bubbleId"].is_string() {
                        b["bubbleId"] = Value::String(bubble_id.to_owned());
                    }
                    if b["type"].is_null() {
                        b["type"] = header["type"].clone();
                    }
                    bubbles.push(b);
                }
                Ok(_) => malformed += 1,
                Err(_) => {} // not stored (Cursor drops some): nothing to read
            }
        }
        let mut conversation = source.conversation(&composer, &bubbles, folders.get(&id).cloned());
        conversation.malformed = malformed;
        if !conversation.turns.is_empty() || conversation.malformed > 0 {
            out.push(conversation);
        }
    }
    out
}

impl HistorySource for CursorIde {
    fn id(&self) -> SourceId {
        Self::ID
    }

    fn roots(&self) -> Vec<PathBuf> {
        vec![self.root.clone()]
    }

    fn files(&self) -> Vec<PathBuf> {
        let global = self.root.join("globalStorage/state.vscdb");
        if global.is_file() {
            vec![global]
        } else {
            Vec::new()
        }
    }

    /// Every chat of the database with turns (empty chats are left out).
    fn read(&self, file: &Path) -> Result<Vec<ImportedConversation>, ImportError> {
        let conn = open_read_only(file)?;
        if columns(&conn, "cursorDiskKV").is_empty() {
            return Ok(Vec::new());
        }
        // <User>/globalStorage/state.vscdb → <User>/workspaceStorage/
        let folders = file
            .parent()
            .and_then(Path::parent)
            .map(workspace_folders)
            .unwrap_or_default();
        Ok(read_composers(self, &conn, &folders))
    }
}

/// The Cursor agent CLI's JSONL transcripts.
pub struct CursorAgent {
    /// The `projects` folder.
    root: PathBuf,
}

impl CursorAgent {
    pub const ID: SourceId = SourceId {
        name: "cursor-agent",
        label: "Cursor agent CLI",
    };

    /// The source in `env`: the `cursor-agent` override, else `~/.cursor/projects`.
    pub fn new(env: &SourceEnv) -> Self {
        let root = Self::ID.folder(env, || env.home.join(".cursor/projects"));
        Self { root }
    }

    /// Reads a transcript already parsed (for tests and fuzzing); `id` names the conversation.
    ///
    /// The format has no record ids and no times: a turn's id is TurnBuilder's hash of the
    /// conversation and the words, and a request repeated word for word in the same transcript
    /// is told apart by how many times it came before (never by its line).
    pub fn conversation(&self, records: &[Value], id: &str) -> ImportedConversation {
        let workspace = records
            .iter()
            .find_map(|r| r["cwd"].as_str().or_else(|| r["workspace"].as_str()))
            .map(str::to_owned);
        let mut builder = TurnBuilder::new(id);
        let mut seen: HashMap<String, usize> = HashMap::new();
        let mut calls = 0usize;
        for record in records {
            let role = record["role"]
                .as_str()
                .or_else(|| record["message"]["role"].as_str())
                .unwrap_or("");
            let content = &record["message"]["content"];
            let blocks: Vec<Value> = match content {
                Value::Array(blocks) => blocks.clone(),
                Value::String(s) => vec![serde_json::json!({ "type": "text", "text": s })],
                _ => Vec::new(),
            };
            let mut person = Vec::new();
            for block in &blocks {
                match block["type"].as_str().unwrap_or("") {
                    "text" if role == "user" => {
                        person.push(block["text"].as_str().unwrap_or("").to_owned())
                    }
                    "text" if role == "assistant" => {
                        let text = block["text"].as_str().unwrap_or("");
                        // The CLI writes this in place of text it withholds: no words.
                        if text.trim() != "[REDACTED]" {
                            builder.push(Piece::Answer {
                                text: text.to_owned(),
                                at: 0,
                            });
                        }
                    }
                    "thinking" => builder.push(Piece::Reasoning {
                        text: block["thinking"]
                            .as_str()
                            .or_else(|| block["text"].as_str())
                            .unwrap_or("")
                            .to_owned(),
                    }),
                    "tool_use" | "tool_call" => {
                        calls += 1;
                        builder.push(Piece::ToolCall {
                            id: block["id"]
                                .as_str()
                                .map(str::to_owned)
                                .unwrap_or_else(|| format!("call-{calls}")),
                            name: block["name"].as_str().unwrap_or("tool").to_owned(),
                            input: block.get("input").cloned().unwrap_or(Value::Null),
                            at: 0,
                        });
                    }
                    "tool_result" => builder.push(Piece::ToolResult {
                        id: block["tool_use_id"].as_str().unwrap_or("").to_owned(),
                        output: content_text(&block["content"]),
                        is_error: block["is_error"].as_bool().unwrap_or(false),
                        at: 0,
                    }),
                    _ => {}
                }
            }
            if role == "user" {
                let text = user_query(&person.join("\n\n"));
                if text.is_empty() {
                    continue;
                }
                let n = seen.entry(text.clone()).or_insert(0);
                *n += 1;
                let turn_id = (*n > 1).then(|| stable_id(&[id, "0", &text, &n.to_string()]));
                builder.push(Piece::Person {
                    id: turn_id,
                    text,
                    at: 0,
                });
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
}

/// The person's words of a CLI user message: what is inside `<user_query>` when there is one;
/// otherwise the text with its wrapper blocks (`<user_info>…</user_info>` and the like) removed.
fn user_query(text: &str) -> String {
    let mut queries = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("<user_query>") {
        let after = &rest[start + "<user_query>".len()..];
        match after.find("</user_query>") {
            Some(end) => {
                queries.push(after[..end].trim());
                rest = &after[end + "</user_query>".len()..];
            }
            None => {
                queries.push(after.trim());
                rest = "";
            }
        }
    }
    if !queries.is_empty() {
        return queries.join("\n\n").trim().to_owned();
    }
    strip_wrapper_blocks(text)
}

/// Removes `<tag>…</tag>` blocks whose tag is a lower-case identifier (`user_info`,
/// `system_reminder`, `attached_files`…).
fn strip_wrapper_blocks(text: &str) -> String {
    let mut out = text.to_owned();
    let mut from = 0;
    while let Some(open) = out.get(from..).and_then(|s| s.find('<')).map(|i| i + from) {
        let tag: String = out[open + 1..]
            .chars()
            .take_while(|c| c.is_ascii_lowercase() || *c == '_' || *c == '-')
            .collect();
        let is_open_tag = !tag.is_empty() && out[open + 1 + tag.len()..].starts_with('>');
        let close = format!("</{tag}>");
        match (is_open_tag, out[open..].find(&close)) {
            (true, Some(end)) => out.replace_range(open..open + end + close.len(), ""),
            _ => from = open + 1,
        }
    }
    out.trim().to_owned()
}

impl HistorySource for CursorAgent {
    fn id(&self) -> SourceId {
        Self::ID
    }

    fn roots(&self) -> Vec<PathBuf> {
        vec![self.root.clone()]
    }

    fn files(&self) -> Vec<PathBuf> {
        files_under(&self.root, &|p| {
            has_extension(p, "jsonl")
                && p.components().any(|c| c.as_os_str() == "agent-transcripts")
        })
    }

    /// One conversation per transcript: its id is the file's name, or `<parent>:<name>` for a
    /// sub-agent's (`<parent>/subagents/<name>.jsonl`).
    fn read(&self, file: &Path) -> Result<Vec<ImportedConversation>, ImportError> {
        let t = read_transcript(file)?;
        let id = match t.parent {
            Some(parent) => format!("{parent}:{}", t.stem),
            None => t.stem,
        };
        let mut conversation = self.conversation(&t.records, &id);
        conversation.malformed = t.malformed;
        Ok(vec![conversation])
    }
}

//! Pi (the pi coding agent): `${PI_CODING_AGENT_DIR:-~/.pi/agent}/sessions/**/*.jsonl`. A header
//! `{type:"session", id, timestamp, cwd}`, then entries `{type, id, parentId, timestamp, …}`; the
//! entries form a tree (a rewind or `/tree` starts a new branch from an older entry), and the live
//! branch is the path from the last entry back to the root. `message` entries hold
//! `{role: user|assistant|toolResult, content}`; other entries (model changes, compactions,
//! branch summaries, extension records) and other roles (`bashExecution`, `custom`…) are not the
//! conversation's words.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::source::read_transcript;
use crate::turn::{content_text, git_root, strip_tag_blocks, unix_ms, Piece, TurnBuilder};
use crate::{HistorySource, ImportError, ImportedConversation, SourceEnv, SourceId};

/// Pi coding agent sessions.
pub struct Pi {
    root: PathBuf,
}

impl Pi {
    pub const ID: SourceId = SourceId {
        name: "pi",
        label: "Pi",
    };

    pub fn new(env: &SourceEnv) -> Self {
        let root = Self::ID.folder(env, || {
            env.dir("PI_CODING_AGENT_DIR", ".pi/agent").join("sessions")
        });
        Self { root }
    }

    /// Reads records already parsed (for tests and fuzzing): `file_stem` names the file.
    pub fn conversation(&self, records: &[Value], file_stem: &str) -> ImportedConversation {
        let header = records.iter().find(|r| r["type"] == "session");
        let id = header
            .and_then(|h| h.get("id"))
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .unwrap_or(file_stem)
            .to_owned();
        let workspace = header
            .and_then(|h| h.get("cwd"))
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_owned);
        let title = records
            .iter()
            .rev()
            .filter(|r| r["type"] == "session_info")
            .find_map(|r| r.get("name").and_then(Value::as_str))
            .filter(|s| !s.trim().is_empty())
            .map(str::to_owned);
        let live = live_branch(records);

        let mut builder = TurnBuilder::new(&id);
        // The call ids of the current turn: a result of any other call is not this turn's.
        let mut open_calls: HashSet<String> = HashSet::new();
        for record in records.iter().filter(|r| r["type"] == "message") {
            let entry_id = record.get("id").and_then(Value::as_str);
            if let Some(live) = &live {
                if !entry_id.is_some_and(|e| live.contains(e)) {
                    continue;
                }
            }
            let message = &record["message"];
            let at = record
                .get("timestamp")
                .and_then(unix_ms)
                .or_else(|| message.get("timestamp").and_then(unix_ms))
                .unwrap_or(0);
            match message["role"].as_str().unwrap_or("") {
                "user" => {
                    let text = person_words(&content_text(&message["content"]));
                    if !text.is_empty() {
                        open_calls.clear();
                        builder.push(Piece::Person {
                            id: entry_id.map(str::to_owned),
                            text,
                            at,
                        });
                    }
                }
                "assistant" => {
                    let blocks = match &message["content"] {
                        Value::Array(blocks) => blocks.clone(),
                        text @ Value::String(_) => {
                            vec![serde_json::json!({"type": "text", "text": text})]
                        }
                        _ => Vec::new(),
                    };
                    for (i, b) in blocks.iter().enumerate() {
                        match b["type"].as_str().unwrap_or("") {
                            "text" => builder.push(Piece::Answer {
                                text: b["text"].as_str().unwrap_or("").to_owned(),
                                at,
                            }),
                            "thinking" => builder.push(Piece::Reasoning {
                                text: b["thinking"].as_str().unwrap_or("").to_owned(),
                            }),
                            "toolCall" => {
                                let call = b
                                    .get("id")
                                    .and_then(Value::as_str)
                                    .map(str::to_owned)
                                    .unwrap_or_else(|| {
                                        format!("{}#{i}", entry_id.unwrap_or("call"))
                                    });
                                open_calls.insert(call.clone());
                                builder.push(Piece::ToolCall {
                                    id: call,
                                    name: b["name"].as_str().unwrap_or("tool").to_owned(),
                                    input: b.get("arguments").cloned().unwrap_or(Value::Null),
                                    at,
                                });
                            }
                            _ => {}
                        }
                    }
                }
                "toolResult" => {
                    let call = message.get("toolCallId").and_then(Value::as_str);
                    if let Some(call) = call.filter(|c| open_calls.contains(*c)) {
                        builder.push(Piece::ToolResult {
                            id: call.to_owned(),
                            output: content_text(&message["content"]),
                            is_error: message["isError"].as_bool().unwrap_or(false),
                            at,
                        });
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

/// The ids on the path from the last entry back to the root, or `None` when the entries carry
/// no ids (version 1 files are a plain list).
fn live_branch(records: &[Value]) -> Option<HashSet<&str>> {
    let entries: Vec<&Value> = records
        .iter()
        .filter(|r| r["type"] != "session" && r.get("id").is_some_and(Value::is_string))
        .collect();
    let last = entries.last()?;
    let parent: HashMap<&str, Option<&str>> = entries
        .iter()
        .filter_map(|r| {
            let id = r.get("id").and_then(Value::as_str)?;
            Some((id, r.get("parentId").and_then(Value::as_str)))
        })
        .collect();
    let mut live = HashSet::new();
    let mut at = last.get("id").and_then(Value::as_str);
    while let Some(id) = at {
        if !live.insert(id) {
            break; // a cycle in a damaged file
        }
        at = parent.get(id).copied().flatten();
    }
    Some(live)
}

/// The person's words: expanded skill blocks are the agent's, not the person's.
fn person_words(text: &str) -> String {
    strip_tag_blocks(text, &["skill", "system-reminder"])
}

impl HistorySource for Pi {
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

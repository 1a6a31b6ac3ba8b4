//! Claude Code: `~/.claude/projects/<folder>/<sessionId>.jsonl`, sub-agents in
//! `<sessionId>/subagents/agent-<id>.jsonl` (older versions: `agent-<id>.jsonl` beside the session).
//! Records form a tree by `parentUuid`; where a rewind made two branches, the one holding the
//! latest record is the conversation. `isMeta` records and injected wrappers are not the person's
//! words; tool results are user records paired to their `tool_use` by id.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::source::read_transcript;
use crate::turn::{content_text, git_root, parse_time, Piece, TurnBuilder};
use crate::{HistorySource, ImportError, ImportedConversation, SourceEnv, SourceId};

pub struct ClaudeCode {
    root: PathBuf,
    /// qwenwork writes the same format but marks the person's records with `origin.kind`, and
    /// its side chains are not the conversation.
    strict_origin: bool,
    /// [`Self::ID`], or [`Self::QWENWORK`].
    id: SourceId,
}

impl ClaudeCode {
    pub const ID: SourceId = SourceId {
        name: "claude-code",
        label: "Claude Code",
    };
    /// qwenwork, which keeps its history in Claude Code's format.
    pub const QWENWORK: SourceId = SourceId {
        name: "qwenwork",
        label: "qwenwork",
    };

    pub fn new(env: &SourceEnv) -> Self {
        let root = Self::ID.folder(env, || {
            env.dir("CLAUDE_CONFIG_DIR", ".claude").join("projects")
        });
        Self {
            root,
            strict_origin: false,
            id: Self::ID,
        }
    }

    /// qwenwork's Claude-Code-like history.
    pub fn qwenwork(env: &SourceEnv) -> Self {
        let root = Self::QWENWORK.folder(env, || {
            env.dir("QWENWORK_CONFIG_DIR", ".qwenworkcn")
                .join("projects")
        });
        Self {
            root,
            strict_origin: true,
            id: Self::QWENWORK,
        }
    }

    /// Reads records already parsed (for tests and fuzzing): `file_stem` names the file.
    pub fn conversation(
        &self,
        records: &[Value],
        file_stem: &str,
        parent_session: Option<&str>,
    ) -> ImportedConversation {
        let session = records
            .iter()
            .find_map(|r| r.get("sessionId").and_then(Value::as_str))
            .unwrap_or(file_stem)
            .to_owned();
        let id = match parent_session {
            Some(parent) => format!("{parent}:{file_stem}"),
            None if is_subagent_file(file_stem) => format!("{session}:{file_stem}"),
            None => session.clone(),
        };
        let workspace = records
            .iter()
            .find_map(|r| r.get("cwd").and_then(Value::as_str))
            .map(str::to_owned);
        let title =
            records
                .iter()
                .rev()
                .find_map(|r| match r.get("type").and_then(Value::as_str) {
                    Some("custom-title") => r.get("customTitle").and_then(Value::as_str),
                    Some("summary") => r.get("summary").and_then(Value::as_str),
                    _ => None,
                });
        let dead = dead_branches(records);
        let mut builder = TurnBuilder::new(&id);
        for record in records {
            if record
                .get("uuid")
                .and_then(Value::as_str)
                .is_some_and(|u| dead.contains(u))
            {
                continue;
            }
            self.pieces(record, &mut builder);
        }
        ImportedConversation {
            id,
            title: title.map(str::to_owned),
            git_root: workspace.as_deref().and_then(git_root),
            workspace,
            turns: builder.finish(),
            malformed: 0,
        }
    }

    fn pieces(&self, record: &Value, builder: &mut TurnBuilder) {
        let kind = record.get("type").and_then(Value::as_str).unwrap_or("");
        let at = record
            .get("timestamp")
            .and_then(Value::as_str)
            .and_then(parse_time)
            .unwrap_or(0);
        let message = record.get("message").unwrap_or(&Value::Null);
        let content = message.get("content").unwrap_or(&Value::Null);
        match kind {
            "user" => {
                if let Value::Array(blocks) = content {
                    for b in blocks.iter().filter(|b| b["type"] == "tool_result") {
                        builder.push(Piece::ToolResult {
                            id: b["tool_use_id"].as_str().unwrap_or("").to_owned(),
                            output: content_text(&b["content"]),
                            is_error: b["is_error"].as_bool().unwrap_or(false),
                            at,
                        });
                    }
                }
                if record["isMeta"].as_bool() == Some(true)
                    || record["isCompactSummary"].as_bool() == Some(true)
                {
                    return;
                }
                if self.strict_origin
                    && (record["isSidechain"].as_bool() == Some(true)
                        || record
                            .pointer("/origin/kind")
                            .and_then(Value::as_str)
                            .is_some_and(|k| k != "human"))
                {
                    return;
                }
                let text = person_words(&content_text(content));
                if !text.is_empty() {
                    builder.push(Piece::Person {
                        id: record
                            .get("uuid")
                            .and_then(Value::as_str)
                            .map(str::to_owned),
                        text,
                        at,
                    });
                }
            }
            "assistant" => {
                let Value::Array(blocks) = content else {
                    if let Value::String(text) = content {
                        builder.push(Piece::Answer {
                            text: text.clone(),
                            at,
                        });
                    }
                    return;
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
                        "tool_use" => builder.push(Piece::ToolCall {
                            id: b["id"].as_str().map(str::to_owned).unwrap_or_else(|| {
                                format!("{}#{i}", record["uuid"].as_str().unwrap_or("tool"))
                            }),
                            name: b["name"].as_str().unwrap_or("tool").to_owned(),
                            input: b.get("input").cloned().unwrap_or(Value::Null),
                            at,
                        }),
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
}

/// `agent-<id>`: a sub-agent's transcript (older versions keep it beside the session file).
fn is_subagent_file(stem: &str) -> bool {
    stem.strip_prefix("agent-").is_some_and(|id| {
        !id.is_empty() && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
    })
}

/// The person's words of a user text: injected wrappers and reminders removed; what is left of a
/// slash command's output or an interruption note is not words.
fn person_words(text: &str) -> String {
    let mut out = text.to_owned();
    for tag in [
        "system-reminder",
        "local-command-stdout",
        "local-command-stderr",
        "command-message",
        "command-args",
        "command-name",
    ] {
        let open = format!("<{tag}>");
        let close = format!("</{tag}>");
        while let Some(start) = out.find(&open) {
            match out[start..].find(&close) {
                Some(end) => out.replace_range(start..start + end + close.len(), ""),
                None => {
                    out.truncate(start);
                    break;
                }
            }
        }
    }
    let trimmed = out.trim();
    if trimmed.starts_with("[Request interrupted by user")
        || trimmed.starts_with(
            "Caveat: The messages below were generated by the user while running local commands",
        )
    {
        return String::new();
    }
    trimmed.to_owned()
}

/// The uuids on abandoned branches: where a record has two or more children that shape the
/// conversation (a person's message, or an assistant record of another response), every child
/// but the one whose subtree holds the latest record is dead, with its subtree.
fn dead_branches(records: &[Value]) -> HashSet<String> {
    let mut children: HashMap<&str, Vec<(usize, &str)>> = HashMap::new();
    let mut position: HashMap<&str, usize> = HashMap::new();
    for (i, r) in records.iter().enumerate() {
        let Some(uuid) = r.get("uuid").and_then(Value::as_str) else {
            continue;
        };
        position.insert(uuid, i);
        if let Some(parent) = r.get("parentUuid").and_then(Value::as_str) {
            if parent != uuid {
                children.entry(parent).or_default().push((i, uuid));
            }
        }
    }
    // The latest file position in each subtree (iteratively, guarding against cycles).
    let mut latest: HashMap<&str, usize> = HashMap::new();
    fn subtree_latest<'a>(
        node: &'a str,
        children: &HashMap<&'a str, Vec<(usize, &'a str)>>,
        position: &HashMap<&'a str, usize>,
        memo: &mut HashMap<&'a str, usize>,
    ) -> usize {
        if let Some(v) = memo.get(node) {
            return *v;
        }
        let mut stack = vec![node];
        let mut seen = HashSet::new();
        let mut best = position.get(node).copied().unwrap_or(0);
        while let Some(n) = stack.pop() {
            if !seen.insert(n) {
                continue;
            }
            best = best.max(position.get(n).copied().unwrap_or(0));
            if let Some(kids) = children.get(n) {
                stack.extend(kids.iter().map(|(_, k)| *k));
            }
        }
        memo.insert(node, best);
        best
    }
    let shapes = |i: usize| -> Option<String> {
        let r = &records[i];
        match r.get("type").and_then(Value::as_str) {
            Some("assistant") => Some(format!(
                "a:{}",
                r.pointer("/message/id")
                    .and_then(Value::as_str)
                    .unwrap_or_else(|| r["uuid"].as_str().unwrap_or(""))
            )),
            Some("user") if r["isMeta"].as_bool() != Some(true) => {
                let c = &r["message"]["content"];
                let tool_result = c
                    .as_array()
                    .is_some_and(|b| b.iter().any(|b| b["type"] == "tool_result"));
                (!tool_result).then(|| format!("u:{}", r["uuid"].as_str().unwrap_or("")))
            }
            _ => None,
        }
    };
    let mut dead = HashSet::new();
    for kids in children.values() {
        let shaping: Vec<(usize, &str, String)> = kids
            .iter()
            .filter_map(|(i, k)| shapes(*i).map(|s| (*i, *k, s)))
            .collect();
        let distinct: HashSet<&String> = shaping.iter().map(|(_, _, s)| s).collect();
        if distinct.len() < 2 {
            continue;
        }
        let keep = shaping
            .iter()
            .max_by_key(|(_, k, _)| subtree_latest(k, &children, &position, &mut latest))
            .map(|(_, k, s)| (*k, s.clone()));
        let Some((keep, keep_shape)) = keep else {
            continue;
        };
        for (_, k, s) in &shaping {
            if *k == keep || *s == keep_shape {
                continue;
            }
            let mut stack = vec![*k];
            while let Some(n) = stack.pop() {
                if dead.insert(n.to_owned()) {
                    if let Some(grand) = children.get(n) {
                        stack.extend(grand.iter().map(|(_, g)| *g));
                    }
                }
            }
        }
    }
    dead
}

impl HistorySource for ClaudeCode {
    fn id(&self) -> SourceId {
        self.id
    }

    fn roots(&self) -> Vec<PathBuf> {
        vec![self.root.clone()]
    }

    fn read(&self, file: &Path) -> Result<Vec<ImportedConversation>, ImportError> {
        // <session>/subagents/agent-<id>.jsonl belongs to <session>.
        let t = read_transcript(file)?;
        let mut conversation = self.conversation(&t.records, &t.stem, t.parent.as_deref());
        conversation.malformed = t.malformed;
        Ok(vec![conversation])
    }
}

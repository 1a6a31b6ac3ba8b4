//! Codex CLI: `${CODEX_HOME:-~/.codex}/sessions/YYYY/MM/DD/rollout-<time>-<uuid>.jsonl` and
//! `archived_sessions/`. Lines are `{timestamp, type, payload}`; very old files open with a bare
//! `{id, timestamp, …}` line followed by unwrapped response items. The `response_item` stream (what
//! the model saw) is read; the `event_msg` stream repeats its text and is read only when a file has
//! no person's words among its response items. Injected user-role context (environment, AGENTS.md,
//! instructions, aborted-turn notes…) is not the person's words. Codex lines carry no ids a turn
//! can keep, so turns take the hash fallback.

use std::collections::hash_map::DefaultHasher;
use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::source::{files_under, has_extension, json_lines, parse_json_lines};
use crate::turn::{
    content_text, git_root, parse_time, stable_id, strip_tag_blocks, Piece, TurnBuilder,
};
use crate::{HistorySource, ImportError, ImportedConversation, SourceEnv, SourceId};

/// Codex CLI rollouts.
pub struct Codex {
    roots: Vec<PathBuf>,
}

/// Response item types an old, unwrapped rollout line can be.
const RESPONSE_TYPES: &[&str] = &[
    "message",
    "reasoning",
    "function_call",
    "function_call_output",
    "custom_tool_call",
    "custom_tool_call_output",
    "local_shell_call",
    "web_search_call",
];

/// Wrappers of user-role text Codex injects (matched case-insensitively, attributes allowed).
const INJECTED_TAGS: &[&str] = &[
    "environment_context",
    "user_instructions",
    "permissions instructions",
    "user_shell_command",
    "turn_aborted",
    "skill",
    "subagent_notification",
    "subagents",
    "plugins",
    "tool_context",
    "reasoning_context",
    "pinned_notes",
    "context_update",
    "collaboration_mode",
    "hook_prompt",
    "apps_instructions",
];

impl Codex {
    pub const ID: SourceId = SourceId {
        name: "codex",
        label: "Codex",
    };

    pub fn new(env: &SourceEnv) -> Self {
        let roots = match env.overridden(Self::ID.name) {
            Some(root) => vec![root],
            None => {
                let home = env.dir("CODEX_HOME", ".codex");
                vec![home.join("sessions"), home.join("archived_sessions")]
            }
        };
        Self { roots }
    }

    /// Reads records already parsed (for tests and fuzzing): `file_stem` names the file (its
    /// trailing uuid is the conversation id when no `session_meta` says otherwise).
    pub fn conversation(&self, records: &[Value], file_stem: &str) -> ImportedConversation {
        let entries: Vec<Entry<'_>> = records.iter().filter_map(entry).collect();

        let mut id = None;
        let mut workspace = None;
        let mut title = None;
        let mut response_words = false;
        for e in &entries {
            match e.kind {
                // The first session_meta is this file's session (a resume repeats it; a fork's
                // copied history carries its parent's after it).
                "session_meta" | "turn_context" => {
                    let field = |k: &str| {
                        e.payload
                            .get(k)
                            .and_then(Value::as_str)
                            .filter(|s| !s.is_empty())
                    };
                    if e.kind == "session_meta" {
                        id = id.or_else(|| field("id"));
                    }
                    workspace = workspace.or_else(|| field("cwd"));
                }
                "event_msg" if e.payload["type"] == "thread_name_updated" => {
                    title = e
                        .payload
                        .get("thread_name")
                        .and_then(Value::as_str)
                        .or(title);
                }
                "response_item" if is_user_message(e.payload) => {
                    response_words =
                        response_words || !person_words(&e.payload["content"]).is_empty();
                }
                _ => {}
            }
        }
        let id = id
            .map(str::to_owned)
            .unwrap_or_else(|| id_from_stem(file_stem));
        let workspace = workspace.map(str::to_owned).or_else(|| {
            entries
                .iter()
                .filter(|e| e.kind == "response_item" && is_user_message(e.payload))
                .find_map(|e| environment_cwd(&content_text(&e.payload["content"])))
        });

        let mut reader = Reader {
            conversation: &id,
            builder: TurnBuilder::new(&id),
            person_count: HashMap::new(),
            open_calls: HashSet::new(),
            persons: 0,
            last_ended: false,
            web_searches: 0,
        };
        let mut seen_lines = HashSet::new();
        let mut last_at = 0;
        for e in &entries {
            if let Some(at) = e.at {
                last_at = at;
            }
            if matches!(e.kind, "response_item" | "event_msg") {
                // A resumed or replayed session can repeat lines verbatim: read each once.
                if let Some(key) = e.key {
                    if !seen_lines.insert(key) {
                        continue;
                    }
                }
            }
            match e.kind {
                "response_item" => reader.response_item(e.payload, last_at, response_words),
                "event_msg" => reader.event(e.payload, last_at, response_words),
                _ => {}
            }
        }
        let last_ended = reader.last_ended;
        let mut turns = reader.builder.finish();
        if last_ended {
            // Codex said the turn is over (finished or interrupted): nothing more will come.
            if let Some(turn) = turns.last_mut() {
                turn.complete = true;
            }
        }
        ImportedConversation {
            id,
            title: title.map(str::to_owned),
            git_root: workspace.as_deref().and_then(git_root),
            workspace,
            turns,
            malformed: 0,
        }
    }
}

/// Turns pieces out of rollout lines in order.
struct Reader<'a> {
    conversation: &'a str,
    builder: TurnBuilder,
    /// How often each (time, words) was said: a repeat gets its own turn id.
    person_count: HashMap<(i64, String), usize>,
    /// The call ids of the current turn: an output of any other call is not this turn's.
    open_calls: HashSet<String>,
    persons: usize,
    /// Codex marked the last turn over (`task_complete` / `turn_aborted`).
    last_ended: bool,
    web_searches: usize,
}

impl Reader<'_> {
    fn person(&mut self, text: &str, at: i64) {
        let text = text.trim().to_owned();
        if text.is_empty() {
            return;
        }
        let n = self.person_count.entry((at, text.clone())).or_insert(0);
        // Two identical messages at the same moment (old files have no time per line) must not
        // share a turn id.
        let id = (*n > 0)
            .then(|| stable_id(&[self.conversation, &at.to_string(), &text, &n.to_string()]));
        *n += 1;
        self.builder.push(Piece::Person { id, text, at });
        self.persons += 1;
        self.last_ended = false;
        self.open_calls.clear();
    }

    fn call(&mut self, id: String, name: String, input: Value, at: i64) {
        self.open_calls.insert(id.clone());
        self.builder.push(Piece::ToolCall {
            id,
            name,
            input,
            at,
        });
    }

    fn response_item(&mut self, p: &Value, at: i64, response_words: bool) {
        match p["type"].as_str().unwrap_or("") {
            "message" => match p["role"].as_str().unwrap_or("") {
                "user" if response_words => self.person(&person_words(&p["content"]), at),
                "assistant" if response_words => self.builder.push(Piece::Answer {
                    text: content_text(&p["content"]),
                    at,
                }),
                _ => {}
            },
            "reasoning" => self.builder.push(Piece::Reasoning {
                text: reasoning_text(p),
            }),
            "function_call" => self.call(call_id(p), name(p), json_or_text(&p["arguments"]), at),
            "custom_tool_call" => self.call(call_id(p), name(p), json_or_text(&p["input"]), at),
            "local_shell_call" => self.call(
                call_id(p),
                "local_shell".to_owned(),
                p.get("action").cloned().unwrap_or(Value::Null),
                at,
            ),
            "web_search_call" => {
                self.web_searches += 1;
                let id = p
                    .get("call_id")
                    .or_else(|| p.get("id"))
                    .and_then(Value::as_str)
                    .map(str::to_owned)
                    .unwrap_or_else(|| format!("web_search#{}", self.web_searches));
                let input = p.get("action").cloned().unwrap_or(Value::Null);
                self.call(id, "web_search".to_owned(), input, at);
            }
            kind if kind.ends_with("_output") => {
                let Some(call) = p.get("call_id").and_then(Value::as_str) else {
                    return;
                };
                if self.open_calls.contains(call) {
                    let (output, is_error) = render_output(&p["output"]);
                    self.builder.push(Piece::ToolResult {
                        id: call.to_owned(),
                        output,
                        is_error,
                        at,
                    });
                }
            }
            _ => {}
        }
    }

    fn event(&mut self, p: &Value, at: i64, response_words: bool) {
        match p["type"].as_str().unwrap_or("") {
            "user_message" if !response_words => {
                self.person(&strip_injected(p["message"].as_str().unwrap_or("")), at);
            }
            "agent_message" if !response_words => self.builder.push(Piece::Answer {
                text: p["message"].as_str().unwrap_or("").to_owned(),
                at,
            }),
            "task_complete" | "turn_aborted" => self.last_ended = self.persons > 0,
            _ => {}
        }
    }
}

/// One rollout line, unwrapped.
struct Entry<'a> {
    kind: &'a str,
    payload: &'a Value,
    /// The line's own time, when it has one.
    at: Option<i64>,
    /// A hash of the whole line, for lines with a time (a replayed line repeats it exactly).
    key: Option<u64>,
}

fn entry(record: &Value) -> Option<Entry<'_>> {
    let time = record.get("timestamp").and_then(Value::as_str);
    let at = time.and_then(parse_time);
    let key = time.map(|_| {
        let mut hasher = DefaultHasher::new();
        record.to_string().hash(&mut hasher);
        hasher.finish()
    });
    let kind = record.get("type").and_then(Value::as_str);
    match (kind, record.get("payload")) {
        (Some(kind), Some(payload)) if payload.is_object() => Some(Entry {
            kind,
            payload,
            at,
            key,
        }),
        // Old files: unwrapped response items after a bare meta line.
        (Some(kind), _) if RESPONSE_TYPES.contains(&kind) => Some(Entry {
            kind: "response_item",
            payload: record,
            at,
            key,
        }),
        (None, _)
            if record.get("id").is_some_and(Value::is_string)
                && record.get("record_type").is_none() =>
        {
            Some(Entry {
                kind: "session_meta",
                payload: record,
                at,
                key: None,
            })
        }
        _ => None,
    }
}

fn is_user_message(payload: &Value) -> bool {
    payload["type"] == "message" && payload["role"] == "user"
}

/// The uuid a rollout file name ends with, else the whole stem.
fn id_from_stem(stem: &str) -> String {
    let tail = stem.len().checked_sub(36).and_then(|at| stem.get(at..));
    match tail {
        Some(uuid)
            if uuid.chars().filter(|c| *c == '-').count() == 4
                && uuid.chars().all(|c| c == '-' || c.is_ascii_hexdigit()) =>
        {
            uuid.to_owned()
        }
        _ => stem.to_owned(),
    }
}

/// The person's words of a user message: each content item is dropped when it is injected
/// context, and injected blocks are cut out of what is left.
fn person_words(content: &Value) -> String {
    let items: Vec<String> = match content {
        Value::String(s) => vec![s.clone()],
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| match b {
                Value::String(s) => Some(s.clone()),
                b if b
                    .get("type")
                    .is_none_or(|t| t == "input_text" || t == "text") =>
                {
                    b.get("text").and_then(Value::as_str).map(str::to_owned)
                }
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    };
    items
        .iter()
        .map(|t| strip_injected(t))
        .filter(|t| !t.is_empty())
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// `text` without what Codex injects into user-role messages.
fn strip_injected(text: &str) -> String {
    let mut rest = text.trim();
    // AGENTS.md contents: "# AGENTS.md instructions for <dir>\n\n<INSTRUCTIONS>…</INSTRUCTIONS>".
    while starts_with_ignore_case(rest, "# AGENTS.md instructions for ") {
        match rest.find("</INSTRUCTIONS>") {
            Some(end) => {
                rest = rest
                    .get(end + "</INSTRUCTIONS>".len()..)
                    .unwrap_or("")
                    .trim_start()
            }
            None => return String::new(),
        }
    }
    strip_tag_blocks(rest, INJECTED_TAGS)
}

fn starts_with_ignore_case(text: &str, prefix: &str) -> bool {
    text.get(..prefix.len())
        .is_some_and(|head| head.eq_ignore_ascii_case(prefix))
}

/// The `<cwd>` of an `<environment_context>` block (old files have no `cwd` elsewhere).
fn environment_cwd(text: &str) -> Option<String> {
    let start = text.find("<environment_context>")?;
    let block = text.get(start..)?;
    let open = block.find("<cwd>")? + "<cwd>".len();
    let len = block.get(open..)?.find("</cwd>")?;
    let cwd = block.get(open..open + len)?.trim();
    (!cwd.is_empty()).then(|| cwd.to_owned())
}

fn reasoning_text(payload: &Value) -> String {
    let from = |v: &Value| -> Vec<String> {
        v.as_array()
            .map(|items| {
                items
                    .iter()
                    .filter_map(|i| match i {
                        Value::String(s) => Some(s.clone()),
                        i => i.get("text").and_then(Value::as_str).map(str::to_owned),
                    })
                    .filter(|t| !t.trim().is_empty())
                    .collect()
            })
            .unwrap_or_default()
    };
    let summary = from(&payload["summary"]);
    if summary.is_empty() {
        from(&payload["content"]).join("\n")
    } else {
        summary.join("\n")
    }
}

fn name(payload: &Value) -> String {
    payload["name"].as_str().unwrap_or("tool").to_owned()
}

fn call_id(payload: &Value) -> String {
    payload
        .get("call_id")
        .or_else(|| payload.get("id"))
        .and_then(Value::as_str)
        .unwrap_or("call")
        .to_owned()
}

/// Arguments as JSON when the string holds an object or array, else as given.
fn json_or_text(value: &Value) -> Value {
    match value {
        Value::String(s) => match serde_json::from_str::<Value>(s) {
            Ok(parsed) if parsed.is_object() || parsed.is_array() => parsed,
            _ => value.clone(),
        },
        other => other.clone(),
    }
}

/// A tool output as text, and whether it failed: a string (older shells wrapped it as
/// `{"output", "metadata": {"exit_code"}}`), content items, or `{content, success}`.
fn render_output(output: &Value) -> (String, bool) {
    match output {
        Value::String(s) => {
            if let Ok(Value::Object(o)) = serde_json::from_str::<Value>(s) {
                if let Some(text) = o.get("output").and_then(Value::as_str) {
                    let code = o
                        .get("metadata")
                        .and_then(|m| m.get("exit_code"))
                        .and_then(Value::as_i64);
                    return (text.to_owned(), code.is_some_and(|c| c != 0));
                }
            }
            (s.clone(), false)
        }
        Value::Array(_) => (content_text(output), false),
        Value::Object(o) => {
            if let Some(content) = o.get("content") {
                let (text, _) = render_output(content);
                (
                    text,
                    o.get("success").and_then(Value::as_bool) == Some(false),
                )
            } else if let Some(text) = o.get("text").and_then(Value::as_str) {
                (text.to_owned(), false)
            } else {
                (output.to_string(), false)
            }
        }
        Value::Null => (String::new(), false),
        other => (other.to_string(), false),
    }
}

impl HistorySource for Codex {
    fn id(&self) -> SourceId {
        Self::ID
    }

    fn roots(&self) -> Vec<PathBuf> {
        self.roots.clone()
    }

    fn files(&self) -> Vec<PathBuf> {
        let mut files: Vec<PathBuf> = self
            .roots
            .iter()
            .flat_map(|root| {
                files_under(root, &|p| {
                    p.file_name()
                        .is_some_and(|n| n.to_string_lossy().starts_with("rollout-"))
                        && (has_extension(p, "jsonl") || has_extension(p, "json"))
                })
            })
            .collect();
        files.sort();
        files.dedup();
        files
    }

    fn read(&self, file: &Path) -> Result<Vec<ImportedConversation>, ImportError> {
        let stem = file
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let (records, malformed) = if has_extension(file, "json") {
            // The first Codex (TypeScript) wrote one JSON document: `{session, items}`.
            let bytes = std::fs::read(file).map_err(|e| ImportError::io(file, e))?;
            match serde_json::from_slice::<Value>(&bytes) {
                Ok(doc) if doc.get("items").is_some_and(Value::is_array) => {
                    let mut records: Vec<Value> = doc.get("session").cloned().into_iter().collect();
                    if let Some(Value::Array(items)) = doc.get("items") {
                        records.extend(items.iter().cloned());
                    }
                    (records, 0)
                }
                Ok(_) => (Vec::new(), 0),
                Err(_) => parse_json_lines(&bytes),
            }
        } else {
            json_lines(file)?
        };
        let mut conversation = self.conversation(&records, &stem);
        conversation.malformed = malformed;
        Ok(vec![conversation])
    }
}

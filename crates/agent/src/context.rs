//! Context hygiene (agent-loop.json `context`): result ids, headers, the head/tail cap, dedupe
//! stubs, `recall` of a stored result and the compaction table. Every measure acts when a result
//! is inserted; nothing already sent to the model is rewritten.

use std::collections::BTreeMap;
use std::path::PathBuf;

use cairn_tools::texts::fill;
use cairn_tools::ResultKind;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::texts::{
    CAP_ELIDED, COMPACTION_HEADING, COMPACTION_LINE, EDIT_HEADER, HEADER, NO_RESULT, READ_HEADER,
    READ_HEADER_EMPTY, RECALL_HEADER, SAME_RESULT, UNCHANGED,
};

/// agent-loop.json `context.cap`.
pub const MAX_LINES: usize = 400;
pub const MAX_CHARS: usize = 40_000;
pub const HEAD_LINES: usize = 200;
pub const HEAD_CHARS: usize = 20_000;
pub const TAIL_LINES: usize = 100;
pub const TAIL_CHARS: usize = 10_000;
/// agent-loop.json `context.compaction.rows`.
pub const COMPACTION_ROWS: usize = 50;
/// Lines `recall` shows at a time (like a read's window).
pub const RECALL_WINDOW: usize = 2000;
/// agent-loop.json `context.dedupe.by_result`.
const BY_RESULT: [&str; 4] = ["list", "glob", "grep", "search"];

/// `#` and the number in lowercase hex, at least 4 digits.
pub fn result_id(n: u64) -> String {
    format!("#{n:04x}")
}

/// A full result the request being built carries (the dedupe table's rows).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TableRow {
    pub id: String,
    pub tool: String,
    pub arguments: String,
    pub text: String,
    #[serde(default)]
    pub read: Option<ReadRow>,
}

/// A full read: which file, which lines, which content.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReadRow {
    pub path: String,
    pub absolute: PathBuf,
    pub from: usize,
    pub to: usize,
    pub of: usize,
    pub sha: String,
}

/// The per-session state behind context hygiene; stored with the session.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ContextState {
    /// The last result number given (ids are never reused).
    #[serde(default)]
    pub last_id: u64,
    /// Every full output, by id (for `recall`).
    #[serde(default)]
    pub results: BTreeMap<String, String>,
    /// The dedupe table: full results in the request being built (emptied by compaction).
    #[serde(default)]
    pub table: Vec<TableRow>,
    /// Full reads since the previous compaction (for the compaction table).
    #[serde(default)]
    pub reads: Vec<(String, ReadRow)>,
    /// Whether the model has seen a result cut, replaced by a pointer or compacted away: only
    /// then is `recall` offered (an id alone invites a weak model to call it for nothing).
    #[serde(default)]
    pub shortened: bool,
}

impl ContextState {
    fn next_id(&mut self) -> String {
        self.last_id += 1;
        result_id(self.last_id)
    }

    /// The text the model sees for a tool result, with its id and header, capped or replaced by
    /// a stub; the full output is kept for `recall`.
    pub fn insert(&mut self, tool: &str, arguments: &str, text: &str, kind: &ResultKind) -> String {
        let id = self.next_id();
        self.results.insert(id.clone(), text.to_owned());
        match kind {
            ResultKind::Read {
                path,
                absolute,
                from,
                to,
                of,
                sha,
                ..
            } => {
                if *of == 0 {
                    return fill(
                        READ_HEADER_EMPTY,
                        &[("id", &id), ("path", path), ("sha", sha)],
                    );
                }
                let header = fill(
                    READ_HEADER,
                    &[
                        ("id", &id),
                        ("path", path),
                        ("from", &from.to_string()),
                        ("to", &to.to_string()),
                        ("of", &of.to_string()),
                        ("sha", sha),
                    ],
                );
                let earlier = self.table.iter().find(|row| {
                    row.read.as_ref().is_some_and(|r| {
                        r.absolute == *absolute && r.sha == *sha && r.from <= *from && *to <= r.to
                    })
                });
                if let Some(earlier) = earlier {
                    self.shortened = true;
                    let r = earlier
                        .read
                        .as_ref()
                        .map(|r| (r.from, r.to))
                        .unwrap_or_default();
                    return format!(
                        "{header}\n{}",
                        fill(
                            UNCHANGED,
                            &[
                                ("earlier", &earlier.id),
                                ("from", &r.0.to_string()),
                                ("to", &r.1.to_string()),
                            ],
                        )
                    );
                }
                let row = ReadRow {
                    path: path.clone(),
                    absolute: absolute.clone(),
                    from: *from,
                    to: *to,
                    of: *of,
                    sha: sha.clone(),
                };
                self.reads.push((id.clone(), row.clone()));
                self.table.push(TableRow {
                    id: id.clone(),
                    tool: tool.to_owned(),
                    arguments: arguments.to_owned(),
                    text: text.to_owned(),
                    read: Some(row),
                });
                format!("{header}\n{text}")
            }
            ResultKind::Edit { path, sha } => {
                let header = fill(EDIT_HEADER, &[("id", &id), ("path", path), ("sha", sha)]);
                format!("{header}\n{}", self.capped(text, &id))
            }
            ResultKind::Plain => {
                let header = fill(HEADER, &[("id", &id)]);
                if BY_RESULT.contains(&tool) {
                    let same = self.table.iter().find(|row| {
                        row.tool == tool && row.arguments == arguments && row.text == text
                    });
                    if let Some(same) = same {
                        self.shortened = true;
                        return format!(
                            "{header}\n{}",
                            fill(SAME_RESULT, &[("earlier", &same.id)])
                        );
                    }
                    self.table.push(TableRow {
                        id: id.clone(),
                        tool: tool.to_owned(),
                        arguments: arguments.to_owned(),
                        text: text.to_owned(),
                        read: None,
                    });
                }
                format!("{header}\n{}", self.capped(text, &id))
            }
        }
    }

    /// [`cap`], noting when something was left out.
    fn capped(&mut self, text: &str, id: &str) -> String {
        let capped = cap(text, id);
        if capped.len() != text.len() {
            self.shortened = true;
        }
        capped
    }

    /// `recall`: a stored result by id, a window of its lines.
    pub fn recall(&mut self, target: &str, start: usize, end: usize) -> String {
        let target = normalise_target(target);
        let Some(full) = self.results.get(&target).cloned() else {
            let id = self.next_id();
            return format!(
                "{}\n{}",
                fill(HEADER, &[("id", &id)]),
                fill(NO_RESULT, &[("target", &target)])
            );
        };
        let id = self.next_id();
        let lines: Vec<&str> = full.lines().collect();
        let of = lines.len();
        let from = start.max(1).min(of.max(1));
        let asked = if end == 0 { of } else { end.min(of) };
        let to = asked.max(from).min(from + RECALL_WINDOW - 1).min(of);
        let body = if of == 0 {
            String::new()
        } else {
            lines[from - 1..to].join("\n")
        };
        self.results.insert(id.clone(), body.clone());
        format!(
            "{}\n{body}",
            fill(
                RECALL_HEADER,
                &[
                    ("id", &id),
                    ("target", &target),
                    ("from", &from.to_string()),
                    ("to", &to.to_string()),
                    ("of", &of.to_string()),
                ],
            )
        )
    }

    /// The table added after a compaction summary (empty when no file was read), and the
    /// dedupe table emptied.
    pub fn compact(&mut self) -> String {
        let mut newest: Vec<(String, ReadRow)> = Vec::new();
        for (id, row) in self.reads.drain(..) {
            newest.retain(|(_, r)| r.absolute != row.absolute);
            newest.push((id, row));
        }
        self.table.clear();
        self.shortened = true;
        if newest.is_empty() {
            return String::new();
        }
        let skip = newest.len().saturating_sub(COMPACTION_ROWS);
        let mut out =
            format!("{COMPACTION_HEADING}\n\n| File | Lines | sha | Result |\n|---|---|---|---|\n");
        for (id, r) in newest.into_iter().skip(skip) {
            out.push_str(&format!(
                "| {} | {}-{} of {} | {} | {id} |\n",
                r.path, r.from, r.to, r.of, r.sha
            ));
        }
        out.push('\n');
        out.push_str(COMPACTION_LINE);
        out
    }
}

/// `3`, `#3`, `0003` and `#0003` all name `#0003`.
fn normalise_target(target: &str) -> String {
    let digits = target.trim().trim_start_matches('#');
    match u64::from_str_radix(digits, 16) {
        Ok(n) => result_id(n),
        Err(_) => target.trim().to_owned(),
    }
}

/// The head/tail cap (agent-loop.json `context.cap`).
pub fn cap(text: &str, id: &str) -> String {
    let (body, final_newline) = match text.strip_suffix('\n') {
        Some(body) => (body, "\n"),
        None => (text, ""),
    };
    let lines: Vec<&str> = body.split('\n').collect();
    if lines.len() <= MAX_LINES && text.chars().count() <= MAX_CHARS {
        return text.to_owned();
    }
    let mut head: Vec<String> = Vec::new();
    let mut head_chars = 0;
    for line in &lines {
        let n = line.chars().count() + 1;
        if head.len() >= HEAD_LINES || head_chars + n > HEAD_CHARS {
            break;
        }
        head.push((*line).to_owned());
        head_chars += n;
    }
    if head.is_empty() {
        let cut: String = lines[0].chars().take(HEAD_CHARS).collect();
        head.push(format!("{cut} […cut]"));
    }
    let used = head.len();
    let mut tail: Vec<&str> = Vec::new();
    let mut tail_chars = 0;
    for line in lines[used..].iter().rev() {
        let n = line.chars().count() + 1;
        if tail.len() >= TAIL_LINES || tail_chars + n > TAIL_CHARS {
            break;
        }
        tail.push(line);
        tail_chars += n;
    }
    tail.reverse();
    let elided = lines.len() - used - tail.len();
    let mut out = head.join("\n");
    out.push('\n');
    out.push_str(&fill(CAP_ELIDED, &[("n", &elided.to_string()), ("id", id)]));
    if !tail.is_empty() {
        out.push('\n');
        out.push_str(&tail.join("\n"));
        out.push_str(final_newline);
    }
    out
}

/// The declaration of `recall`.
pub fn recall_declaration() -> cairn_tools::Declaration {
    cairn_tools::Declaration {
        name: "recall".into(),
        description: "Show a stored tool result again by its id (like #0003), or a range of its \
lines: use it when a result was cut or replaced by a pointer to an earlier one."
            .into(),
        parameters: json!({
            "type": "object",
            "properties": {
                "id": {"type": "string", "description": "The result's id, like #0003."},
                "start": {"type": "integer", "description": "First line (1-based); 0 = from the start."},
                "end": {"type": "integer", "description": "Last line (1-based, inclusive); 0 = to the end."}
            },
            "required": ["id"]
        }),
    }
}

/// Reads `recall`'s arguments.
pub fn recall_arguments(input: &Value) -> (String, usize, usize) {
    let number = |key: &str| {
        input
            .get(key)
            .and_then(|v| v.as_u64().or_else(|| v.as_str()?.parse().ok()))
            .unwrap_or(0) as usize
    };
    let id = match input.get("id") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => String::new(),
    };
    (id, number("start"), number("end"))
}

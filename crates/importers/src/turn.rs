//! What every source produces: conversations of turns. A turn runs from a person's message through
//! the model's final answer, with its tool calls (paired with their results by id) and reasoning.
//! [`TurnBuilder`] assembles turns from a conversation's messages in order, for every parser.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// One tool call with its result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ImportedToolCall {
    pub id: String,
    pub name: String,
    pub input: serde_json::Value,
    pub output: Option<String>,
    pub is_error: bool,
}

/// A turn of another agent's conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ImportedTurn {
    /// Stable across rescans and rewrites of the file: the id of the person's message when the
    /// format has one, else a hash of the conversation id, the time and the words.
    pub id: String,
    /// Unix milliseconds of the person's message (0 when unknown).
    pub started_at: i64,
    pub ended_at: i64,
    pub request: String,
    pub answer: String,
    pub tool_calls: Vec<ImportedToolCall>,
    pub reasoning: Option<String>,
    /// The model answered: a turn still waiting for its answer is left for a later sync.
    pub complete: bool,
}

/// One conversation as read from disk.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ImportedConversation {
    /// The agent's own id for it.
    pub id: String,
    pub title: Option<String>,
    /// The folder it worked in, and that folder's git root when one is found.
    pub workspace: Option<String>,
    pub git_root: Option<String>,
    pub turns: Vec<ImportedTurn>,
    /// Lines or records that could not be read (skipped, never fatal).
    pub malformed: usize,
}

/// A message of a conversation, in the order the agent wrote them, for [`TurnBuilder`].
#[derive(Debug, Clone, PartialEq)]
pub enum Piece {
    /// The person's words (a new turn begins). `id` is the record's own id when it has one.
    Person {
        id: Option<String>,
        text: String,
        at: i64,
    },
    /// Text the model wrote to the person.
    Answer {
        text: String,
        at: i64,
    },
    Reasoning {
        text: String,
    },
    ToolCall {
        id: String,
        name: String,
        input: serde_json::Value,
        at: i64,
    },
    ToolResult {
        id: String,
        output: String,
        is_error: bool,
        at: i64,
    },
}

/// Assembles turns from pieces in order.
#[derive(Debug, Default)]
pub struct TurnBuilder {
    conversation: String,
    turns: Vec<ImportedTurn>,
    /// The model's text in the current turn.
    texts: Vec<String>,
    /// Whether the model's text came after its last tool call or result (the turn can end there).
    answered_last: bool,
}

impl TurnBuilder {
    pub fn new(conversation: &str) -> Self {
        Self {
            conversation: conversation.to_owned(),
            ..Self::default()
        }
    }

    pub fn push(&mut self, piece: Piece) {
        match piece {
            Piece::Person { id, text, at } => {
                let text = text.trim().to_owned();
                if text.is_empty() {
                    return;
                }
                if self
                    .turns
                    .last()
                    .is_some_and(|t| Some(&t.id) == id.as_ref() && t.request == text)
                {
                    return; // the same record twice
                }
                self.close();
                if let Some(turn) = self.turns.last_mut() {
                    // Followed by another message of the person's: it ended, answered or not.
                    turn.complete = true;
                }
                // A record id seen twice (a damaged or copied file) cannot identify a turn.
                let id = match id {
                    Some(id) if !self.turns.iter().any(|t| t.id == id) => id,
                    Some(id) => stable_id(&[&self.conversation, &id, &at.to_string(), &text]),
                    None => stable_id(&[&self.conversation, &at.to_string(), &text]),
                };
                self.turns.push(ImportedTurn {
                    id,
                    started_at: at,
                    ended_at: at,
                    request: text,
                    answer: String::new(),
                    tool_calls: Vec::new(),
                    reasoning: None,
                    complete: false,
                });
            }
            Piece::Answer { text, at } => {
                let Some(turn) = self.turns.last_mut() else {
                    return;
                };
                if !text.trim().is_empty() {
                    self.texts.push(text.trim().to_owned());
                    self.answered_last = true;
                    turn.ended_at = turn.ended_at.max(at);
                }
            }
            Piece::Reasoning { text } => {
                let Some(turn) = self.turns.last_mut() else {
                    return;
                };
                if !text.trim().is_empty() {
                    let r = turn.reasoning.get_or_insert_with(String::new);
                    if !r.is_empty() {
                        r.push('\n');
                    }
                    r.push_str(text.trim());
                }
            }
            Piece::ToolCall {
                id,
                name,
                input,
                at,
            } => {
                let Some(turn) = self.turns.last_mut() else {
                    return;
                };
                turn.ended_at = turn.ended_at.max(at);
                self.answered_last = false;
                turn.tool_calls.push(ImportedToolCall {
                    id,
                    name,
                    input,
                    output: None,
                    is_error: false,
                });
            }
            Piece::ToolResult {
                id,
                output,
                is_error,
                at,
            } => {
                let Some(turn) = self.turns.last_mut() else {
                    return;
                };
                turn.ended_at = turn.ended_at.max(at);
                self.answered_last = false;
                // By id; a result without a known id answers the oldest call still waiting.
                let known = turn.tool_calls.iter().rposition(|c| c.id == id);
                let at = known.or_else(|| turn.tool_calls.iter().position(|c| c.output.is_none()));
                if let Some(call) = at.and_then(|i| turn.tool_calls.get_mut(i)) {
                    call.output = Some(output);
                    call.is_error = is_error;
                }
            }
        }
    }

    /// Ends the current turn: its answer is all the text the model wrote to the person in it, in
    /// order; a turn with no text yet is not complete.
    fn close(&mut self) {
        if let Some(turn) = self.turns.last_mut() {
            turn.answer = self.texts.join("\n\n");
            turn.complete = !self.texts.is_empty() && self.answered_last;
        }
        self.texts.clear();
        self.answered_last = false;
    }

    pub fn finish(mut self) -> Vec<ImportedTurn> {
        self.close();
        self.turns
    }
}

/// A short stable id from parts that identify a record (never a line number).
pub fn stable_id(parts: &[&str]) -> String {
    let mut hasher = Sha256::new();
    for part in parts {
        hasher.update(part.as_bytes());
        hasher.update([0]);
    }
    hasher
        .finalize()
        .iter()
        .take(12)
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Unix milliseconds of an RFC 3339 / ISO 8601 time (`2025-12-16T00:00:01.000Z`,
/// `…+02:00`), or `None`.
pub fn parse_time(text: &str) -> Option<i64> {
    let t = text.trim();
    let (date, rest) = t.split_once(['T', ' '])?;
    let mut d = date.splitn(3, '-');
    let year: i64 = d.next()?.parse().ok()?;
    let month: i64 = d.next()?.parse().ok()?;
    let day: i64 = d.next()?.parse().ok()?;
    let (clock, offset_ms) = if let Some(c) = rest.strip_suffix('Z') {
        (c, 0)
    } else if let Some(at) = rest.rfind(['+', '-']).filter(|&at| at >= 8) {
        let (c, off) = rest.split_at(at);
        let sign = if off.starts_with('-') { -1 } else { 1 };
        let off = &off[1..];
        let (h, m) = off
            .split_once(':')
            .unwrap_or((off.get(..2)?, off.get(2..).unwrap_or("0")));
        let minutes = h.parse::<i64>().ok()? * 60 + m.parse::<i64>().unwrap_or(0);
        (c, sign * minutes * 60_000)
    } else {
        (rest, 0)
    };
    let mut c = clock.splitn(3, ':');
    let hour: i64 = c.next()?.parse().ok()?;
    let minute: i64 = c.next()?.parse().ok()?;
    let seconds: f64 = c.next().unwrap_or("0").parse().ok()?;
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return None;
    }
    let days = cairn_protocol::calendar::days_from_civil(year, month, day);
    Some(
        days * 86_400_000 + hour * 3_600_000 + minute * 60_000 + (seconds * 1000.0) as i64
            - offset_ms,
    )
}

/// The text of a content value: a string, or the `text` of blocks (`{type:"text", text}` or
/// `{text}`), joined by blank lines.
pub fn content_text(content: &serde_json::Value) -> String {
    match content {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| match b {
                serde_json::Value::String(s) => Some(s.as_str()),
                b if b
                    .get("type")
                    .is_none_or(|t| t == "text" || t == "input_text" || t == "output_text") =>
                {
                    b.get("text").and_then(serde_json::Value::as_str)
                }
                _ => None,
            })
            .filter(|t| !t.trim().is_empty())
            .collect::<Vec<_>>()
            .join("\n\n"),
        serde_json::Value::Object(_) => content
            .get("text")
            .and_then(serde_json::Value::as_str)
            .unwrap_or("")
            .to_owned(),
        _ => String::new(),
    }
}

/// The git root above `dir`, if it exists on this machine.
pub fn git_root(dir: &str) -> Option<String> {
    let mut at = Some(std::path::Path::new(dir));
    while let Some(d) = at {
        if d.join(".git").exists() {
            return Some(d.display().to_string());
        }
        at = d.parent();
    }
    None
}

/// Unix milliseconds of a time: an ISO 8601 string, or a number (or numeric string) in seconds,
/// milliseconds, microseconds or nanoseconds, told apart by size.
pub fn unix_ms(value: &serde_json::Value) -> Option<i64> {
    let number = match value {
        serde_json::Value::Number(n) => n.as_f64()?,
        serde_json::Value::String(s) => match s.trim().parse::<f64>() {
            Ok(n) => n,
            Err(_) => return parse_time(s),
        },
        _ => return None,
    };
    if !number.is_finite() || number <= 0.0 {
        return None;
    }
    let ms = if number < 1e11 {
        number * 1000.0
    } else if number < 1e14 {
        number
    } else if number < 1e17 {
        number / 1000.0
    } else {
        number / 1_000_000.0
    };
    Some(ms as i64)
}

/// A JSON time (a number in any unit, or an ISO string) as unix ms; 0 when unknown.
pub fn json_time(value: &serde_json::Value) -> i64 {
    unix_ms(value).unwrap_or(0)
}

/// `text` without its `<tag …>…</tag>` blocks (tags matched case-insensitively; an unclosed block
/// runs to the end), trimmed.
pub fn strip_tag_blocks(text: &str, tags: &[&str]) -> String {
    let mut out = text.to_owned();
    for tag in tags {
        let open = format!("<{}", tag.to_ascii_lowercase());
        let close = format!("</{}>", tag.to_ascii_lowercase());
        let mut from = 0;
        loop {
            // ASCII lowering keeps byte offsets, so positions found in `lower` index `out`.
            let lower = out.to_ascii_lowercase();
            let Some(start) = lower
                .get(from..)
                .and_then(|s| s.find(&open))
                .map(|i| i + from)
            else {
                break;
            };
            let name_ends = matches!(
                lower.as_bytes().get(start + open.len()),
                Some(b'>' | b' ' | b'\n' | b'\t' | b'\r' | b'/')
            );
            if !name_ends {
                from = start + open.len();
                continue;
            }
            match lower.get(start..).and_then(|s| s.find(&close)) {
                Some(end) => out.replace_range(start..start + end + close.len(), ""),
                None => {
                    out.truncate(start);
                    break;
                }
            }
            from = start;
        }
    }
    out.trim().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_parse_with_zones_and_fractions() {
        assert_eq!(parse_time("1970-01-01T00:00:01.500Z"), Some(1500));
        assert_eq!(parse_time("2025-12-16T00:00:00Z"), Some(1_765_843_200_000));
        assert_eq!(
            parse_time("2025-12-16T02:00:00+02:00"),
            Some(1_765_843_200_000)
        );
        assert_eq!(parse_time("nonsense"), None);
    }

    #[test]
    fn a_turn_ends_on_the_last_text_and_pairs_results_by_id() {
        let mut b = TurnBuilder::new("c");
        b.push(Piece::Person {
            id: Some("u1".into()),
            text: "list files".into(),
            at: 1,
        });
        b.push(Piece::Answer {
            text: "I'll look.".into(),
            at: 2,
        });
        b.push(Piece::ToolCall {
            id: "t1".into(),
            name: "bash".into(),
            input: serde_json::json!({"command": "ls"}),
            at: 2,
        });
        b.push(Piece::ToolResult {
            id: "t1".into(),
            output: "a\nb".into(),
            is_error: false,
            at: 3,
        });
        b.push(Piece::Answer {
            text: "Two files.".into(),
            at: 4,
        });
        b.push(Piece::Person {
            id: None,
            text: "thanks".into(),
            at: 5,
        });
        let turns = b.finish();
        assert_eq!(turns.len(), 2);
        assert_eq!(turns[0].answer, "I'll look.\n\nTwo files.");
        assert_eq!(turns[0].tool_calls[0].output.as_deref(), Some("a\nb"));
        assert!(turns[0].complete);
        assert!(!turns[1].complete, "a last turn without an answer waits");
        assert_eq!(turns[1].id, stable_id(&["c", "5", "thanks"]));
    }
}

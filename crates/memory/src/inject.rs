//! Injection: recalled hits rendered as clearly labelled historical context for the model, each
//! snippet at most 640 characters.

use crate::clock::date;
use crate::model::{Layer, SearchHit};
use crate::text::snippet;

/// The most characters of one memory shown to the model.
pub const SNIPPET_CHARS: usize = 640;

/// Renders hits as a Markdown block that says what it is; empty when there are no hits.
pub fn render_injection(hits: &[SearchHit]) -> String {
    if hits.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "## Recalled from memory (historical context)\n\
         These are excerpts from earlier conversations, recalled because they may be relevant. \
         They describe the past: check them against the current request and the current state of \
         the files before relying on them. The current request always takes precedence.\n",
    );
    for (i, hit) in hits.iter().enumerate() {
        let m = &hit.memory;
        let superseded = m
            .metadata
            .get("superseded_by")
            .and_then(serde_json::Value::as_i64)
            .map(|by| {
                let on = m
                    .metadata
                    .get("superseded_on")
                    .and_then(serde_json::Value::as_i64)
                    .map_or_else(String::new, |at| format!(" on {}", date(at)));
                let newer = hits.iter().position(|h| h.memory.id == by).map_or_else(
                    || "a later memory".to_owned(),
                    |at| format!("no. {}", at + 1),
                );
                format!(" · outdated: superseded{on} by {newer}")
            })
            .unwrap_or_default();
        // What the background queue learned says from how much.
        let learned = m
            .metadata
            .get("support")
            .and_then(serde_json::Value::as_u64)
            .filter(|_| m.layer != Layer::Trace)
            .map(|n| format!(" · learned from {n} tasks that went well"))
            .unwrap_or_default();
        out.push_str(&format!(
            "\n{}. [{} · {} · {}{learned}{superseded}]\n{}\n",
            i + 1,
            date(m.created_at),
            m.source,
            m.layer.as_str(),
            snippet(&speakers_named(m.text.trim()), SNIPPET_CHARS)
        ));
    }
    out
}

/// A trace's `User:` / `Assistant:` lines said as who spoke to whom: a model reading
/// `Assistant: …` inside a message takes it for the reply to write and copies it.
fn speakers_named(text: &str) -> String {
    text.lines()
        .map(|line| {
            if let Some(rest) = line.strip_prefix("User: ") {
                format!("The person said: {rest}")
            } else if let Some(rest) = line.strip_prefix("Assistant: ") {
                format!("You answered: {rest}")
            } else {
                line.to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

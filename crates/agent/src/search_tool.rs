//! The `search_memory` tool over the stored sessions: questions (without the note the runtime
//! appends), answers and compaction summaries, leaving out the conversation in progress.

use std::collections::HashSet;

use cairn_llm::{Message, Role};
use cairn_tools::search_memory::{search, Entry, EntryKind, SessionTexts};
use cairn_tools::{field, Declaration, Tool, ToolContext, ToolFuture, ToolOutput};
use serde_json::{json, Value};

use crate::sessions::SessionStore;
use crate::texts::{is_runtime_text, COMPACT_ACK, COMPACT_SUMMARY};

pub struct SearchMemory {
    pub store: SessionStore,
}

/// A stored conversation's searchable texts, less those `skip` holds.
fn texts_of(messages: &[Message], skip: &HashSet<(Role, String)>) -> Vec<Entry> {
    let mut entries = Vec::new();
    let mut turn = 0;
    let mut question: Option<usize> = None;
    for m in messages {
        if skip.contains(&(m.role, m.content.clone())) {
            continue;
        }
        match m.role {
            Role::User if m.content.starts_with(COMPACT_SUMMARY) => {
                let text = m.content[COMPACT_SUMMARY.len()..].trim().to_owned();
                entries.push(Entry {
                    turn: turn.max(1),
                    kind: EntryKind::Summary,
                    text,
                    answer: None,
                });
            }
            Role::User => {
                // The runtime's own requests (nudges, wrap-up) and notes (`[…`) are not questions.
                let words = crate::words_of(m);
                if is_runtime_text(&m.content) || words.starts_with('[') {
                    continue;
                }
                turn += 1;
                question = Some(entries.len());
                entries.push(Entry {
                    turn,
                    kind: EntryKind::Question,
                    text: words.to_owned(),
                    answer: None,
                });
            }
            Role::Assistant if m.tool_calls.is_empty() && !m.content.trim().is_empty() => {
                if m.content == COMPACT_ACK {
                    continue;
                }
                if let Some(q) = question.and_then(|q| entries.get_mut(q)) {
                    q.answer = Some(m.content.clone());
                }
                entries.push(Entry {
                    turn: turn.max(1),
                    kind: EntryKind::Answer,
                    text: m.content.clone(),
                    answer: None,
                });
            }
            _ => {}
        }
    }
    entries
}

impl Tool for SearchMemory {
    fn name(&self) -> &str {
        "search_memory"
    }

    fn declaration(&self) -> Declaration {
        Declaration {
            name: "search_memory".into(),
            description: "Search the earlier conversations (questions, answers, summaries) for \
words. It matches words, not meanings."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "The words to look for."},
                    "limit": {"type": "integer", "description": "How many hits at most (default 10, at most 50)."}
                },
                "required": ["query"]
            }),
        }
    }

    fn display(&self, input: &Value) -> String {
        format!("🔎 search_memory: \"{}\"", field(input, "query"))
    }

    fn run<'a>(&'a self, input: Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let query = field(&input, "query").to_owned();
            let limit = input.get("limit").and_then(Value::as_u64).unwrap_or(0) as usize;
            let store = self.store.clone();
            let session = ctx.session.clone();
            let found = tokio::task::spawn_blocking(move || {
                let all = store.list();
                let current: HashSet<(Role, String)> = all
                    .iter()
                    .filter(|s| s.id == session)
                    .flat_map(|s| s.messages.iter().map(|m| (m.role, m.content.clone())))
                    .collect();
                let sessions: Vec<SessionTexts> = all
                    .iter()
                    .filter(|s| s.id != session)
                    .map(|s| SessionTexts {
                        id: s.id.clone(),
                        date: cairn_memory::date(s.updated_at),
                        updated_at: s.updated_at,
                        entries: texts_of(&s.messages, &current),
                    })
                    .collect();
                search(&query, limit, &sessions, &store.dir().display().to_string())
            })
            .await;
            match found {
                Ok(text) => ToolOutput::ok(ctx.truncate(text)),
                Err(e) => ToolOutput::failed(format!("[search_memory: {e}]")),
            }
        })
    }
}

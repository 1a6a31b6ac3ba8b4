//! Writing memories: one or a batch, idempotently by `source` + `external_id`, redacted and
//! summarised, with their conversational neighbourhood, full-text terms and structural fragments
//! indexed; and rewriting a memory's text (an edit, an evolved policy).

use rusqlite::{params, Connection, OptionalExtension, Transaction};

use crate::model::{Layer, MemoryRecord, NewMemory};
use crate::store::{cached, get, log_change, stored_id};
use crate::text::{idents, snippet};
use crate::{redact, MemoryError, MemoryStore};

/// How much of a neighbouring memory is indexed as a memory's context.
const CONTEXT_CHARS: usize = 600;

/// Memories whose full-text terms went stale within a transaction. A write marks them and
/// [`MemoryStore::index_marked`] indexes each once before the commit: a batch of turns of one
/// conversation changes the previous memory's context turn after turn, and its terms are
/// computed once, not once per turn.
///
/// Found while doing so: FTS5's contentless-delete tables never lower their row count (or token
/// totals) on a delete, so every re-index of a neighbour counts the row again, and BM25's IDF
/// reads that count. Memories captured or added one at a time count about twice; an imported
/// conversation, indexed once per memory, counts once. Recall was tuned on the first; making
/// both the same (a separate context index, or BM25 computed by Cairn) is left to do.
#[derive(Default)]
pub(crate) struct Unindexed {
    marked: std::collections::BTreeSet<i64>,
    /// Written in this transaction, with the terms of their text: nothing of theirs is in the
    /// index to replace. (Deleting a row the contentless index never held corrupts its document
    /// count, and with it every BM25.)
    new: std::collections::HashMap<i64, String>,
    /// The terms of the context of memories written in this transaction, where they follow
    /// from their neighbours' lent terms (the analyser splits at the line between two
    /// neighbours, so the terms of a joined context are the joined terms): an import indexes
    /// without reading back or analysing again what it just wrote.
    contexts: std::collections::HashMap<i64, String>,
    /// The terms each memory written in this transaction lends its neighbours as context.
    lent: std::collections::HashMap<i64, String>,
}

/// A memory's text and metadata as the store keeps them (see [`MemoryStore::analyse`]).
pub(crate) struct Analysed {
    pub(crate) text: String,
    metadata: String,
    summary: String,
    /// Its structural fragments, space-separated.
    idents: String,
    /// Its full-text terms, space-separated.
    terms: String,
    /// The terms of what it lends its neighbours as their context (its first
    /// `CONTEXT_CHARS` characters).
    lent: String,
}

impl MemoryStore {
    /// Writes one memory. With `source` + `external_id` the write is idempotent: sending it again
    /// returns the stored memory unchanged.
    pub fn add(&self, memory: NewMemory) -> Result<MemoryRecord, MemoryError> {
        let mut conn = self.lock()?;
        let tx = conn.transaction()?;
        let mut unindexed = Unindexed::default();
        let id = self.insert(&tx, memory, None, None, &mut unindexed)?;
        self.index_marked(&tx, unindexed)?;
        tx.commit()?;
        self.wake_embedding();
        get(&conn, id)?.ok_or_else(|| MemoryError::NotFound(format!("memory {id}")))
    }

    /// Writes many memories in one transaction (imports, evaluation); returns their ids in order.
    pub fn add_batch(&self, memories: Vec<NewMemory>) -> Result<Vec<i64>, MemoryError> {
        let mut conn = self.lock()?;
        let tx = conn.transaction()?;
        let mut ids = Vec::with_capacity(memories.len());
        for memory in memories {
            // Indexed one by one, exactly as the same memories added singly: FTS5's
            // contentless-delete tables never lower their row count on a delete, so re-indexing
            // a neighbour counts a row again, and BM25 reads that count (see `Unindexed`).
            let mut unindexed = Unindexed::default();
            ids.push(self.insert(&tx, memory, None, None, &mut unindexed)?);
            self.index_marked(&tx, unindexed)?;
        }
        tx.commit()?;
        self.wake_embedding();
        Ok(ids)
    }

    pub(crate) fn insert(
        &self,
        tx: &Transaction<'_>,
        mut memory: NewMemory,
        episode_id: Option<i64>,
        turn_id: Option<i64>,
        unindexed: &mut Unindexed,
    ) -> Result<i64, MemoryError> {
        // Sent again: the stored memory, before any work on the text.
        if let Some(external) = &memory.external_id {
            let source = memory.source.as_deref().unwrap_or("cairn");
            if let Some(id) = stored_id(tx, source, external)? {
                return Ok(id);
            }
        }
        let analysed = self.analyse(&memory.text, memory.metadata.take());
        self.insert_analysed(tx, memory, analysed, episode_id, turn_id, unindexed)
    }

    /// What a memory's text and metadata become in the store, worked out apart from the write
    /// (an import does it on its reading thread): redacted, summarised, its fragments and terms.
    pub(crate) fn analyse(&self, text: &str, metadata: Option<serde_json::Value>) -> Analysed {
        let text = redact(text.trim()).into_owned();
        let metadata = metadata.unwrap_or_else(|| serde_json::Value::Object(Default::default()));
        Analysed {
            metadata: redact(&metadata.to_string()).into_owned(),
            summary: heuristic_summary(&text),
            idents: idents(&text).join(" "),
            terms: self.analyzer.indexed(&text),
            lent: self.analyzer.indexed(&snippet(&text, CONTEXT_CHARS)),
            text,
        }
    }

    /// Writes a memory whose text and metadata are `analysed` (its own `text` and `metadata`
    /// are not read). The caller made sure no memory is stored under its `external_id` yet.
    pub(crate) fn insert_analysed(
        &self,
        tx: &Transaction<'_>,
        memory: NewMemory,
        analysed: Analysed,
        episode_id: Option<i64>,
        turn_id: Option<i64>,
        unindexed: &mut Unindexed,
    ) -> Result<i64, MemoryError> {
        let source = memory.source.unwrap_or_else(|| "cairn".to_owned());
        let Analysed {
            text,
            metadata,
            summary,
            idents,
            terms,
            lent,
        } = analysed;
        if text.is_empty() {
            return Err(MemoryError::Invalid("a memory needs some text".into()));
        }
        let now = self.now();
        let created_at = memory.created_at.unwrap_or(now);
        let layer = memory.layer.unwrap_or(Layer::Trace);

        // The neighbourhood: the previous memory of the same conversation lends this one its text as
        // context, and receives this one's text in return.
        let previous: Option<(i64, String, String)> = match &memory.session {
            Some(session) => tx
                .prepare_cached(
                    "SELECT id, text, context FROM memories
                     WHERE session_key = ?1 AND created_at <= ?2 AND status != 'deleted'
                     ORDER BY created_at DESC, id DESC LIMIT 1",
                )?
                .query_row(params![session, created_at], |row| {
                    Ok((row.get(0)?, row.get(1)?, row.get(2)?))
                })
                .optional()?,
            None => None,
        };
        let context = previous
            .as_ref()
            .map(|(_, prev_text, _)| snippet(prev_text, CONTEXT_CHARS))
            .unwrap_or_default();
        cached(tx,
            "INSERT INTO memories (layer, status, text, source, external_id, session_key, episode_id,
                                   turn_id, created_at, updated_at, metadata, summary, context)
             VALUES (?1, 'activated', ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
            params![
                layer.as_str(),
                text,
                source,
                memory.external_id,
                memory.session,
                episode_id,
                turn_id,
                created_at,
                now,
                metadata,
                summary,
                context
            ],
        )?;
        let id = tx.last_insert_rowid();
        match &previous {
            None => {
                unindexed.contexts.insert(id, String::new());
            }
            Some((prev_id, _, prev_context)) => {
                if let Some(prev_lent) = unindexed.lent.get(prev_id) {
                    unindexed.contexts.insert(id, prev_lent.clone());
                }
                let prev_context = if prev_context.is_empty() {
                    snippet(&text, CONTEXT_CHARS)
                } else {
                    format!("{prev_context}\n{}", snippet(&text, CONTEXT_CHARS))
                };
                cached(
                    tx,
                    "UPDATE memories SET context = ?2 WHERE id = ?1",
                    params![prev_id, prev_context],
                )?;
                if let Some(terms) = unindexed.contexts.get_mut(prev_id) {
                    if !terms.is_empty() && !lent.is_empty() {
                        terms.push(' ');
                    }
                    terms.push_str(&lent);
                }
                unindexed.marked.insert(*prev_id);
            }
        }
        unindexed.marked.insert(id);
        unindexed.new.insert(id, terms);
        unindexed.lent.insert(id, lent);
        // Memories are never deleted as rows, so a new id has no fragments indexed yet.
        insert_idents(tx, id, &idents)?;
        log_change(
            tx,
            now,
            "add",
            Some(id),
            &serde_json::json!({ "layer": layer.as_str(), "source": source }),
        )?;
        Ok(id)
    }

    /// Indexes the full-text terms of every memory `unindexed` marked, each once, from its
    /// stored text and context.
    pub(crate) fn index_marked(
        &self,
        tx: &Transaction<'_>,
        mut unindexed: Unindexed,
    ) -> Result<(), MemoryError> {
        if let Ok(mut stats) = self.term_stats.lock() {
            stats.written(unindexed.marked.len());
        }
        for id in unindexed.marked {
            if let (Some(body), Some(context)) =
                (unindexed.new.remove(&id), unindexed.contexts.remove(&id))
            {
                cached(
                    tx,
                    "INSERT INTO memory_terms (rowid, body, context) VALUES (?1, ?2, ?3)",
                    params![id, body, context],
                )?;
                continue;
            }
            let stored: Option<(String, String)> = tx
                .prepare_cached("SELECT text, context FROM memories WHERE id = ?1")?
                .query_row([id], |row| Ok((row.get(0)?, row.get(1)?)))
                .optional()?;
            if let Some((text, context)) = stored {
                match unindexed.new.remove(&id) {
                    Some(terms) => self.insert_terms(tx, id, &terms, &context)?,
                    None => self.index_terms(tx, id, &text, &context)?,
                }
            }
        }
        Ok(())
    }

    /// Replaces a memory's full-text terms.
    fn index_terms(
        &self,
        tx: &Transaction<'_>,
        id: i64,
        text: &str,
        context: &str,
    ) -> Result<(), MemoryError> {
        cached(tx, "DELETE FROM memory_terms WHERE rowid = ?1", [id])?;
        self.insert_terms(tx, id, &self.analyzer.indexed(text), context)
    }

    /// Indexes a memory's terms (`body`, already analysed) and its context's.
    fn insert_terms(
        &self,
        tx: &Transaction<'_>,
        id: i64,
        body: &str,
        context: &str,
    ) -> Result<(), MemoryError> {
        cached(
            tx,
            "INSERT INTO memory_terms (rowid, body, context) VALUES (?1, ?2, ?3)",
            params![id, body, self.analyzer.indexed(context)],
        )?;
        Ok(())
    }

    /// Replaces a memory's text (the memory panel's edit), re-indexing it.
    pub fn update_text(&self, id: i64, text: &str) -> Result<MemoryRecord, MemoryError> {
        let text = redact(text.trim()).into_owned();
        if text.is_empty() {
            return Err(MemoryError::Invalid("a memory needs some text".into()));
        }
        let mut conn = self.lock()?;
        let tx = conn.transaction()?;
        self.rewrite(&tx, id, &text, "edit")?;
        tx.commit()?;
        self.forget_vector(id);
        self.wake_embedding();
        get(&conn, id)?.ok_or_else(|| MemoryError::NotFound(format!("memory {id}")))
    }

    /// Replaces the text of live memory `id` (already redacted) in `tx`, re-indexing it, and logs
    /// it as `op` (`edit`: the person's; `evolve`: the background queue's); its vector is dropped
    /// for the queue to embed again (the caller forgets the cached one after the commit).
    pub(crate) fn rewrite(
        &self,
        tx: &Transaction<'_>,
        id: i64,
        text: &str,
        op: &str,
    ) -> Result<(), MemoryError> {
        let context: Option<String> = tx
            .query_row(
                "SELECT context FROM memories WHERE id = ?1 AND status != 'deleted'",
                [id],
                |row| row.get(0),
            )
            .optional()?;
        let Some(context) = context else {
            return Err(MemoryError::NotFound(format!("memory {id}")));
        };
        cached(tx,
            "UPDATE memories SET text = ?2, updated_at = ?3, summary = ?4, summary_source = 'heuristic'
             WHERE id = ?1",
            params![id, text, self.now(), heuristic_summary(text)],
        )?;
        self.index_terms(tx, id, text, &context)?;
        index_idents(tx, id, &idents(text).join(" "))?;
        cached(tx, "DELETE FROM memory_vectors WHERE memory_id = ?1", [id])?;
        log_change(tx, self.now(), op, Some(id), &serde_json::json!({}))?;
        Ok(())
    }
}

/// Reindexes the structural fragments of a memory's text (`idents`, space-separated).
fn index_idents(tx: &Connection, id: i64, idents: &str) -> Result<(), MemoryError> {
    cached(tx, "DELETE FROM memory_idents WHERE rowid = ?1", [id])?;
    insert_idents(tx, id, idents)
}

/// Indexes the structural fragments of a memory that has none indexed.
fn insert_idents(tx: &Connection, id: i64, idents: &str) -> Result<(), MemoryError> {
    if !idents.is_empty() {
        cached(
            tx,
            "INSERT INTO memory_idents (rowid, idents) VALUES (?1, ?2)",
            params![id, idents],
        )?;
    }
    Ok(())
}

/// A first summary without a model: the first sentence of each part of a trace (its "User:" and
/// "Assistant:" lines), or of its first line, at most 240 characters.
pub fn heuristic_summary(text: &str) -> String {
    let parts: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("User:") || l.starts_with("Assistant:"))
        .map(first_sentence)
        .collect();
    let summary = if parts.is_empty() {
        first_sentence(text.lines().next().unwrap_or_default()).to_owned()
    } else {
        parts.join(" ")
    };
    snippet(summary.trim(), 240)
}

/// Up to the first sentence end (`.`, `?`, `!` before a space or the end; `。？！` anywhere).
fn first_sentence(line: &str) -> &str {
    let mut chars = line.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let cjk = matches!(c, '。' | '？' | '！');
        let latin = matches!(c, '.' | '?' | '!')
            && chars.peek().is_none_or(|(_, next)| next.is_whitespace());
        if cjk || latin {
            return &line[..i + c.len_utf8()];
        }
    }
    line
}

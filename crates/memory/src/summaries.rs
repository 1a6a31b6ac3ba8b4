//! Summaries by the background model (the `Writer` the app lends, see `lent_models`). Every
//! memory gets a heuristic summary when written; with summaries on, the
//! background queue has the model rewrite the summaries of traces, a few at a time, with
//! retries. (Policies in the model's words are `policy_words`.)

use std::sync::Arc;

use rusqlite::params;

use crate::lent_models::{Writer, WriterUses};
use crate::text::snippet;
use crate::{MemoryError, MemoryStore};

const SUMMARY_PROMPT: &str = "Summarise this exchange from a person's history with an AI agent in one or two \
sentences for a memory index: what was asked, what was done or found, and any names, paths or numbers \
that matter. Reply with the summary only.";

impl MemoryStore {
    /// Lends the background queue `writer` for `uses` from now on (and no other).
    pub fn set_writer(&self, writer: Arc<dyn Writer>, uses: WriterUses) {
        self.set_writers(vec![(writer, uses)]);
    }

    /// Lends the background queue these writers, each for its uses, from now on (none: nothing
    /// is rewritten by a model); for a use, the first that is lent for it writes.
    pub fn set_writers(&self, writers: Vec<(Arc<dyn Writer>, WriterUses)>) {
        if let Ok(mut slot) = self.writer.write() {
            *slot = writers;
        }
        self.wake_embedding();
    }

    /// The background model lent for what `used` picks, if any.
    pub(crate) fn writer_for(&self, used: impl Fn(WriterUses) -> bool) -> Option<Arc<dyn Writer>> {
        self.writer
            .read()
            .ok()?
            .iter()
            .find(|(_, uses)| used(*uses))
            .map(|(writer, _)| writer.clone())
    }

    /// Rewrites up to `max` heuristic summaries of live traces with the summary model; returns how
    /// many it rewrote.
    pub fn summarize_pending(&self, max: usize) -> Result<usize, MemoryError> {
        let Some(writer) = self.writer_for(|uses| uses.summaries) else {
            return Ok(0);
        };
        let rows: Vec<(i64, String)> = {
            let conn = self.lock()?;
            let mut stmt = conn.prepare_cached(
                "SELECT id, text FROM memories WHERE summary_source = 'heuristic' AND layer = 'L1'
                 AND status != 'deleted' ORDER BY id DESC LIMIT ?1",
            )?;
            let rows = stmt.query_map([max as i64], |row| Ok((row.get(0)?, row.get(1)?)))?;
            rows.collect::<Result<_, _>>()?
        };
        let mut done = 0;
        for (id, text) in rows {
            let summary = writer
                .write(SUMMARY_PROMPT, &text, 160)
                .map_err(|e| e.doing("summarising failed"))?;
            let summary = crate::redact(summary.trim()).into_owned();
            if summary.is_empty() {
                continue;
            }
            self.lock()?.execute(
                "UPDATE memories SET summary = ?2, summary_source = 'model' WHERE id = ?1 AND status != 'deleted'",
                params![id, snippet(&summary, 400)],
            )?;
            done += 1;
        }
        Ok(done)
    }
}

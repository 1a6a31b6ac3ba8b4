//! Summaries: every memory gets a heuristic summary when written; with a `Summarizer` (a summary
//! model) the background queue rewrites the summaries of traces, a few at a time, with retries.

use std::sync::Arc;

use rusqlite::params;

use crate::{MemoryError, MemoryStore};

/// Writes a short summary of a memory's text (implemented over a chat model by the app).
pub trait Summarizer: Send + Sync {
    fn summarize(&self, text: &str) -> Result<String, String>;
}

impl MemoryStore {
    /// Uses `summarizer` to rewrite heuristic summaries from now on.
    pub fn set_summarizer(&self, summarizer: Arc<dyn Summarizer>) {
        if let Ok(mut slot) = self.summarizer.write() {
            *slot = Some(summarizer);
        }
        self.wake_embedding();
    }

    /// Rewrites up to `max` heuristic summaries of live traces with the summary model; returns how
    /// many it rewrote.
    pub fn summarize_pending(&self, max: usize) -> Result<usize, MemoryError> {
        let Some(summarizer) = self.summarizer.read().ok().and_then(|s| s.clone()) else {
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
            let summary = summarizer
                .summarize(&text)
                .map_err(|e| MemoryError::Invalid(format!("summarising failed: {e}")))?;
            let summary = crate::redact(summary.trim()).into_owned();
            if summary.is_empty() {
                continue;
            }
            self.lock()?.execute(
                "UPDATE memories SET summary = ?2, summary_source = 'model' WHERE id = ?1 AND status != 'deleted'",
                params![id, crate::store::snippet(&summary, 400)],
            )?;
            done += 1;
        }
        Ok(done)
    }
}

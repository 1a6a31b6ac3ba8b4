//! The evaluations' baseline: a plain BM25 ranker over raw text in its own in-memory SQLite
//! table, beside which Cairn's recall is scored.

use rusqlite::params;

use cairn_memory::{fts_or_query, MemoryError};

/// A plain BM25 ranker over raw text (the evaluation's baseline): default FTS5 tokenizer, terms
/// OR-ed, no stemming, no neighbourhood, no fusion.
pub struct Baseline {
    conn: rusqlite::Connection,
}

impl Baseline {
    pub fn new() -> Result<Self, MemoryError> {
        let conn = rusqlite::Connection::open_in_memory()?;
        conn.execute_batch("CREATE VIRTUAL TABLE docs USING fts5(body);")?;
        Ok(Self { conn })
    }

    pub fn add(&mut self, id: i64, text: &str) -> Result<(), MemoryError> {
        self.conn.execute(
            "INSERT INTO docs (rowid, body) VALUES (?1, ?2)",
            params![id, text],
        )?;
        Ok(())
    }

    /// Ids of the top `limit` documents for `query`.
    pub fn search(&self, query: &str, limit: usize) -> Result<Vec<i64>, MemoryError> {
        let words: Vec<String> = query
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect();
        if words.is_empty() {
            return Ok(Vec::new());
        }
        let mut stmt = self.conn.prepare_cached(
            "SELECT rowid FROM docs WHERE docs MATCH ?1 ORDER BY bm25(docs) LIMIT ?2",
        )?;
        let rows = stmt.query_map(params![fts_or_query(&words), limit as i64], |row| {
            row.get(0)
        })?;
        Ok(rows.collect::<Result<Vec<i64>, _>>()?)
    }
}

//! What recall and the fact reader both read from the index: memory rows by id (`COLUMNS`,
//! `record`, `fetch` under a query's filters), how many memories hold a term (and the cache that
//! plans queries with it), and the scale relevance is measured on.

use std::collections::HashMap;

use rusqlite::types::Value;
use rusqlite::{params_from_iter, OptionalExtension, Row};

use crate::model::{Layer, MemoryRecord, Status, SummarySource};
use crate::MemoryError;

/// How much a vector channel's normalised score counts against the lexical channels'.
pub(crate) const VECTOR_WEIGHT: f64 = 0.5;
/// The relevance of a memory that heads both the words' and the meaning's rankings: the scale
/// other bonuses are measured against.
pub(crate) const FULL_RELEVANCE: f64 = 1.0 + VECTOR_WEIGHT;

pub(crate) const COLUMNS: &str = "id, layer, status, text, source, external_id, session_key, \
                                  episode_id, turn_id, created_at, updated_at, metadata, summary, \
                                  summary_source";

pub(crate) fn record(row: &Row<'_>) -> rusqlite::Result<MemoryRecord> {
    let layer: String = row.get(1)?;
    let status: String = row.get(2)?;
    let metadata: String = row.get(11)?;
    Ok(MemoryRecord {
        id: row.get(0)?,
        layer: layer.parse().unwrap_or(Layer::Trace),
        status: Status::parse(&status).unwrap_or(Status::Activated),
        text: row.get(3)?,
        source: row.get(4)?,
        external_id: row.get(5)?,
        session: row.get(6)?,
        episode_id: row.get(7)?,
        turn_id: row.get(8)?,
        created_at: row.get(9)?,
        updated_at: row.get(10)?,
        metadata: serde_json::from_str(&metadata).unwrap_or_default(),
        summary: row.get(12)?,
        summary_source: row
            .get::<_, String>(13)?
            .parse()
            .unwrap_or(SummarySource::Heuristic),
    })
}

/// How many memories hold `term` in the term index (`None`: none ever did).
pub(crate) fn document_frequency(
    conn: &rusqlite::Connection,
    term: &str,
) -> Result<Option<i64>, MemoryError> {
    Ok(conn
        .prepare_cached("SELECT doc FROM temp.memory_terms_vocab WHERE term = ?1")?
        .query_row([term], |row| row.get(0))
        .optional()?)
}

/// Document frequencies looked up for planning queries, kept until enough memories were written
/// since to move them: they only choose which terms to search (a stale count changes how many
/// postings are read, never whether a term is searched), and counting a common term's documents
/// is the slowest part of planning.
#[derive(Default)]
pub(crate) struct TermStats {
    frequencies: HashMap<String, i64>,
    written: usize,
}

/// Memories written before the remembered document frequencies are looked up again.
const TERM_STATS_WRITES: usize = 500;

impl TermStats {
    /// Counts memories whose terms were (re)indexed.
    pub(crate) fn written(&mut self, memories: usize) {
        self.written += memories;
    }

    /// How many memories hold `term`, as remembered (all remembered counts are dropped once
    /// [`TERM_STATS_WRITES`] memories were written since) or looked up.
    pub(crate) fn frequency(
        &mut self,
        conn: &rusqlite::Connection,
        term: &str,
    ) -> Result<i64, MemoryError> {
        if self.written >= TERM_STATS_WRITES {
            *self = TermStats::default();
        }
        Ok(match self.frequencies.get(term) {
            Some(df) => *df,
            None => {
                let df = document_frequency(conn, term)?.unwrap_or(0);
                // A term no memory holds yet is asked again: the next memory may hold it.
                if df > 0 {
                    self.frequencies.insert(term.to_owned(), df);
                }
                df
            }
        })
    }
}

/// The candidates' records that pass the query's filters (the same SQL the lexical channels use, so
/// vector candidates are held to it too).
pub(crate) fn fetch(
    conn: &rusqlite::Connection,
    ids: &[i64],
    filter_sql: &str,
    filter_values: &[Value],
) -> Result<Vec<MemoryRecord>, MemoryError> {
    let mut out = Vec::with_capacity(ids.len());
    for chunk in ids.chunks(500) {
        let sql = format!(
            "SELECT {COLUMNS} FROM memories m WHERE m.id IN ({}) {filter_sql}",
            vec!["?"; chunk.len()].join(",")
        );
        let mut stmt = conn.prepare(&sql)?;
        let values = chunk
            .iter()
            .map(|id| Value::Integer(*id))
            .chain(filter_values.iter().cloned());
        let rows = stmt.query_map(params_from_iter(values), record)?;
        for row in rows {
            out.push(row?);
        }
    }
    Ok(out)
}

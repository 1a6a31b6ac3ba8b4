//! Recall's channels: which memories the full-text terms (the rarest within a postings budget)
//! and the structural fragments find under the query's filters, each channel's scores normalised
//! into the candidates' relevance; and the stopwatch that times recall's phases.

use std::collections::HashMap;
use std::time::Instant;

use rusqlite::params_from_iter;
use rusqlite::types::Value;

use crate::model::{add_phase, Layer, Phase, SearchQuery, Trace};
use crate::text::fts_or_query;
use crate::{MemoryError, MemoryStore};

/// How much a memory's conversational neighbourhood (its context column) counts in BM25.
const CONTEXT_WEIGHT: f64 = 0.35;
/// Query planning: terms are taken rarest first while their postings add up to at most this many
/// (the rarest always), so a query full of common words stays fast on a large memory. Common
/// terms carry almost no BM25 weight, so leaving them out changes little.
const POSTINGS_BUDGET: i64 = 12_000;
/// The rarest term is searched whatever its postings, unless even it is in more memories than
/// this: a query of only such common words finds nothing by its words on a large memory, and
/// reading their postings was most of the slowest searches at a million memories (its vectors
/// still answer it).
const RAREST_POSTINGS_MAX: i64 = 100_000;

pub(crate) struct Candidate {
    pub(crate) channels: Vec<Trace>,
    /// The sum of the channels' weighted, min-max normalised scores: what orders candidates.
    pub(crate) relevance: f64,
    /// The best of its channels' scores as a share of that channel's top, weighted: what the
    /// relative threshold reads (min-max puts a channel's last row at zero however well it
    /// matched).
    pub(crate) strongest: f64,
}

impl MemoryStore {
    /// The keyword channels' candidates: full-text terms (the rarest within the postings budget)
    /// and structural fragments.
    pub(crate) fn keyword_candidates(
        &self,
        query: &SearchQuery,
        (filter_sql, filter_values): (&str, &[Value]),
        terms: Vec<String>,
        fragments: &[String],
        pool: usize,
        clock: &mut Laps,
    ) -> Result<HashMap<i64, Candidate>, MemoryError> {
        let mut candidates: HashMap<i64, Candidate> = HashMap::new();
        let conn = self.lock()?;
        let terms = self.plan_terms(&conn, terms)?;
        clock.lap("terms");
        if !terms.is_empty() {
            // Without narrowing filters, rank inside the full-text index first and join only the
            // best few hundred rows; with them, filter every match.
            let sql = if narrowed(query) {
                format!(
                    "SELECT m.id, -bm25(memory_terms, 1.0, {CONTEXT_WEIGHT}) AS score
                     FROM memory_terms JOIN memories m ON m.id = memory_terms.rowid
                     WHERE memory_terms MATCH ? {filter_sql}
                     ORDER BY score DESC LIMIT {pool}"
                )
            } else {
                format!(
                    "SELECT m.id, f.score FROM (
                         SELECT rowid, -bm25(memory_terms, 1.0, {CONTEXT_WEIGHT}) AS score
                         FROM memory_terms WHERE memory_terms MATCH ?
                         ORDER BY bm25(memory_terms, 1.0, {CONTEXT_WEIGHT}) LIMIT {}
                     ) f JOIN memories m ON m.id = f.rowid
                     WHERE 1 {filter_sql}
                     ORDER BY f.score DESC LIMIT {pool}",
                    pool * 4
                )
            };
            let mut values = vec![Value::Text(fts_or_query(&terms))];
            values.extend(filter_values.iter().cloned());
            gather(&conn, &sql, values, "fts", 1.0, &mut candidates)?;
            clock.lap("fts");
        }
        if !fragments.is_empty() {
            let sql = format!(
                "SELECT m.id, -bm25(memory_idents) AS score
                 FROM memory_idents JOIN memories m ON m.id = memory_idents.rowid
                 WHERE memory_idents MATCH ? {filter_sql}
                 ORDER BY score DESC LIMIT {pool}"
            );
            let mut values = vec![Value::Text(fts_or_query(fragments))];
            values.extend(filter_values.iter().cloned());
            gather(&conn, &sql, values, "structural", 1.0, &mut candidates)?;
            clock.lap("structural");
        }

        Ok(candidates)
    }

    /// Keeps the rarest terms within the postings budget (see [`POSTINGS_BUDGET`]); terms the
    /// index has never seen are dropped, since they cannot match.
    fn plan_terms(
        &self,
        conn: &rusqlite::Connection,
        terms: Vec<String>,
    ) -> Result<Vec<String>, MemoryError> {
        let mut stats = self
            .term_stats
            .lock()
            .map_err(|_| MemoryError::Invalid("the term statistics were poisoned".into()))?;
        let mut with_df = Vec::with_capacity(terms.len());
        for term in terms {
            let df = stats.frequency(conn, &term)?;
            if df > 0 {
                with_df.push((df, term));
            }
        }
        with_df.sort();
        let mut total = 0;
        Ok(with_df
            .into_iter()
            .enumerate()
            .take_while(|(i, (df, _))| {
                total += df;
                (*i < 1 && *df <= RAREST_POSTINGS_MAX) || total <= POSTINGS_BUDGET
            })
            .map(|(_, (_, term))| term)
            .collect())
    }
}

/// A stopwatch that charges the time since its last lap to a named phase.
pub(crate) struct Laps {
    last: Instant,
    pub(crate) phases: Vec<Phase>,
}

impl Laps {
    pub(crate) fn new() -> Self {
        Self {
            last: Instant::now(),
            phases: Vec::new(),
        }
    }

    pub(crate) fn lap(&mut self, phase: &str) {
        let now = Instant::now();
        add_phase(
            &mut self.phases,
            phase,
            (now - self.last).as_secs_f64() * 1000.0,
        );
        self.last = now;
    }
}

/// Whether the query narrows the memories beyond "live ones".
pub(crate) fn narrowed(query: &SearchQuery) -> bool {
    !query.layers.is_empty()
        || !query.sources.is_empty()
        || query.session.is_some()
        || query.exclude_session.is_some()
        || query.after.is_some()
        || query.before.is_some()
}

/// The SQL (`AND …`) and values that restrict candidates to live memories matching the filters.
pub(crate) fn filters(query: &SearchQuery) -> (String, Vec<Value>) {
    let mut sql = String::from(" AND m.status IN ('activated', 'resolving')");
    let mut values = Vec::new();
    let layers: &[Layer] = &query.layers;
    if !layers.is_empty() {
        sql.push_str(&format!(
            " AND m.layer IN ({})",
            vec!["?"; layers.len()].join(",")
        ));
        values.extend(layers.iter().map(|l| Value::Text(l.as_str().to_owned())));
    }
    if !query.sources.is_empty() {
        sql.push_str(&format!(
            " AND m.source IN ({})",
            vec!["?"; query.sources.len()].join(",")
        ));
        values.extend(query.sources.iter().map(|s| Value::Text(s.clone())));
    }
    if let Some(session) = &query.session {
        sql.push_str(" AND m.session_key = ?");
        values.push(Value::Text(session.clone()));
    }
    if let Some(session) = &query.exclude_session {
        sql.push_str(" AND m.session_key IS NOT ?");
        values.push(Value::Text(session.clone()));
    }
    if let Some(after) = query.after {
        sql.push_str(" AND m.created_at >= ?");
        values.push(Value::Integer(after));
    }
    if let Some(before) = query.before {
        sql.push_str(" AND m.created_at < ?");
        values.push(Value::Integer(before));
    }
    (sql, values)
}

/// Runs one channel's query and records rank and normalised score for each candidate.
fn gather(
    conn: &rusqlite::Connection,
    sql: &str,
    values: Vec<Value>,
    channel: &str,
    weight: f64,
    candidates: &mut HashMap<i64, Candidate>,
) -> Result<(), MemoryError> {
    let mut stmt = conn.prepare_cached(sql)?;
    let rows = stmt.query_map(params_from_iter(values), |row| {
        Ok((row.get::<_, i64>(0)?, row.get::<_, f64>(1)?))
    })?;
    let rows = rows.collect::<Result<Vec<_>, _>>()?;
    add_channel(rows, channel, weight, candidates);
    Ok(())
}

/// Records a channel's ranked `(id, raw score)` rows: each candidate's normalised score (min-max
/// over the channel's rows, floored at half the top, times the channel's weight) adds to its
/// relevance, and the channel's trace is kept. Min-max, not a share of the top: cosine
/// similarities bunch near the top one, so a share of it would rate the fortieth neighbour nearly
/// as high as the first.
pub(crate) fn add_channel(
    rows: Vec<(i64, f64)>,
    channel: &str,
    weight: f64,
    candidates: &mut HashMap<i64, Candidate>,
) {
    let top = rows.first().map_or(1.0, |r| r.1);
    // The floor is the last row, or half the top when the rows end above it: a short list would
    // otherwise put a near tie with the first at zero.
    let bottom = rows.last().map_or(0.0, |r| r.1).min(top / 2.0);
    let spread = top - bottom;
    for (rank, (id, score)) in rows.into_iter().enumerate() {
        let normalised = if spread > f64::EPSILON {
            ((score - bottom) / spread).clamp(0.0, 1.0)
        } else {
            1.0
        } * weight;
        let entry = candidates.entry(id).or_insert(Candidate {
            channels: Vec::new(),
            relevance: 0.0,
            strongest: 0.0,
        });
        entry.relevance += normalised;
        entry.strongest = entry
            .strongest
            .max((score / top.max(f64::EPSILON)).clamp(0.0, 1.0) * weight);
        entry.channels.push(Trace {
            channel: channel.to_owned(),
            rank,
            score,
        });
    }
}

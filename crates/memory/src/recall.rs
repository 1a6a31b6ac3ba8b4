//! Recall: the channels (`fts`: BM25 over stemmed terms and each memory's conversational
//! neighbourhood, terms OR-ed; `structural`: exact paths, identifiers and error codes; `vec`: the
//! query's embedding), fusion (the sum of each channel's min-max normalised score, weighted, + a
//! reciprocal-rank bonus + a small recency bonus + what the question names: the person who said
//! it, the date it was said), a relative threshold with multi-channel bypass, MMR for diversity,
//! and an explanation for every candidate.

use std::collections::{HashMap, HashSet};
use std::time::Instant;

use rusqlite::types::Value;
use rusqlite::{params, params_from_iter, OptionalExtension};

use crate::facts::Asked;
use crate::model::{
    add_phase, Layer, MemoryRecord, Phase, SearchHit, SearchQuery, SearchResult, Trace,
};
use crate::store::{record, COLUMNS};
use crate::text::{fts_or_query, idents};
use crate::{MemoryError, MemoryStore};

/// Fusion and selection settings (the reference product's defaults where it has them).
const RRF_K: f64 = 60.0;
const RRF_WEIGHT: f64 = 0.4;
const RECENCY_WEIGHT: f64 = 0.05;
const RECENCY_HALF_LIFE_DAYS: f64 = 30.0;
const RELATIVE_THRESHOLD: f64 = 0.2;
const MMR_LAMBDA: f64 = 0.7;
const CONTEXT_WEIGHT: f64 = 0.35;
const MAX_QUERY_TERMS: usize = 32;
/// Steps an episode rollup holds, and how much of each.
const ROLLUP_STEPS: usize = 6;
const ROLLUP_STEP_CHARS: usize = 200;
/// How many hits from before a named change lead the answer to a question about it.
const EARLIER_HITS: usize = 2;
/// Vector hits below this cosine similarity are not candidates.
const MIN_SIMILARITY: f32 = 0.25;
/// How much a vector channel's normalised score counts against the lexical channels'.
const VECTOR_WEIGHT: f64 = 0.5;
/// The relevance of a memory that heads both the words' and the meaning's rankings: the scale
/// other bonuses are measured against.
pub(crate) const FULL_RELEVANCE: f64 = 1.0 + VECTOR_WEIGHT;
/// The bonus of a memory said by a person the question names ("What did Melanie paint?" and
/// "Melanie: …"): a fifteenth of full relevance, enough to order memories that match about as
/// well, not to lift one that does not match.
const SPEAKER_BONUS: f64 = FULL_RELEVANCE / 15.0;
/// The bonus of a memory said within a date the question names ("in August 2023").
const DATE_BONUS: f64 = FULL_RELEVANCE / 5.0;
/// What a line that only asks loses ("Cool! What did it look like?"): it says nothing that
/// could answer, yet its few words match a question's well. A quarter of full relevance;
/// nothing when the question is about what was asked.
const ONLY_ASKS_PENALTY: f64 = FULL_RELEVANCE / 4.0;
/// Traces that explain a bonus or a penalty, not a channel that searched.
const BONUSES: [&str; 3] = ["speaker", "date", "only_asks"];

/// Whether `trace` is a channel that searched, not a bonus.
fn searched(trace: &Trace) -> bool {
    !BONUSES.contains(&trace.channel.as_str())
}
/// Query planning: terms are taken rarest first while their postings add up to at most this many
/// (the rarest always), so a query full of common words stays fast on a large memory. Common
/// terms carry almost no BM25 weight, so leaving them out changes little.
const POSTINGS_BUDGET: i64 = 12_000;
/// The rarest term is searched whatever its postings, unless even it is in more memories than
/// this: a query of only such common words finds nothing by its words on a large memory, and
/// reading their postings was most of the slowest searches at a million memories (its vectors
/// still answer it).
const RAREST_POSTINGS_MAX: i64 = 100_000;

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

struct Candidate {
    channels: Vec<Trace>,
    /// The sum of the channels' weighted, min-max normalised scores: what orders candidates.
    relevance: f64,
    /// The best of its channels' scores as a share of that channel's top, weighted: what the
    /// relative threshold reads (min-max puts a channel's last row at zero however well it
    /// matched).
    strongest: f64,
}

impl MemoryStore {
    /// Recalls the memories most relevant to `query`, with the reasons. Every search is logged for
    /// the memory panel. A question about what held before a change ("what did she use before
    /// X?") also recalls what its subject was before X was said, and places that first.
    pub fn search(&self, query: &SearchQuery) -> Result<SearchResult, MemoryError> {
        let started = Instant::now();
        let mut result = self.ranked(query, crate::facts::asked(&query.query))?;
        if let Some((subject, change)) = crate::facts::split_before(&query.query) {
            let earlier = self.said_before_change(query, subject, change, &mut result.phases)?;
            if !earlier.is_empty() {
                let mut hits = earlier;
                for hit in result.hits.drain(..) {
                    if !hits.iter().any(|h| h.memory.id == hit.memory.id) {
                        hits.push(hit);
                    }
                }
                hits.truncate(query.limit.clamp(1, 200));
                result.hits = hits;
            }
        }
        result.took_ms = started.elapsed().as_secs_f64() * 1000.0;
        self.log_search(&query.query, &result.hits, result.took_ms)?;
        Ok(result)
    }

    /// For "what … before `change`?": the statement that best matches `change` dates it (it must
    /// announce a change: "before pushing" names none), and what the same person said about the
    /// `subject` before then is recalled — asked by the subject and by the change's own words
    /// (what it replaced is usually worded like it). Empty when no change is found.
    fn said_before_change(
        &self,
        query: &SearchQuery,
        subject: String,
        change: String,
        phases: &mut Vec<Phase>,
    ) -> Result<Vec<SearchHit>, MemoryError> {
        // The values the change names ("before 555-0172"), read before the words are searched.
        let values = crate::facts::values_with_digits(&change);
        let found = self.ranked(
            &SearchQuery {
                query: change,
                limit: 1,
                ..query.clone()
            },
            Asked::Unordered,
        )?;
        for phase in &found.phases {
            add_phase(phases, &phase.phase, phase.ms);
        }
        let found = found.hits.into_iter().next().map(|h| h.memory);
        let Some(change) = found else {
            return Ok(Vec::new());
        };
        let said = crate::facts::statement(&change.text);
        if !said.announces_change() {
            return Ok(Vec::new());
        }
        let when = change.created_at;
        let before = query.before.map_or(when, |b| b.min(when));
        // What the change replaced, when it was read as an update of an earlier statement, is
        // the answer its version history gives; then what else the person said before it.
        let mut earlier: Vec<SearchHit> = Vec::new();
        for id in crate::facts::predecessors(&change) {
            if let Some(memory) = self.get(id)?.filter(|m| m.created_at < before) {
                let reason = format!("the statement memory {} replaced", change.id);
                earlier.push(hit(memory, 1.0, Vec::new(), true, reason));
            }
        }
        if let Some(memory) = self.earlier_value(&said.owner, before, &values)? {
            if !earlier.iter().any(|e| e.memory.id == memory.id) {
                let reason =
                    "the latest earlier statement holding a value like the one the question names"
                        .to_owned();
                earlier.push(hit(memory, 1.0, Vec::new(), true, reason));
            }
        }
        for asked in [subject, change.text] {
            let mut found = self.ranked(
                &SearchQuery {
                    query: asked,
                    limit: query.limit.clamp(1, 200).max(10),
                    before: Some(before),
                    ..query.clone()
                },
                Asked::Unordered,
            )?;
            for phase in &found.phases {
                add_phase(phases, &phase.phase, phase.ms);
            }
            found.hits.retain(|h| {
                let theirs = crate::facts::statement(&h.memory.text);
                theirs.owner == said.owner
                    && theirs.asserts()
                    && !earlier.iter().any(|e| e.memory.id == h.memory.id)
            });
            earlier.extend(found.hits.into_iter().take(EARLIER_HITS));
        }
        for hit in &mut earlier {
            hit.reason.push_str(&format!(
                "; recalled from before {}, when the change the question names was said",
                crate::date(when)
            ));
        }
        Ok(earlier)
    }

    /// One recall, unlogged.
    /// `asked`: what the question asks about time (see [`crate::facts::asked`]).
    fn ranked(&self, query: &SearchQuery, asked: Asked) -> Result<SearchResult, MemoryError> {
        let started = Instant::now();
        let mut clock = Laps::new();
        let terms = self.analyzer.query_terms(&query.query, MAX_QUERY_TERMS);
        let fragments = idents(&query.query);
        if fragments.is_empty() && crate::relevance::is_small_talk(&query.query) {
            // "hello", "thanks!", "你好": nothing in them to recall by.
            return Ok(SearchResult {
                hits: Vec::new(),
                dropped: Vec::new(),
                took_ms: started.elapsed().as_secs_f64() * 1000.0,
                phases: clock.phases,
            });
        }
        let all_terms = terms.clone();
        let now = self.now();
        let named = Named::in_question(&query.query);
        let dated = crate::dates::windows(&query.query, now);
        let answers_wanted = !crate::facts::about_asking(&query.query);
        let limit = query.limit.clamp(1, 200);
        let pool = (limit * 4).max(40);

        let (filter_sql, filter_values) = filters(query);
        // The query's embedding runs on another core while the keyword channels search.
        let (lexical, embedded) = std::thread::scope(|scope| {
            let embedding = self.embedder().is_some().then(|| {
                scope.spawn(|| {
                    let started = Instant::now();
                    let vector = self.embed_query(&query.query);
                    (vector, started.elapsed().as_secs_f64() * 1000.0)
                })
            });
            let lexical = self.keyword_candidates(
                query,
                (&filter_sql, &filter_values),
                terms,
                &fragments,
                pool,
                &mut clock,
            );
            (lexical, embedding.map(|handle| handle.join()))
        });
        let mut candidates = lexical?;

        // Filters are applied after the scan: a narrowed query looks further down the list.
        let depth = if narrowed(query) { pool * 5 } else { pool };
        if let Some(embedded) = embedded {
            let (vector, embed_ms) = embedded.map_err(|_| {
                MemoryError::Invalid("embedding the query failed: the model panicked".into())
            })?;
            clock.lap("waiting for embed");
            add_phase(&mut clock.phases, "embed", embed_ms);
            if let Some(vector) = vector? {
                let similar: Vec<(i64, f64)> = self
                    .vector_candidates(&vector, depth, MIN_SIMILARITY)?
                    .into_iter()
                    .map(|(id, s)| (id, f64::from(s)))
                    .collect();
                add_channel(similar, "vec", VECTOR_WEIGHT, &mut candidates);
                clock.lap("vectors");
            }
        }

        let ids: Vec<i64> = candidates.keys().copied().collect();
        let records = fetch(&*self.lock()?, &ids, &filter_sql, &filter_values)?;
        clock.lap("fetch");

        let mut strength: HashMap<i64, f64> = HashMap::with_capacity(records.len());
        let mut scored: Vec<(f64, MemoryRecord, Vec<Trace>)> = records
            .into_iter()
            .filter_map(|memory| {
                let candidate = candidates.remove(&memory.id)?;
                strength.insert(memory.id, candidate.strongest);
                let rrf: f64 = candidate
                    .channels
                    .iter()
                    .map(|t| 1.0 / (RRF_K + t.rank as f64 + 1.0))
                    .sum();
                let age_days = ((now - memory.created_at).max(0) as f64) / 86_400_000.0;
                let recency = 0.5f64.powf(age_days / RECENCY_HALF_LIFE_DAYS);
                let mut channels = candidate.channels;
                let mut bonus = 0.0;
                for (channel, earned, amount) in [
                    (
                        "speaker",
                        spoken_by_named(&memory.text, &named),
                        SPEAKER_BONUS,
                    ),
                    (
                        "date",
                        dated.iter().any(|w| w.holds(memory.created_at)),
                        DATE_BONUS,
                    ),
                    (
                        "only_asks",
                        answers_wanted && crate::facts::only_asks(&memory.text),
                        -ONLY_ASKS_PENALTY,
                    ),
                ] {
                    if earned {
                        channels.push(Trace {
                            channel: channel.to_owned(),
                            rank: 0,
                            score: amount,
                        });
                        bonus += amount;
                    }
                }
                let score = candidate.relevance
                    + bonus
                    + RRF_WEIGHT * rrf
                    + RECENCY_WEIGHT * recency
                    + layer_bonus(&memory, recency);
                Some((score, memory, channels))
            })
            .collect();
        let placed = self.follow_versions(asked, &mut scored, &filter_sql, &filter_values)?;
        self.prefer_changes_now(asked, &mut scored)?;
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(b.1.id.cmp(&a.1.id)));

        let (scored, mut dropped) = self.enough_shared(&query.query, &all_terms, scored)?;
        clock.lap("coverage");

        let top = strength.values().copied().fold(0.0, f64::max);
        let mut eligible = Vec::new();
        for (score, memory, channels) in scored {
            let lexical = channels.iter().any(|c| c.channel != "vec" && searched(c));
            // A version placed beside a candidate was not searched for: it stands with it.
            let strongest = strength.get(&memory.id).copied().unwrap_or(top);
            if !fragments.is_empty() && !lexical {
                let reason = "dropped: the query names identifiers and no keyword channel confirmed this memory".to_owned();
                dropped.push(hit(memory, score, channels, false, reason));
            } else if strongest >= RELATIVE_THRESHOLD * top {
                eligible.push((score, memory, channels, "above the relative threshold"));
            } else if channels.iter().filter(|c| searched(c)).count() >= 2 {
                eligible.push((
                    score,
                    memory,
                    channels,
                    "below the relative threshold, kept: found by several channels",
                ));
            } else if channels.iter().any(|c| c.channel == "date") {
                eligible.push((
                    score,
                    memory,
                    channels,
                    "below the relative threshold, kept: said within a date the question names",
                ));
            } else {
                let reason = format!(
                    "dropped: its best channel score {strongest:.3} is under {:.0}% of the best ({top:.3})",
                    RELATIVE_THRESHOLD * 100.0
                );
                dropped.push(hit(memory, score, channels, false, reason));
            }
        }

        let (hits, not_selected) = self.select_diverse(eligible, limit);
        dropped.extend(not_selected);
        let (mut hits, rolled_up) = self.roll_up_episodes(hits)?;
        dropped.extend(rolled_up);
        MemoryStore::order_by_time(asked, &mut hits);
        MemoryStore::explain_versions(&mut hits, &placed);
        MemoryStore::explain_versions(&mut dropped, &placed);
        crate::policies::explain_policies(&mut hits);
        crate::duplicates::explain_duplicates(&mut hits);
        for hit in hits.iter_mut().chain(dropped.iter_mut()) {
            hit.words =
                crate::relevance::shared_words(&self.analyzer, &query.query, &hit.memory.text);
            hit.close_in_meaning = hit
                .channels
                .iter()
                .any(|c| c.channel == "vec" && c.score >= crate::relevance::CLOSE_IN_MEANING);
        }
        clock.lap("fusion");
        let took_ms = started.elapsed().as_secs_f64() * 1000.0;
        Ok(SearchResult {
            hits,
            dropped: if query.verbose { dropped } else { Vec::new() },
            took_ms,
            phases: clock.phases,
        })
    }

    /// The keyword channels' candidates: full-text terms (the rarest within the postings budget)
    /// and structural fragments.
    fn keyword_candidates(
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

    /// Episode rollups: when two or more kept traces belong to one episode, they become one hit
    /// holding the episode's steps (up to six, in order), and the single traces are dropped as
    /// covered by it.
    fn roll_up_episodes(
        &self,
        hits: Vec<SearchHit>,
    ) -> Result<(Vec<SearchHit>, Vec<SearchHit>), MemoryError> {
        let mut members: HashMap<i64, usize> = HashMap::new();
        for hit in &hits {
            if let (Some(episode), Layer::Trace) = (hit.memory.episode_id, hit.memory.layer) {
                *members.entry(episode).or_default() += 1;
            }
        }
        if members.values().all(|n| *n < 2) {
            return Ok((hits, Vec::new()));
        }
        let mut kept: Vec<SearchHit> = Vec::with_capacity(hits.len());
        let mut covered = Vec::new();
        let mut rolled: HashMap<i64, usize> = HashMap::new();
        for hit in hits {
            let episode = hit.memory.episode_id.filter(|e| {
                members.get(e).copied().unwrap_or(0) >= 2 && hit.memory.layer == Layer::Trace
            });
            let Some(episode) = episode else {
                kept.push(hit);
                continue;
            };
            if let Some(&at) = rolled.get(&episode) {
                let rollup = &mut kept[at];
                for channel in &hit.channels {
                    rollup.channels.push(channel.clone());
                }
                let reason = format!(
                    "dropped: covered by the episode rollup of memory {}",
                    rollup.memory.id
                );
                covered.push(SearchHit {
                    kept: false,
                    reason,
                    ..hit
                });
                continue;
            }
            let steps = self.episode_steps(episode)?;
            let mut rollup = hit.clone();
            rollup.memory.text = steps
                .iter()
                .map(|m| crate::store::snippet(m.text.trim(), ROLLUP_STEP_CHARS))
                .collect::<Vec<_>>()
                .join("\n---\n");
            let ids: Vec<i64> = steps.iter().map(|m| m.id).collect();
            if let serde_json::Value::Object(map) = &mut rollup.memory.metadata {
                map.insert("rollup_of".into(), serde_json::json!(ids));
            }
            rollup.reason = format!(
                "kept: episode rollup of {} steps, {} of them matched",
                steps.len(),
                members[&episode]
            );
            rolled.insert(episode, kept.len());
            kept.push(rollup);
        }
        Ok((kept, covered))
    }

    fn episode_steps(&self, episode: i64) -> Result<Vec<MemoryRecord>, MemoryError> {
        let conn = self.lock()?;
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT {COLUMNS} FROM memories WHERE episode_id = ?1 AND layer = 'L1'
             AND status IN ('activated', 'resolving') ORDER BY created_at, id LIMIT {ROLLUP_STEPS}"
        ))?;
        let rows = stmt.query_map([episode], record)?;
        Ok(rows.collect::<Result<Vec<_>, _>>()?)
    }

    /// Maximal marginal relevance: each pick trades relevance against overlap with the picks before.
    fn select_diverse(
        &self,
        mut pool: Vec<(f64, MemoryRecord, Vec<Trace>, &'static str)>,
        limit: usize,
    ) -> (Vec<SearchHit>, Vec<SearchHit>) {
        let term_sets: Vec<HashSet<String>> = pool
            .iter()
            .map(|(_, m, _, _)| self.analyzer.terms(&m.text).into_iter().collect())
            .collect();
        let mut sets: Vec<Option<HashSet<String>>> = term_sets.into_iter().map(Some).collect();
        let mut chosen_sets: Vec<HashSet<String>> = Vec::new();
        let mut hits = Vec::new();
        let top = pool.first().map_or(1.0, |p| p.0).max(f64::EPSILON);
        while hits.len() < limit {
            let best = pool
                .iter()
                .enumerate()
                .filter(|(i, _)| sets[*i].is_some())
                .map(|(i, (score, _, _, _))| {
                    let set = sets[i].as_ref();
                    let redundancy = chosen_sets
                        .iter()
                        .map(|chosen| set.map_or(0.0, |s| jaccard(s, chosen)))
                        .fold(0.0, f64::max);
                    (
                        i,
                        MMR_LAMBDA * (score / top) - (1.0 - MMR_LAMBDA) * redundancy,
                    )
                })
                .max_by(|a, b| a.1.total_cmp(&b.1));
            let Some((index, _)) = best else { break };
            if let Some(set) = sets[index].take() {
                chosen_sets.push(set);
            }
            let (score, memory, channels, why) = pool[index].clone();
            hits.push(hit(memory, score, channels, true, format!("kept: {why}")));
        }
        let not_selected = pool
            .drain(..)
            .enumerate()
            .filter(|(i, _)| sets[*i].is_some())
            .map(|(_, (score, memory, channels, _))| {
                hit(
                    memory,
                    score,
                    channels,
                    false,
                    format!("dropped: beyond the limit of {limit} after diversity selection"),
                )
            })
            .collect();
        (hits, not_selected)
    }

    fn log_search(&self, query: &str, hits: &[SearchHit], took_ms: f64) -> Result<(), MemoryError> {
        let detail = serde_json::json!({
            "hits": hits.iter().map(|h| serde_json::json!({ "id": h.memory.id, "score": h.score })).collect::<Vec<_>>(),
        });
        self.lock()?.execute(
            "INSERT INTO search_log (at, query, hits, took_ms, detail) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![
                self.now(),
                query,
                hits.len() as i64,
                took_ms,
                detail.to_string()
            ],
        )?;
        Ok(())
    }
}

/// The layer-quality bonus of the reference product's fusion, from the quality signals a memory
/// carries in its metadata (`value` for traces, `gain` or `confidence` for policies, `eta` for
/// skills); absent signals count as zero.
fn layer_bonus(memory: &MemoryRecord, decay: f64) -> f64 {
    let signal = |key: &str| memory.metadata.get(key).and_then(serde_json::Value::as_f64);
    match memory.layer {
        Layer::Trace => 0.3 * signal("value").unwrap_or(0.0).max(0.0) * decay,
        Layer::Policy => {
            0.2 * signal("gain")
                .or_else(|| signal("confidence"))
                .unwrap_or(0.0)
                .clamp(0.0, 1.0)
        }
        Layer::Skill => 0.15 * signal("eta").unwrap_or(0.0).max(0.0),
        Layer::WorldModel => 0.0,
    }
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
}

/// Candidates as `(fused score, memory, channel traces)`.
type Scored = Vec<(f64, MemoryRecord, Vec<Trace>)>;

impl MemoryStore {
    /// Splits the candidates the words found into those that share enough of the question and
    /// those that do not: a memory found by the full-text channel must hold two of the question's
    /// informative terms or [`COVERAGE_MIN`](crate::relevance::COVERAGE_MIN) of its IDF-weighted
    /// information, be close to it in meaning, match an identifier it names or be said within a
    /// date it names — one common word ("hello", "project") is not enough. Memories only the vectors found passed their own floor.
    fn enough_shared(
        &self,
        question: &str,
        terms: &[String],
        scored: Scored,
    ) -> Result<(Scored, Vec<SearchHit>), MemoryError> {
        use crate::relevance::{
            coverage, shares_enough, weighted_terms, CLOSE_IN_MEANING, COVERAGE_MIN,
        };
        let by_words = |channels: &[Trace]| channels.iter().any(|c| c.channel == "fts");
        if terms.is_empty() || !scored.iter().any(|(_, _, c)| by_words(c)) {
            return Ok((scored, Vec::new()));
        }
        let conn = self.lock()?;
        let total: i64 =
            conn.query_row("SELECT coalesce(max(id), 0) FROM memories", [], |row| {
                row.get(0)
            })?;
        let mut frequencies = HashMap::with_capacity(terms.len());
        for term in terms {
            frequencies.insert(term.clone(), document_frequency(&conn, term)?.unwrap_or(0));
        }
        let weighted = weighted_terms(&self.analyzer, question, terms, total, |t| {
            frequencies.get(t).copied().unwrap_or(0)
        });
        let mut kept = Vec::with_capacity(scored.len());
        let mut dropped = Vec::new();
        for (score, memory, channels) in scored {
            let similarity = channels
                .iter()
                .filter(|c| c.channel == "vec")
                .map(|c| c.score)
                .fold(0.0, f64::max);
            let exempt = !by_words(&channels)
                || similarity >= CLOSE_IN_MEANING
                || channels
                    .iter()
                    .any(|c| c.channel == "structural" || c.channel == "date");
            if exempt {
                kept.push((score, memory, channels));
                continue;
            }
            let body: HashSet<String> = self.analyzer.terms(&memory.text).into_iter().collect();
            let mut context = HashSet::new();
            let mut enough = shares_enough(&weighted, &body, &context);
            if !enough {
                let text: String = conn
                    .prepare_cached("SELECT context FROM memories WHERE id = ?1")?
                    .query_row([memory.id], |row| row.get(0))
                    .optional()?
                    .unwrap_or_default();
                context = self.analyzer.terms(&text).into_iter().collect();
                enough = shares_enough(&weighted, &body, &context);
            }
            if enough {
                kept.push((score, memory, channels));
            } else {
                let share = coverage(&weighted, &body, &context);
                let reason = format!(
                    "dropped: it holds {:.0}% of the question's information (under {:.0}%) and is not close in meaning (similarity {similarity:.2} < {CLOSE_IN_MEANING})",
                    share * 100.0,
                    COVERAGE_MIN * 100.0
                );
                dropped.push(hit(memory, score, channels, false, reason));
            }
        }
        Ok((kept, dropped))
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
        if stats.written >= TERM_STATS_WRITES {
            *stats = TermStats::default();
        }
        let mut with_df = Vec::with_capacity(terms.len());
        for term in terms {
            let df = match stats.frequencies.get(&term) {
                Some(df) => *df,
                None => {
                    let df = document_frequency(conn, &term)?.unwrap_or(0);
                    // A term no memory holds yet is asked again: the next memory may hold it.
                    if df > 0 {
                        stats.frequencies.insert(term.clone(), df);
                    }
                    df
                }
            };
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
struct Laps {
    last: Instant,
    phases: Vec<Phase>,
}

impl Laps {
    fn new() -> Self {
        Self {
            last: Instant::now(),
            phases: Vec::new(),
        }
    }

    fn lap(&mut self, phase: &str) {
        let now = Instant::now();
        add_phase(
            &mut self.phases,
            phase,
            (now - self.last).as_secs_f64() * 1000.0,
        );
        self.last = now;
    }
}

fn hit(
    memory: MemoryRecord,
    score: f64,
    channels: Vec<Trace>,
    kept: bool,
    reason: String,
) -> SearchHit {
    SearchHit {
        memory,
        score,
        channels,
        kept,
        reason,
        words: Vec::new(),
        close_in_meaning: false,
    }
}

/// The people a question may name: its capitalised words, lowercased, and for names written in
/// Chinese, Japanese or Korean script (which has no capitals) the question itself.
struct Named<'q> {
    words: HashSet<String>,
    question: &'q str,
}

impl<'q> Named<'q> {
    fn in_question(question: &'q str) -> Self {
        let words = question
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| w.chars().next().is_some_and(char::is_uppercase))
            .map(str::to_lowercase)
            .collect();
        Self { words, question }
    }
}

/// The most characters a name in Chinese, Japanese or Korean script has before its colon.
const CJK_NAME_CHARS: usize = 8;

/// Whether `text` is a line said by someone the question names: it opens with a speaker's name
/// and a colon — one to three capitalised words ("Melanie: …", a word of which is among the
/// question's capitalised words), or a name in CJK script ("梅兰妮：…", which the question
/// contains).
fn spoken_by_named(text: &str, named: &Named) -> bool {
    if let Some((speaker, _)) = text.split_once(['：', ':']) {
        let chars = speaker.chars().count();
        if (2..=CJK_NAME_CHARS).contains(&chars)
            && speaker.chars().all(|c| crate::text::is_cjk(c) || c == '·')
        {
            return named.question.contains(speaker);
        }
    }
    if named.words.is_empty() {
        return false;
    }
    let Some((speaker, _)) = text.split_once(": ") else {
        return false;
    };
    let words: Vec<&str> = speaker.split(' ').collect();
    speaker.len() <= 40
        && words.len() <= 3
        && words
            .iter()
            .all(|w| w.chars().next().is_some_and(char::is_uppercase))
        && words
            .iter()
            .any(|w| named.words.contains(&w.to_lowercase()))
}

fn jaccard(a: &HashSet<String>, b: &HashSet<String>) -> f64 {
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    let common = a.intersection(b).count() as f64;
    common / (a.len() as f64 + b.len() as f64 - common)
}

/// Whether the query narrows the memories beyond "live ones".
fn narrowed(query: &SearchQuery) -> bool {
    !query.layers.is_empty()
        || !query.sources.is_empty()
        || query.session.is_some()
        || query.exclude_session.is_some()
        || query.after.is_some()
        || query.before.is_some()
}

/// The SQL (`AND …`) and values that restrict candidates to live memories matching the filters.
fn filters(query: &SearchQuery) -> (String, Vec<Value>) {
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
fn add_channel(
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

//! Which fused candidates recall keeps: those that share enough of the question, then a diverse
//! few (maximal marginal relevance), with traces of one episode rolled up into one hit; every
//! candidate left out is kept with the reason.

use std::collections::{HashMap, HashSet};

use rusqlite::OptionalExtension;

use crate::index::{document_frequency, record, COLUMNS};
use crate::model::{Layer, MemoryRecord, SearchHit, Trace};
use crate::text::snippet;
use crate::{MemoryError, MemoryStore};

/// How much a pick's relevance counts against its overlap with the picks before it.
const MMR_LAMBDA: f64 = 0.7;
/// Steps an episode rollup holds, and how much of each.
const ROLLUP_STEPS: usize = 6;
const ROLLUP_STEP_CHARS: usize = 200;

/// Candidates as `(fused score, memory, channel traces)`.
pub(crate) type Scored = Vec<(f64, MemoryRecord, Vec<Trace>)>;

impl MemoryStore {
    /// Splits the candidates the words found into those that share enough of the question and
    /// those that do not: a memory found by the full-text channel must hold two of the question's
    /// informative terms or [`COVERAGE_MIN`](crate::relevance::COVERAGE_MIN) of its IDF-weighted
    /// information, be close to it in meaning, match an identifier it names or be said within a
    /// date it names — one common word ("hello", "project") is not enough. Memories only the vectors found passed their own floor.
    pub(crate) fn enough_shared(
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

    /// Episode rollups: when two or more kept traces belong to one episode, they become one hit
    /// holding the episode's steps (up to six, in order), and the single traces are dropped as
    /// covered by it.
    pub(crate) fn roll_up_episodes(
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
                .map(|m| snippet(m.text.trim(), ROLLUP_STEP_CHARS))
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
    pub(crate) fn select_diverse(
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
}

pub(crate) fn hit(
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

fn jaccard(a: &HashSet<String>, b: &HashSet<String>) -> f64 {
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    let common = a.intersection(b).count() as f64;
    common / (a.len() as f64 + b.len() as f64 - common)
}

//! Recall: the channels (`fts`: BM25 over stemmed terms and each memory's conversational
//! neighbourhood, terms OR-ed; `structural`: exact paths, identifiers and error codes; `vec`: the
//! query's embedding), fusion (the sum of each channel's min-max normalised score, weighted, + a
//! reciprocal-rank bonus + a small recency bonus + what the question names: the person who said
//! it, the date it was said), a relative threshold with multi-channel bypass, MMR for diversity,
//! and an explanation for every candidate.

use std::collections::{HashMap, HashSet};
use std::time::Instant;

use rusqlite::params;

use crate::channels::{add_channel, filters, narrowed, Laps};
use crate::index::{fetch, FULL_RELEVANCE, VECTOR_WEIGHT};
use crate::model::{
    add_phase, Layer, MemoryRecord, Phase, SearchHit, SearchQuery, SearchResult, Trace,
};
use crate::selection::hit;
use crate::statements::Asked;
use crate::text::idents;
use crate::{MemoryError, MemoryStore};

/// Fusion and selection settings (the reference product's defaults where it has them).
const RRF_K: f64 = 60.0;
const RRF_WEIGHT: f64 = 0.4;
const RECENCY_WEIGHT: f64 = 0.05;
const RECENCY_HALF_LIFE_DAYS: f64 = 30.0;
const RELATIVE_THRESHOLD: f64 = 0.2;
const MAX_QUERY_TERMS: usize = 32;
/// How many hits from before a named change lead the answer to a question about it.
const EARLIER_HITS: usize = 2;
/// Vector hits below this cosine similarity are not candidates.
const MIN_SIMILARITY: f32 = 0.25;
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

impl MemoryStore {
    /// Recalls the memories most relevant to `query`, with the reasons. Every search is logged for
    /// the memory panel. A question about what held before a change ("what did she use before
    /// X?") also recalls what its subject was before X was said, and places that first.
    pub fn search(&self, query: &SearchQuery) -> Result<SearchResult, MemoryError> {
        let started = Instant::now();
        let mut result = self.ranked(query, crate::statements::asked(&query.query))?;
        if let Some((subject, change)) = crate::statements::split_before(&query.query) {
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
        let values = crate::statements::values_with_digits(&change);
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
        let said = crate::statements::statement(&change.text);
        if !said.announces_change() {
            return Ok(Vec::new());
        }
        let when = change.created_at;
        let before = query.before.map_or(when, |b| b.min(when));
        // What the change replaced, when it was read as an update of an earlier statement, is
        // the answer its version history gives; then what else the person said before it.
        let mut earlier: Vec<SearchHit> = Vec::new();
        for id in crate::versions::predecessors(&change) {
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
                let theirs = crate::statements::statement(&h.memory.text);
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
    /// `asked`: what the question asks about time (see [`crate::statements::asked`]).
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
        let answers_wanted = !crate::statements::about_asking(&query.query);
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
                        answers_wanted && crate::statements::only_asks(&memory.text),
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

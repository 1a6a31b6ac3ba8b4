//! The LoCoMo retrieval evaluation: ingest a LoCoMo-format file (each dialog turn one memory, its
//! session's date as its time, its `dia_id` as external id), ask every question through the real
//! recall path, and score turn recall@k and session recall_any@k per category, next to a plain
//! BM25 baseline over the same turns.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use cairn_memory::{Embedder, MemoryError, MemoryStore, NewMemory, SearchQuery};

use crate::baseline::Baseline;

/// The scored categories (5, adversarial, has no evidence to find).
const CATEGORIES: [(u64, &str); 4] = [
    (1, "multi_hop"),
    (2, "temporal"),
    (3, "open_domain"),
    (4, "single_hop"),
];

/// The whole report; recalls are percentages.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LocomoReport {
    pub questions: usize,
    pub dropped_evidence: usize,
    /// `cairn` and `bm25` → group (`overall`, `multi_hop`…) → metric (`turn_recall@10`…) → percent.
    pub systems: BTreeMap<String, BTreeMap<String, BTreeMap<String, f64>>>,
    /// Questions per group.
    pub counts: BTreeMap<String, usize>,
    /// The embedding model behind Cairn's vector channel; `None` when recall ran lexical only.
    pub embedding_model: Option<String>,
}

pub(crate) struct Turn {
    pub dia_id: String,
    pub session: String,
    pub text: String,
    pub at: i64,
}

/// One conversation of a LoCoMo-format file in a fresh store, every turn a memory (embedded, and
/// read for facts that change, as the background queue would), beside the BM25 baseline.
pub(crate) struct Conversation {
    pub store: MemoryStore,
    /// The folder of a store on disk (one that dreamt), removed with it.
    _dir: Option<tempfile::TempDir>,
    pub baseline: Baseline,
    pub turns: Vec<Turn>,
    /// Memory id → its turn.
    pub by_id: HashMap<i64, usize>,
}

impl Conversation {
    /// `dream`: the store is on disk and dreams (without a summary model) once everything is
    /// written, before any question.
    pub(crate) fn ingest(
        sample: &Value,
        embedder: Option<&Arc<dyn Embedder>>,
        dream: bool,
    ) -> Result<Self, MemoryError> {
        let id = sample["sample_id"].as_str().unwrap_or("sample");
        let turns = turns(id, &sample["conversation"]);
        let dir = if dream {
            Some(tempfile::tempdir().map_err(|e| MemoryError::Io {
                path: "a temporary folder".into(),
                source: e,
            })?)
        } else {
            None
        };
        let store = match &dir {
            Some(dir) => MemoryStore::open(&dir.path().join("memory.sqlite"))?,
            None => MemoryStore::open_in_memory()?,
        };
        let mut baseline = Baseline::new()?;
        let ids = store.add_batch(
            turns
                .iter()
                .map(|t| NewMemory {
                    text: t.text.clone(),
                    source: Some("locomo".into()),
                    external_id: Some(t.dia_id.clone()),
                    session: Some(t.session.clone()),
                    created_at: Some(t.at),
                    ..NewMemory::default()
                })
                .collect(),
        )?;
        if let Some(embedder) = embedder {
            store.set_embedder(embedder.clone());
            store.embed_all_pending()?;
        }
        store.relate_all_pending()?;
        if let Some(dir) = &dir {
            store.dream(cairn_memory::DreamOptions {
                dir: dir.path().join("dreams"),
                dry_run: false,
                budget: std::time::Duration::from_secs(600),
                writer: None,
                trigger: "eval".into(),
            })?;
        }
        let mut by_id = HashMap::new();
        for (index, (id, turn)) in ids.iter().zip(&turns).enumerate() {
            baseline.add(*id, &turn.text)?;
            by_id.insert(*id, index);
        }
        Ok(Self {
            store,
            _dir: dir,
            baseline,
            turns,
            by_id,
        })
    }

    /// A question's top `k` memory ids from Cairn's recall and from the baseline, by system name.
    pub(crate) fn ask(
        &self,
        question: &str,
        k: usize,
    ) -> Result<[(&'static str, Vec<i64>); 2], MemoryError> {
        let cairn = self
            .store
            .search(&SearchQuery::new(question).limit(k))?
            .hits
            .into_iter()
            // A memory found counts for those merged into it (none in the dev sets).
            .flat_map(|h| std::iter::once(h.memory.id).chain(cairn_memory::merged_ids(&h.memory)))
            .collect();
        Ok([
            ("cairn", cairn),
            ("bm25", self.baseline.search(question, k)?),
        ])
    }

    /// The turns of recalled memory ids, in order.
    pub(crate) fn turns_of(&self, ids: &[i64]) -> Vec<&Turn> {
        ids.iter()
            .filter_map(|id| self.by_id.get(id).map(|i| &self.turns[*i]))
            .collect()
    }
}

struct Question {
    text: String,
    category: &'static str,
    evidence: Vec<String>,
}

#[derive(Default)]
struct Tally {
    /// metric → (sum, count)
    sums: BTreeMap<String, (f64, usize)>,
}

impl Tally {
    fn add(&mut self, metric: String, value: f64) {
        let entry = self.sums.entry(metric).or_insert((0.0, 0));
        entry.0 += value;
        entry.1 += 1;
    }

    fn percentages(&self) -> BTreeMap<String, f64> {
        self.sums
            .iter()
            .map(|(k, (sum, n))| {
                (
                    k.clone(),
                    (sum / (*n).max(1) as f64 * 1000.0).round() / 10.0,
                )
            })
            .collect()
    }
}

/// Runs the evaluation over the JSON text of a LoCoMo file for the cut-offs `ks` (`dream`: each
/// conversation's memory dreams before it is asked).
pub fn evaluate(
    json: &str,
    ks: &[usize],
    embedder: Option<Arc<dyn Embedder>>,
    dream: bool,
) -> Result<LocomoReport, MemoryError> {
    let samples: Vec<Value> = serde_json::from_str(json)?;
    let max_k = ks.iter().copied().max().unwrap_or(10).max(1);
    let mut tallies: BTreeMap<(&str, &str), Tally> = BTreeMap::new();
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    let mut questions_scored = 0;
    let mut dropped_evidence = 0;

    for sample in &samples {
        let conversation = Conversation::ingest(sample, embedder.as_ref(), dream)?;
        let turns = &conversation.turns;
        let known: HashSet<&str> = turns.iter().map(|t| t.dia_id.as_str()).collect();
        let session_of: HashMap<&str, &str> = turns
            .iter()
            .map(|t| (t.dia_id.as_str(), t.session.as_str()))
            .collect();

        for q in questions(&sample["qa"]) {
            let (evidence, dropped): (Vec<String>, Vec<String>) = q
                .evidence
                .into_iter()
                .partition(|e| known.contains(e.as_str()));
            dropped_evidence += dropped.len();
            if evidence.is_empty() {
                continue;
            }
            questions_scored += 1;
            *counts.entry("overall".into()).or_default() += 1;
            *counts.entry(q.category.into()).or_default() += 1;

            for (system, ranked) in conversation.ask(&q.text, max_k)? {
                let found = conversation.turns_of(&ranked);
                for &k in ks {
                    let top: Vec<&Turn> = found.iter().take(k).copied().collect();
                    let hit_turns = evidence
                        .iter()
                        .filter(|e| top.iter().any(|t| &t.dia_id == *e))
                        .count();
                    let turn_recall = hit_turns as f64 / evidence.len() as f64;
                    let sessions: HashSet<&str> = top.iter().map(|t| t.session.as_str()).collect();
                    let any_session = evidence.iter().any(|e| {
                        session_of
                            .get(e.as_str())
                            .is_some_and(|s| sessions.contains(s))
                    });
                    for group in ["overall", q.category] {
                        let tally = tallies.entry((system, group)).or_default();
                        tally.add(format!("turn_recall@{k}"), turn_recall);
                        tally.add(
                            format!("session_recall_any@{k}"),
                            f64::from(u8::from(any_session)),
                        );
                    }
                }
            }
        }
    }

    let mut systems: BTreeMap<String, BTreeMap<String, BTreeMap<String, f64>>> = BTreeMap::new();
    for ((system, group), tally) in &tallies {
        systems
            .entry((*system).to_owned())
            .or_default()
            .insert((*group).to_owned(), tally.percentages());
    }
    Ok(LocomoReport {
        embedding_model: embedder.map(|e| e.model().to_owned()),
        questions: questions_scored,
        dropped_evidence,
        systems,
        counts,
    })
}

/// Every dialog turn of a conversation, in order, with its session's time.
fn turns(sample: &str, conversation: &Value) -> Vec<Turn> {
    let mut out = Vec::new();
    let Some(map) = conversation.as_object() else {
        return out;
    };
    let mut sessions: Vec<(u32, &Vec<Value>)> = map
        .iter()
        .filter_map(|(key, value)| {
            let n = key.strip_prefix("session_")?.parse::<u32>().ok()?;
            Some((n, value.as_array()?))
        })
        .collect();
    sessions.sort_by_key(|(n, _)| *n);
    for (n, list) in sessions {
        let date = map
            .get(&format!("session_{n}_date_time"))
            .and_then(Value::as_str)
            .and_then(parse_date_time)
            .unwrap_or(0);
        for (i, turn) in list.iter().enumerate() {
            let Some(dia_id) = turn["dia_id"].as_str() else {
                continue;
            };
            let speaker = turn["speaker"].as_str().unwrap_or("someone");
            let mut text = format!("{speaker}: {}", turn["text"].as_str().unwrap_or_default());
            if let Some(caption) = turn["blip_caption"].as_str() {
                text.push_str(&format!(" [shares an image: {caption}]"));
            }
            out.push(Turn {
                dia_id: normalise_dia_id(dia_id),
                session: format!("{sample}:session_{n}"),
                text,
                at: date + i as i64 * 1_000,
            });
        }
    }
    out
}

fn questions(qa: &Value) -> Vec<Question> {
    qa.as_array()
        .into_iter()
        .flatten()
        .filter_map(|q| {
            let category = q["category"].as_u64()?;
            let (_, name) = CATEGORIES.iter().find(|(c, _)| *c == category)?;
            let evidence = dia_ids(&q["evidence"]);
            Some(Question {
                text: q["question"].as_str()?.to_owned(),
                category: name,
                evidence,
            })
        })
        .collect()
}

/// The cleaned `dia_id`s of an evidence list, its warts undone: several ids in one string
/// (`"D8:6; D9:17"`) split, zero padding stripped.
pub(crate) fn dia_ids<B: FromIterator<String>>(list: &Value) -> B {
    list.as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .flat_map(|e| e.split(|c: char| c == ';' || c == ',' || c.is_whitespace()))
        .filter(|e| !e.is_empty())
        .map(normalise_dia_id)
        .collect()
}

/// `D30:05` → `D30:5`.
fn normalise_dia_id(id: &str) -> String {
    match id.trim().split_once(':') {
        Some((session, turn)) => {
            let turn = turn.trim_start_matches('0');
            format!(
                "{}:{}",
                session.trim(),
                if turn.is_empty() { "0" } else { turn }
            )
        }
        None => id.trim().to_owned(),
    }
}

/// `"1:56 pm on 8 May, 2023"` → unix milliseconds (UTC).
pub fn parse_date_time(text: &str) -> Option<i64> {
    let (time, date) = text.split_once(" on ")?;
    let mut time_parts = time.split_whitespace();
    let clock = time_parts.next()?;
    let meridiem = time_parts.next().unwrap_or("am").to_ascii_lowercase();
    let (hour, minute) = clock.split_once(':')?;
    let mut hour: i64 = hour.parse().ok()?;
    let minute: i64 = minute.parse().ok()?;
    if meridiem == "pm" && hour != 12 {
        hour += 12;
    } else if meridiem == "am" && hour == 12 {
        hour = 0;
    }
    let cleaned = date.replace(',', " ");
    let mut parts = cleaned.split_whitespace();
    let day: i64 = parts.next()?.parse().ok()?;
    let month = match parts.next()?.to_ascii_lowercase().get(..3)? {
        "jan" => 1,
        "feb" => 2,
        "mar" => 3,
        "apr" => 4,
        "may" => 5,
        "jun" => 6,
        "jul" => 7,
        "aug" => 8,
        "sep" => 9,
        "oct" => 10,
        "nov" => 11,
        "dec" => 12,
        _ => return None,
    };
    let year: i64 = parts.next()?.parse().ok()?;
    Some(
        ((cairn_protocol::calendar::days_from_civil(year, month, day) * 24 + hour) * 60 + minute)
            * 60_000,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_dates_parse() {
        assert_eq!(
            parse_date_time("1:56 pm on 8 May, 2023"),
            Some(1_683_554_160_000)
        );
        assert_eq!(
            parse_date_time("12:05 am on 1 January, 2024"),
            Some(1_704_067_500_000)
        );
        assert_eq!(parse_date_time("whenever"), None);
    }

    #[test]
    fn evidence_ids_are_cleaned() {
        assert_eq!(normalise_dia_id("D30:05"), "D30:5");
        assert_eq!(normalise_dia_id(" D1:3 "), "D1:3");
    }

    #[test]
    fn a_tiny_conversation_is_scored_for_both_systems() -> Result<(), MemoryError> {
        let json = r#"[{
            "sample_id": "t",
            "conversation": {
                "speaker_a": "Ana", "speaker_b": "Ben",
                "session_1_date_time": "10:00 am on 2 March, 2023",
                "session_1": [
                    {"speaker": "Ana", "dia_id": "D1:1", "text": "I adopted a puppy named Biscuit last week."},
                    {"speaker": "Ben", "dia_id": "D1:2", "text": "That's lovely, what breed is he?"},
                    {"speaker": "Ana", "dia_id": "D1:3", "text": "A beagle! He loves the park."}
                ],
                "session_2_date_time": "4:00 pm on 9 March, 2023",
                "session_2": [
                    {"speaker": "Ben", "dia_id": "D2:1", "text": "I started pottery classes on Tuesday."}
                ]
            },
            "qa": [
                {"question": "What is the name of Ana's puppy?", "answer": "Biscuit", "evidence": ["D1:01"], "category": 4},
                {"question": "What class did Ben start?", "answer": "pottery", "evidence": ["D2:1; D9:9"], "category": 2},
                {"question": "Unanswerable?", "evidence": [], "category": 5}
            ]
        }]"#;
        let report = evaluate(json, &[1, 5], None, false)?;
        assert_eq!(report.questions, 2);
        assert_eq!(report.dropped_evidence, 1);
        for system in ["cairn", "bm25"] {
            let overall = &report.systems[system]["overall"];
            assert_eq!(overall["turn_recall@5"], 100.0, "{system}: {overall:?}");
        }
        assert_eq!(
            report.systems["cairn"]["single_hop"]["turn_recall@1"],
            100.0
        );
        Ok(())
    }
}

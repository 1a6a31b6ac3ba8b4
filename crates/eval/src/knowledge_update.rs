//! The knowledge-update evaluation: conversations in the LoCoMo format whose facts change (an
//! employer, a staging server…), asked what holds now (category 6) and what held before a named
//! change (category 7). Each conversation is ingested as the LoCoMo evaluation does (the facts
//! pass included), every question asked through the real recall path, and the ranking scored as
//! the set's reference scorer does, next to the plain BM25 baseline.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use cairn_memory::{Embedder, MemoryError};

use crate::locomo::{dia_ids, Conversation};

/// Ranks that count.
const DEPTH: usize = 10;

/// The scored categories.
const CATEGORIES: [(u64, &str); 2] = [(6, "current_value"), (7, "past_value")];

/// The whole report; metrics are percentages of a category's questions.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct KnowledgeUpdateReport {
    pub questions: usize,
    /// `cairn` and `bm25` → category (`current_value`, `past_value`) → metric → percent.
    pub systems: BTreeMap<String, BTreeMap<String, BTreeMap<String, f64>>>,
    /// Questions per category.
    pub counts: BTreeMap<String, usize>,
    /// The embedding model behind Cairn's vector channel; `None` when recall ran lexical only.
    pub embedding_model: Option<String>,
    /// Per system, the ranking of every question in the reference scorer's run format
    /// (`"<sample_id>#<qa index>"` → recalled `dia_id`s, best first).
    pub runs: BTreeMap<String, BTreeMap<String, Vec<String>>>,
}

/// One question's ids.
struct Question {
    key: String,
    text: String,
    category: &'static str,
    target: HashSet<String>,
    other: HashSet<String>,
    distractor: HashSet<String>,
}

/// Runs the evaluation over the JSON text of a knowledge-update file.
pub fn evaluate(
    json: &str,
    embedder: Option<Arc<dyn Embedder>>,
    dream: bool,
) -> Result<KnowledgeUpdateReport, MemoryError> {
    let samples: Vec<Value> = serde_json::from_str(json)?;
    let mut sums: BTreeMap<(&str, &str), BTreeMap<&str, f64>> = BTreeMap::new();
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    let mut runs: BTreeMap<String, BTreeMap<String, Vec<String>>> = BTreeMap::new();
    let mut questions_scored = 0;
    for sample in &samples {
        let conversation = Conversation::ingest(sample, embedder.as_ref(), dream)?;
        for q in questions(sample) {
            questions_scored += 1;
            *counts.entry(q.category.to_owned()).or_default() += 1;
            for (system, ranked) in conversation.ask(&q.text, DEPTH)? {
                let mut ids: Vec<String> = Vec::new();
                for turn in conversation.turns_of(&ranked) {
                    if !ids.contains(&turn.dia_id) {
                        ids.push(turn.dia_id.clone());
                    }
                }
                ids.truncate(DEPTH);
                let tally = sums.entry((system, q.category)).or_default();
                for (metric, value) in score(&q, &ids) {
                    *tally.entry(metric).or_default() += value;
                }
                runs.entry(system.to_owned())
                    .or_default()
                    .insert(q.key.clone(), ids);
            }
        }
    }
    let mut systems: BTreeMap<String, BTreeMap<String, BTreeMap<String, f64>>> = BTreeMap::new();
    for ((system, category), tally) in sums {
        let n = counts.get(category).copied().unwrap_or(0).max(1) as f64;
        systems.entry(system.to_owned()).or_default().insert(
            category.to_owned(),
            tally
                .into_iter()
                .map(|(metric, sum)| (metric.to_owned(), (sum / n * 1000.0).round() / 10.0))
                .collect(),
        );
    }
    Ok(KnowledgeUpdateReport {
        questions: questions_scored,
        systems,
        counts,
        embedding_model: embedder.map(|e| e.model().to_owned()),
        runs,
    })
}

/// The set's metrics for one ranking (1 or 0 each; `latest_mrr` the reciprocal rank).
fn score(q: &Question, ranked: &[String]) -> Vec<(&'static str, f64)> {
    let rank_of =
        |ids: &HashSet<String>| ranked.iter().position(|d| ids.contains(d)).map(|r| r + 1);
    let target = rank_of(&q.target);
    let other = rank_of(&q.other);
    let distractor = rank_of(&q.distractor);
    let above = |r: Option<usize>| r.is_some_and(|r| r <= 5 && target.is_none_or(|t| r < t));
    let yes = |b: bool| f64::from(u8::from(b));
    vec![
        (
            "latest@1",
            yes(target.is_some_and(|t| other.is_none_or(|o| t < o))),
        ),
        ("latest_recall@5", yes(target.is_some_and(|t| t <= 5))),
        ("latest_recall@10", yes(target.is_some_and(|t| t <= 10))),
        ("superseded_above_latest@5", yes(above(other))),
        ("superseded_in_top5", yes(other.is_some_and(|o| o <= 5))),
        ("distractor_above_latest@5", yes(above(distractor))),
        ("latest_mrr", target.map_or(0.0, |t| 1.0 / t as f64)),
    ]
}

fn questions(sample: &Value) -> Vec<Question> {
    let id = sample["sample_id"].as_str().unwrap_or("sample");
    let ids = |q: &Value, key: &str| -> HashSet<String> { dia_ids(&q[key]) };
    sample["qa"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
        .filter_map(|(index, q)| {
            let category = q["category"].as_u64()?;
            let (_, name) = CATEGORIES.iter().find(|(c, _)| *c == category)?;
            let other = if q.get("evidence_other").is_some() {
                ids(q, "evidence_other")
            } else {
                ids(q, "evidence_superseded")
            };
            Some(Question {
                key: format!("{id}#{index}"),
                text: q["question"].as_str()?.to_owned(),
                category: name,
                target: ids(q, "evidence"),
                other,
                distractor: ids(q, "evidence_distractor"),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fact stated, updated, and mentioned in passing afterwards; the stale statement shares
    /// more of the question's words than the update does.
    const SMALL: &str = r#"[{
        "sample_id": "t",
        "conversation": {
            "speaker_a": "Ana", "speaker_b": "Ben",
            "session_1_date_time": "10:00 am on 2 March, 2023",
            "session_1": [
                {"speaker": "Ana", "dia_id": "D1:1", "text": "Our team keeps its tickets in Jira."},
                {"speaker": "Ben", "dia_id": "D1:2", "text": "I went hiking in the hills on Sunday."},
                {"speaker": "Ana", "dia_id": "D1:3", "text": "Sounds lovely, was the weather good?"},
                {"speaker": "Ben", "dia_id": "D1:4", "text": "Sunny all day, and the views were great."},
                {"speaker": "Ana", "dia_id": "D1:5", "text": "I baked bread with my niece this weekend."},
                {"speaker": "Ben", "dia_id": "D1:6", "text": "My garden finally has tomatoes."}
            ],
            "session_2_date_time": "4:00 pm on 9 May, 2023",
            "session_2": [
                {"speaker": "Ana", "dia_id": "D2:1", "text": "We moved our team's tickets from Jira to Linear."},
                {"speaker": "Ben", "dia_id": "D2:2", "text": "My sister bought a red bicycle."},
                {"speaker": "Ana", "dia_id": "D2:3", "text": "Does she ride it to work?"},
                {"speaker": "Ben", "dia_id": "D2:4", "text": "Every day, even in the rain."}
            ],
            "session_3_date_time": "4:00 pm on 9 July, 2023",
            "session_3": [
                {"speaker": "Ben", "dia_id": "D3:1", "text": "Remember when you kept everything in Jira, Ana?"}
            ]
        },
        "qa": [
            {"question": "Where does Ana's team keep its tickets these days?", "answer": "Linear", "category": 6,
             "evidence": ["D2:1"], "evidence_other": ["D1:1"], "evidence_distractor": ["D3:1"]},
            {"question": "Where did Ana's team keep tickets before Linear?", "answer": "Jira", "category": 7,
             "evidence": ["D1:1"], "evidence_other": ["D2:1"], "evidence_distractor": ["D3:1"]},
            {"question": "Who went hiking?", "answer": "Ben", "category": 4, "evidence": ["D1:2"]}
        ]
    }]"#;

    #[test]
    fn the_current_value_is_read_first_and_the_past_value_when_asked() -> Result<(), MemoryError> {
        let report = evaluate(SMALL, None, false)?;
        assert_eq!(report.questions, 2);
        let cairn = &report.systems["cairn"];
        assert_eq!(cairn["current_value"]["latest@1"], 100.0, "{cairn:?}");
        assert_eq!(cairn["current_value"]["superseded_above_latest@5"], 0.0);
        assert_eq!(cairn["past_value"]["latest@1"], 100.0, "{cairn:?}");
        assert_eq!(report.runs["cairn"]["t#0"][0], "D2:1");
        // The baseline reads the stale statement first: it shares the question's words.
        assert_eq!(
            report.systems["bm25"]["current_value"]["latest@1"], 0.0,
            "{:?}",
            report.runs["bm25"]
        );
        Ok(())
    }

    #[test]
    fn the_metrics_follow_the_reference_scorer() {
        let q = Question {
            key: "x#0".into(),
            text: String::new(),
            category: "current_value",
            target: HashSet::from(["D2:1".to_owned()]),
            other: HashSet::from(["D1:1".to_owned()]),
            distractor: HashSet::from(["D3:1".to_owned()]),
        };
        let ranked: Vec<String> = ["D3:1", "D1:1", "D9:9", "D2:1"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let got: BTreeMap<_, _> = score(&q, &ranked).into_iter().collect();
        assert_eq!(got["latest@1"], 0.0);
        assert_eq!(got["latest_recall@5"], 1.0);
        assert_eq!(got["superseded_above_latest@5"], 1.0);
        assert_eq!(got["distractor_above_latest@5"], 1.0);
        assert_eq!(got["latest_mrr"], 0.25);
        let empty: BTreeMap<_, _> = score(&q, &[]).into_iter().collect();
        assert_eq!(empty["superseded_above_latest@5"], 0.0);
        assert_eq!(empty["latest@1"], 0.0);
    }
}

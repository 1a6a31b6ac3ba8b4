//! `cairn eval locomo` and `cairn bench recall` as a user runs them.

use std::path::Path;

use crate::{cairn, stdout};

const TINY: &str = r#"[{
  "sample_id": "tiny",
  "conversation": {
    "speaker_a": "Mia", "speaker_b": "Tom",
    "session_1_date_time": "9:15 am on 4 June, 2023",
    "session_1": [
      {"speaker": "Mia", "dia_id": "D1:1", "text": "I finally finished my first marathon in Lisbon!"},
      {"speaker": "Tom", "dia_id": "D1:2", "text": "Congratulations! How long did it take?"},
      {"speaker": "Mia", "dia_id": "D1:3", "text": "Four hours and twelve minutes."}
    ],
    "session_2_date_time": "6:40 pm on 20 June, 2023",
    "session_2": [
      {"speaker": "Tom", "dia_id": "D2:1", "text": "My sister moved to Denver for a nursing job."},
      {"speaker": "Mia", "dia_id": "D2:2", "text": "Denver is lovely in the summer."}
    ],
    "session_3_date_time": "8:05 am on 2 July, 2023",
    "session_3": [
      {"speaker": "Tom", "dia_id": "D3:1", "text": "I repainted the kitchen a pale green."},
      {"speaker": "Mia", "dia_id": "D3:2", "text": "Green suits a kitchen with morning light."},
      {"speaker": "Tom", "dia_id": "D3:3", "text": "The cat hid under the sofa all weekend."},
      {"speaker": "Mia", "dia_id": "D3:4", "text": "Cats hate the smell of fresh paint."},
      {"speaker": "Tom", "dia_id": "D3:5", "text": "We are adopting a second cat in August."},
      {"speaker": "Mia", "dia_id": "D3:6", "text": "Send me pictures when she arrives."}
    ]
  },
  "qa": [
    {"question": "Where did Mia run her first marathon?", "answer": "Lisbon", "evidence": ["D1:1"], "category": 4},
    {"question": "How long did Mia's marathon take?", "answer": "4h12", "evidence": ["D1:03"], "category": 1},
    {"question": "Why did Tom's sister move?", "answer": "a nursing job", "evidence": ["D2:1", "D7:7"], "category": 3}
  ]
}]"#;

#[test]
fn eval_locomo_prints_both_systems_as_json() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let file = dir.path().join("tiny.json");
    std::fs::write(&file, TINY)?;
    let report = json_of(
        dir.path(),
        &[
            "eval",
            "locomo",
            &file.display().to_string(),
            "--k",
            "1,5",
            "--json",
        ],
    )?;
    assert_eq!(report["questions"], 3);
    assert_eq!(report["dropped_evidence"], 1);
    for system in ["cairn", "bm25"] {
        for group in ["overall", "multi_hop", "open_domain", "single_hop"] {
            let value = &report["systems"][system][group]["turn_recall@5"];
            assert!(value.is_number(), "{system}/{group}: {value}");
        }
    }
    // The answer turn never names the marathon; its neighbour does.
    assert_eq!(
        report["systems"]["cairn"]["multi_hop"]["turn_recall@5"],
        100.0
    );
    assert_eq!(
        report["systems"]["cairn"]["overall"]["turn_recall@5"],
        100.0
    );
    Ok(())
}

#[test]
fn eval_locomo_reports_a_bad_file_plainly() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let file = dir.path().join("broken.json");
    std::fs::write(&file, "[{\"sample_id\": ")?;
    let output = cairn(dir.path(), &["eval", "locomo", &file.display().to_string()])?;
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("is not a LoCoMo file"));
    Ok(())
}

/// Runs `cairn ARGS` in `home`, which must succeed, and reads its `--json` answer.
fn json_of(home: &Path, args: &[&str]) -> Result<serde_json::Value, Box<dyn std::error::Error>> {
    let output = cairn(home, args)?;
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    Ok(serde_json::from_str(&stdout(&output))?)
}

/// A development set beside the project (`../shared/eval/RELATIVE`, or under `CAIRN_EVAL_DIR`);
/// `None`, said on stderr, when this checkout does not have it.
fn dev_set(relative: &str) -> Option<std::path::PathBuf> {
    let file = std::env::var_os("CAIRN_EVAL_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/eval"))
        .join(relative);
    if file.exists() {
        Some(file)
    } else {
        eprintln!("skipped: {} is not beside this checkout", file.display());
        None
    }
}

/// The development set shipped beside the project (`../shared/eval`), when this checkout has it:
/// Cairn's recall must beat plain BM25 by 10 points of turn recall@10 overall, and on multi-hop.
#[test]
fn on_the_locomo_dev_set_cairn_beats_bm25() -> Result<(), Box<dyn std::error::Error>> {
    let Some(file) = dev_set("locomo-dev/locomo-dev.json") else {
        return Ok(());
    };
    let dir = tempfile::tempdir()?;
    let report = json_of(
        dir.path(),
        &["eval", "locomo", &file.display().to_string(), "--json"],
    )?;
    let recall = |system: &str, group: &str| {
        report["systems"][system][group]["turn_recall@10"]
            .as_f64()
            .unwrap_or(0.0)
    };
    assert!(
        recall("cairn", "overall") >= recall("bm25", "overall") + 10.0,
        "{report}"
    );
    assert!(
        recall("cairn", "multi_hop") > recall("bm25", "multi_hop"),
        "{report}"
    );
    Ok(())
}

/// The knowledge-update development set, when this checkout has it beside it: what holds now is
/// read first (latest@1 ≥ 90 %, a stale statement above it in the top 5 for ≤ 5 % of questions),
/// and what held before a change is found (recall@5 ≥ 80 %).
#[test]
fn on_the_knowledge_update_dev_set_cairn_reads_the_current_value_first(
) -> Result<(), Box<dyn std::error::Error>> {
    let Some(file) = dev_set("knowledge-update/ku-dev.json") else {
        return Ok(());
    };
    // Measured as a user runs it: with the embedding model setup installs.
    let Some(dir) = crate::home_with_model("all-MiniLM-L6-v2/model.safetensors")? else {
        return Ok(());
    };
    let report = json_of(
        dir.path(),
        &[
            "eval",
            "knowledge-update",
            &file.display().to_string(),
            "--json",
        ],
    )?;
    let score = |category: &str, metric: &str| {
        report["systems"]["cairn"][category][metric]
            .as_f64()
            .unwrap_or(f64::NAN)
    };
    assert!(score("current_value", "latest@1") >= 90.0, "{report}");
    assert!(
        score("current_value", "superseded_above_latest@5") <= 5.0,
        "{report}"
    );
    assert!(score("past_value", "latest_recall@5") >= 80.0, "{report}");
    Ok(())
}

#[test]
fn bench_recall_prints_its_figures() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let report = json_of(
        dir.path(),
        &[
            "bench",
            "recall",
            "--memories",
            "300",
            "--queries",
            "20",
            "--json",
        ],
    )?;
    assert_eq!(report["memories"], 300);
    assert!(report["ingest_per_s"].as_f64().unwrap_or(0.0) > 0.0);
    let search = &report["search_ms"];
    let (p50, p95, p99) = (
        search["p50"].as_f64(),
        search["p95"].as_f64(),
        search["p99"].as_f64(),
    );
    assert!(
        matches!((p50, p95, p99), (Some(a), Some(b), Some(c)) if a <= b && b <= c),
        "{report}"
    );
    Ok(())
}

/// A fact stated, then updated; the stale statement shares more of the question's words.
const CHANGING: &str = r#"[{
  "sample_id": "ku",
  "conversation": {
    "speaker_a": "Ana", "speaker_b": "Ben",
    "session_1_date_time": "10:00 am on 2 March, 2023",
    "session_1": [
      {"speaker": "Ana", "dia_id": "D1:1", "text": "Our team keeps its tickets in Jira."},
      {"speaker": "Ben", "dia_id": "D1:2", "text": "I went hiking in the hills on Sunday."},
      {"speaker": "Ana", "dia_id": "D1:3", "text": "I baked bread with my niece this weekend."},
      {"speaker": "Ben", "dia_id": "D1:4", "text": "My garden finally has tomatoes."}
    ],
    "session_2_date_time": "4:00 pm on 9 May, 2023",
    "session_2": [
      {"speaker": "Ana", "dia_id": "D2:1", "text": "We moved our team's tickets from Jira to Linear."},
      {"speaker": "Ben", "dia_id": "D2:2", "text": "My sister bought a red bicycle."}
    ]
  },
  "qa": [
    {"question": "Where does Ana's team keep its tickets now?", "answer": "Linear", "category": 6,
     "evidence": ["D2:1"], "evidence_other": ["D1:1"], "evidence_distractor": []},
    {"question": "Where did Ana's team keep tickets before Linear?", "answer": "Jira", "category": 7,
     "evidence": ["D1:1"], "evidence_other": ["D2:1"], "evidence_distractor": []}
  ]
}]"#;

#[test]
fn eval_knowledge_update_scores_both_categories_and_writes_the_run(
) -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let file = dir.path().join("ku.json");
    let run = dir.path().join("run.json");
    std::fs::write(&file, CHANGING)?;
    let report = json_of(
        dir.path(),
        &[
            "eval",
            "knowledge-update",
            &file.display().to_string(),
            "--json",
            "--run",
            &run.display().to_string(),
        ],
    )?;
    assert_eq!(report["questions"], 2);
    let cairn_scores = &report["systems"]["cairn"];
    assert_eq!(cairn_scores["current_value"]["latest@1"], 100.0, "{report}");
    assert_eq!(
        cairn_scores["current_value"]["superseded_above_latest@5"],
        0.0
    );
    assert_eq!(cairn_scores["past_value"]["latest_recall@5"], 100.0);
    assert_eq!(
        report["systems"]["bm25"]["current_value"]["latest@1"], 0.0,
        "the baseline reads the stale statement first"
    );
    let ranking: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&run)?)?;
    assert_eq!(ranking["ku#0"][0], "D2:1");

    let table = cairn(
        dir.path(),
        &["eval", "knowledge-update", &file.display().to_string()],
    )?;
    let text = stdout(&table);
    assert!(text.contains("latest@1"), "{text}");
    assert!(text.contains("current_value"), "{text}");

    let broken = dir.path().join("broken.json");
    std::fs::write(&broken, "{\"not\": \"a list\"}")?;
    let output = cairn(
        dir.path(),
        &["eval", "knowledge-update", &broken.display().to_string()],
    )?;
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("is not a knowledge-update file"));
    Ok(())
}

//! Turn capture through turn.start / turn.complete.

use cairn_memory::{CaptureOutcome, MemoryStore, SearchQuery, ToolCall, TurnCompletion, TurnStart};

use crate::TestResult;

fn start(session: &str, request: &str, at: i64) -> TurnStart {
    TurnStart {
        session: session.into(),
        request: request.into(),
        source: Some("claude-code".into()),
        idempotency_key: None,
        started_at: Some(at),
        workspace: None,
    }
}

#[test]
fn a_turn_becomes_one_trace_with_tools_paired() -> TestResult {
    let store = MemoryStore::open_in_memory()?;
    let turn = store.start_turn(start("s1", "why is CI red?", 1_000))?;
    let outcome = store.complete_turn(
        turn,
        TurnCompletion {
            answer: "The linter failed on an unused import.".into(),
            tool_calls: vec![ToolCall {
                id: "call_1".into(),
                name: "bash".into(),
                input: serde_json::json!({ "command": "cargo clippy" }),
                output: Some("warning: unused import `foo`".into()),
                is_error: false,
            }],
            reasoning: Some("check the CI log first".into()),
            ..TurnCompletion::default()
        },
    )?;
    let CaptureOutcome::Captured { memory_id } = outcome else {
        return Err(format!("unexpected {outcome:?}").into());
    };
    let memory = store.get(memory_id)?.ok_or("missing")?;
    assert_eq!(memory.source, "claude-code");
    assert_eq!(memory.session.as_deref(), Some("s1"));
    assert!(memory.text.starts_with("User: why is CI red?"));
    assert!(memory
        .text
        .contains("Tool bash({\"command\":\"cargo clippy\"}) → warning: unused import `foo`"));
    assert!(memory
        .text
        .ends_with("Assistant: The linter failed on an unused import."));
    assert_eq!(memory.metadata["tools"][0], "bash");
    // Completing again changes nothing.
    assert_eq!(
        store.complete_turn(turn, TurnCompletion::default())?,
        CaptureOutcome::AlreadyCaptured { memory_id }
    );
    let hits = store
        .search(&SearchQuery::new("unused import linter"))?
        .hits;
    assert_eq!(hits.first().map(|h| h.memory.id), Some(memory_id));
    Ok(())
}

#[test]
fn the_same_idempotency_key_is_the_same_turn() -> TestResult {
    let store = MemoryStore::open_in_memory()?;
    let mut s = start("s", "hello", 1);
    s.idempotency_key = Some("k1".into());
    let a = store.start_turn(s.clone())?;
    let b = store.start_turn(s)?;
    assert_eq!(a, b);
    assert_eq!(store.overview()?.turns, 1);
    Ok(())
}

#[test]
fn follow_ups_within_two_hours_share_an_episode() -> TestResult {
    let store = MemoryStore::open_in_memory()?;
    let hour = 3_600_000;
    let mut episodes = Vec::new();
    for (request, at) in [("one", 0), ("two", hour), ("three", 4 * hour)] {
        let turn = store.start_turn(start("s", request, at))?;
        let CaptureOutcome::Captured { memory_id } = store.complete_turn(
            turn,
            TurnCompletion {
                answer: "ok".into(),
                ..TurnCompletion::default()
            },
        )?
        else {
            return Err("not captured".into());
        };
        episodes.push(
            store
                .get(memory_id)?
                .and_then(|m| m.episode_id)
                .ok_or("no episode")?,
        );
    }
    assert_eq!(episodes[0], episodes[1]);
    assert_ne!(episodes[1], episodes[2]);
    Ok(())
}

#[test]
fn caps_apply_to_the_trace_and_huge_turns_are_skipped() -> TestResult {
    let store = MemoryStore::open_in_memory()?;
    let turn = store.start_turn(start("s", &"q".repeat(5_000), 0))?;
    let CaptureOutcome::Captured { memory_id } = store.complete_turn(
        turn,
        TurnCompletion {
            answer: "a".repeat(9_000),
            tool_calls: vec![ToolCall {
                id: "1".into(),
                name: "read_file".into(),
                input: serde_json::json!({}),
                output: Some("o".repeat(3_000)),
                is_error: false,
            }],
            ..TurnCompletion::default()
        },
    )?
    else {
        return Err("not captured".into());
    };
    let text = store.get(memory_id)?.ok_or("missing")?.text;
    assert!(text.contains(&format!("User: {}…", "q".repeat(3_999))));
    assert!(text.contains(&format!("→ {}…", "o".repeat(1_999))));
    assert!(!text.contains(&"a".repeat(4_000)));

    let big = store.start_turn(start("s", "dump the log", 10))?;
    let outcome = store.complete_turn(
        big,
        TurnCompletion {
            answer: "x".repeat(3 * 1024 * 1024),
            ..TurnCompletion::default()
        },
    )?;
    assert!(matches!(outcome, CaptureOutcome::Skipped { bytes } if bytes > 2 * 1024 * 1024));
    assert_eq!(store.overview()?.skipped_turns, 1);
    assert_eq!(store.overview()?.total, 1);
    Ok(())
}

#[test]
fn completing_an_unknown_turn_is_not_found() -> TestResult {
    let store = MemoryStore::open_in_memory()?;
    let err = store
        .complete_turn(42, TurnCompletion::default())
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert_eq!(err, "turn 42 not found");
    Ok(())
}

#[test]
fn turns_of_one_episode_are_recalled_as_one_rollup() -> TestResult {
    let store = MemoryStore::open_in_memory()?;
    let minute = 60_000;
    for (i, (request, answer)) in [
        ("the deploy to staging fails", "Checking the deploy logs."),
        (
            "what do the deploy logs say?",
            "The deploy health check times out.",
        ),
        (
            "fix the deploy health check",
            "Raised the deploy health check timeout to 30 s.",
        ),
    ]
    .iter()
    .enumerate()
    {
        let turn = store.start_turn(start("ops", request, i as i64 * minute))?;
        store.complete_turn(
            turn,
            TurnCompletion {
                answer: (*answer).into(),
                ..TurnCompletion::default()
            },
        )?;
    }
    let turn = store.start_turn(start("other", "plan the team offsite", 0))?;
    store.complete_turn(
        turn,
        TurnCompletion {
            answer: "Booked a deploy-free week.".into(),
            ..TurnCompletion::default()
        },
    )?;

    let mut query = SearchQuery::new("why did the deploy health check fail");
    query.verbose = true;
    let result = store.search(&query)?;
    let rollups: Vec<_> = result
        .hits
        .iter()
        .filter(|h| h.memory.metadata.get("rollup_of").is_some())
        .collect();
    assert_eq!(rollups.len(), 1, "{:?}", result.hits);
    let rollup = rollups[0];
    assert_eq!(
        rollup.memory.metadata["rollup_of"].as_array().map(Vec::len),
        Some(3)
    );
    let text = &rollup.memory.text;
    let first = text
        .find("the deploy to staging fails")
        .ok_or("step 1 missing")?;
    let last = text
        .find("Raised the deploy health check timeout")
        .ok_or("step 3 missing")?;
    assert!(first < last, "steps in order: {text}");
    assert!(
        rollup.reason.starts_with("kept: episode rollup of 3 steps"),
        "{}",
        rollup.reason
    );
    assert!(result.dropped.iter().any(|h| h
        .reason
        .starts_with("dropped: covered by the episode rollup")));
    assert_eq!(
        result
            .hits
            .iter()
            .filter(|h| h.memory.session.as_deref() == Some("ops"))
            .count(),
        1
    );
    Ok(())
}

struct FixedSummary(Result<String, String>);

impl cairn_memory::Writer for FixedSummary {
    fn write(
        &self,
        _instructions: &str,
        _text: &str,
        _max: u32,
    ) -> Result<String, cairn_memory::MemoryError> {
        self.0
            .clone()
            .map_err(cairn_memory::MemoryError::ModelFailed)
    }
}

const SUMMARIES: cairn_memory::WriterUses = cairn_memory::WriterUses {
    summaries: true,
    policies: false,
};

#[test]
fn summaries_start_heuristic_and_the_summary_model_rewrites_them() -> TestResult {
    let store = MemoryStore::open_in_memory()?;
    let turn = store.start_turn(start("s", "Why is CI red? It was green yesterday.", 0))?;
    let CaptureOutcome::Captured { memory_id } = store.complete_turn(
        turn,
        TurnCompletion {
            answer: "The linter failed on an unused import. I removed it.".into(),
            ..TurnCompletion::default()
        },
    )?
    else {
        return Err("not captured".into());
    };
    let memory = store.get(memory_id)?.ok_or("missing")?;
    assert_eq!(
        memory.summary,
        "User: Why is CI red? Assistant: The linter failed on an unused import."
    );
    assert_eq!(memory.summary_source.as_str(), "heuristic");

    store.set_writer(
        std::sync::Arc::new(FixedSummary(Err("model down".into()))),
        SUMMARIES,
    );
    let err = store
        .summarize_pending(4)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(err.contains("model down"), "{err}");
    assert_eq!(
        store.get(memory_id)?.map(|m| m.summary_source.as_str()),
        Some("heuristic"),
        "a failure changes nothing"
    );

    store.set_writer(
        std::sync::Arc::new(FixedSummary(Ok(
            "CI failed on an unused import; removed it.".into(),
        ))),
        SUMMARIES,
    );
    assert_eq!(store.summarize_pending(4)?, 1);
    let memory = store.get(memory_id)?.ok_or("missing")?;
    assert_eq!(memory.summary, "CI failed on an unused import; removed it.");
    assert_eq!(memory.summary_source.as_str(), "model");
    assert_eq!(store.summarize_pending(4)?, 0, "nothing left to rewrite");
    Ok(())
}

/// The turns of one imported conversation; the third has no request and cannot be imported.
fn conversation() -> Vec<cairn_memory::ImportTurn> {
    let words = [
        ("the staging deploy hangs", "the migration lock is held"),
        ("who holds the lock", "a stuck reindex job"),
        ("", "an empty request"),
        ("kill the reindex", "killed; the deploy went through"),
        ("write it down", "noted in the runbook under staging"),
    ];
    words
        .iter()
        .enumerate()
        .map(|(i, (request, answer))| cairn_memory::ImportTurn {
            key: format!("claude-code:c1:{i}"),
            start: start("claude-code:c1", request, 1_000 + i as i64 * 1_000),
            done: TurnCompletion {
                answer: (*answer).into(),
                ..TurnCompletion::default()
            },
        })
        .collect()
}

/// One query's hits: memory ids with their scores.
type Ranked = Vec<(i64, String)>;

/// What recall finds for each word of the conversation.
fn recalled(store: &MemoryStore) -> Result<Vec<Ranked>, Box<dyn std::error::Error>> {
    let mut all = Vec::new();
    for query in [
        "staging",
        "lock",
        "reindex",
        "runbook",
        "deploy",
        "migration",
    ] {
        let result = store.search(&SearchQuery::new(query))?;
        all.push(
            result
                .hits
                .iter()
                .chain(&result.dropped)
                .map(|h| (h.memory.id, format!("{:.6}", h.score)))
                .collect(),
        );
    }
    Ok(all)
}

#[test]
fn a_conversation_imported_in_one_batch_is_stored_as_turn_by_turn() -> TestResult {
    let one_by_one = MemoryStore::open_in_memory()?;
    let mut outcomes = Vec::new();
    for turn in conversation() {
        outcomes.push(one_by_one.import_turn(turn).map_err(|e| e.to_string()));
    }
    let batched = MemoryStore::open_in_memory()?;
    let batch: Vec<_> = batched
        .import_turns(conversation())?
        .into_iter()
        .map(|o| o.map_err(|e| e.to_string()))
        .collect();
    assert_eq!(batch, outcomes);
    assert_eq!(batch.iter().filter(|o| o.is_ok()).count(), 4);
    assert!(
        batch[2].as_ref().is_err_and(|e| e.contains("request")),
        "{batch:?}"
    );
    // The same memories, with the same neighbourhood indexed: every query ranks alike.
    for id in 1..=4 {
        assert_eq!(
            batched.get(id)?.map(|m| m.text),
            one_by_one.get(id)?.map(|m| m.text)
        );
    }
    let found = recalled(&batched)?;
    assert_eq!(found, recalled(&one_by_one)?);
    assert!(found.iter().all(|hits| !hits.is_empty()), "{found:?}");

    // Importing the conversation again adds nothing.
    let again = batched.import_turns(conversation())?;
    assert!(again
        .iter()
        .filter_map(|o| o.as_ref().ok())
        .all(|o| *o == cairn_memory::ImportOutcome::Existing));
    assert_eq!(batched.overview()?.total, 4);
    Ok(())
}

#[test]
fn an_import_completes_the_turn_a_hook_started_and_a_rescan_adds_nothing() -> TestResult {
    let dir = tempfile::tempdir()?;
    let store = MemoryStore::open(&dir.path().join("memory.sqlite"))?;
    // A hook saw the first turn start, with the request worded as the agent sent it.
    let mut hooked = start(
        "claude-code:c1",
        "the staging deploy hangs, says the hook",
        1_000,
    );
    hooked.idempotency_key = Some("claude-code:c1:0".into());
    store.start_turn(hooked)?;
    let outcomes = store.import_turns(conversation())?;
    assert_eq!(outcomes.iter().filter(|o| o.is_ok()).count(), 4);
    let first = store.search(&SearchQuery::new("hook"))?;
    let text = first.hits.first().map(|h| h.memory.text.as_str());
    assert!(
        text.is_some_and(|t| t.starts_with(
            "User: the staging deploy hangs, says the hook\nAssistant: the migration lock is held"
        )),
        "the trace is the started turn's, completed by the import: {text:?}"
    );
    // A rescan of a file store reads what it holds beside the writer, and adds nothing.
    let again = store.import_turns(conversation())?;
    assert_eq!(
        again
            .iter()
            .filter(|o| matches!(o, Ok(cairn_memory::ImportOutcome::Existing)))
            .count(),
        4
    );
    assert_eq!(store.overview()?.total, 4);
    Ok(())
}

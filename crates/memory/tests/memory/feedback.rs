//! Feedback: ratings by the person and implicit ones become an episode's reward, spread over its
//! steps; recall lifts what worked; bad feedback is refused and stores nothing.

use cairn_memory::{
    FeedbackRequest, MemoryError, MemoryStore, Rating, SearchQuery, ToolCall, TurnCompletion,
    TurnStart,
};

use crate::TestResult;

const START: i64 = 1_700_000_000_000;
const MINUTE: i64 = 60_000;

fn turn(
    store: &MemoryStore,
    session: &str,
    minute: i64,
    request: &str,
    answer: &str,
    failing_tools: usize,
) -> Result<(i64, i64), Box<dyn std::error::Error>> {
    let turn_id = store.start_turn(TurnStart {
        session: session.into(),
        request: request.into(),
        source: None,
        idempotency_key: None,
        started_at: Some(START + minute * MINUTE),
        workspace: None,
    })?;
    let tool_calls = (0..failing_tools)
        .map(|i| ToolCall {
            id: format!("c{i}"),
            name: "bash".into(),
            input: serde_json::json!({ "command": "make" }),
            output: Some("make: *** [all] Error 2".into()),
            is_error: true,
        })
        .collect();
    let outcome = store.complete_turn(
        turn_id,
        TurnCompletion {
            answer: answer.into(),
            tool_calls,
            ..TurnCompletion::default()
        },
    )?;
    let memory_id = match outcome {
        cairn_memory::CaptureOutcome::Captured { memory_id } => memory_id,
        other => return Err(format!("not captured: {other:?}").into()),
    };
    Ok((turn_id, memory_id))
}

fn rate(id: i64, rating: Rating) -> FeedbackRequest {
    FeedbackRequest {
        memory_id: Some(id),
        turn_id: None,
        rating,
        note: None,
    }
}

#[test]
fn a_rating_becomes_the_episodes_reward_spread_over_its_steps() -> TestResult {
    let store = MemoryStore::open_in_memory()?.with_clock(|| START + 100 * MINUTE);
    let (_, first) = turn(
        &store,
        "s",
        0,
        "the deploy script fails",
        "Check the env file.",
        0,
    )?;
    let (second_turn, second) = turn(
        &store,
        "s",
        5,
        "still no luck",
        "Quote the path in line 12.",
        0,
    )?;
    let reward = store.give_feedback(&FeedbackRequest {
        memory_id: None,
        turn_id: Some(second_turn),
        rating: Rating::Up,
        note: Some("that was it".into()),
    })?;
    assert_eq!(reward.memory_id, second);
    assert_eq!(reward.reward, 1.0);
    assert_eq!(reward.steps, vec![(first, 0.8), (second, 1.0)]);
    let stored = store.get(first)?.ok_or("memory")?;
    assert_eq!(stored.metadata["value"], 0.8);
    assert_eq!(stored.metadata["reward"], 1.0);

    // A change of mind replaces the person's earlier rating of the same reply; the log keeps both.
    let reward = store.give_feedback(&rate(second, Rating::Down))?;
    assert_eq!(reward.reward, -1.0);
    assert_eq!(reward.ratings, 1);
    assert_eq!(store.feedback_of(second)?.len(), 2);
    assert_eq!(
        store.feedback_of(second)?[1].note.as_deref(),
        Some("that was it")
    );
    Ok(())
}

#[test]
fn the_next_message_and_failing_tools_rate_implicitly() -> TestResult {
    let store = MemoryStore::open_in_memory()?.with_clock(|| START + 100 * MINUTE);
    let (_, fixed) = turn(
        &store,
        "a",
        0,
        "the build breaks on CI",
        "Pin the toolchain.",
        0,
    )?;
    turn(&store, "a", 3, "Thanks, that worked!", "Glad it did.", 0)?;
    let stored = store.get(fixed)?.ok_or("memory")?;
    assert_eq!(stored.metadata["reward"], 0.5, "{stored:?}");
    assert_eq!(store.feedback_of(fixed)?[0].origin, "next_message");

    let (_, flailing) = turn(
        &store,
        "b",
        0,
        "compile the C library",
        "It does not build.",
        3,
    )?;
    assert_eq!(store.feedback_of(flailing)?[0].origin, "tool_failures");
    assert!(store.get(flailing)?.ok_or("memory")?.metadata["reward"].as_f64() < Some(0.0));

    // The person's own rating outweighs an implicit one on the same reply.
    let reward = store.give_feedback(&rate(flailing, Rating::Up))?;
    assert_eq!(reward.reward, 1.0);
    Ok(())
}

#[test]
fn recall_lifts_what_worked_among_equals() -> TestResult {
    let store = MemoryStore::open_in_memory()?.with_clock(|| START + 100 * MINUTE);
    let (_, worked) = turn(
        &store,
        "x",
        0,
        "how do I rotate the nginx logs",
        "Use logrotate with a daily rule.",
        0,
    )?;
    let (_, failed) = turn(
        &store,
        "y",
        0,
        "how do I rotate the nginx logs",
        "Use logrotate with a weekly rule.",
        0,
    )?;
    store.give_feedback(&rate(worked, Rating::Up))?;
    store.give_feedback(&rate(failed, Rating::Down))?;
    let hits = store.search(&SearchQuery::new("rotate nginx logs"))?.hits;
    assert_eq!(hits.first().map(|h| h.memory.id), Some(worked));
    Ok(())
}

#[test]
fn bad_feedback_is_refused_and_stores_nothing() -> TestResult {
    let store = MemoryStore::open_in_memory()?;
    let (_, id) = turn(&store, "s", 0, "hello", "hi", 0)?;
    let before = store.change_count()?;
    assert!(matches!(
        store.give_feedback(&rate(id + 100, Rating::Up)),
        Err(MemoryError::NotFound(_))
    ));
    store.delete(id)?;
    let after_delete = store.change_count()?;
    assert!(matches!(
        store.give_feedback(&rate(id, Rating::Up)),
        Err(MemoryError::NotFound(_))
    ));
    assert!(matches!(
        store.give_feedback(&FeedbackRequest {
            memory_id: None,
            turn_id: None,
            rating: Rating::Down,
            note: None
        }),
        Err(MemoryError::Invalid(_))
    ));
    assert_eq!(store.change_count()?, after_delete);
    assert_eq!(after_delete, before + 1);
    assert!(store.feedback_of(id)?.is_empty());
    Ok(())
}

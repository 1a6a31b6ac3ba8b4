//! Honest endings: an answer given over a failed tool call is not taken as done — the model hears
//! the failure once more, and an answer still given over it says what did not work.

use cairn_agent::{Event, Runtime};
use cairn_test_support::{text_reply, tool_call_reply, MockServer};
use cairn_tools::ToolboxOptions;
use serde_json::json;
use tempfile::TempDir;

use crate::support::{run, Setup};

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// The last message of request `n` (what the model was told last).
fn last_message(server: &MockServer, n: usize) -> String {
    server.requests()[n]["messages"]
        .as_array()
        .and_then(|m| m.last())
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_owned()
}

fn the_edit(old: &str) -> serde_json::Value {
    json!({"path": "app.py", "edits": [{"old": old, "new": "limit = 20"}]})
}

#[tokio::test]
async fn a_claim_over_a_failed_edit_is_retold_then_marked_unresolved() -> TestResult {
    let dir = TempDir::new()?;
    std::fs::write(dir.path().join("app.py"), "limit = 10\n")?;
    let server = MockServer::start(vec![
        tool_call_reply("c1", "edit_file", the_edit("limit = 5")),
        text_reply("I replaced the limit with 20."),
        text_reply("Done: the limit is 20 now."),
    ])
    .await?;
    let settings = Setup::new(&server, dir.path())
        .tools(ToolboxOptions::default())
        .settings();
    let events = run(&Runtime::new(settings, None), "s", "Set the limit to 20").await;

    // The model was told its edit failed, with what to do, after its first claim.
    let told = last_message(&server, 2);
    assert!(
        told.starts_with("Your last tool call (edit_file) failed"),
        "{told}"
    );
    assert!(told.contains("read it and copy the exact text"), "{told}");
    assert!(events.iter().any(|e| matches!(
        e,
        Event::Nudged { reason } if reason == "written over a failed tool call"
    )));
    // Still no edit: the answer carries the line that says so, and the turn is unresolved.
    let Some(Event::TurnComplete {
        answer, unresolved, ..
    }) = events.last()
    else {
        panic!("the turn completes: {events:?}");
    };
    let line = unresolved.as_deref().ok_or("the turn is unresolved")?;
    assert!(
        line.starts_with("⚠ Unresolved: the last edit_file call failed"),
        "{line}"
    );
    assert!(answer.starts_with("Done: the limit is 20 now.") && answer.ends_with(line));
    assert!(events
        .iter()
        .any(|e| matches!(e, Event::Text(t) if t.trim() == line)));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("app.py"))?,
        "limit = 10\n"
    );
    assert_eq!(server.requests().len(), 3, "told once, not again");
    Ok(())
}

#[tokio::test]
async fn an_edit_retried_after_the_failure_is_retold_ends_done() -> TestResult {
    let dir = TempDir::new()?;
    std::fs::write(dir.path().join("app.py"), "limit = 10\n")?;
    let server = MockServer::start(vec![
        tool_call_reply("c1", "edit_file", the_edit("limit = 5")),
        text_reply("I replaced the limit with 20."),
        tool_call_reply("c2", "read_file", json!({"path": "app.py"})),
        tool_call_reply("c3", "edit_file", the_edit("limit = 10")),
        text_reply("The limit is 20 now."),
    ])
    .await?;
    let settings = Setup::new(&server, dir.path())
        .tools(ToolboxOptions::default())
        .settings();
    let events = run(&Runtime::new(settings, None), "s", "Set the limit to 20").await;
    assert!(
        matches!(events.last(), Some(Event::TurnComplete { answer, unresolved: None, .. }) if answer == "The limit is 20 now."),
        "{events:?}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("app.py"))?,
        "limit = 20\n"
    );
    Ok(())
}

#[tokio::test]
async fn a_turn_whose_calls_succeeded_is_not_asked_again() -> TestResult {
    let dir = TempDir::new()?;
    let server = MockServer::start(vec![
        tool_call_reply("c1", "bash", json!({"command": "echo 437"})),
        text_reply("It printed 437."),
    ])
    .await?;
    let settings = Setup::new(&server, dir.path())
        .tools(ToolboxOptions::default())
        .settings();
    let events = run(&Runtime::new(settings, None), "s", "Run echo 437").await;
    assert!(!events.iter().any(|e| matches!(e, Event::Nudged { .. })));
    assert!(matches!(
        events.last(),
        Some(Event::TurnComplete {
            unresolved: None,
            ..
        })
    ));
    assert_eq!(server.requests().len(), 2);
    Ok(())
}

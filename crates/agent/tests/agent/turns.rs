//! Turns: streaming, recall before the request, capture after, nudges, the step backstop.

use std::path::PathBuf;
use std::sync::Arc;

use cairn_agent::{
    AgentSettings, Event, Op, Runtime, CUT_OFF_ERROR, EMPTY_ERROR, NUDGE_CUT_OFF, NUDGE_EMPTY,
    NUDGE_THINKING_ONLY,
};
use cairn_llm::OpenAiCompatible;
use cairn_memory::{MemoryStore, NewMemory, SearchQuery};
use cairn_test_support::{delta, finish, text_reply, MockServer, Reply};
use serde_json::json;

use crate::support::{run, Setup};

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// The turn tests' agent: started in a folder of its project.
fn settings(server: &MockServer) -> AgentSettings {
    Setup::new(server, "/home/ada/src/garden")
        .started_in("/home/ada/src/garden/app")
        .settings()
}

#[tokio::test]
async fn a_turn_streams_text_then_completes() -> TestResult {
    let server = MockServer::start(vec![Reply::sse(&[
        delta(json!({ "reasoning_content": "short answer" })),
        delta(json!({ "content": "Hello" })),
        delta(json!({ "content": ", Ada." })),
        finish("stop"),
    ])])
    .await?;
    let runtime = Runtime::new(settings(&server), None);
    let events = run(&runtime, "s1", "Say hello").await;
    assert_eq!(events[0], Event::Reasoning("short answer".into()));
    assert_eq!(events[1], Event::Text("Hello".into()));
    assert_eq!(events[2], Event::Text(", Ada.".into()));
    assert!(
        matches!(&events[3], Event::TurnComplete { answer, steps: 1, .. } if answer == "Hello, Ada.")
    );

    let request = &server.requests()[0];
    // Each step says how long its reply may be: llama.cpp and Ollama set no limit of their own.
    assert_eq!(request["max_tokens"], 8192);
    let system = request["messages"][0]["content"]
        .as_str()
        .unwrap_or_default();
    assert!(
        system.contains("Project: garden (paths are relative to its root)"),
        "{system}"
    );
    assert!(
        system.contains("Started in: app (relative to the project root)"),
        "{system}"
    );
    assert!(
        !system.contains("/home/ada"),
        "no absolute path reaches the model"
    );
    assert_eq!(
        request["messages"][1]["content"],
        "Say hello\n\nToday is 2026-11-29."
    );
    Ok(())
}

#[tokio::test]
async fn the_session_remembers_earlier_turns() -> TestResult {
    let server = MockServer::start(vec![text_reply("Noted."), text_reply("You said 7.")]).await?;
    let runtime = Runtime::new(settings(&server), None);
    run(&runtime, "s", "My number is 7").await;
    run(&runtime, "s", "What was my number?").await;
    let second = &server.requests()[1]["messages"];
    assert_eq!(second.as_array().map(Vec::len), Some(4));
    assert_eq!(
        second[2],
        json!({ "role": "assistant", "content": "Noted." })
    );
    Ok(())
}

/// A memory holding one earlier conversation's fact: the migration's night window.
fn night_window_memory() -> Result<Arc<MemoryStore>, Box<dyn std::error::Error>> {
    let memory = Arc::new(MemoryStore::open_in_memory()?);
    memory.add(NewMemory {
        text: "The database migration ran in the night window at 02:00 to avoid load".into(),
        session: Some("old".into()),
        ..NewMemory::default()
    })?;
    Ok(memory)
}

#[tokio::test]
async fn memories_are_recalled_before_and_the_turn_captured_after() -> TestResult {
    let server = MockServer::start(vec![text_reply("Use the night window, as before.")]).await?;
    let memory = night_window_memory()?;
    memory.add(NewMemory {
        text: "In this very session: database migration chat".into(),
        session: Some("now".into()),
        ..NewMemory::default()
    })?;
    let runtime = Runtime::new(settings(&server), Some(memory.clone()));
    let events = run(&runtime, "now", "When should the database migration run?").await;
    match &events[0] {
        Event::Recalled { hits: 1, items, .. } => {
            assert!(
                items[0].snippet.contains("night window at 02:00"),
                "{items:?}"
            );
            assert!(!items[0].channels.is_empty(), "{items:?}");
            assert!(!items[0].reason.is_empty(), "{items:?}");
        }
        other => panic!("{other:?}"),
    }

    let sent = server.requests()[0]["messages"][1]["content"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(
        sent.starts_with("When should the database migration run?\n\nToday is 2026-11-29."),
        "{sent}"
    );
    assert!(
        sent.contains("## Recalled from memory (historical context)"),
        "{sent}"
    );
    assert!(sent.contains("night window at 02:00"), "{sent}");
    assert!(
        !sent.contains("In this very session"),
        "the current session is not recalled"
    );

    let hits = memory
        .search(&SearchQuery::new("night window as before"))?
        .hits;
    let captured = hits.iter().find(|h| {
        h.memory
            .text
            .starts_with("User: When should the database migration run?")
    });
    let captured = captured.ok_or("the turn was not captured")?;
    assert!(captured
        .memory
        .text
        .contains("Assistant: Use the night window, as before."));
    assert!(
        !captured.memory.text.contains("Recalled from memory"),
        "only the person's words are captured"
    );
    Ok(())
}

/// When the nudges run out, a reply that still says nothing is an error, not an empty answer.
#[tokio::test]
async fn thinking_only_and_cut_off_replies_are_nudged_at_most_twice() -> TestResult {
    let server = MockServer::start(vec![
        Reply::sse(&[delta(json!({ "reasoning_content": "hmm" })), finish("stop")]),
        Reply::sse(&[
            delta(json!({ "content": "The answer is" })),
            finish("length"),
        ]),
        Reply::sse(&[
            delta(json!({ "reasoning_content": "still thinking" })),
            finish("stop"),
        ]),
    ])
    .await?;
    let runtime = Runtime::new(settings(&server), None);
    let events = run(&runtime, "s", "question").await;
    let nudges: Vec<&Event> = events
        .iter()
        .filter(|e| matches!(e, Event::Nudged { .. }))
        .collect();
    assert_eq!(nudges.len(), 2);
    assert!(
        matches!(events.last(), Some(Event::Error { message, .. }) if message == EMPTY_ERROR),
        "{events:?}"
    );
    assert!(!events
        .iter()
        .any(|e| matches!(e, Event::TurnComplete { .. })));
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    let second = requests[1]["messages"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(
        second.last().map(|m| m["content"].clone()),
        Some(json!(NUDGE_THINKING_ONLY))
    );
    let third = requests[2]["messages"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(third[third.len() - 2]["content"], "The answer is");
    assert_eq!(
        third.last().map(|m| m["content"].clone()),
        Some(json!(NUDGE_CUT_OFF))
    );
    Ok(())
}

#[tokio::test]
async fn past_the_step_backstop_the_model_is_told_to_wrap_up() -> TestResult {
    let server = MockServer::start(vec![
        Reply::sse(&[delta(json!({ "reasoning_content": "a" })), finish("stop")]),
        text_reply("Done: nothing; not done: everything."),
    ])
    .await?;
    let mut settings = settings(&server);
    settings.max_steps = 1;
    settings.max_nudges = 5;
    let runtime = Runtime::new(settings, None);
    let events = run(&runtime, "s", "big task").await;
    assert!(events
        .iter()
        .any(|e| matches!(e, Event::WrappedUp { limit } if limit == "step limit")));
    let last = server.requests()[1]["messages"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(
        last.last().map(|m| m["content"].clone()),
        Some(json!("The step limit for this prompt has been reached and the tools have been withdrawn. Answer now from what you have: what is done, what is not, and what would come next."))
    );
    assert!(
        matches!(events.last(), Some(Event::TurnComplete { answer, .. }) if answer.starts_with("Done:"))
    );
    Ok(())
}

#[tokio::test]
async fn a_dead_model_server_ends_the_turn_with_a_clear_error() -> TestResult {
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let provider = Arc::new(
        OpenAiCompatible::new(format!("http://127.0.0.1:{port}/v1"), None)
            .with_retries(0, std::time::Duration::ZERO),
    );
    let runtime = Runtime::new(AgentSettings::new(provider, "m", PathBuf::from("/p")), None);
    let events = run(&runtime, "s", "hi").await;
    assert!(
        matches!(&events[..], [Event::Error { message, kind: cairn_agent::FailureKind::Connection }] if message.contains("cannot reach the model server")),
        "{events:?}"
    );
    Ok(())
}

#[tokio::test]
async fn a_refused_key_ends_the_turn_as_an_auth_failure_the_front_ends_can_act_on() -> TestResult {
    let server = MockServer::start(vec![Reply::Status {
        status: 401,
        retry_after: None,
        body: r#"{"error": {"message": "Incorrect API key provided"}}"#.into(),
    }])
    .await?;
    let runtime = Runtime::new(Setup::new(&server, "/p").settings(), None);
    let events = run(&runtime, "s", "hi").await;
    assert!(
        matches!(events.last(), Some(Event::Error { message, kind: cairn_agent::FailureKind::Auth }) if message.contains("Incorrect API key provided")),
        "{events:?}"
    );
    Ok(())
}

#[tokio::test]
async fn a_session_survives_a_restart_with_its_errors() -> TestResult {
    let server = MockServer::start(vec![text_reply("Noted: blue."), text_reply("Blue.")]).await?;
    let dir = tempfile::tempdir()?;
    let with_store = |server: &MockServer| {
        let mut s = settings(server);
        s.sessions = Some(cairn_agent::SessionStore::new(dir.path()));
        s
    };
    run(
        &Runtime::new(with_store(&server), None),
        "chat-1",
        "My favourite colour is blue",
    )
    .await;
    // A new runtime, as after a restart, continues the conversation from disk.
    run(
        &Runtime::new(with_store(&server), None),
        "chat-1",
        "What is my favourite colour?",
    )
    .await;
    let second = server.requests()[1]["messages"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(second.len(), 4);
    assert_eq!(second[2]["content"], "Noted: blue.");

    // A failed turn is kept with the session's errors.
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let dead = Arc::new(
        OpenAiCompatible::new(format!("http://127.0.0.1:{port}/v1"), None)
            .with_retries(0, std::time::Duration::ZERO),
    );
    let mut broken = AgentSettings::new(dead, "m", PathBuf::from("/p"));
    broken.sessions = Some(cairn_agent::SessionStore::new(dir.path()));
    run(&Runtime::new(broken, None), "chat-1", "still there?").await;
    let stored = cairn_agent::SessionStore::new(dir.path())
        .load("chat-1")
        .ok_or("the session is not on disk")?;
    assert_eq!(stored.title, "My favourite colour is blue");
    assert_eq!(
        stored.messages.len(),
        6,
        "the failed turn's message is kept"
    );
    assert!(stored.messages[5].content.starts_with("still there?"));
    assert_eq!(stored.errors.len(), 1);
    assert_eq!(stored.errors[0].place, "generation");
    assert!(stored.errors[0]
        .message
        .contains("cannot reach the model server"));
    Ok(())
}

/// The sessions folder cannot be written (here: a file stands where it should be, as a full or
/// read-only disk would refuse): the answer streams, but the turn ends as a storage failure the
/// person sees, not as done, since the task would come back without it.
#[tokio::test]
async fn an_answer_that_cannot_be_saved_ends_the_turn_as_a_storage_failure() -> TestResult {
    let server = MockServer::start(vec![text_reply("Noted: blue.")]).await?;
    let dir = tempfile::tempdir()?;
    let blocked = dir.path().join("sessions");
    std::fs::write(&blocked, "not a folder")?;
    let mut settings = settings(&server);
    settings.sessions = Some(cairn_agent::SessionStore::new(&blocked));
    let events = run(&Runtime::new(settings, None), "chat-1", "My colour is blue").await;
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::Text(t) if t.contains("Noted"))),
        "{events:?}"
    );
    assert!(
        matches!(
            events.last(),
            Some(Event::Error {
                kind: cairn_agent::FailureKind::Storage,
                ..
            })
        ),
        "{events:?}"
    );
    assert!(!events
        .iter()
        .any(|e| matches!(e, Event::TurnComplete { .. })));
    Ok(())
}

/// `/goal`: an active goal rides with every message until its budget pauses it; `/restart` sends
/// the last message again (its images too) with what followed it dropped.
#[tokio::test]
async fn a_goal_is_told_and_restart_runs_the_last_message_again() -> TestResult {
    let server = MockServer::start(vec![
        text_reply("First try."),
        text_reply("Second message."),
        text_reply("Second try."),
    ])
    .await?;
    let dir = tempfile::tempdir()?;
    let store = cairn_agent::SessionStore::new(dir.path());
    let mut settings = settings(&server);
    settings.sessions = Some(store.clone());
    let runtime = Runtime::new(settings, None);

    let image = dir.path().join("plot.png");
    std::fs::write(&image, b"png")?;
    let mut events = runtime.submit(Op::UserMessage {
        session: "g".into(),
        text: "Draft the plan".into(),
        images: vec![cairn_llm::Image {
            media_type: "image/png".into(),
            path: image,
        }],
    });
    while events.recv().await.is_some() {}
    // The goal is set between turns, with a budget of one turn.
    store.update("g", |s| {
        let mut goal = s.goal.take();
        let _ = cairn_agent::GoalCommand::Create("ship v2 by Friday".into()).apply(&mut goal);
        let _ = cairn_agent::GoalCommand::Budget(Some(1)).apply(&mut goal);
        s.goal = goal;
    })?;
    run(&runtime, "g", "What next?").await;
    let told = server.requests()[1]["messages"]
        .as_array()
        .and_then(|m| m.last().cloned())
        .unwrap_or_default();
    let told = told["content"].as_str().unwrap_or_default().to_owned();
    assert!(
        told.starts_with("What next?\n\nToday is 2026-11-29."),
        "{told}"
    );
    assert!(told.contains("standing goal for this task"), "{told}");
    assert!(told.ends_with("ship v2 by Friday"), "{told}");
    let goal = store
        .load("g")
        .and_then(|s| s.goal)
        .ok_or("the goal is stored")?;
    assert!(goal.paused, "a spent budget pauses the goal");

    let mut events = runtime.submit(Op::Restart {
        session: "g".into(),
    });
    let mut last = None;
    while let Some(event) = events.recv().await {
        last = Some(event);
    }
    assert!(
        matches!(last, Some(Event::TurnComplete { ref answer, .. }) if answer == "Second try.")
    );
    let again = &server.requests()[2]["messages"];
    let messages = again.as_array().ok_or("messages")?;
    // System, the first exchange, then "What next?" again; the first answer to it is gone.
    assert_eq!(messages.len(), 4, "{again}");
    let content = messages[3]["content"].as_str().unwrap_or_default();
    assert!(content.starts_with("What next?"), "{content}");
    assert!(
        !content.contains("standing goal"),
        "the paused goal is not told"
    );
    // The first message kept its image.
    assert_eq!(messages[1]["content"][1]["type"], "image_url");
    let stored = store.load("g").ok_or("stored")?;
    assert_eq!(
        stored
            .messages
            .iter()
            .filter(|m| m.content.starts_with("What next?"))
            .count(),
        1
    );
    Ok(())
}

/// An empty reply gets the empty-reply nudge; a reply still cut off when the nudges run out ends
/// the turn with an error, and its fragment is not the answer.
#[tokio::test]
async fn an_empty_reply_is_nudged_as_empty_and_a_fragment_is_never_the_answer() -> TestResult {
    let server = MockServer::start(vec![
        Reply::sse(&[finish("stop")]),
        Reply::sse(&[delta(json!({ "content": "{\"name" })), finish("length")]),
        Reply::sse(&[delta(json!({ "content": "{\"name" })), finish("length")]),
    ])
    .await?;
    let runtime = Runtime::new(settings(&server), None);
    let events = run(&runtime, "s", "question").await;
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    let second = requests[1]["messages"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(
        second.last().map(|m| m["content"].clone()),
        Some(json!(NUDGE_EMPTY))
    );
    assert!(
        matches!(events.last(), Some(Event::Error { message, .. }) if message == CUT_OFF_ERROR),
        "{events:?}"
    );
    assert!(!events
        .iter()
        .any(|e| matches!(e, Event::TurnComplete { .. })));
    Ok(())
}

/// A captured turn keeps what its tools did, but not the `[#0001 …]` ids that name results
/// within one session: read in another session they invited the model to recall them.
#[tokio::test]
async fn captured_traces_keep_tool_results_without_their_session_ids() -> TestResult {
    let server = MockServer::start(vec![
        cairn_test_support::tool_call_reply("c1", "bash", json!({"command": "echo planted-42"})),
        text_reply("The command printed planted-42."),
    ])
    .await?;
    let memory = Arc::new(MemoryStore::open_in_memory()?);
    // The built-in tools, in a folder that exists: the command runs (without them it was an
    // unknown tool, and the answer a claim the honest ending now catches).
    let dir = tempfile::tempdir()?;
    let runtime = Runtime::new(
        Setup::new(&server, dir.path())
            .tools(cairn_tools::ToolboxOptions::default())
            .settings(),
        Some(memory.clone()),
    );
    let events = run(
        &runtime,
        "s",
        "Run echo planted-42 and tell me what it printed",
    )
    .await;
    assert!(
        matches!(events.last(), Some(Event::TurnComplete { .. })),
        "{events:?}"
    );
    // The model itself read the result under its id.
    let tool_message = server.requests()[1]["messages"]
        .as_array()
        .and_then(|m| m.iter().find(|m| m["role"] == "tool").cloned())
        .unwrap_or_default();
    assert!(
        tool_message["content"]
            .as_str()
            .unwrap_or_default()
            .starts_with("[#0001"),
        "{tool_message}"
    );
    let hits = memory.search(&SearchQuery::new("planted-42"))?.hits;
    let captured = hits
        .iter()
        .find(|h| h.memory.text.starts_with("User: Run echo planted-42"))
        .ok_or("the turn was not captured")?;
    assert!(captured.memory.text.contains("planted-42"));
    assert!(
        !captured.memory.text.contains("[#0"),
        "{}",
        captured.memory.text
    );
    Ok(())
}

/// A small model reads the recalled memories first; the session still keeps the person's own
/// words apart, which a reopened task shows (the recall stays with the reply).
#[tokio::test]
async fn a_small_models_recall_first_message_keeps_the_persons_words_apart() -> TestResult {
    let dir = tempfile::tempdir()?;
    let server = MockServer::start(vec![text_reply("At 02:00.")]).await?;
    let memory = night_window_memory()?;
    let mut settings = settings(&server);
    settings.compact = true;
    settings.sessions = Some(cairn_agent::SessionStore::new(dir.path()));
    let runtime = Runtime::new(settings, Some(memory));
    let asked = "When should the database migration run?";
    run(&runtime, "now", asked).await;
    let sent = server.requests()[0]["messages"][1]["content"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(sent.starts_with("## Recalled from memory"), "{sent}");
    assert!(
        !server.requests()[0].to_string().contains("\"words\""),
        "the person's words are not sent apart"
    );
    let stored = cairn_agent::SessionStore::new(dir.path())
        .load("now")
        .ok_or("not stored")?;
    let question = stored
        .messages
        .iter()
        .find(|m| m.role == cairn_llm::Role::User)
        .ok_or("no user message")?;
    assert_eq!(cairn_agent::words_of(question), asked);
    assert_ne!(
        cairn_agent::person_words(&question.content),
        asked,
        "the old cut fails here"
    );
    Ok(())
}

/// Issue 48, finding 13: before the first words the turn says what it waits for, and that the
/// model thinks once its reasoning starts.
#[tokio::test]
async fn a_turn_says_what_it_waits_for_then_that_it_thinks() -> TestResult {
    let server = MockServer::start(vec![Reply::sse(&[
        delta(json!({ "reasoning_content": "hmm" })),
        delta(json!({ "reasoning_content": " yes" })),
        delta(json!({ "content": "Hello" })),
        finish("stop"),
    ])])
    .await?;
    let runtime = Runtime::new(settings(&server), None);
    let mut stream = runtime.submit(cairn_agent::Op::UserMessage {
        session: "s-status".into(),
        text: "Say hello".into(),
        images: Vec::new(),
    });
    let mut events = Vec::new();
    while let Some(event) = stream.recv().await {
        events.push(event);
    }
    let statuses: Vec<&cairn_protocol::TurnStatus> = events
        .iter()
        .filter_map(|e| match e {
            Event::Status(status) => Some(status),
            _ => None,
        })
        .collect();
    assert!(
        matches!(statuses.as_slice(), [cairn_protocol::TurnStatus::Waiting { model }, cairn_protocol::TurnStatus::Thinking] if !model.is_empty()),
        "{events:?}"
    );
    let waiting = events.iter().position(|e| matches!(e, Event::Status(_)));
    let words = events.iter().position(|e| matches!(e, Event::Text(_)));
    assert!(waiting < words, "{events:?}");
    Ok(())
}

//! `task`: a subagent on the same model does part of the work — waited for, or as a background
//! job whose report wakes the session, that job_send tells something while it works. The
//! scripted model answers the subagent's conversation (its prompt says SUBAGENT) on its own.

use std::time::Duration;

use cairn_agent::{Event, Op, Runtime};
use cairn_api::{Cairn, ModelChoice};
use cairn_config::Home;
use cairn_test_support::{text_reply, tool_call_reply, tool_calls_reply, MockServer};
use serde_json::{json, Value};

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// The results of the turn's calls, and what the calls showed while they ran.
async fn turn(runtime: &Runtime, text: &str) -> (Vec<String>, String) {
    let mut events = runtime.submit(Op::UserMessage {
        session: "s".into(),
        text: text.into(),
        images: Vec::new(),
    });
    let (mut results, mut shown) = (Vec::new(), String::new());
    while let Some(event) = events.recv().await {
        match event {
            Event::ToolResult { output, .. } => results.push(output),
            Event::ToolProgress { text, .. } => shown.push_str(&text),
            _ => {}
        }
    }
    (results, shown)
}

/// The requests of the subagent's conversation.
fn subagent_requests(server: &MockServer) -> Vec<Value> {
    server
        .requests()
        .into_iter()
        .filter(|r| {
            r["messages"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|m| m["role"] == "user")
                .is_some_and(|m| m["content"].to_string().contains("SUBAGENT"))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subagent_works_and_reports_back() -> TestResult {
    let dir = tempfile::tempdir()?;
    std::fs::write(dir.path().join("a.txt"), "alpha")?;
    let server = MockServer::start(vec![
        tool_call_reply(
            "c1",
            "task",
            json!({"description": "read a.txt", "prompt": "SUBAGENT: read a.txt and say what it holds"}),
        ),
        text_reply("a.txt holds alpha."),
    ])
    .await?;
    server.route(
        "SUBAGENT",
        vec![
            tool_call_reply("s1", "bash", json!({"command": "cat a.txt"})),
            text_reply("It holds the word alpha."),
        ],
    );
    crate::write_config(dir.path(), &server.base_url, "")?;
    let cairn = Cairn::new(Home::at(dir.path()));
    let runtime = cairn.agent_runtime(ModelChoice::default(), dir.path().to_path_buf())?;
    let (results, shown) = turn(&runtime, "What does a.txt hold?").await;
    assert_eq!(results, ["[#0001]\nIt holds the word alpha."]);
    // Its calls and words streamed through the turn as they came.
    assert_eq!(shown, "\n🛠️  bash: cat a.txt\nIt holds the word alpha.");
    let sub = subagent_requests(&server);
    assert_eq!(sub.len(), 2);
    // It starts fresh, with the tools but task.
    let tools: Vec<&str> = sub[0]["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    assert!(tools.contains(&"bash") && !tools.contains(&"task") && !tools.contains(&"job_send"));
    assert!(!sub[0].to_string().contains("What does a.txt hold?"));
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_background_subagent_takes_a_message_and_wakes_its_session() -> TestResult {
    let dir = tempfile::tempdir()?;
    let server = MockServer::start(vec![
        tool_call_reply(
            "c1",
            "task",
            json!({"description": "pick a port", "prompt": "SUBAGENT: pick a port", "background": true}),
        ),
        tool_call_reply(
            "c2",
            "job_send",
            json!({"id": "job1", "message": "Use 8080."}),
        ),
        tool_call_reply("c3", "job_send", json!({"id": "job9", "message": "x"})),
        text_reply("It is working on it."),
        // A later turn: the subagent has ended, and a command is no subagent.
        tool_calls_reply(
            "",
            &[
                ("c4", "job_send", json!({"id": "job1", "message": "More."})),
                ("c5", "bash", json!({"command": "sleep 5", "background": true})),
            ],
        ),
        tool_call_reply("c6", "job_send", json!({"id": "job2", "message": "x"})),
        text_reply("Noted."),
    ])
    .await?;
    server.route(
        "SUBAGENT",
        vec![
            tool_call_reply("s1", "bash", json!({"command": "sleep 2"})),
            text_reply("Port 8080, as asked."),
        ],
    );
    crate::write_config(dir.path(), &server.base_url, "")?;
    let cairn = Cairn::new(Home::at(dir.path()));
    let runtime = cairn.agent_runtime(ModelChoice::default(), dir.path().to_path_buf())?;
    let (results, _) = turn(&runtime, "Pick a port in the background").await;
    assert_eq!(
        results,
        [
            "[#0001]\nStarted job1, a subagent working on: pick a port\nIts report comes to you when it finishes. Read what it has done so far with job_output, tell it something with job_send, stop it with job_stop.",
            "[#0002]\nSent to job1: it reads the message at its next step.",
            "[#0003]\n[error: no job job9 in this session: job_list shows them]",
        ]
    );
    let jobs = runtime.jobs();
    for _ in 0..100 {
        if jobs.has_notes("s") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let notes = jobs.take_notes("s");
    assert_eq!(notes.len(), 1, "{notes:?}");
    let note = &notes[0];
    assert!(
        note.starts_with(
            "[A subagent you started has finished:]\njob1 (subagent: pick a port) finished after "
        ),
        "{note}"
    );
    assert!(
        note.ends_with(" s.\nIts report:\nPort 8080, as asked."),
        "{note}"
    );
    // The message reached it at its next step, marked as the main agent's.
    let sub = subagent_requests(&server);
    assert_eq!(sub.len(), 2);
    assert!(sub[1]["messages"].to_string().contains(
        "[The main agent sent this while you were working — take it into account from here:]\\nUse 8080."
    ));
    // Ended: job_send says so; job_output reads what it did.
    let listed = jobs.list("s");
    assert_eq!(listed[0].command, "subagent: pick a port");
    assert_eq!(listed[0].state, cairn_tools::JobState::Finished);
    let output = jobs.peek("s", "job1", 10_000).unwrap_or_default();
    assert_eq!(
        output,
        "\n🛠️  bash: sleep 2\n\n[The main agent sent this while you were working — take it into account from here:]\nUse 8080.\nPort 8080, as asked."
    );
    let (later, _) = turn(&runtime, "Tell it more").await;
    assert_eq!(later[0], "[#0004]\n[error: job1 has ended: it finished. Start another subagent with task if there is more to do]");
    assert_eq!(
        later[2],
        "[#0006]\n[error: job2 is a command, not a subagent: job_send writes to subagents only]"
    );
    Ok(())
}

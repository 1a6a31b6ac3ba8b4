//! The spec's rules with a text or a number (agent-loop.json, agent-tools.md), each held by a
//! test that drives the runtime through the mock server: tool results and their ids, headers and
//! caps, dedupe stubs, the loop detector, wrap-up, parallel calls, permissions, questions,
//! cancellation and compaction.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use cairn_agent::{AgentSettings, Budgets, Event, Op, Runtime, SessionStore, WRAP_UP};

use cairn_test_support::{
    delta, finish, text_reply, tool_call_reply, tool_calls_reply, MockServer, Reply,
};
use cairn_tools::{Answer, ToolboxOptions};
use serde_json::{json, Value};
use tempfile::TempDir;

use crate::support::{asked, results, run, run_approving, Setup};

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// The conformance tests' agent: every built-in tool `save_answer` included.
fn settings(server: &MockServer, root: &Path) -> AgentSettings {
    Setup::new(server, root)
        .tools(ToolboxOptions {
            save_answer: true,
            ..ToolboxOptions::default()
        })
        .settings()
}

/// The tool messages of request `n`.
fn tool_messages(server: &MockServer, n: usize) -> Vec<String> {
    server.requests()[n]["messages"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
        .collect()
}

fn last_message(server: &MockServer, n: usize) -> Value {
    server.requests()[n]["messages"]
        .as_array()
        .and_then(|m| m.last().cloned())
        .unwrap_or(Value::Null)
}

#[tokio::test]
async fn bash_runs_with_an_id_a_display_line_and_the_exit_code() -> TestResult {
    let dir = TempDir::new()?;
    let server = MockServer::start(vec![
        tool_calls_reply(
            "Let me look.",
            &[
                (
                    "c1",
                    "bash",
                    json!({"command": "echo hello; echo oops >&2"}),
                ),
                ("c2", "bash", json!({"command": "exit 3"})),
            ],
        ),
        text_reply("It printed hello and oops, then exited with code 3."),
    ])
    .await?;
    let runtime = Runtime::new(settings(&server, dir.path()), None);
    let events = run(&runtime, "s", "run it").await;
    assert!(events.contains(&Event::ToolCall {
        call_id: "c1".into(),
        name: "bash".into(),
        arguments: json!({"command": "echo hello; echo oops >&2"}).to_string(),
        display: "🛠️  bash: echo hello; echo oops >&2".into(),
    }));
    assert_eq!(
        tool_messages(&server, 1),
        vec![
            "[#0001]\nhello\noops\n".to_owned(),
            "[#0002]\n[exit code: exit status 3]".to_owned()
        ]
    );
    match events.last() {
        Some(Event::TurnComplete {
            answer,
            steps,
            counters,
            ..
        }) => {
            assert_eq!(
                answer,
                "It printed hello and oops, then exited with code 3."
            );
            assert_eq!(*steps, 2);
            assert_eq!(counters.recap().as_deref(), Some("⚙ 2 command(s)"));
        }
        other => panic!("{other:?}"),
    }
    // The tools are declared; recall only once a result was shortened (none was yet).
    let names: Vec<String> = server.requests()[0]["tools"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|t| {
            t["function"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
        .collect();
    for name in [
        "bash",
        "read_file",
        "write_file",
        "edit_file",
        "ask_user",
        "save_answer",
    ] {
        assert!(names.iter().any(|n| n == name), "{name} in {names:?}");
    }
    assert!(!names.iter().any(|n| n == "recall"), "{names:?}");
    Ok(())
}

#[tokio::test]
async fn bash_times_out_and_a_background_job_does_not_block() -> TestResult {
    let dir = TempDir::new()?;
    let server = MockServer::start(vec![
        tool_calls_reply(
            "",
            &[
                ("c1", "bash", json!({"command": "echo before; sleep 20"})),
                (
                    "c2",
                    "bash",
                    json!({"command": "sleep 20 > /dev/null 2>&1 & echo started"}),
                ),
            ],
        ),
        text_reply("ok"),
    ])
    .await?;
    let mut settings = settings(&server, dir.path());
    settings.bash_timeout = Duration::from_secs(1);
    let runtime = Runtime::new(settings, None);
    let events = tokio::time::timeout(Duration::from_secs(10), run(&runtime, "s", "go")).await?;
    assert_eq!(
        results(&events),
        vec![
            "[#0001]\nbefore\n[error: 1s timeout exceeded]\n[the command is still running: it goes on in the background as job1. Read its output with job_output, stop it with job_stop. You will be told when it ends.]".to_owned(),
            "[#0002]\nstarted\n".to_owned()
        ]
    );
    Ok(())
}

#[tokio::test]
async fn stopping_a_turn_kills_its_command_and_marks_the_output() -> TestResult {
    let dir = TempDir::new()?;
    let server = MockServer::start(vec![tool_call_reply(
        "c1",
        "bash",
        json!({"command": "echo working; sleep 30"}),
    )])
    .await?;
    let mut settings = settings(&server, dir.path());
    settings.sessions = Some(SessionStore::new(dir.path().join("sessions")));
    let memory = Arc::new(cairn_memory::MemoryStore::open_in_memory()?);
    let runtime = Runtime::new(settings, Some(memory.clone()));
    let mut events = runtime.submit(Op::UserMessage {
        session: "s".into(),
        text: "work".into(),
        images: Vec::new(),
    });
    let mut seen = Vec::new();
    while let Some(event) = tokio::time::timeout(Duration::from_secs(10), events.recv()).await? {
        if matches!(event, Event::ToolCall { .. }) {
            tokio::time::sleep(Duration::from_millis(300)).await;
            runtime.submit(Op::Stop {
                session: "s".into(),
            });
        }
        seen.push(event);
    }
    assert!(
        matches!(seen.last(), Some(Event::Stopped { .. })),
        "{seen:?}"
    );
    assert_eq!(
        results(&seen),
        vec!["[#0001]\nworking\n[error: cancelled]".to_owned()]
    );
    let stored = SessionStore::new(dir.path().join("sessions"))
        .load("s")
        .ok_or("not stored")?;
    assert_eq!(
        stored.messages.last().map(|m| m.content.as_str()),
        Some("[#0001]\nworking\n[error: cancelled]")
    );
    assert_eq!(
        stored.marks.last().map(|m| m.text.as_str()),
        Some("[the turn was stopped by the person]")
    );
    // Memory keeps what it did, and that the person stopped it: the task abandoned went badly.
    let traces = memory.list(Some(cairn_memory::Layer::Trace), 0, 10)?;
    assert_eq!(traces.len(), 1, "{traces:?}");
    assert_eq!(traces[0].metadata["turn_status"], "stopped");
    assert!(
        traces[0].text.contains("echo working"),
        "{}",
        traces[0].text
    );
    assert_eq!(memory.feedback_of(traces[0].id)?[0].origin, "stopped");
    assert!(
        traces[0].metadata["reward"].as_f64() < Some(0.0),
        "{traces:?}"
    );
    Ok(())
}

#[tokio::test]
async fn reads_carry_headers_and_an_unchanged_reread_is_a_stub() -> TestResult {
    let dir = TempDir::new()?;
    std::fs::write(dir.path().join("notes.txt"), "one\ntwo\nthree\n")?;
    std::fs::write(dir.path().join("empty.txt"), "")?;
    let sha = cairn_tools::sha_of(b"one\ntwo\nthree\n");
    let server = MockServer::start(vec![
        tool_call_reply("c1", "read_file", json!({"path": "notes.txt"})),
        tool_calls_reply(
            "",
            &[
                (
                    "c2",
                    "read_file",
                    json!({"path": "notes.txt", "start": 2, "end": 3}),
                ),
                ("c3", "read_file", json!({"path": "missing.txt"})),
                ("c4", "read_file", json!({"path": "empty.txt"})),
            ],
        ),
        tool_call_reply(
            "c5",
            "edit_file",
            json!({"path": "notes.txt", "edits": [{"old": "two", "new": "deux"}]}),
        ),
        tool_call_reply(
            "c6",
            "read_file",
            json!({"path": "notes.txt", "start": 2, "end": 2}),
        ),
        text_reply("ok"),
    ])
    .await?;
    let runtime = Runtime::new(settings(&server, dir.path()), None);
    let events = run(&runtime, "s", "read").await;
    let out = results(&events);
    assert_eq!(
        out[0],
        format!("[#0001 notes.txt lines 1-3 of 3 sha {sha}]\none\ntwo\nthree\n")
    );
    assert_eq!(
        out[1],
        format!("[#0002 notes.txt lines 2-3 of 3 sha {sha}]\nUnchanged since #0001, which already shows lines 1-3.")
    );
    assert_eq!(
        out[2],
        "[#0003]\nmissing.txt does not exist. Create it with write_file"
    );
    assert_eq!(
        out[3],
        format!("[#0004 empty.txt empty sha {}]", cairn_tools::sha_of(b""))
    );
    let new_sha = cairn_tools::sha_of(b"one\ndeux\nthree\n");
    assert!(
        out[4].starts_with(&format!("[#0005 notes.txt sha {new_sha}]\n")),
        "{}",
        out[4]
    );
    assert_eq!(
        out[5],
        format!("[#0006 notes.txt lines 2-2 of 3 sha {new_sha}]\ndeux")
    );
    Ok(())
}

#[tokio::test]
async fn a_long_output_keeps_head_and_tail_and_recall_shows_the_rest() -> TestResult {
    let dir = TempDir::new()?;
    let server = MockServer::start(vec![
        tool_call_reply("c1", "bash", json!({"command": "seq 1 1000"})),
        tool_call_reply(
            "c2",
            "recall",
            json!({"id": "#0001", "start": 500, "end": 502}),
        ),
        tool_call_reply("c3", "recall", json!({"id": "#00ff"})),
        text_reply("ok"),
    ])
    .await?;
    let memory = Arc::new(cairn_memory::MemoryStore::open_in_memory()?);
    let runtime = Runtime::new(settings(&server, dir.path()), Some(memory.clone()));
    let out = results(&run(&runtime, "s", "count to a thousand").await);
    let lines: Vec<&str> = out[0].lines().collect();
    assert_eq!(lines[0], "[#0001]");
    assert_eq!(lines[1], "1");
    assert_eq!(lines[200], "200");
    assert_eq!(lines[201], "[700 lines elided, full output #0001]");
    assert_eq!(lines[202], "901");
    assert_eq!(lines.last().copied(), Some("1000"));
    assert_eq!(
        out[1],
        "[#0002 recall #0001 lines 500-502 of 1000]\n500\n501\n502"
    );
    assert_eq!(out[2], "[#0003]\nNo stored result #00ff in this session.");
    // recall is offered from the step after the first cut result on.
    let offers_recall = |request: &serde_json::Value| {
        request["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|t| t["function"]["name"] == "recall")
    };
    let requests = server.requests();
    assert!(!offers_recall(&requests[0]));
    assert!(offers_recall(&requests[1]) && offers_recall(&requests[3]));
    // The memory keeps the command and what it printed, not this session's result ids.
    let hits = memory
        .search(&cairn_memory::SearchQuery::new("count to a thousand"))?
        .hits;
    let trace = &hits.first().ok_or("the turn was not captured")?.memory.text;
    assert!(
        trace.contains("Tool bash(") && trace.contains("1000"),
        "{trace}"
    );
    assert!(
        !trace.contains("recall") && !trace.contains("#0"),
        "{trace}"
    );
    Ok(())
}

#[tokio::test]
async fn calls_a_server_passed_on_as_text_are_made() -> TestResult {
    // As llama.cpp's server without its template's tool parsing sends a small model's calls.
    let dir = TempDir::new()?;
    let server = MockServer::start(vec![
        text_reply(
            "Let me look.\n```json\n{\"name\": \"bash\", \"arguments\": {\"command\": \"echo from-the-call\"}}\n```",
        ),
        text_reply("{\"name\": \"bash\", \"arguments\": {\"command\": \"echo second\"}}"),
        text_reply("Both ran."),
    ])
    .await?;
    let runtime = Runtime::new(settings(&server, dir.path()), None);
    let events = run(&runtime, "s", "look").await;
    let out = results(&events);
    assert_eq!(out.len(), 2, "{events:?}");
    assert!(out[0].trim_end().ends_with("from-the-call"), "{}", out[0]);
    assert!(out[1].trim_end().ends_with("second"), "{}", out[1]);
    let requests = server.requests();
    let second = &requests[1]["messages"];
    let call_message = second
        .as_array()
        .and_then(|m| m.iter().find(|m| m["role"] == "assistant"))
        .ok_or("no assistant message")?;
    assert_eq!(call_message["content"], "Let me look.");
    assert_eq!(
        call_message["tool_calls"][0]["function"]["name"], "bash",
        "{call_message}"
    );
    assert!(matches!(
        events.last(),
        Some(Event::TurnComplete { answer, .. }) if answer == "Both ran."
    ));
    Ok(())
}

#[test]
fn the_cap_cuts_a_huge_first_line_and_still_says_what_was_elided() {
    let text = "x".repeat(50_000);
    let capped = cairn_agent::cap(&text, "#0001");
    assert_eq!(
        capped,
        format!(
            "{} […cut]\n[0 lines elided, full output #0001]",
            "x".repeat(20_000)
        )
    );
    assert_eq!(cairn_agent::result_id(10), "#000a");
    assert_eq!(cairn_agent::result_id(0x10000), "#10000");
}

#[tokio::test]
async fn the_same_failing_call_gets_a_notice_at_three_and_stops_the_turn_at_six() -> TestResult {
    let dir = TempDir::new()?;
    let call = json!({"path": "x.txt", "edits": [{"old": "a", "new": "b"}]});
    let mut replies: Vec<Reply> = (0..6)
        .map(|i| tool_call_reply(&format!("c{i}"), "edit_file", call.clone()))
        .collect();
    replies.push(text_reply("never"));
    let server = MockServer::start(replies).await?;
    let mut settings = settings(&server, dir.path());
    settings.sessions = Some(SessionStore::new(dir.path().join("sessions")));
    let runtime = Runtime::new(settings, None);
    let events = run(&runtime, "s", "edit").await;
    let out = results(&events);
    assert_eq!(out.len(), 6);
    assert!(!out[1].contains("LOOP_DETECTED"));
    assert!(out[2].ends_with("x.txt does not exist. Create it with write_file\n[LOOP_DETECTED: You have attempted the same action multiple times with the same result. Please try a different approach or provide more information.]"), "{}", out[2]);
    let stop = "[error: the model repeated the same edit_file call 6 times in a row with the same failing result — turn stopped by the loop detector; rephrase the request, or fix what the tool kept reporting]";
    assert_eq!(
        events.last(),
        Some(&Event::Error {
            message: stop.into(),
            kind: cairn_agent::FailureKind::Generation,
        })
    );
    assert_eq!(server.requests().len(), 6, "no request after the stop");
    let stored = SessionStore::new(dir.path().join("sessions"))
        .load("s")
        .ok_or("not stored")?;
    assert_eq!(
        stored
            .errors
            .last()
            .map(|e| (e.place.as_str(), e.message.as_str())),
        Some(("generation", stop))
    );
    Ok(())
}

#[tokio::test]
async fn the_step_backstop_withdraws_the_tools_and_asks_for_an_answer() -> TestResult {
    let dir = TempDir::new()?;
    let server = MockServer::start(vec![
        tool_call_reply("c1", "bash", json!({"command": "echo 1"})),
        tool_call_reply("c2", "bash", json!({"command": "touch never-run"})),
    ])
    .await?;
    let mut settings = settings(&server, dir.path());
    settings.max_steps = 1;
    let runtime = Runtime::new(settings, None);
    let events = run(&runtime, "s", "loop").await;
    assert!(events.contains(&Event::WrappedUp {
        limit: "step limit".into()
    }));
    let wrap = last_message(&server, 1);
    assert_eq!(wrap["role"], "user");
    assert_eq!(wrap["content"], WRAP_UP.replace("{{limit}}", "step limit"));
    assert_eq!(
        wrap["content"],
        "The step limit for this prompt has been reached and the tools have been withdrawn. Answer now from what you have: what is done, what is not, and what would come next."
    );
    assert!(
        server.requests()[1]["tools"]
            .as_array()
            .is_some_and(|t| !t.is_empty()),
        "the tool list is unchanged"
    );
    assert!(
        !dir.path().join("never-run").exists(),
        "a tool call in the wrap-up reply is not run"
    );
    assert!(matches!(events.last(), Some(Event::TurnComplete { .. })));
    Ok(())
}

#[tokio::test]
async fn a_budget_is_checked_between_steps() -> TestResult {
    let dir = TempDir::new()?;
    let server = MockServer::start(vec![
        tool_call_reply("c1", "bash", json!({"command": "seq 1 100"})),
        text_reply("Here is what I have."),
    ])
    .await?;
    let mut settings = settings(&server, dir.path());
    settings.budgets = Budgets {
        output_bytes: Some(50),
        ..Budgets::default()
    };
    let runtime = Runtime::new(settings, None);
    let events = run(&runtime, "s", "count").await;
    assert!(events.contains(&Event::WrappedUp {
        limit: "tool-output limit".into()
    }));
    assert_eq!(
        last_message(&server, 1)["content"],
        WRAP_UP.replace("{{limit}}", "tool-output limit")
    );
    Ok(())
}

#[tokio::test]
async fn four_calls_run_together_the_fifth_after_and_one_file_in_order() -> TestResult {
    let dir = TempDir::new()?;
    let log = dir.path().join("log");
    let command =
        |n: usize| json!({"command": format!("echo start{n} >> log; sleep 1; echo end{n} >> log")});
    let server = MockServer::start(vec![
        tool_calls_reply(
            "",
            &[
                ("c1", "bash", command(1)),
                ("c2", "bash", command(2)),
                ("c3", "bash", command(3)),
                ("c4", "bash", command(4)),
                ("c5", "bash", command(5)),
            ],
        ),
        tool_calls_reply(
            "",
            &[
                (
                    "w1",
                    "write_file",
                    json!({"path": "same.txt", "content": "first\n"}),
                ),
                (
                    "w2",
                    "write_file",
                    json!({"path": "same.txt", "content": "second\n"}),
                ),
            ],
        ),
        text_reply("ok"),
    ])
    .await?;
    let runtime = Runtime::new(settings(&server, dir.path()), None);
    let events = run(&runtime, "s", "go").await;
    let log = std::fs::read_to_string(log)?;
    let order: Vec<&str> = log.lines().collect();
    let starts_before_first_end = order.iter().take_while(|l| l.starts_with("start")).count();
    assert_eq!(starts_before_first_end, 4, "{order:?}");
    assert_eq!(order.last().copied(), Some("end5"), "{order:?}");
    // Results come back in the calls' order.
    let ids: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            Event::ToolResult { call_id, .. } => Some(call_id.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(ids, ["c1", "c2", "c3", "c4", "c5", "w1", "w2"]);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("same.txt"))?,
        "second\n"
    );
    Ok(())
}

#[tokio::test]
async fn with_yolo_off_calls_wait_for_approval_and_a_refusal_is_the_result() -> TestResult {
    let dir = TempDir::new()?;
    let server = MockServer::start(vec![
        tool_calls_reply(
            "",
            &[
                ("c1", "bash", json!({"command": "touch refused"})),
                (
                    "c2",
                    "write_file",
                    json!({"path": "allowed.txt", "content": "yes\n"}),
                ),
                ("c3", "read_file", json!({"path": "allowed.txt"})),
            ],
        ),
        text_reply("ok"),
    ])
    .await?;
    let mut settings = settings(&server, dir.path());
    settings.yolo = false;
    let runtime = Runtime::new(settings, None);
    let seen = run_approving(&runtime, "s", "go", |tool| tool == "write_file").await?;
    assert_eq!(asked(&seen).len(), 2, "read_file never asks");
    let out = results(&seen);
    assert_eq!(out[0], "[#0001]\n[command rejected by the user]");
    assert!(out[1].starts_with("[#0002 allowed.txt sha "), "{}", out[1]);
    assert!(out[1].ends_with("Created, 1 lines."), "{}", out[1]);
    assert!(!dir.path().join("refused").exists());
    Ok(())
}

#[tokio::test]
async fn where_nobody_can_be_asked_calls_are_rejected_and_questions_answered_so() -> TestResult {
    let dir = TempDir::new()?;
    let server = MockServer::start(vec![
        tool_calls_reply(
            "",
            &[
                (
                    "c1",
                    "edit_file",
                    json!({"path": "a.txt", "edits": [{"old": "a", "new": "b"}]}),
                ),
                (
                    "c2",
                    "ask_user",
                    json!({"question": "Which colour?", "options": ["red", "blue"]}),
                ),
            ],
        ),
        text_reply("ok"),
    ])
    .await?;
    let mut settings = settings(&server, dir.path());
    settings.yolo = false;
    let runtime = Runtime::new(settings, None).one_shot();
    let out = results(&run(&runtime, "s", "go").await);
    assert_eq!(out[0], "[#0001]\n[edit_file rejected by the user]");
    assert_eq!(out[1], "[#0002]\n[the user cannot be asked in this mode: make a reasonable assumption, say which, and go on]");
    Ok(())
}

#[tokio::test]
async fn ask_user_puts_the_questions_and_returns_the_answers() -> TestResult {
    let dir = TempDir::new()?;
    let server = MockServer::start(vec![
        tool_call_reply(
            "c1",
            "ask_user",
            json!({"questions": [
                {"question": "Which colour?", "type": "radio", "options": ["red", "blue"]},
                {"question": "Ship it?", "type": "yesno"}
            ]}),
        ),
        tool_call_reply("c2", "ask_user", json!({"question": "Name?"})),
        text_reply("ok"),
    ])
    .await?;
    let runtime = Runtime::new(settings(&server, dir.path()), None);
    let mut events = runtime.submit(Op::UserMessage {
        session: "s".into(),
        text: "go".into(),
        images: Vec::new(),
    });
    let mut seen = Vec::new();
    let mut asked = 0;
    while let Some(event) = tokio::time::timeout(Duration::from_secs(10), events.recv()).await? {
        if let Event::Question {
            request, questions, ..
        } = &event
        {
            asked += 1;
            let answer = if asked == 1 {
                assert_eq!(questions[0].options, vec!["red", "blue"]);
                Answer::Answered(vec!["blue".into(), "yes".into()])
            } else {
                Answer::Declined
            };
            runtime.submit(Op::Answer {
                request: *request,
                answer,
            });
        }
        seen.push(event);
    }
    let out = results(&seen);
    assert_eq!(
        out[0],
        "[#0001]\nThe user answered:\n- Which colour? → blue\n- Ship it? → yes"
    );
    assert_eq!(out[1], "[#0002]\n[the user declined to answer: do not ask the same thing again; go on without it or stop]");
    Ok(())
}

#[tokio::test]
async fn a_runaway_tool_call_stops_the_generation() -> TestResult {
    let dir = TempDir::new()?;
    let garbage = "la la la ".repeat(60);
    let server = MockServer::start(vec![Reply::sse(&[
        delta(json!({"tool_calls": [{"index": 0, "id": "c1", "type": "function",
            "function": {"name": "write_file", "arguments": format!("{{\"path\": \"a\", \"content\": \"{garbage}")}}]})),
        finish("tool_calls"),
    ])])
    .await?;
    let runtime = Runtime::new(settings(&server, dir.path()), None);
    let events = run(&runtime, "s", "write").await;
    match events.last() {
        Some(Event::Error { message, .. }) => assert!(
            message.starts_with(
                "[error: the model's tool call ran away: its arguments repeat the same pattern ("
            ) && message
                .ends_with(") — generation stopped; rephrase the request, or try another model]"),
            "{message}"
        ),
        other => panic!("{other:?}"),
    }
    Ok(())
}

#[tokio::test]
async fn unknown_tools_and_broken_arguments_are_answered_not_fatal() -> TestResult {
    let dir = TempDir::new()?;
    let server = MockServer::start(vec![
        Reply::sse(&[
            delta(
                json!({"tool_calls": [{"index": 0, "id": "c1", "type": "function",
                "function": {"name": "bash", "arguments": "{\"command\": "}}]}),
            ),
            delta(
                json!({"tool_calls": [{"index": 1, "id": "c2", "type": "function",
                "function": {"name": "teleport", "arguments": "{}"}}]}),
            ),
            finish("tool_calls"),
        ]),
        text_reply("Sorry: I could not run those calls."),
    ])
    .await?;
    let runtime = Runtime::new(settings(&server, dir.path()), None);
    let events = run(&runtime, "s", "go").await;
    let out = results(&events);
    assert!(
        out[0].starts_with("[#0001]\n[bash: the arguments are not valid JSON ("),
        "{}",
        out[0]
    );
    assert!(
        out[1].starts_with("[#0002]\n[unknown tool \"teleport\" — tools: bash, "),
        "{}",
        out[1]
    );
    assert!(matches!(events.last(), Some(Event::TurnComplete { .. })));
    Ok(())
}

#[tokio::test]
async fn compaction_adds_the_files_read_and_ids_are_never_reused() -> TestResult {
    let dir = TempDir::new()?;
    std::fs::write(dir.path().join("a.txt"), "alpha\n")?;
    std::fs::write(dir.path().join("b.txt"), "beta\n")?;
    let server = MockServer::start(vec![
        tool_calls_reply(
            "",
            &[
                ("c1", "read_file", json!({"path": "a.txt"})),
                ("c2", "read_file", json!({"path": "b.txt"})),
            ],
        ),
        tool_call_reply("c3", "read_file", json!({"path": "a.txt"})),
        text_reply("read both"),
        text_reply("We read a.txt and b.txt."),
        tool_call_reply("c4", "read_file", json!({"path": "a.txt"})),
        text_reply("again"),
    ])
    .await?;
    let runtime = Runtime::new(settings(&server, dir.path()), None);
    run(&runtime, "s", "read").await;
    let mut compacted = runtime.submit(Op::Compact {
        session: "s".into(),
    });
    let summary = match compacted.recv().await {
        Some(Event::Compacted { summary }) => summary,
        other => panic!("{other:?}"),
    };
    let sha_a = cairn_tools::sha_of(b"alpha\n");
    let sha_b = cairn_tools::sha_of(b"beta\n");
    assert!(summary.contains("We read a.txt and b.txt."), "{summary}");
    let table = summary
        .split_once("## Files read before this summary")
        .map(|(_, t)| t)
        .ok_or("no table")?;
    assert_eq!(
        table,
        format!("\n\n| File | Lines | sha | Result |\n|---|---|---|---|\n| a.txt | 1-1 of 1 | {sha_a} | #0001 |\n| b.txt | 1-1 of 1 | {sha_b} | #0002 |\n\nRead a file again for its content; recall shows a result by its id.")
    );
    // After the summary the dedupe table is empty: a read is full again, with a new id.
    let out = results(&run(&runtime, "s", "read a again").await);
    assert_eq!(
        out[0],
        format!("[#0004 a.txt lines 1-1 of 1 sha {sha_a}]\nalpha\n")
    );
    Ok(())
}

/// `/compact` shrinks what the model is sent; the task file keeps every message the person saw.
#[tokio::test]
async fn compaction_keeps_the_whole_transcript_on_disk() -> TestResult {
    let dir = TempDir::new()?;
    let server = MockServer::start(vec![
        text_reply("Tomatoes like the south bed."),
        text_reply("Summary: tomatoes go in the south bed."),
        text_reply("Basil too."),
    ])
    .await?;
    let mut settings = settings(&server, dir.path());
    let store = SessionStore::new(dir.path().join("sessions"));
    settings.sessions = Some(store.clone());
    let runtime = Runtime::new(settings, None);
    run(&runtime, "s", "Where do tomatoes go?").await;
    let file = dir.path().join("sessions/s.json");
    let before: Value = serde_json::from_slice(&std::fs::read(&file)?)?;
    let said_before: Vec<Value> = before["messages"]
        .as_array()
        .ok_or("no messages")?
        .iter()
        .filter(|m| m["role"] != "system")
        .cloned()
        .collect();
    assert_eq!(said_before.len(), 2);

    let mut compacted = runtime.submit(Op::Compact {
        session: "s".into(),
    });
    assert!(matches!(
        compacted.recv().await,
        Some(Event::Compacted { .. })
    ));
    run(&runtime, "s", "And basil?").await;

    let after: Value = serde_json::from_slice(&std::fs::read(&file)?)?;
    assert_eq!(
        after["earlier"].as_array().cloned().unwrap_or_default(),
        said_before,
        "what the person saw before the compaction is on disk as it was"
    );
    let contents: Vec<&str> = after["messages"]
        .as_array()
        .ok_or("no messages")?
        .iter()
        .filter_map(|m| m["content"].as_str())
        .collect();
    assert!(contents[1].contains("Summary: tomatoes go in the south bed."));
    assert_eq!(contents[contents.len() - 1], "Basil too.");
    // The model was sent the summary, not the old turn.
    let last_request = server.requests().last().cloned().unwrap_or_default();
    assert!(!last_request
        .to_string()
        .contains("Tomatoes like the south bed."));
    assert_eq!(store.load("s").map(|s| s.earlier.len()), Some(2));
    Ok(())
}

#[tokio::test]
async fn reasoning_travels_within_the_turn_only() -> TestResult {
    let dir = TempDir::new()?;
    let server = MockServer::start(vec![
        Reply::sse(&[
            delta(json!({"reasoning_content": "I should list files."})),
            delta(
                json!({"tool_calls": [{"index": 0, "id": "c1", "type": "function",
                "function": {"name": "bash", "arguments": "{\"command\": \"true\"}"}}]}),
            ),
            finish("tool_calls"),
        ]),
        text_reply("Listed."),
        text_reply("Second turn."),
    ])
    .await?;
    let runtime = Runtime::new(settings(&server, dir.path()), None);
    run(&runtime, "s", "first").await;
    run(&runtime, "s", "second").await;
    let within = &server.requests()[1]["messages"][2];
    assert_eq!(within["reasoning_content"], "I should list files.");
    let later = &server.requests()[2]["messages"][2];
    assert_eq!(later["role"], "assistant");
    assert!(later.get("reasoning_content").is_none(), "{later}");
    Ok(())
}

#[tokio::test]
async fn save_answer_writes_this_message_and_never_overwrites() -> TestResult {
    let dir = TempDir::new()?;
    std::fs::write(dir.path().join("taken.md"), "mine\n")?;
    let server = MockServer::start(vec![
        tool_calls_reply(
            "# Plan\nStep one.",
            &[
                ("c1", "save_answer", json!({"path": "out/plan.md"})),
                ("c2", "save_answer", json!({"path": "taken.md"})),
            ],
        ),
        text_reply("Saved."),
    ])
    .await?;
    let runtime = Runtime::new(settings(&server, dir.path()), None);
    let out = results(&run(&runtime, "s", "plan").await);
    assert_eq!(
        out[0],
        "[#0001]\nsaved this answer to out/plan.md (17 bytes), starting with: # Plan"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("out/plan.md"))?,
        "# Plan\nStep one.\n"
    );
    assert_eq!(out[1], "[#0002]\n[save_answer: taken.md already exists — nothing was written. Pick another name, or ask the user]");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("taken.md"))?,
        "mine\n"
    );
    Ok(())
}

#[tokio::test]
async fn a_context_overflow_summarises_the_earlier_turns_and_retries() -> TestResult {
    let dir = TempDir::new()?;
    let server = MockServer::start(vec![
        text_reply("First answer."),
        Reply::Status {
            status: 400,
            retry_after: None,
            body:
                json!({"error": {"message": "This model's maximum context length is 8192 tokens"}})
                    .to_string(),
        },
        text_reply("Earlier: the person asked a first question."),
        text_reply("Second answer."),
    ])
    .await?;
    let runtime = Runtime::new(settings(&server, dir.path()), None);
    run(&runtime, "s", "first question").await;
    let events = run(&runtime, "s", "second question").await;
    assert!(
        events.iter().any(|e| matches!(e, Event::Compacted { .. })),
        "{events:?}"
    );
    assert!(
        matches!(events.last(), Some(Event::TurnComplete { answer, .. }) if answer == "Second answer.")
    );
    let retried = server.requests()[3]["messages"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(
        retried.len(),
        4,
        "system, summary, acknowledgement, the turn in progress"
    );
    assert!(retried[1]["content"]
        .as_str()
        .unwrap_or_default()
        .contains("Earlier: the person asked a first question."));
    assert!(retried[3]["content"]
        .as_str()
        .unwrap_or_default()
        .starts_with("second question"));
    Ok(())
}

#[tokio::test]
async fn search_memory_finds_earlier_sessions_but_not_this_one() -> TestResult {
    let dir = TempDir::new()?;
    let store = SessionStore::new(dir.path().join("sessions"));
    let server = MockServer::start(vec![
        text_reply("Use the Préférences panel."),
        tool_call_reply("c1", "search_memory", json!({"query": "preferences panel"})),
        text_reply("Found it."),
    ])
    .await?;
    let mut settings = settings(&server, dir.path());
    settings.sessions = Some(store.clone());
    settings.tools.add(Arc::new(cairn_agent::SearchMemory {
        store: store.clone(),
    }));
    let runtime = Runtime::new(settings, None);
    run(&runtime, "older", "Where are the preferences?").await;
    let out = results(&run(&runtime, "newer", "the preferences panel again?").await);
    let dir_shown = store.dir().display().to_string();
    let today = cairn_memory::today();
    assert_eq!(
        out[0],
        format!("[#0001]\n🔎 1 hit(s) for \"preferences panel\" in {dir_shown}\nolder · {today} · turn 1 · question\nWhere are the preferences?\n→ Use the Préférences panel.")
    );
    Ok(())
}

#[tokio::test]
async fn an_anthropic_stream_drives_the_same_loop() -> TestResult {
    let dir = TempDir::new()?;
    let server = MockServer::start(vec![
        Reply::sse(&[
            json!({"type": "message_start", "message": {"id": "m1", "usage": {"input_tokens": 20, "output_tokens": 1}}}),
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {}}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "{\"command\": \"echo from"}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": " claude\"}"}}),
            json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 12}}),
            json!({"type": "message_stop"}),
        ]),
        Reply::sse(&[
            json!({"type": "message_start", "message": {"id": "m2", "usage": {"input_tokens": 40, "output_tokens": 1}}}),
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "It printed from claude."}}),
            json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 6}}),
            json!({"type": "message_stop"}),
        ]),
    ])
    .await?;
    let mut settings = settings(&server, dir.path());
    settings.provider = Arc::new(cairn_llm::Anthropic::new(
        &server.base_url,
        Some("k".into()),
    ));
    let runtime = Runtime::new(settings, None);
    let events = run(&runtime, "s", "run it").await;
    assert!(
        matches!(events.last(), Some(Event::TurnComplete { answer, .. }) if answer == "It printed from claude.")
    );
    let second = &server.requests()[1]["messages"];
    let last = second
        .as_array()
        .and_then(|m| m.last())
        .ok_or("no messages")?;
    assert_eq!(last["role"], "user");
    assert_eq!(last["content"][0]["type"], "tool_result");
    assert_eq!(last["content"][0]["tool_use_id"], "toolu_1");
    assert_eq!(last["content"][0]["content"], "[#0001]\nfrom claude\n");
    Ok(())
}

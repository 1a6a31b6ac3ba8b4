//! Background jobs (agent-loop.json `jobs`) through the scripted model: a command started in the
//! background is listed, read and stopped with the spec's ids; a job that ends during a turn is
//! told at the next step boundary, and one that ends between turns wakes the session as a turn of
//! its own, its note beginning with the spec's mark.

use std::time::Duration;

use cairn_agent::{Event, Op, Runtime};
use cairn_test_support::{text_reply, tool_call_reply, MockServer};
use cairn_tools::ToolboxOptions;
use serde_json::{json, Value};
use tempfile::TempDir;

use crate::support::{results, run, Setup};

type TestResult = Result<(), Box<dyn std::error::Error>>;

const STARTED: &str =
    "Read its output with job_output, stop it with job_stop. You will be told when it ends.";

fn last_message(server: &MockServer, n: usize) -> Value {
    server.requests()[n]["messages"]
        .as_array()
        .and_then(|m| m.last().cloned())
        .unwrap_or(Value::Null)
}

/// A runtime with the default tools, in `dir`.
fn runtime(server: &MockServer, dir: &TempDir) -> Runtime {
    let settings = Setup::new(server, dir.path())
        .tools(ToolboxOptions::default())
        .settings();
    Runtime::new(settings, None)
}

fn notes(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::JobNote { text } => Some(text.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_background_command_is_listed_read_and_stopped() -> TestResult {
    let dir = TempDir::new()?;
    let command = "echo started; sleep 30";
    let server = MockServer::start(vec![
        tool_call_reply(
            "c1",
            "bash",
            json!({"command": command, "background": true}),
        ),
        tool_call_reply("c2", "bash", json!({"command": "sleep 0.5"})),
        tool_call_reply("c3", "job_list", json!({})),
        tool_call_reply("c4", "job_output", json!({"id": "job1"})),
        tool_call_reply("c5", "job_stop", json!({"id": "job1"})),
        tool_call_reply("c6", "job_output", json!({"id": "job1"})),
        tool_call_reply("c7", "job_stop", json!({"id": "job1"})),
        tool_call_reply("c8", "job_output", json!({"id": "job9"})),
        text_reply("job1 was stopped; job9 does not exist."),
    ])
    .await?;
    let runtime = runtime(&server, &dir);
    let events = tokio::time::timeout(Duration::from_secs(20), run(&runtime, "s", "serve")).await?;
    assert_eq!(
        results(&events),
        vec![
            format!("[#0001]\nStarted job1 in the background: {command}\n{STARTED}"),
            "[#0002]\n".to_owned(),
            format!("[#0003]\njob1  running  0 s  {command}"),
            format!("[#0004]\n[job1 is running after 0 s: {command}]\nstarted\n"),
            "[#0005]\nStopped job1.".to_owned(),
            format!("[#0006]\n[job1 was stopped after 0 s: {command}]\n(no output since you last read it)"),
            "[#0007]\njob1 had already ended: it was stopped.".to_owned(),
            "[#0008]\n[error: no job job9 in this session: job_list shows them]".to_owned(),
        ]
    );
    // A job the model stopped itself wakes nobody.
    assert!(notes(&events).is_empty());
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(!runtime.jobs().has_notes("s"));
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_that_ends_during_a_turn_is_told_at_the_next_step() -> TestResult {
    let dir = TempDir::new()?;
    let command = "sleep 0.3; echo built";
    let server = MockServer::start(vec![
        tool_call_reply(
            "c1",
            "bash",
            json!({"command": command, "background": true}),
        ),
        tool_call_reply("c2", "bash", json!({"command": "sleep 1.5"})),
        text_reply("It built."),
    ])
    .await?;
    let runtime = runtime(&server, &dir);
    let events = tokio::time::timeout(Duration::from_secs(20), run(&runtime, "s", "build")).await?;
    let note = format!(
        "[A background job you started has finished:]\njob1 ({command}) exited with code 0 after 0 s.\nbuilt"
    );
    assert_eq!(notes(&events), vec![note.clone()]);
    // The note follows the step's results, as the harness's message.
    let last = last_message(&server, 2);
    assert_eq!(
        (last["role"].as_str(), last["content"].as_str()),
        (Some("user"), Some(note.as_str()))
    );
    assert!(matches!(events.last(), Some(Event::TurnComplete { .. })));
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_that_ends_between_turns_wakes_the_session() -> TestResult {
    let dir = TempDir::new()?;
    let command = "sleep 0.3; echo compiling; exit 2";
    let server = MockServer::start(vec![
        tool_call_reply(
            "c1",
            "bash",
            json!({"command": command, "background": true}),
        ),
        text_reply("Started the build."),
        text_reply("The build failed with code 2."),
    ])
    .await?;
    let runtime = runtime(&server, &dir);
    let mut wakeups = runtime.jobs().wakeups().ok_or("the wake-ups were taken")?;
    run(&runtime, "s", "build it").await;
    let woken = tokio::time::timeout(Duration::from_secs(10), wakeups.recv()).await?;
    assert_eq!(woken.as_deref(), Some("s"));

    let mut events = runtime.submit(Op::Wake {
        session: "s".into(),
    });
    let mut seen = Vec::new();
    while let Some(event) = tokio::time::timeout(Duration::from_secs(10), events.recv()).await? {
        seen.push(event);
    }
    let note = format!(
        "[A background job you started has finished:]\njob1 ({command}) exited with code 2 after 0 s.\ncompiling"
    );
    assert_eq!(seen.first(), Some(&Event::JobNote { text: note.clone() }));
    assert!(
        matches!(seen.last(), Some(Event::TurnComplete { answer, .. }) if answer == "The build failed with code 2.")
    );
    let asked = last_message(&server, 2);
    assert_eq!(asked["role"], "user");
    assert!(
        asked["content"].as_str().is_some_and(|c| c.contains(&note)),
        "{asked}"
    );
    // Told once: waking again does nothing.
    let mut again = runtime.submit(Op::Wake {
        session: "s".into(),
    });
    assert_eq!(again.recv().await, None);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ninth_background_command_is_refused() -> TestResult {
    let dir = TempDir::new()?;
    let mut replies: Vec<_> = (1..=9)
        .map(|i| {
            tool_call_reply(
                &format!("c{i}"),
                "bash",
                json!({"command": "sleep 30", "background": true}),
            )
        })
        .collect();
    replies.push(text_reply("Enough."));
    let server = MockServer::start(replies).await?;
    let runtime = runtime(&server, &dir);
    let events = tokio::time::timeout(Duration::from_secs(20), run(&runtime, "s", "go")).await?;
    let outputs = results(&events);
    assert!(
        outputs[7].starts_with("[#0008]\nStarted job8"),
        "{outputs:?}"
    );
    assert_eq!(
        outputs[8],
        "[#0009]\n[error: 8 background commands are already running in this session: stop one with job_stop or wait for one to end]"
    );
    runtime.jobs().end_session("s");
    assert!(runtime.jobs().list("s").is_empty());
    Ok(())
}

/// Reading a job's output while it writes loses nothing and reorders nothing: the reads do not
/// move the position the job writes at.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn output_read_while_a_job_writes_is_whole_and_in_order() -> TestResult {
    let dir = TempDir::new()?;
    let command = "for i in $(seq 1 300); do echo line$i; sleep 0.003; done; touch finished";
    let mut replies = vec![tool_call_reply(
        "c1",
        "bash",
        json!({"command": command, "background": true}),
    )];
    for i in 0..6 {
        replies.push(tool_call_reply(
            &format!("r{i}"),
            "job_output",
            json!({"id": "job1"}),
        ));
        replies.push(tool_call_reply(
            &format!("w{i}"),
            "bash",
            json!({"command": "sleep 0.2"}),
        ));
    }
    // The last read comes once the job has written everything.
    replies.push(tool_call_reply(
        "wait",
        "bash",
        json!({"command": "while [ ! -f finished ]; do sleep 0.05; done"}),
    ));
    replies.push(tool_call_reply("last", "job_output", json!({"id": "job1"})));
    replies.push(text_reply("Read it all."));
    let server = MockServer::start(replies).await?;
    let runtime = runtime(&server, &dir);
    let events = tokio::time::timeout(Duration::from_secs(30), run(&runtime, "s", "go")).await?;
    // What job_output returned and what the note of its end carried, in the order they came.
    let read: String = events
        .iter()
        .filter_map(|e| match e {
            Event::ToolResult { name, output, .. } if name == "job_output" => output
                .split_once("]\n")
                .and_then(|(_, rest)| rest.split_once('\n'))
                .map(|(_, body)| body.to_owned()),
            Event::JobNote { text } => text.splitn(3, '\n').nth(2).map(str::to_owned),
            _ => None,
        })
        .map(|body| body.replace("(no output since you last read it)", ""))
        .map(|body| {
            if body.ends_with('\n') || body.is_empty() {
                body
            } else {
                body + "\n"
            }
        })
        .collect();
    let expected: String = (1..=300).map(|i| format!("line{i}\n")).collect();
    assert_eq!(read, expected);
    Ok(())
}

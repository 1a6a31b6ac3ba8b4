//! Scheduled tasks run by the chat with a clock the test sets: a run at its time becomes a task
//! the model answers; the same occurrence never runs twice; runs missed while asleep run once
//! on wake; a run never overlaps its previous one; a paused schedule does not run.

use std::sync::Arc;
use std::time::{Duration, Instant};

use cairn_api::chat::Chat;
use cairn_api::Cairn;
use cairn_config::Home;
use cairn_schedule::NewSchedule;
use cairn_test_support::{text_reply, tool_call_reply, MockServer};
use chrono::Utc;
use serde_json::json;

type TestResult = Result<(), Box<dyn std::error::Error>>;

const MINUTE: i64 = 60_000;
/// Monday 2026-12-07 08:00 UTC.
const MONDAY_8: i64 = 1_796_630_400_000;

fn new(when: &str, message: &str) -> NewSchedule {
    NewSchedule {
        when: when.into(),
        message: message.into(),
        catch_up: true,
        ..NewSchedule::default()
    }
}

/// Waits for task `task` to stop running; the text of its last reply.
async fn finished(
    chat: &Chat,
    cairn: &Cairn,
    task: &str,
) -> Result<String, Box<dyn std::error::Error>> {
    let deadline = Instant::now() + Duration::from_secs(30);
    while chat.running().contains(task) {
        assert!(Instant::now() < deadline, "task {task} never finished");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let transcript = cairn.task_transcript(task)?;
    let reply = transcript.last().ok_or("no reply")?;
    Ok(serde_json::to_value(&reply.parts)?.to_string())
}

#[tokio::test]
async fn a_schedule_runs_at_its_time_once_catches_up_and_never_overlaps() -> TestResult {
    let dir = tempfile::tempdir()?;
    let server = MockServer::start(Vec::new()).await?;
    server.respond_with(|_| text_reply("Notes summarised."));
    server.route(
        "Wait for the build",
        vec![
            tool_call_reply("c1", "bash", json!({ "command": "sleep 3" })),
            text_reply("The build is done."),
        ],
    );
    crate::write_config(dir.path(), &server.base_url, "")?;
    let cairn = Cairn::new(Home::at(dir.path()));
    let chat = Arc::new(Chat::new(cairn.clone(), dir.path().to_path_buf()));
    let store = cairn.schedules();
    let daily = store.add(
        new("every day at 9", "Summarise what changed in my notes"),
        MONDAY_8,
    )?;

    // Not before its time; at its time, a task the model answers.
    let nine = MONDAY_8 + 60 * MINUTE;
    assert!(chat.run_due_schedules(nine - MINUTE, &Utc)?.is_empty());
    let started = chat.run_due_schedules(nine + 5_000, &Utc)?;
    assert_eq!(started.len(), 1);
    let (id, task) = &started[0];
    assert_eq!(id, &daily.id);
    assert!(finished(&chat, &cairn, task)
        .await?
        .contains("Notes summarised."));
    // The same occurrence does not run again.
    assert!(chat.run_due_schedules(nine + 2 * MINUTE, &Utc)?.is_empty());

    // Asleep until Wednesday 11:00: one run, for Wednesday's 9:00, marked late.
    let wednesday_9 = nine + 2 * 24 * 60 * MINUTE;
    let woke = chat.run_due_schedules(wednesday_9 + 2 * 60 * MINUTE, &Utc)?;
    assert_eq!(woke.len(), 1);
    finished(&chat, &cairn, &woke[0].1).await?;
    let run = store.list()?[0].last_run.clone().ok_or("run")?;
    assert!(run.missed && run.due_at == wednesday_9, "{run:?}");

    // A run still going when the next is due: the next is let pass, and said why.
    store.pause(&daily.id, true, wednesday_9)?;
    let build = store.add(
        new("every minute", "Wait for the build to finish"),
        wednesday_9,
    )?;
    let first = chat.run_due_schedules(wednesday_9 + MINUTE + 1_000, &Utc)?;
    assert_eq!(first.len(), 1);
    assert!(chat
        .run_due_schedules(wednesday_9 + 2 * MINUTE + 1_000, &Utc)?
        .is_empty());
    let skipped = store
        .list()?
        .into_iter()
        .find(|s| s.id == build.id)
        .and_then(|s| s.last_run)
        .ok_or("run")?;
    assert!(
        skipped
            .skipped
            .as_deref()
            .is_some_and(|why| why.contains("still going")),
        "{skipped:?}"
    );
    assert!(finished(&chat, &cairn, &first[0].1)
        .await?
        .contains("The build is done."));
    // The paused one did not run all along.
    assert_eq!(
        store.list()?[0].last_run.as_ref().map(|r| r.due_at),
        Some(wednesday_9)
    );
    Ok(())
}

/// Asked in a task, the agent sets a schedule up with the `schedule` tool: it works in the task's
/// folder, and the model is told when it runs next.
#[tokio::test]
async fn the_agent_sets_a_schedule_up_with_its_tool() -> TestResult {
    let dir = tempfile::tempdir()?;
    let server = MockServer::start(vec![
        tool_call_reply(
            "c1",
            "schedule",
            json!({"action": "add", "when": "every weekday at 9", "message": "Summarise what changed in notes/"}),
        ),
        text_reply("Done: it runs every weekday at 9."),
    ])
    .await?;
    crate::write_config(dir.path(), &server.base_url, "")?;
    let cairn = Cairn::new(Home::at(dir.path()));
    let chat = Arc::new(Chat::new(cairn.clone(), dir.path().to_path_buf()));
    let task = chat.new_task("Every weekday at 9, summarise what changed in notes/", None)?;
    let answer = finished(&chat, &cairn, &task).await?;
    assert!(answer.contains("it runs every weekday at 9"), "{answer}");
    let schedules = cairn.schedules().list()?;
    assert_eq!(schedules.len(), 1);
    assert_eq!(schedules[0].cron, "0 9 * * 1-5");
    assert!(schedules[0].folder.is_some());
    // The model was told what was set up.
    let told = server.requests()[1]["messages"].to_string();
    assert!(
        told.contains("Scheduled s1") && told.contains("Next run:"),
        "{told}"
    );
    Ok(())
}

/// The app and `cairn serve` on one data home: a due schedule runs once, not once in each.
#[tokio::test]
async fn two_processes_on_one_home_run_a_schedule_once() -> TestResult {
    let dir = tempfile::tempdir()?;
    let server = MockServer::start(Vec::new()).await?;
    server.respond_with(|_| text_reply("Checked."));
    crate::write_config(dir.path(), &server.base_url, "")?;
    let cairn = Cairn::new(Home::at(dir.path()));
    let started = cairn_memory::now_ms() - 2 * MINUTE;
    cairn
        .schedules()
        .add(new("every minute", "Check the build"), started)?;
    let app = Arc::new(Chat::new(cairn.clone(), dir.path().to_path_buf()));
    let serve = Arc::new(Chat::new(
        Cairn::new(Home::at(dir.path())),
        dir.path().to_path_buf(),
    ));
    let _app_runs = app.run_schedules_every(Duration::from_millis(100));
    let _serve_runs = serve.run_schedules_every(Duration::from_millis(100));
    let deadline = Instant::now() + Duration::from_secs(10);
    let task = loop {
        if let Some(task) = cairn.schedules().list()?[0]
            .last_run
            .as_ref()
            .and_then(|r| r.task.clone())
        {
            break task;
        }
        assert!(Instant::now() < deadline, "the schedule never ran");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    tokio::time::sleep(Duration::from_millis(1_000)).await;
    assert_eq!(server.requests().len(), 1, "it ran more than once");
    let _ = task;
    Ok(())
}

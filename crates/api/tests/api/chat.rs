//! The chat's turns: a turn whose listener goes away is stopped (its command killed, the reply
//! stored as stopped), and the task is no longer counted as running.

use std::time::{Duration, Instant};

use cairn_agent::Op;
use cairn_api::chat::Chat;
use cairn_api::Cairn;
use cairn_config::Home;
use cairn_protocol::ChatEvent;
use cairn_test_support::{text_reply, tool_call_reply, MockServer};
use serde_json::json;

#[tokio::test]
async fn a_turn_nobody_listens_to_any_more_is_stopped() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let server = MockServer::start(vec![
        tool_call_reply("call-1", "bash", json!({ "command": "sleep 30" })),
        text_reply("Done."),
    ])
    .await?;
    crate::write_config(dir.path(), &server.base_url, "")?;
    let cairn = Cairn::new(Home::at(dir.path()));
    let chat = Chat::new(cairn.clone(), dir.path().to_path_buf());
    let mut turn = chat.submit(
        "desktop-1",
        Op::UserMessage {
            session: "desktop-1".into(),
            text: "Wait for half a minute".into(),
            images: Vec::new(),
        },
    )?;
    assert!(chat.running().contains("desktop-1"));
    // The command starts; then the listener goes away.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let event = tokio::time::timeout_at(deadline.into(), turn.next())
            .await?
            .ok_or("the turn ended before its command started")?;
        if matches!(event, ChatEvent::Tool { .. }) {
            break;
        }
    }
    let dropped = Instant::now();
    drop(turn);
    assert!(
        chat.running().is_empty(),
        "the task still counts as running"
    );

    // The turn was stopped, not left running: the stored reply says so, long before the
    // command's 30 seconds.
    loop {
        let stored = cairn.task_transcript("desktop-1").unwrap_or_default();
        if stored.iter().any(|m| m.stopped) {
            break;
        }
        assert!(
            dropped.elapsed() < Duration::from_secs(15),
            "the turn went on without a listener: {stored:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(server.requests().len(), 1, "the model was asked again");
    Ok(())
}

/// Issue 48, finding 13: before the model's first words the chat says what the turn waits for
/// (the desktop showed a bare "…" for seconds), and the words end it.
#[tokio::test]
async fn a_turn_says_what_it_waits_for_before_the_first_words(
) -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let server = MockServer::start(vec![text_reply("Here.")]).await?;
    crate::write_config(dir.path(), &server.base_url, "")?;
    let cairn = Cairn::new(Home::at(dir.path()));
    let chat = Chat::new(cairn.clone(), dir.path().to_path_buf());
    let mut turn = chat.submit(
        "desktop-2",
        Op::UserMessage {
            session: "desktop-2".into(),
            text: "Say here".into(),
            images: Vec::new(),
        },
    )?;
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut seen = Vec::new();
    while let Some(event) = tokio::time::timeout_at(deadline.into(), turn.next()).await? {
        let done = matches!(event, ChatEvent::Done { .. } | ChatEvent::Failed { .. });
        seen.push(event);
        if done {
            break;
        }
    }
    let waiting = seen
        .iter()
        .position(|e| {
            matches!(e, ChatEvent::Status { status: cairn_protocol::TurnStatus::Waiting { model } } if !model.is_empty())
        })
        .ok_or_else(|| format!("no waiting status: {seen:?}"))?;
    let words = seen
        .iter()
        .position(|e| matches!(e, ChatEvent::Text { .. }))
        .ok_or_else(|| format!("no words: {seen:?}"))?;
    assert!(waiting < words, "{seen:?}");
    Ok(())
}

/// Issue 49: the task list is pushed, not polled. A turn started at any door publishes the task
/// as running, then as stored and no longer running when it ends; a rename and a deletion are
/// published too, so the workbench and the pet follow without asking.
#[tokio::test]
async fn a_tasks_turn_rename_and_deletion_are_published() -> Result<(), Box<dyn std::error::Error>>
{
    use cairn_api::chat::Published;
    use cairn_protocol::TaskChanged;

    let dir = tempfile::tempdir()?;
    let server = MockServer::start(vec![text_reply("The basil goes south.")]).await?;
    crate::write_config(dir.path(), &server.base_url, "")?;
    let cairn = Cairn::new(Home::at(dir.path()));
    let chat = Chat::new(cairn.clone(), dir.path().to_path_buf());
    let mut published = chat.subscribe();
    let session = cairn_api::mint_task_id();
    let mut turn = chat.send(&session, "Where does the basil go?", &[])?;
    while turn.next().await.is_some() {}
    drop(turn);

    let mut changes = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    while changes.len() < 2 {
        match tokio::time::timeout_at(deadline.into(), published.recv()).await?? {
            Published::TaskChanged(change) => changes.push(change),
            Published::Task { .. } | Published::Scan(_) => {}
        }
    }
    let [TaskChanged::Updated {
        task: started,
        running: true,
    }, TaskChanged::Updated {
        task: ended,
        running: false,
    }] = &changes[..]
    else {
        panic!("{changes:?}");
    };
    assert_eq!(started.session, session);
    assert_eq!(ended.session, session);
    assert_eq!(ended.title, "Where does the basil go?", "the stored task");

    chat.update_task(
        &session,
        cairn_api::TaskChange {
            title: Some("Basil".into()),
            ..Default::default()
        },
    )?;
    assert!(chat.delete_task(&session)?);
    let mut rest = Vec::new();
    while rest.len() < 2 {
        if let Published::TaskChanged(change) =
            tokio::time::timeout_at(deadline.into(), published.recv()).await??
        {
            rest.push(change);
        }
    }
    assert!(
        matches!(&rest[0], TaskChanged::Updated { task, .. } if task.title == "Basil"),
        "{rest:?}"
    );
    assert_eq!(
        rest[1],
        TaskChanged::Removed {
            session: session.clone()
        }
    );
    assert!(cairn.task_summary(&session).is_none(), "deleted");
    Ok(())
}

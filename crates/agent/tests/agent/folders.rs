//! A task's working folder: where its tools work, kept with it, told to the model when it moves,
//! and guarded (an overwrite or a command outside it asks first, even under yolo).

use cairn_agent::{Event, Runtime, SessionStore};
use cairn_test_support::{text_reply, tool_call_reply, tool_calls_reply, MockServer};
use cairn_tools::ToolboxOptions;
use serde_json::json;
use tempfile::TempDir;

use crate::support::{asked, results, run, run_approving, Setup};

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// The text of the last user message of the `n`th request the server saw.
fn last_user_text(server: &MockServer, n: usize) -> String {
    let requests = server.requests();
    requests[n]["messages"]
        .as_array()
        .and_then(|m| m.iter().rev().find(|m| m["role"] == "user"))
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test]
async fn a_task_works_in_its_folder_and_the_model_is_told_when_it_moves() -> TestResult {
    let (started, first, second) = (TempDir::new()?, TempDir::new()?, TempDir::new()?);
    let data = TempDir::new()?;
    let server = MockServer::start(vec![
        tool_call_reply("c1", "bash", json!({"command": "pwd > where.txt"})),
        text_reply("done"),
        tool_call_reply(
            "c2",
            "write_file",
            json!({"path": "b.txt", "content": "b\n"}),
        ),
        text_reply("done again"),
    ])
    .await?;
    let mut settings = Setup::new(&server, started.path())
        .tools(ToolboxOptions::default())
        .settings();
    settings.sessions = Some(SessionStore::new(data.path()));
    let runtime = Runtime::new(settings, None);
    runtime.set_folder("t1", first.path().to_path_buf());
    run(&runtime, "t1", "where are you?").await;
    let said = std::fs::read_to_string(first.path().join("where.txt"))?;
    assert_eq!(
        std::path::Path::new(said.trim()).canonicalize()?,
        first.path().canonicalize()?
    );
    assert!(!started.path().join("where.txt").exists());
    let system = server.requests()[0]["messages"][0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let name = first
        .path()
        .file_name()
        .unwrap_or_default()
        .to_string_lossy();
    assert!(system.contains(&format!("Project: {name}")), "{system}");
    assert!(!system.contains(&first.path().display().to_string()));

    runtime.set_folder("t1", second.path().to_path_buf());
    run(&runtime, "t1", "write b").await;
    assert!(second.path().join("b.txt").exists());
    let moved = second
        .path()
        .file_name()
        .unwrap_or_default()
        .to_string_lossy();
    let note = last_user_text(&server, 2);
    assert!(
        note.contains(&format!("The task now works in the folder {moved}")),
        "{note}"
    );
    // Kept with the task: a new runtime (a restart) works there too.
    let stored = SessionStore::new(data.path());
    assert_eq!(stored.folder("t1"), Some(second.path().to_path_buf()));
    assert_eq!(
        stored.headers()[0].folder,
        Some(second.path().to_path_buf())
    );
    Ok(())
}

#[tokio::test]
async fn a_guarded_folder_asks_before_an_overwrite_or_a_command_outside_even_under_yolo(
) -> TestResult {
    let (folder, outside) = (TempDir::new()?, TempDir::new()?);
    std::fs::write(folder.path().join("plan.md"), "mine\n")?;
    std::fs::write(outside.path().join("notes.md"), "old\n")?;
    let far = outside.path().join("notes.md").display().to_string();
    let server = MockServer::start(vec![
        tool_calls_reply(
            "",
            &[
                (
                    "c1",
                    "write_file",
                    json!({"path": "new.md", "content": "x\n"}),
                ),
                ("c2", "bash", json!({"command": "ls"})),
                (
                    "c3",
                    "write_file",
                    json!({"path": "plan.md", "content": "theirs\n"}),
                ),
                ("c4", "bash", json!({"command": format!("cat {far}")})),
                (
                    "c5",
                    "edit_file",
                    json!({"path": far, "edits": [{"old": "old", "new": "new"}]}),
                ),
            ],
        ),
        text_reply("ok"),
    ])
    .await?;
    let mut settings = Setup::new(&server, folder.path())
        .tools(ToolboxOptions::default())
        .settings();
    assert!(settings.yolo);
    settings.guard_folder = true;
    let runtime = Runtime::new(settings, None);
    let seen = run_approving(&runtime, "s", "go", |_| false).await?;
    let asked = asked(&seen);
    assert_eq!(asked.len(), 3, "{asked:?}");
    assert!(asked[0].contains("plan.md"), "{asked:?}");
    assert!(asked[1].contains("cat "), "{asked:?}");
    assert!(asked[2].contains("edit_file"), "{asked:?}");
    let out = results(&seen);
    assert!(
        out[2].ends_with("[write_file rejected by the user]"),
        "{}",
        out[2]
    );
    assert_eq!(
        std::fs::read_to_string(folder.path().join("plan.md"))?,
        "mine\n"
    );
    assert_eq!(
        std::fs::read_to_string(outside.path().join("notes.md"))?,
        "old\n"
    );
    assert!(folder.path().join("new.md").exists());
    Ok(())
}

#[tokio::test]
async fn a_one_shot_turn_is_not_guarded_since_nobody_could_answer() -> TestResult {
    let folder = TempDir::new()?;
    std::fs::write(folder.path().join("plan.md"), "mine\n")?;
    let server = MockServer::start(vec![
        tool_call_reply(
            "c1",
            "write_file",
            json!({"path": "plan.md", "content": "new\n"}),
        ),
        text_reply("ok"),
    ])
    .await?;
    let mut settings = Setup::new(&server, folder.path())
        .tools(ToolboxOptions::default())
        .settings();
    settings.guard_folder = true;
    let runtime = Runtime::new(settings, None).one_shot();
    let events = run(&runtime, "s", "go").await;
    assert!(!events
        .iter()
        .any(|e| matches!(e, Event::ApprovalRequest { .. })));
    assert_eq!(
        std::fs::read_to_string(folder.path().join("plan.md"))?,
        "new\n"
    );
    Ok(())
}

//! The pet end to end, alone on the display (its window is found by its title): the bubble says
//! which task a message continues and offers a new one instead; the window grows for the bubble
//! and the task list and shrinks back to the stones; the list closes with ✕, a click outside, Esc
//! and when nothing is left in it; a task picked in it opens in the workbench.
//!
//! Ignored by a plain `cargo test`; `./run test` runs it under Xvfb.

mod common;

use std::time::{Duration, Instant};

use cairn_test_support::{text_reply, MockServer};
use common::{click, screenshot, text_of, wait_for_text, TestResult};
use fantoccini::{Client, Locator};
use serde_json::{json, Value};

#[tokio::test]
#[ignore = "needs a display, tauri-driver and WebKitWebDriver: run through ./run test"]
async fn the_pet_names_the_task_it_continues_and_its_list_opens_tasks_in_the_workbench(
) -> TestResult {
    let home = tempfile::tempdir()?;
    let model = MockServer::start(vec![
        text_reply("Bring sandwiches."),
        text_reply("Also lemonade."),
        text_reply("A table for four at eight."),
    ])
    .await?;
    std::fs::write(
        home.path().join("config.toml"),
        format!(
            "[agent]\nmodel = \"mock/pet-model\"\n\n[providers.mock]\nbase_url = \"{}\"\nmodels = [\"pet-model\"]\n\n[sync]\nauto = false\n\n[ui]\nlaunch = \"pet\"\n",
            model.base_url
        ),
    )?;
    let app = common::launch_alone_at_window(home.path(), &[common::gtk_theme(true)], "Cairn pet")
        .await?;
    let client = &app.client;
    let outcome = async {
        wait_for_text(client, ".pet-stones", "").await?;
        wait_for_size(160, 160).await?;

        // The bubble: a first message starts a task, and the bubble then names it.
        click(client, "#pet-talk").await?;
        wait_for_text(client, "#pet-target", "A new task").await?;
        wait_for_size(340, 440).await?;
        ask(client, "Plan the picnic", "Bring sandwiches.").await?;
        wait_for_text(client, "#pet-target", "Continues “Plan the picnic”").await?;
        ask(client, "What should we drink?", "Also lemonade.").await?;
        assert!(
            said(&model, 1)
                .iter()
                .any(|c| c.contains("Plan the picnic")),
            "the second message continued the picnic task"
        );
        // The finished reply can be rated from the pet too.
        click(client, "#pet-bubble .rate-down").await?;
        wait_for_text(client, "#pet-bubble .rate-noted", "remember").await?;
        screenshot(client, "pet-bubble-continues-dark").await?;
        // "New task": the next message starts another one.
        click(client, "#pet-new-task").await?;
        wait_for_text(client, "#pet-target", "A new task").await?;
        ask(client, "Book a restaurant", "A table for four at eight.").await?;
        assert!(
            !said(&model, 2)
                .iter()
                .any(|c| c.contains("Plan the picnic")),
            "the new task does not carry the picnic's conversation"
        );
        // Esc closes the bubble; the window is the stones again.
        client
            .find(Locator::Id("pet-input"))
            .await?
            .send_keys("\u{E00C}")
            .await?;
        wait_until_gone(client, "#pet-bubble").await?;
        wait_for_size(160, 160).await?;

        // The list: both tasks; ✕ closes it.
        wait_for_text(client, "#pet-badge", "2").await?;
        let listed = open_list(client, "first").await?;
        assert!(listed.contains("Book a restaurant"), "{listed}");
        screenshot(client, "pet-task-list-dark").await?;
        click(client, "#pet-tasks-close").await?;
        wait_until_gone(client, "#pet-tasks").await?;
        wait_for_size(160, 160).await?;
        // A real click outside it, on the window's empty corner, closes it.
        open_list(client, "outside").await?;
        let pet = pet_window()?.ok_or("the pet is not on screen")?;
        common::run(
            "xdotool",
            &["mousemove", "--window", &pet, "20", "420", "click", "1"],
        )?;
        wait_until_gone(client, "#pet-tasks").await?;
        // Esc closes it too.
        open_list(client, "esc").await?;
        client
            .find(Locator::Id("pet-tasks-close"))
            .await?
            .send_keys("\u{E00C}")
            .await?;
        wait_until_gone(client, "#pet-tasks").await?;

        // A task picked in the list opens in the workbench, with its conversation.
        open_list(client, "open").await?;
        let picnic = client
            .find(Locator::XPath(
                "//button[contains(@class, 'pet-task')][contains(., 'Plan the picnic')]",
            ))
            .await?;
        picnic.click().await?;
        common::switch_to_window_titled(client, "Cairn").await?;
        let shown = wait_for_text(client, "#messages", "Bring sandwiches.").await?;
        assert!(shown.contains("Also lemonade."), "{shown}");
        assert!(!shown.contains("A table for four"), "{shown}");
        screenshot(client, "pet-opened-task-in-workbench-dark").await?;

        // A list whose tasks all go (archived here; grown old after five minutes) closes itself.
        common::switch_to_window_titled(client, "Cairn pet").await?;
        open_list(client, "archive").await?;
        let listed = sessions(client).await?;
        assert_eq!(listed.len(), 2, "{listed:?}");
        for session in listed {
            let answer = client
                .execute_async(
                    "const done = arguments[arguments.length - 1];\
                     window.__TAURI_INTERNALS__.invoke('task_update', \
                       { session: arguments[0], change: { archived: true } }).then(done, done);",
                    vec![json!(session)],
                )
                .await?;
            assert_eq!(answer["archived"], json!(true), "{answer}");
        }
        wait_until_gone(client, "#pet-tasks").await?;
        wait_until_gone(client, "#pet-badge").await?;
        wait_for_size(160, 160).await?;
        Ok(())
    }
    .await;
    app.close().await;
    outcome
}

/// A turn started from the pet that waits for the person's approval (here: a file written over,
/// which asks by default) asks in the bubble; Deny goes back to the model, whose answer follows.
#[tokio::test]
#[ignore = "needs a display, tauri-driver and WebKitWebDriver: run through ./run test"]
async fn a_call_that_asks_is_answered_in_the_pets_bubble() -> TestResult {
    let home = tempfile::tempdir()?;
    std::fs::create_dir_all(home.path().join("workspace"))?;
    std::fs::write(home.path().join("workspace/notes.md"), "keep me\n")?;
    let model = MockServer::start(vec![
        cairn_test_support::tool_call_reply(
            "w1",
            "write_file",
            json!({"path": "notes.md", "content": "gone\n"}),
        ),
        text_reply("I left your notes alone."),
    ])
    .await?;
    std::fs::write(
        home.path().join("config.toml"),
        format!(
            "[agent]\nmodel = \"mock/pet-model\"\n\n[providers.mock]\nbase_url = \"{}\"\nmodels = [\"pet-model\"]\n\n[sync]\nauto = false\n\n[ui]\nlaunch = \"pet\"\n",
            model.base_url
        ),
    )?;
    let app = common::launch_alone_at_window(home.path(), &[], "Cairn pet").await?;
    let client = &app.client;
    let outcome = async {
        wait_for_text(client, ".pet-stones", "").await?;
        click(client, "#pet-talk").await?;
        let input = client.find(Locator::Id("pet-input")).await?;
        input.send_keys("Clean up my notes\u{E007}").await?;
        wait_for_text(client, "#pet-approval", "write_file: notes.md").await?;
        screenshot(client, "pet-approval").await?;
        click(client, "#pet-deny").await?;
        wait_for_text(client, "#pet-reply", "I left your notes alone.").await?;
        wait_until_gone(client, "#pet-approval").await?;
        assert_eq!(
            std::fs::read_to_string(home.path().join("workspace/notes.md"))?,
            "keep me\n"
        );
        Ok(())
    }
    .await;
    app.close().await;
    outcome
}

/// Opens the task list with a click on the badge of the closed pet, as a person does; `step`
/// names the moment for the error.
async fn open_list(client: &Client, step: &str) -> TestResult<String> {
    // Once the window has shrunk back: a click aimed while it still changes size can miss.
    wait_for_size(160, 160).await?;
    click(client, "#pet-badge").await?;
    let listed = wait_for_text(client, "#pet-tasks", "Plan the picnic")
        .await
        .map_err(|e| format!("{step}: the list did not open: {e}"))?;
    // And grown: what is clicked next stays where it was aimed.
    wait_for_size(340, 440).await?;
    Ok(listed)
}

/// Types `question` into the bubble, sends it and waits for `answer`.
async fn ask(client: &Client, question: &str, answer: &str) -> TestResult {
    let input = client.find(Locator::Id("pet-input")).await?;
    input.send_keys(question).await?;
    input.send_keys("\u{E007}").await?;
    wait_for_text(client, "#pet-reply", answer).await?;
    Ok(())
}

/// The texts of the messages the model was sent in its `n`th request.
fn said(model: &MockServer, n: usize) -> Vec<String> {
    model
        .requests()
        .get(n)
        .and_then(|r| r["messages"].as_array().cloned())
        .unwrap_or_default()
        .iter()
        .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// The sessions of the tasks in the pet's open list.
async fn sessions(client: &Client) -> TestResult<Vec<String>> {
    let found = client
        .execute(
            "return Array.from(document.querySelectorAll('.pet-task')).map(b => b.dataset.session);",
            vec![],
        )
        .await?;
    Ok(match found {
        Value::Array(items) => items
            .into_iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    })
}

/// The X window id of the visible pet.
fn pet_window() -> TestResult<Option<String>> {
    let found = common::run(
        "xdotool",
        &["search", "--onlyvisible", "--name", "^Cairn pet$"],
    )?;
    Ok(found.lines().next().map(str::to_owned))
}

/// Waits until the pet's window is `width`×`height` on screen.
async fn wait_for_size(width: u32, height: u32) -> TestResult {
    let wanted = format!("Geometry: {width}x{height}");
    let deadline = Instant::now() + common::WAIT;
    let mut last = String::new();
    while Instant::now() < deadline {
        if let Some(pet) = pet_window()? {
            last = common::run("xdotool", &["getwindowgeometry", &pet])?;
            if last.contains(&wanted) {
                return Ok(());
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Err(format!("the pet never became {width}×{height}: {last}").into())
}

/// Waits until nothing matches `css`.
async fn wait_until_gone(client: &Client, css: &str) -> TestResult {
    let deadline = Instant::now() + common::WAIT;
    while Instant::now() < deadline {
        if text_of(client, css).await?.is_none() {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Err(format!("{css} is still there").into())
}

//! The workbench's stream and composer end to end, against the real app under Xvfb with a mock
//! model server: a task of 5,000 messages (keyed: a new reply adds items, it never rebuilds the
//! list), the slash commands that manage a task, and a reply rated with its thumbs.
//!
//! Ignored by a plain `cargo test`; `./run test` runs it under Xvfb.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use cairn_test_support::{text_reply, MockServer};
use common::{click, focused, keys, launch_at, screenshot, wait_for_text, App, TestResult};
use fantoccini::Locator;
use serde_json::json;

/// The app on a fresh home whose config points at `model`.
async fn start(home: &Path, model: &MockServer) -> TestResult<App> {
    write_config(home, model)?;
    launch_at(home, &[]).await
}

/// [`start`], alone on the display: for a test whose focus another app's window must not take.
async fn start_alone(home: &Path, model: &MockServer) -> TestResult<App> {
    write_config(home, model)?;
    common::launch_alone_at_window(home, &[], "Cairn").await
}

fn write_config(home: &Path, model: &MockServer) -> TestResult {
    std::fs::write(
        home.join("config.toml"),
        format!(
            "[agent]\nmodel = \"mock/long-model\"\n\n[providers.mock]\nbase_url = \"{}\"\nmodels = [\"long-model\"]\n\n[sync]\nauto = false\n",
            model.base_url
        ),
    )?;
    Ok(())
}

/// A stored conversation of `pairs` questions and answers, updated now.
fn seed_long_task(home: &Path, pairs: usize) -> TestResult {
    let dir = home.join("data/sessions");
    std::fs::create_dir_all(&dir)?;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)?
        .as_millis() as i64;
    let mut messages = vec![json!({"role": "system", "content": "You are Cairn."})];
    for n in 0..pairs {
        messages.push(
            json!({"role": "user", "content": format!("Question {n}: what about step {n}?")}),
        );
        messages.push(
            json!({"role": "assistant", "content": format!("Answer {n}: step {n} is **done**.")}),
        );
    }
    let session = json!({
        "id": "long-1", "title": "A long conversation", "created_at": now, "updated_at": now,
        "messages": messages,
    });
    std::fs::write(dir.join("long-1.json"), serde_json::to_vec(&session)?)?;
    Ok(())
}

#[tokio::test]
#[ignore = "needs a display, tauri-driver and WebKitWebDriver: run through ./run test"]
async fn a_stream_of_5000_messages_adds_replies_without_rebuilding_the_list() -> TestResult {
    let home = tempfile::tempdir()?;
    seed_long_task(home.path(), 2_500)?;
    let model = MockServer::start(vec![text_reply("The new answer is **here**.")]).await?;
    let app = start(home.path(), &model).await?;
    let client = &app.client;
    let outcome = async {
        wait_for_text(client, "#task-list", "A long conversation").await?;
        // Ctrl+K searches what tasks say, not only their titles (this one is not loaded yet).
        let search = client.find(Locator::Id("task-search")).await?;
        search.send_keys("no such words anywhere").await?;
        common::wait_until_text(client, "#task-list", "hid the task", common::WAIT, |t| {
            !t.contains("A long conversation")
        })
        .await?;
        search.send_keys("\u{E009}a").await?;
        search.send_keys("\u{E003}").await?;
        search.send_keys("STEP 1234 IS").await?;
        wait_for_text(client, "#task-list", "A long conversation").await?;
        let opened = Instant::now();
        click(client, "[data-title='A long conversation'] .task").await?;
        wait_for_text(client, "#messages", "Answer 2499: step 2499 is done.").await?;
        println!("opened a task of 5,000 messages in {:?}", opened.elapsed());
        let count = "return document.querySelectorAll('#messages li.message').length;";
        assert_eq!(client.execute(count, vec![]).await?, json!(5_000));
        screenshot(client, "long-stream").await?;

        // Mark two items and watch the list: a new exchange may only add items.
        client
            .execute(
                "const items = document.querySelectorAll('#messages li.message');\
                 items[0].__probe = 'first'; items[4000].__probe = 'middle';\
                 window.__removed = 0;\
                 new MutationObserver(changes => changes.forEach(c => window.__removed += c.removedNodes.length))\
                   .observe(document.querySelector('#messages .message-list'), { childList: true });\
                 document.getElementById('messages').scrollTop = 0;",
                vec![],
            )
            .await?;
        let input = client.find(Locator::Id("composer-input")).await?;
        input.send_keys("And the next step?").await?;
        let sent = Instant::now();
        input.send_keys("\u{E007}").await?;
        wait_for_text(client, "#messages", "The new answer is here.").await?;
        wait_for_text(client, "#send", "Send").await?;
        println!("a reply streamed into the 5,000-message task in {:?}", sent.elapsed());
        assert_eq!(client.execute(count, vec![]).await?, json!(5_002));
        let kept = client
            .execute(
                "const items = document.querySelectorAll('#messages li.message');\
                 return [items[0].__probe, items[4000].__probe, window.__removed];",
                vec![],
            )
            .await?;
        assert_eq!(kept, json!(["first", "middle", 0]), "the list was rebuilt");
        // Scrolling the long list works: the top is reachable, and the end again.
        let top = client
            .execute(
                "const m = document.getElementById('messages'); m.scrollTop = 0; return m.scrollTop;",
                vec![],
            )
            .await?;
        assert_eq!(top, json!(0));
        screenshot(client, "long-stream-top").await?;
        Ok(())
    }
    .await;
    app.close().await;
    outcome
}

/// A new person, no config: the welcome screen is the setup. A wrong address fails the test
/// plainly; the right one lists the server's models; Start chatting saves the default model and
/// the first message gets its answer.
#[tokio::test]
#[ignore = "needs a display, tauri-driver and WebKitWebDriver: run through ./run test"]
async fn first_run_setup_ends_with_a_working_chat() -> TestResult {
    let home = tempfile::tempdir()?;
    let model = MockServer::start(vec![text_reply("Hello! I am ready.")]).await?;
    let app = launch_at(home.path(), &[common::gtk_theme(true)]).await?;
    let client = &app.client;
    let outcome = async {
        wait_for_text(client, "#first-run", "Connect a model to start").await?;
        // The welcome reads from its top: its heading is in view, not scrolled away.
        let heading_in_view = client
            .execute(
                "const m = document.getElementById('messages');                 const h = document.querySelector('.welcome h2').getBoundingClientRect();                 return m.scrollTop === 0 && h.top >= m.getBoundingClientRect().top;",
                vec![],
            )
            .await?;
        assert_eq!(heading_in_view, json!(true), "the welcome's heading is cut off");
        screenshot(client, "first-run-dark").await?;
        // "On this device" comes first; a model server is the next choice.
        click(client, "#first-run-kind-openai").await?;
        // Nothing listens there: the test says so, and Start stays off.
        let dead = format!("http://127.0.0.1:{}/v1", common::free_port()?);
        let url = client.find(Locator::Id("first-run-url")).await?;
        url.send_keys(&dead).await?;
        click(client, "#first-run-test").await?;
        common::wait_until_text(
            client,
            "#first-run-check",
            "showed an error",
            common::WAIT,
            |t| !t.is_empty() && !t.contains("Calling") && !t.contains("Connected"),
        )
        .await?;
        let start_disabled = client
            .execute(
                "return document.getElementById('first-run-start').disabled;",
                vec![],
            )
            .await?;
        assert_eq!(start_disabled, json!(true));
        // The real address: the server's models are listed and the first is suggested.
        url.clear().await?;
        url.send_keys(&model.base_url).await?;
        click(client, "#first-run-test").await?;
        wait_for_text(client, "#first-run-check", "the server offers 2 models").await?;
        let suggested = client
            .execute(
                "return document.getElementById('first-run-model').value;",
                vec![],
            )
            .await?;
        assert_eq!(suggested, json!("small-model"));
        screenshot(client, "first-run-connected-dark").await?;
        click(client, "#first-run-start").await?;
        wait_for_text(client, "#first-run-done", "Connected to custom/small-model").await?;
        wait_for_text(client, "#model-pill", "custom/small-model").await?;
        assert_eq!(
            focused(client).await?,
            "composer-input",
            "the composer is ready to type in"
        );
        let config = std::fs::read_to_string(home.path().join("config.toml"))?;
        assert!(config.contains("[providers.custom]"), "{config}");
        assert!(config.contains("custom/small-model"), "{config}");
        // The first message gets its answer.
        let input = client.find(Locator::Id("composer-input")).await?;
        input.send_keys("Hello there").await?;
        input.send_keys("\u{E007}").await?;
        wait_for_text(client, "#messages", "Hello! I am ready.").await?;
        assert_eq!(model.requests().len(), 1);
        assert_eq!(model.requests()[0]["model"], "small-model");
        screenshot(client, "first-run-first-answer-dark").await?;
        Ok(())
    }
    .await;
    app.close().await;
    outcome
}

/// A first run with no account: "On this device" is offered first, Cairn's own model (installed by
/// setup) is ready, Start writes `local/…` as the default, and the first question gets a right
/// answer from the real model.
#[tokio::test]
#[ignore = "needs a display, tauri-driver and WebKitWebDriver: run through ./run test"]
async fn first_run_on_this_device_answers_with_cairns_own_model() -> TestResult {
    let Some(models) = common::installed_models("llm/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf")?
    else {
        return Ok(());
    };
    let home = tempfile::tempdir()?;
    std::os::unix::fs::symlink(&models, home.path().join("models"))?;
    // Alone on the display: the model takes both cores while it answers, which would starve the
    // other apps' pages past their waits.
    let app = common::launch_alone_at_window(home.path(), &[], "Cairn").await?;
    let client = &app.client;
    let outcome = async {
        wait_for_text(client, "#first-run", "Connect a model to start").await?;
        let chosen = client
            .execute(
                "return document.getElementById('first-run-kind-local').getAttribute('aria-checked');",
                vec![],
            )
            .await?;
        assert_eq!(chosen, json!("true"), "On this device is the first choice");
        wait_for_text(client, "#first-run-device-state", "installed").await?;
        wait_for_text(client, "#first-run-check", "runs on this device").await?;
        screenshot(client, "first-run-on-device").await?;
        click(client, "#first-run-start").await?;
        wait_for_text(client, "#model-pill", "qwen2.5-coder-1.5b · on this device").await?;
        let config = std::fs::read_to_string(home.path().join("config.toml"))?;
        assert!(config.contains("local/qwen2.5-coder-1.5b"), "{config}");
        let input = client.find(Locator::Id("composer-input")).await?;
        input
            .send_keys("What is the capital of France? Answer in one word.")
            .await?;
        input.send_keys("\u{E007}").await?;
        common::wait_for_text_within(client, "#messages", "Paris", Duration::from_secs(180)).await?;
        screenshot(client, "first-run-on-device-answer").await?;
        Ok(())
    }
    .await;
    app.close().await;
    outcome
}

/// Puts `files` ([name, type, text]) into the composer's file input, as picking them would.
async fn attach(client: &fantoccini::Client, files: serde_json::Value) -> TestResult {
    client
        .execute(
            "const dt = new DataTransfer();\
             for (const [name, type, text] of arguments[0]) {\
               const bytes = type === 'image/png' ? Uint8Array.from([137,80,78,71,13,10,26,10]) : text;\
               dt.items.add(new File([bytes], name, { type }));\
             }\
             const input = document.getElementById('attach-input');\
             input.files = dt.files;\
             input.dispatchEvent(new Event('change', { bubbles: true }));",
            vec![files],
        )
        .await?;
    Ok(())
}

/// The text of the last user message the model received in request `n`.
fn last_user_text(model: &MockServer, n: usize) -> String {
    let request = &model.requests()[n];
    let last = request["messages"]
        .as_array()
        .and_then(|m| m.iter().rev().find(|m| m["role"] == "user").cloned())
        .unwrap_or_default();
    match &last["content"] {
        serde_json::Value::String(text) => text.clone(),
        parts => parts.to_string(),
    }
}

/// Attachments (a text document in the message, an image as an image, the limits said plainly),
/// then `/goal`, `/restart` and `/resume` on the task.
#[tokio::test]
#[ignore = "needs a display, tauri-driver and WebKitWebDriver: run through ./run test"]
async fn attachments_goal_restart_and_resume() -> TestResult {
    let home = tempfile::tempdir()?;
    let model = MockServer::start(vec![
        text_reply("Plan drafted: basil in the south bed."),
        text_reply("Second answer."),
        text_reply("Redone answer."),
        text_reply("Continuing from where we stopped."),
        text_reply("Log started."),
    ])
    .await?;
    let app = start(home.path(), &model).await?;
    let client = &app.client;
    let outcome = async {
        wait_for_text(client, "#model-pill", "mock/long-model").await?;
        // Five files: four are kept, the fifth is refused plainly; each can be removed.
        let five: Vec<_> = (1..=5)
            .map(|n| json!([format!("note{n}.txt"), "text/plain", "x"]))
            .collect();
        attach(client, json!(five)).await?;
        wait_for_text(client, "#attach-error", "At most 4 files per message.").await?;
        let chips = "return document.querySelectorAll('#attachments .attachment').length;";
        assert_eq!(client.execute(chips, vec![]).await?, json!(4));
        for _ in 0..4 {
            click(client, "#attachments .attachment button").await?;
        }
        assert_eq!(client.execute(chips, vec![]).await?, json!(0));

        attach(
            client,
            json!([
                ["beds.csv", "text/csv", "bed,plant\nsouth,basil\n"],
                ["photo.png", "image/png", ""]
            ]),
        )
        .await?;
        wait_for_text(client, "#attachments", "photo.png").await?;
        wait_for_text(client, "#attachments", "beds.csv").await?;
        let input = client.find(Locator::Id("composer-input")).await?;
        input.send_keys("Plan the garden beds from these").await?;
        screenshot(client, "attachments").await?;
        input.send_keys("\u{E007}").await?;
        wait_for_text(client, "#messages", "Plan drafted: basil in the south bed.").await?;
        wait_for_text(client, ".sent-attachments", "beds.csv").await?;
        let sent = last_user_text(&model, 0);
        assert!(
            sent.contains("--- Attached file: beds.csv ---\\nbed,plant\\nsouth,basil"),
            "{sent}"
        );
        assert!(
            sent.contains("data:image/png;base64,iVBORw0KGgo="),
            "{sent}"
        );
        screenshot(client, "attachments-sent").await?;

        // A goal rides with the next message.
        let command = |text: &'static str| async move {
            let input = client.find(Locator::Id("composer-input")).await?;
            input.send_keys(text).await?;
            input.send_keys("\u{E007}").await?;
            TestResult::Ok(())
        };
        command("/goal have the beds planted by May").await?;
        wait_for_text(
            client,
            "#notice",
            "Goal set. Goal (active): have the beds planted by May",
        )
        .await?;
        wait_for_text(client, "#goal-chip", "have the beds planted by May").await?;
        screenshot(client, "slash-goal").await?;
        command("What comes next?").await?;
        wait_for_text(client, "#messages", "Second answer.").await?;
        let told = last_user_text(&model, 1);
        assert!(told.starts_with("What comes next?"), "{told}");
        assert!(told.contains("have the beds planted by May"), "{told}");

        // /restart replaces the last answer.
        command("/restart").await?;
        wait_for_text(client, "#messages", "Redone answer.").await?;
        wait_for_text(client, "#send", "Send").await?;
        let stream = common::text_of(client, "#messages")
            .await?
            .unwrap_or_default();
        assert!(!stream.contains("Second answer."), "{stream}");
        assert!(last_user_text(&model, 2).starts_with("What comes next?"));
        let history = model.requests()[2]["messages"].to_string();
        assert!(
            !history.contains("Second answer."),
            "the replaced answer is not sent again"
        );
        command("/goal pause").await?;
        wait_for_text(client, "#notice", "Goal paused").await?;
        wait_for_text(client, "#goal-chip", "Goal (paused)").await?;

        // /resume finds the earlier work in memory and continues it in a new task.
        command("/resume garden beds").await?;
        wait_for_text(client, "#notice", "Episodes from memory that match").await?;
        wait_for_text(client, "#notice", "1. ").await?;
        screenshot(client, "slash-resume").await?;
        command("/resume 1").await?;
        wait_for_text(client, "#messages", "Continuing from where we stopped.").await?;
        let resumed = last_user_text(&model, 3);
        assert!(
            resumed.starts_with("Let's continue this earlier work where it stopped."),
            "{resumed}"
        );
        assert!(resumed.contains("Plan the garden beds"), "{resumed}");
        // On screen the message stays a line, the episode a chip beside it.
        let said = client
            .execute(
                "return Array.from(document.querySelectorAll('#messages .from-person')).pop().textContent;",
                vec![],
            )
            .await?;
        let said = said.as_str().unwrap_or_default();
        assert!(said.contains("resumed-episode-1.md"), "{said}");
        assert!(!said.contains("Plan the garden beds"), "{said}");

        // A goal typed in a new task makes the task; its first message is told the goal and
        // names the task.
        command("/new").await?;
        command("/goal keep a harvest log").await?;
        wait_for_text(client, "#goal-chip", "keep a harvest log").await?;
        wait_for_text(client, ".stream-title", "New task").await?;
        command("Start the log").await?;
        wait_for_text(client, "#messages", "Log started.").await?;
        wait_for_text(client, ".stream-title", "Start the log").await?;
        let told = last_user_text(&model, 4);
        assert!(told.starts_with("Start the log"), "{told}");
        assert!(told.contains("keep a harvest log"), "{told}");
        Ok(())
    }
    .await;
    app.close().await;
    outcome
}

/// Presses Tab until the element with `id` has the focus (at most `limit` times).
async fn tab_to(client: &fantoccini::Client, id: &str, limit: usize) -> TestResult {
    for _ in 0..limit {
        if focused(client).await? == id {
            return Ok(());
        }
        keys(client, "\u{E004}").await?;
    }
    Err(format!(
        "Tab never reached #{id} (stopped on {:?})",
        focused(client).await?
    )
    .into())
}

/// Keyboard only: a new task, the slash palette (↑/↓, Enter completes, Esc closes), sending,
/// Ctrl+K and the task list, the pages.
#[tokio::test]
#[ignore = "needs a display, tauri-driver and WebKitWebDriver: run through ./run test"]
async fn the_workbench_works_from_the_keyboard() -> TestResult {
    let home = tempfile::tempdir()?;
    let model = MockServer::start(vec![text_reply("Hello from the keyboard.")]).await?;
    let app = start(home.path(), &model).await?;
    let client = &app.client;
    let outcome = async {
        wait_for_text(client, "#model-pill", "mock/long-model").await?;
        // Ctrl+N puts the caret in a new task's composer.
        client
            .find(Locator::Css("body"))
            .await?
            .send_keys("\u{E009}n")
            .await?;
        assert_eq!(focused(client).await?, "composer-input");
        // The palette: "/re" offers /restart and /resume; ↓ picks the second, Enter completes it.
        keys(client, "/re").await?;
        wait_for_text(client, "#slash-palette", "/resume").await?;
        keys(client, "\u{E015}").await?;
        wait_for_text(client, "#slash-palette .picked", "/resume").await?;
        screenshot(client, "keyboard-palette").await?;
        keys(client, "\u{E007}").await?;
        let value = client
            .execute(
                "return document.getElementById('composer-input').value;",
                vec![],
            )
            .await?;
        assert_eq!(
            value,
            json!("/resume "),
            "Enter completed the command, it did not run it"
        );
        // Esc closes the palette; the text stays.
        keys(
            client,
            "\u{E003}\u{E003}\u{E003}\u{E003}\u{E003}\u{E003}\u{E003}\u{E003}/",
        )
        .await?;
        wait_for_text(client, "#slash-palette", "/new").await?;
        keys(client, "\u{E00C}").await?;
        let open = client
            .execute("return !!document.getElementById('slash-palette');", vec![])
            .await?;
        assert_eq!(open, json!(false), "Esc closes the palette");
        keys(client, "\u{E003}Say hello\u{E007}").await?;
        wait_for_text(client, "#messages", "Hello from the keyboard.").await?;
        // Ctrl+K: the search box; Tab reaches the task; Enter opens it.
        keys(client, "\u{E009}k").await?;
        assert_eq!(focused(client).await?, "task-search");
        keys(client, "Say hel").await?;
        keys(client, "\u{E004}").await?;
        assert_eq!(
            focused(client).await?,
            "task",
            "Tab goes to the first matching task"
        );
        keys(client, "\u{E007}").await?;
        wait_for_text(client, ".stream-title", "Say hello").await?;
        // ↓ from the search box picks the first task found, ↑ goes back to the box.
        keys(client, "\u{E009}k").await?;
        assert_eq!(focused(client).await?, "task-search");
        keys(client, "\u{E015}").await?;
        assert_eq!(focused(client).await?, "task", "↓ reaches the task");
        keys(client, "\u{E013}").await?;
        assert_eq!(focused(client).await?, "task-search", "↑ goes back");
        // The pages, by Tab and Enter.
        tab_to(client, "page-memory", 40).await?;
        screenshot(client, "keyboard-focus-memory").await?;
        keys(client, "\u{E007}").await?;
        wait_for_text(client, "main.page", "Memory").await?;
        tab_to(client, "page-settings", 10).await?;
        keys(client, "\u{E007}").await?;
        wait_for_text(client, "main.page", "Providers and models").await?;
        screenshot(client, "keyboard-settings").await?;
        Ok(())
    }
    .await;
    app.close().await;
    outcome
}

/// Simplified Chinese from the config; switching to English in Settings reloads the windows in it.
#[tokio::test]
#[ignore = "needs a display, tauri-driver and WebKitWebDriver: run through ./run test"]
async fn the_app_speaks_simplified_chinese_and_switches_back() -> TestResult {
    let home = tempfile::tempdir()?;
    let model = MockServer::start(vec![text_reply("你好！")]).await?;
    std::fs::write(
        home.path().join("config.toml"),
        format!(
            "[agent]\nmodel = \"mock/long-model\"\n\n[providers.mock]\nbase_url = \"{}\"\nmodels = [\"long-model\"]\n\n[sync]\nauto = false\n\n[ui]\nlanguage = \"zh-CN\"\ntheme = \"dark\"\n",
            model.base_url
        ),
    )?;
    let app = launch_at(home.path(), &[]).await?;
    let client = &app.client;
    let outcome = async {
        wait_for_text(client, "#page-settings", "设置").await?;
        wait_for_text(client, "#new-task", "新任务").await?;
        let lang = client
            .execute("return document.documentElement.lang;", vec![])
            .await?;
        assert_eq!(lang, json!("zh-CN"));
        let input = client.find(Locator::Id("composer-input")).await?;
        input.send_keys("你好").await?;
        input.send_keys("\u{E007}").await?;
        wait_for_text(client, "#messages", "你好！").await?;
        screenshot(client, "chinese-workbench-dark").await?;
        click(client, "#page-memory").await?;
        screenshot(client, "chinese-memory-dark").await?;
        click(client, "#page-settings").await?;
        wait_for_text(client, "main.page", "语言").await?;
        screenshot(client, "chinese-settings-dark").await?;
        // English again: the windows reload in it, and the config says so.
        client
            .execute(
                "const s = document.getElementById('ui-language'); s.value = 'en';\
                 s.dispatchEvent(new Event('change', { bubbles: true }));",
                vec![],
            )
            .await?;
        common::wait_for_text_within(
            client,
            "#page-settings",
            "Settings",
            std::time::Duration::from_secs(20),
        )
        .await?;
        let config = std::fs::read_to_string(home.path().join("config.toml"))?;
        assert!(config.contains("language = \"en\""), "{config}");
        Ok(())
    }
    .await;
    app.close().await;
    outcome
}

/// An edit's tool card: its line, status, time, and the diff with added and removed lines marked.
#[tokio::test]
#[ignore = "needs a display, tauri-driver and WebKitWebDriver: run through ./run test"]
async fn an_edit_shows_its_diff_in_the_tool_card() -> TestResult {
    let home = tempfile::tempdir()?;
    // In the workspace a new task works in: an edit there runs without asking.
    std::fs::create_dir_all(home.path().join("workspace"))?;
    let file = home.path().join("workspace/settings.ini");
    std::fs::write(&file, "[server]\nhost = localhost\nport = 8080\n")?;
    let model = MockServer::start(vec![
        cairn_test_support::tool_call_reply(
            "e1",
            "edit_file",
            json!({"path": "settings.ini", "edits": [{"old": "port = 8080", "new": "port = 9090"}]}),
        ),
        text_reply("The port is now **9090**."),
    ])
    .await?;
    let app = start(home.path(), &model).await?;
    let client = &app.client;
    let outcome = async {
        wait_for_text(client, "#model-pill", "mock/long-model").await?;
        let input = client.find(Locator::Id("composer-input")).await?;
        input.send_keys("Move the server to port 9090").await?;
        input.send_keys("\u{E007}").await?;
        wait_for_text(client, "#messages", "The port is now 9090.").await?;
        wait_for_text(client, "li.tool.ok[data-tool='edit_file']", "done").await?;
        click(client, "li.tool[data-tool='edit_file'] summary").await?;
        wait_for_text(client, ".tool-output.diff .diff-del", "port = 8080").await?;
        wait_for_text(client, ".tool-output.diff .diff-add", "port = 9090").await?;
        assert_eq!(
            std::fs::read_to_string(&file)?,
            "[server]\nhost = localhost\nport = 9090\n"
        );
        screenshot(client, "tool-card-diff").await?;
        Ok(())
    }
    .await;
    app.close().await;
    outcome
}

/// A task works in a folder the person sees and changes (the workspace at first): its commands
/// run there, and an overwrite there asks first although nothing else does (the default).
#[tokio::test]
#[ignore = "needs a display, tauri-driver and WebKitWebDriver: run through ./run test"]
async fn a_task_works_in_the_folder_chosen_for_it_and_an_overwrite_asks() -> TestResult {
    let home = tempfile::tempdir()?;
    let project = tempfile::tempdir()?;
    let garden = project.path().join("garden");
    std::fs::create_dir_all(garden.join("beds"))?;
    std::fs::write(garden.join("plan.md"), "mine\n")?;
    let model = MockServer::start(vec![
        cairn_test_support::tool_call_reply("f1", "bash", json!({"command": "pwd > here.txt"})),
        text_reply("Noted where I am."),
        cairn_test_support::tool_call_reply(
            "f2",
            "write_file",
            json!({"path": "plan.md", "content": "theirs\n"}),
        ),
        text_reply("I left the plan as it was."),
    ])
    .await?;
    let app = start(home.path(), &model).await?;
    let client = &app.client;
    let outcome = async {
        wait_for_text(client, "#folder-default", "its own folder").await?;
        // A new task starts in the workspace under the data home.
        wait_for_text(client, "#task-folder", "workspace").await?;
        click(client, "#task-folder").await?;
        wait_for_text(client, "#folder-picker", "Where this task works").await?;
        let path = client.find(Locator::Id("folder-path")).await?;
        path.clear().await?;
        path.send_keys(&format!("{}\u{E007}", project.path().display()))
            .await?;
        // The project's folders to walk into.
        wait_for_text(client, "#folder-list", "garden").await?;
        click(client, "#folder-list .folder-entry").await?;
        wait_for_text(client, "#folder-list", "beds").await?;
        screenshot(client, "task-folder-picker").await?;
        click(client, "#folder-use").await?;
        wait_for_text(client, "#task-folder", "garden").await?;

        ask(client, "Where are you?", "Noted where I am.").await?;
        let here = std::fs::read_to_string(garden.join("here.txt"))?;
        assert_eq!(
            Path::new(here.trim()).canonicalize()?,
            garden.canonicalize()?
        );
        assert!(!home.path().join("workspace/here.txt").exists());

        // Writing over a file asks first, under the default settings.
        keys(client, "Rewrite the plan\u{E007}").await?;
        wait_for_text(client, ".approval", "write_file").await?;
        screenshot(client, "task-folder-overwrite-asks").await?;
        click(client, "#deny").await?;
        wait_for_text(client, "#messages", "I left the plan as it was.").await?;
        assert_eq!(std::fs::read_to_string(garden.join("plan.md"))?, "mine\n");
        // The folder stays with the task.
        let kept = std::fs::read_dir(home.path().join("data/sessions"))?
            .flatten()
            .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
            .any(|text| {
                text.contains(
                    &garden
                        .canonicalize()
                        .map(|g| g.display().to_string())
                        .unwrap_or_default(),
                )
            });
        assert!(kept, "the task file keeps its folder");
        Ok(())
    }
    .await;
    app.close().await;
    outcome
}

/// `[ui] launch = "pet"`: only the pet at start; a double-click on it brings the workbench (and
/// `data/window.json` remembers it for `launch = "last"`).
#[tokio::test]
#[ignore = "needs a display, tauri-driver and WebKitWebDriver: run through ./run test"]
async fn launch_mode_pet_starts_with_the_pet_alone() -> TestResult {
    let home = tempfile::tempdir()?;
    std::fs::write(
        home.path().join("config.toml"),
        "[sync]\nauto = false\n\n[ui]\nlaunch = \"pet\"\n",
    )?;
    let app = common::launch_alone_at_window(home.path(), &[], "Cairn pet").await?;
    let client = &app.client;
    let visible = |name: &str| -> TestResult<bool> {
        let found = common::run("xdotool", &["search", "--onlyvisible", "--name", name])?;
        Ok(!found.trim().is_empty())
    };
    let outcome = async {
        wait_for_text(client, ".pet-stones", "").await?;
        assert!(visible("^Cairn pet$")?, "the pet is on screen");
        assert!(
            !visible("^Cairn$")?,
            "the workbench waits until it is asked for"
        );
        screenshot(client, "launch-pet").await?;
        // A real double-click in the middle of the pet's window.
        let pet = common::run(
            "xdotool",
            &["search", "--onlyvisible", "--name", "^Cairn pet$"],
        )?;
        let pet = pet.lines().next().unwrap_or_default().to_owned();
        let shell = common::run("xdotool", &["getwindowgeometry", "--shell", &pet])?;
        let value = |key: &str| -> i64 {
            shell
                .lines()
                .find_map(|l| l.strip_prefix(key))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0)
        };
        let (x, y) = (
            value("X=") + value("WIDTH=") / 2,
            value("Y=") + value("HEIGHT=") / 2,
        );
        common::run("xdotool", &["mousemove", &x.to_string(), &y.to_string()])?;
        common::run("xdotool", &["click", "--repeat", "2", "--delay", "80", "1"])?;
        common::switch_to_window_titled(client, "Cairn").await?;
        wait_for_text(client, "#status-line", "API on").await?;
        assert!(visible("^Cairn$")?);
        let window = std::fs::read_to_string(home.path().join("data/window.json"))?;
        assert!(
            window.contains("\"full\""),
            "the workbench is remembered as in use: {window}"
        );
        Ok(())
    }
    .await;
    app.close().await;
    outcome
}

/// A tool card opened while its command runs stays open as the call finishes and the reply
/// streams in after it (each part of a message follows only what it shows).
#[tokio::test]
#[ignore = "needs a display, tauri-driver and WebKitWebDriver: run through ./run test"]
async fn an_opened_tool_card_stays_open_while_the_reply_streams() -> TestResult {
    let home = tempfile::tempdir()?;
    let model = MockServer::start(vec![
        cairn_test_support::tool_call_reply(
            "b1",
            "bash",
            json!({"command": "sleep 2; echo planted"}),
        ),
        cairn_test_support::Reply::sse(&[
            cairn_test_support::delta(json!({ "content": "The bed " })),
            cairn_test_support::delta(json!({ "content": "is ready." })),
            cairn_test_support::finish("stop"),
        ]),
    ])
    .await?;
    let app = start(home.path(), &model).await?;
    let client = &app.client;
    let outcome = async {
        wait_for_text(client, "#model-pill", "mock/long-model").await?;
        let input = client.find(Locator::Id("composer-input")).await?;
        input.send_keys("Plant the basil").await?;
        input.send_keys("\u{E007}").await?;
        wait_for_text(client, "li.tool.running[data-tool='bash']", "running").await?;
        click(client, "li.tool[data-tool='bash'] summary").await?;
        client
            .execute(
                "document.querySelector(\"li.tool[data-tool='bash'] details\").__probe = 'opened';",
                vec![],
            )
            .await?;
        wait_for_text(client, "#messages", "The bed is ready.").await?;
        wait_for_text(
            client,
            "li.tool.ok[data-tool='bash'] .tool-output",
            "planted",
        )
        .await?;
        let kept = client
            .execute(
                "const d = document.querySelector(\"li.tool[data-tool='bash'] details\");\
                 return [d.open, d.__probe];",
                vec![],
            )
            .await?;
        assert_eq!(
            kept,
            json!([true, "opened"]),
            "the card was rebuilt or closed"
        );
        screenshot(client, "tool-card-kept-open").await?;
        Ok(())
    }
    .await;
    app.close().await;
    outcome
}

/// The app started again on `home`, with the task titled `title` opened from its file.
async fn reopen(home: &Path, model: &MockServer, title: &str) -> TestResult<App> {
    let app = start(home, model).await?;
    if let Err(e) = click(&app.client, &format!("[data-title='{title}'] .task")).await {
        app.close().await;
        return Err(e);
    }
    Ok(app)
}

/// Once the model is set, sends `question` from the composer and waits for `answer`.
async fn ask(client: &fantoccini::Client, question: &str, answer: &str) -> TestResult {
    wait_for_text(client, "#model-pill", "mock/long-model").await?;
    click(client, "#composer-input").await?;
    keys(client, &format!("{question}\u{E007}")).await?;
    wait_for_text(client, "#messages", answer).await?;
    Ok(())
}

/// What each part of a message shows, in page order: `text:…` or `tool:<name>`.
const PARTS_OF_LAST_REPLY: &str =
    "const replies = document.querySelectorAll('#messages li.message.from-cairn');\
     const last = replies[replies.length - 1];\
     return Array.from(last.querySelectorAll('.text, li.tool')).map(e =>\
       e.matches('li.tool') ? 'tool:' + e.dataset.tool : 'text:' + e.textContent.trim());";

/// A reply that says something, calls a tool and says more shows the text, the card and the
/// text in that order, as separate paragraphs: while it streams and when the task is reopened.
#[tokio::test]
#[ignore = "needs a display, tauri-driver and WebKitWebDriver: run through ./run test"]
async fn text_and_tool_cards_show_in_the_order_they_happened() -> TestResult {
    let home = tempfile::tempdir()?;
    let model = MockServer::start(vec![
        cairn_test_support::tool_calls_reply(
            "First I will check the disk.",
            &[("d1", "bash", json!({"command": "echo 42G free"}))],
        ),
        text_reply("The disk has enough space."),
    ])
    .await?;
    let expected = json!([
        "text:First I will check the disk.",
        "tool:bash",
        "text:The disk has enough space."
    ]);
    let app = start(home.path(), &model).await?;
    let client = &app.client;
    let outcome = async {
        ask(
            client,
            "Is there room for the backup?",
            "The disk has enough space.",
        )
        .await?;
        assert_eq!(client.execute(PARTS_OF_LAST_REPLY, vec![]).await?, expected);
        screenshot(client, "reply-parts-in-order").await?;
        Ok::<_, Box<dyn std::error::Error>>(())
    }
    .await;
    app.close().await;
    outcome?;

    // Reopened in a new run of the app, from the task file.
    let app = reopen(home.path(), &model, "Is there room for the backup?").await?;
    let client = &app.client;
    let outcome = async {
        wait_for_text(client, "#messages", "The disk has enough space.").await?;
        assert_eq!(client.execute(PARTS_OF_LAST_REPLY, vec![]).await?, expected);
        Ok(())
    }
    .await;
    app.close().await;
    outcome
}

/// Background jobs on their task: two commands the model started show in the jobs strip with
/// their state and output; the one that ends wakes the task (its note styled as the harness's,
/// then the model's reply), and the other is stopped from the strip.
#[tokio::test]
#[ignore = "needs a display, tauri-driver and WebKitWebDriver: run through ./run test"]
async fn background_jobs_show_on_their_task_and_wake_it() -> TestResult {
    let home = tempfile::tempdir()?;
    let model = MockServer::start(vec![
        cairn_test_support::tool_calls_reply(
            "Starting both.",
            &[
                (
                    "b1",
                    "bash",
                    json!({"command": "echo serving; sleep 60", "background": true}),
                ),
                (
                    "b2",
                    "bash",
                    json!({"command": "sleep 2; echo built", "background": true}),
                ),
            ],
        ),
        text_reply("Both are running."),
        text_reply("The build finished."),
    ])
    .await?;
    let app = start(home.path(), &model).await?;
    let client = &app.client;
    let outcome = async {
        ask(
            client,
            "Start the server and the build",
            "Both are running.",
        )
        .await?;
        wait_for_text(client, "#jobs-strip", "job2").await?;
        let server = ".job[data-job=\"job1\"]";
        wait_for_text(client, &format!("{server} .job-state"), "running").await?;
        click(client, &format!("{server} .job-output-toggle")).await?;
        wait_for_text(client, ".job-output", "serving").await?;
        screenshot(client, "jobs-strip").await?;

        // The build ends: its note and the turn it opened appear on the task.
        wait_for_text(client, "#messages", "The build finished.").await?;
        wait_for_text(
            client,
            ".job-note",
            "[A background job you started has finished:]",
        )
        .await?;
        wait_for_text(client, ".job[data-job=\"job2\"] .job-state", "exit 0").await?;
        screenshot(client, "jobs-woken").await?;

        // Quitting while job1 runs asks first; the person keeps Cairn running.
        client
            .execute(
                "window.__TAURI_INTERNALS__.invoke('quit_request'); return true;",
                vec![],
            )
            .await?;
        wait_for_text(client, "#confirm-quit", "Background jobs are still running").await?;
        screenshot(client, "jobs-confirm-quit").await?;
        click(client, "#confirm-quit-cancel").await?;
        wait_for_text(client, &format!("{server} .job-state"), "running").await?;

        click(client, &format!("{server} .job-stop")).await?;
        wait_for_text(client, &format!("{server} .job-state"), "stopped").await?;
        Ok::<_, Box<dyn std::error::Error>>(())
    }
    .await;
    app.close().await;
    outcome
}

/// A task's team shows above the composer: its members, and its room as a conversation with
/// each member's report.
#[tokio::test]
#[ignore = "needs a display, tauri-driver and WebKitWebDriver: run through ./run test"]
async fn a_tasks_team_shows_its_members_and_room() -> TestResult {
    let home = tempfile::tempdir()?;
    let model = MockServer::start(vec![
        cairn_test_support::tool_call_reply(
            "t1",
            "team_add",
            json!({"name": "alice", "role": "checks the docs", "prompt": "MEMBER-ALICE: check the docs", "goal": "Check the docs"}),
        ),
        text_reply("Alice is on it."),
        text_reply("Alice reported: the docs are fine."),
    ])
    .await?;
    model.route("MEMBER-ALICE", vec![text_reply("The docs are fine.")]);
    let app = start(home.path(), &model).await?;
    let client = &app.client;
    let outcome = async {
        ask(client, "Check the docs with a team", "Alice is on it.").await?;
        wait_for_text(client, "#team-room", "Team · 2 agents").await?;
        wait_for_text(
            client,
            ".team-member[data-member=\"alice\"]",
            "checks the docs",
        )
        .await?;
        wait_for_text(client, ".team-message.report", "The docs are fine.").await?;
        wait_for_text(
            client,
            ".team-message.report .team-message-head",
            "alice → lead",
        )
        .await?;
        screenshot(client, "team-room").await?;
        Ok::<_, Box<dyn std::error::Error>>(())
    }
    .await;
    app.close().await;
    outcome
}

/// `/compact` leaves the conversation in view and on disk: a mark with the summary shows where it
/// was summarised, live and when the task is reopened in a new run of the app.
#[tokio::test]
#[ignore = "needs a display, tauri-driver and WebKitWebDriver: run through ./run test"]
async fn compact_keeps_the_history_and_marks_where_it_summarised() -> TestResult {
    let home = tempfile::tempdir()?;
    let model = MockServer::start(vec![
        text_reply("Tomatoes like the south bed."),
        text_reply("The person asked where tomatoes go: the south bed."),
    ])
    .await?;
    let app = start(home.path(), &model).await?;
    let client = &app.client;
    let outcome = async {
        ask(
            client,
            "Where do tomatoes go?",
            "Tomatoes like the south bed.",
        )
        .await?;
        click(client, "#composer-input").await?;
        keys(client, "/compact\u{E00C}\u{E007}").await?;
        wait_for_text(client, "#notice", "The history is now a summary").await?;
        wait_for_text(client, "#messages .compacted", "Compacted here").await?;
        let text = wait_for_text(client, "#messages", "Tomatoes like the south bed.").await?;
        assert!(text.contains("Where do tomatoes go?"), "{text}");
        assert!(!text.contains("Understood: I continue"), "{text}");
        screenshot(client, "compacted-task").await?;
        Ok::<_, Box<dyn std::error::Error>>(())
    }
    .await;
    app.close().await;
    outcome?;

    let app = reopen(home.path(), &model, "Where do tomatoes go?").await?;
    let client = &app.client;
    let outcome = async {
        let text = wait_for_text(client, "#messages", "Tomatoes like the south bed.").await?;
        assert!(text.contains("Where do tomatoes go?"), "{text}");
        assert!(!text.contains("Understood: I continue"), "{text}");
        let summary = client
            .execute(
                "const d = document.querySelector('#messages .compacted'); d.open = true; return d.textContent;",
                vec![],
            )
            .await?;
        assert!(
            summary
                .as_str()
                .unwrap_or_default()
                .contains("the south bed"),
            "{summary}"
        );
        Ok(())
    }
    .await;
    app.close().await;
    outcome
}

/// A double-click on a task opens its title for editing with the caret in it and the row's buttons
/// out of the way; Enter renames, Esc leaves it as it was.
#[tokio::test]
#[ignore = "needs a display, tauri-driver and WebKitWebDriver: run through ./run test"]
async fn a_double_clicked_task_title_is_edited_from_the_keyboard() -> TestResult {
    let home = tempfile::tempdir()?;
    seed_long_task(home.path(), 1)?;
    let model = MockServer::start(vec![]).await?;
    // A window another test opens takes the focus, and the rename box closes on blur.
    let app = start_alone(home.path(), &model).await?;
    let client = &app.client;
    // Double-clicks the task titled `title` once its row shows it (a renamed row is re-created).
    let double_click = |title: &str| {
        let script = format!(
            "const t = document.querySelector(\"[data-title='{title}'] .task\");\
             if (!t) return false;\
             t.dispatchEvent(new MouseEvent('dblclick', {{bubbles: true}}));\
             return true;"
        );
        async move {
            for _ in 0..100 {
                if client.execute(&script, vec![]).await? == json!(true) {
                    return Ok::<_, Box<dyn std::error::Error>>(());
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err("the task row never showed".into())
        }
    };
    let outcome = async {
        wait_for_text(client, "#task-list", "A long conversation").await?;
        double_click("A long conversation").await?;
        wait_until_focused_class(client, "task-rename").await?;
        let covered = client
            .execute(
                "const a = document.querySelector('.task-row.renaming .task-actions');\
                 return !!a && getComputedStyle(a).display !== 'none';",
                vec![],
            )
            .await?;
        assert_eq!(covered, json!(false), "the row's buttons cover the box");
        screenshot(client, "task-rename").await?;
        // The title is selected: typing replaces it.
        keys(client, "Seed order\u{E007}").await?;
        wait_for_text(client, "#task-list", "Seed order").await?;
        double_click("Seed order").await?;
        wait_until_focused_class(client, "task-rename").await?;
        keys(client, "Something else\u{E00C}").await?;
        let text = wait_for_text(client, "#task-list", "Seed order").await?;
        assert!(!text.contains("Something else"), "{text}");
        let boxes = client
            .execute(
                "return document.querySelectorAll('.task-rename').length;",
                vec![],
            )
            .await?;
        assert_eq!(boxes, json!(0), "Esc closes the box");
        Ok(())
    }
    .await;
    app.close().await;
    outcome
}

/// Waits until the focused element has `class`.
async fn wait_until_focused_class(client: &fantoccini::Client, class: &str) -> TestResult {
    let script = format!(
        "return !!document.activeElement && document.activeElement.classList.contains('{class}');"
    );
    for _ in 0..50 {
        if client.execute(&script, vec![]).await? == json!(true) {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Err(format!("nothing with class {class} took the focus").into())
}

/// Esc stops a running turn; the stopped reply keeps its "Stopped." mark when the task is
/// reopened, and the command it stopped reads as stopped, not failed.
#[tokio::test]
#[ignore = "needs a display, tauri-driver and WebKitWebDriver: run through ./run test"]
async fn esc_stops_a_turn_and_the_reply_reads_as_stopped_when_reopened() -> TestResult {
    let home = tempfile::tempdir()?;
    let model = MockServer::start(vec![cairn_test_support::tool_call_reply(
        "s1",
        "bash",
        json!({"command": "sleep 60"}),
    )])
    .await?;
    let app = start(home.path(), &model).await?;
    let client = &app.client;
    let outcome = async {
        wait_for_text(client, "#model-pill", "mock/long-model").await?;
        click(client, "#composer-input").await?;
        keys(client, "Wait for the build\u{E007}").await?;
        wait_for_text(client, "li.tool.running[data-tool='bash']", "running").await?;
        // Esc stops the running turn, as the Stop button does.
        keys(client, "\u{E00C}").await?;
        wait_for_text(client, "#messages .stopped-mark", "Stopped.").await?;
        wait_for_text(client, "li.tool.stopped[data-tool='bash']", "stopped").await?;
        Ok::<_, Box<dyn std::error::Error>>(())
    }
    .await;
    app.close().await;
    outcome?;

    let app = reopen(home.path(), &model, "Wait for the build").await?;
    let client = &app.client;
    let outcome = async {
        wait_for_text(client, "#messages .stopped-mark", "Stopped.").await?;
        wait_for_text(client, "li.tool.stopped[data-tool='bash']", "stopped").await?;
        screenshot(client, "stopped-reopened").await?;
        Ok(())
    }
    .await;
    app.close().await;
    outcome
}

/// A reply that fails says what is wrong and what to do in plain words, and offers the fix:
/// Settings for a key the server refused, and Retry, which runs the message again in place.
#[tokio::test]
#[ignore = "needs a display, tauri-driver and WebKitWebDriver: run through ./run test"]
async fn a_failed_reply_offers_settings_and_retry() -> TestResult {
    let home = tempfile::tempdir()?;
    let model = MockServer::start(vec![
        cairn_test_support::Reply::Status {
            status: 401,
            retry_after: None,
            body: r#"{"error": {"message": "Incorrect API key provided"}}"#.into(),
        },
        text_reply("The tomatoes need water."),
    ])
    .await?;
    let app = start(home.path(), &model).await?;
    let client = &app.client;
    let outcome = async {
        wait_for_text(client, "#model-pill", "mock/long-model").await?;
        click(client, "#composer-input").await?;
        keys(client, "How is the garden?\u{E007}").await?;
        wait_for_text(client, "#messages .failure", "Incorrect API key provided").await?;
        wait_for_text(client, "#messages .failure-hint", "did not accept the key").await?;
        screenshot(client, "reply-failed-auth").await?;
        // Settings is one click away…
        click(client, "#messages .open-settings").await?;
        wait_for_text(client, ".settings-page", "config").await?;
        // …and back in the task, Retry runs the message again: the answer replaces the failure.
        click(client, "[data-title='How is the garden?'] .task").await?;
        click(client, "#messages .retry").await?;
        wait_for_text(client, "#messages", "The tomatoes need water.").await?;
        let failures = client
            .execute(
                "return document.querySelectorAll('#messages .failure-block').length;",
                vec![],
            )
            .await?;
        assert_eq!(
            failures,
            json!(0),
            "the failed reply made way for the answer"
        );
        let asked = model.requests();
        assert_eq!(asked.len(), 2);
        let person: Vec<&str> = asked[1]["messages"]
            .as_array()
            .map(|m| {
                m.iter()
                    .filter(|m| m["role"] == "user")
                    .filter_map(|m| m["content"].as_str())
                    .collect()
            })
            .unwrap_or_default();
        assert_eq!(
            person
                .iter()
                .filter(|c| c.contains("How is the garden?"))
                .count(),
            1,
            "the message ran again once, not twice: {person:?}"
        );
        Ok(())
    }
    .await;
    app.close().await;
    outcome
}

/// While a failed model request waits to be sent again, the reply says so (not a bare "…"), and
/// the answer replaces the notice when it comes.
#[tokio::test]
#[ignore = "needs a display, tauri-driver and WebKitWebDriver: run through ./run test"]
async fn a_retried_request_says_so_until_the_answer_comes() -> TestResult {
    let home = tempfile::tempdir()?;
    let busy = || cairn_test_support::Reply::Status {
        status: 503,
        retry_after: None,
        body: r#"{"error": {"message": "the server is overloaded"}}"#.into(),
    };
    let model = MockServer::start(vec![busy(), busy(), text_reply("Here it is.")]).await?;
    let app = start(home.path(), &model).await?;
    let client = &app.client;
    let outcome = async {
        wait_for_text(client, "#model-pill", "mock/long-model").await?;
        click(client, "#composer-input").await?;
        keys(client, "Are you there?\u{E007}").await?;
        let notice = wait_for_text(client, "#messages .retrying", "Trying again in").await?;
        assert!(notice.contains("overloaded"), "{notice}");
        screenshot(client, "reply-retrying").await?;
        wait_for_text(client, "#messages", "Here it is.").await?;
        assert_eq!(
            common::text_of(client, "#messages .retrying").await?,
            None,
            "the notice goes when the answer comes"
        );
        assert_eq!(model.requests().len(), 3);
        Ok(())
    }
    .await;
    app.close().await;
    outcome
}

/// With no microphone (none on this display's machine), the mic button says so in full, in
/// view, and the composer still works.
#[tokio::test]
#[ignore = "needs a display, tauri-driver and WebKitWebDriver: run through ./run test"]
async fn without_a_microphone_the_mic_says_so_in_full() -> TestResult {
    let home = tempfile::tempdir()?;
    let model = MockServer::start(vec![text_reply("Typed instead.")]).await?;
    let app = start(home.path(), &model).await?;
    let client = &app.client;
    let outcome = async {
        wait_for_text(client, "#model-pill", "mock/long-model").await?;
        click(client, "#mic").await?;
        let said = common::wait_until_text(
            client,
            "#voice-status",
            "said why the mic cannot listen",
            common::WAIT,
            |t| !t.is_empty() && !t.starts_with("Listening") && !t.starts_with("Transcribing"),
        )
        .await?;
        let whole = client
            .execute(
                "const e = document.getElementById('voice-status'); const r = e.getBoundingClientRect();\
                 return r.width > 0 && r.bottom <= window.innerHeight && r.right <= window.innerWidth \
                   && e.scrollWidth <= e.clientWidth + 1 && e.scrollHeight <= e.clientHeight + 1;",
                vec![],
            )
            .await?;
        screenshot(client, "mic-without-microphone").await?;
        assert_eq!(whole, json!(true), "the mic's error is cut off: {said}");
        ask(client, "Type it then", "Typed instead.").await?;
        Ok(())
    }
    .await;
    app.close().await;
    outcome
}

/// What a reply recalled from memory is still shown, with why, when its task is reopened.
#[tokio::test]
#[ignore = "needs a display, tauri-driver and WebKitWebDriver: run through ./run test"]
async fn a_reopened_reply_keeps_what_it_recalled() -> TestResult {
    let home = tempfile::tempdir()?;
    common::cairn(
        home.path(),
        &[
            "memory",
            "add",
            "Last summer the basil grew best in the south bed, next to the tomatoes",
        ],
    )?;
    let model = MockServer::start(vec![text_reply("The south bed, as last summer.")]).await?;
    let app = start(home.path(), &model).await?;
    let client = &app.client;
    let outcome = async {
        ask(
            client,
            "Where should the basil go this year?",
            "The south bed",
        )
        .await?;
        wait_for_text(client, "#messages .recalled", "1 memory recalled").await?;
        Ok::<_, Box<dyn std::error::Error>>(())
    }
    .await;
    app.close().await;
    outcome?;

    let app = reopen(home.path(), &model, "Where should the basil go this year?").await?;
    let client = &app.client;
    let outcome = async {
        wait_for_text(client, "#messages", "The south bed, as last summer.").await?;
        wait_for_text(client, "#messages .recalled", "1 memory recalled").await?;
        wait_for_text(
            client,
            "#messages .recalled-block",
            "basil grew best in the south bed",
        )
        .await?;
        screenshot(client, "reopened-recalled").await?;
        Ok(())
    }
    .await;
    app.close().await;
    outcome
}

/// A finished reply offers thumbs; a rating reaches memory as the episode's reward.
#[tokio::test]
#[ignore = "needs a display, tauri-driver and WebKitWebDriver: run through ./run test"]
async fn a_reply_is_rated_and_memory_keeps_the_reward() -> TestResult {
    let home = tempfile::tempdir()?;
    let model = MockServer::start(vec![text_reply("Quote the path on line 12.")]).await?;
    let app = start(home.path(), &model).await?;
    let client = &app.client;
    let outcome = async {
        wait_for_text(client, "#model-pill", "mock/long-model").await?;
        let input = client.find(Locator::Id("composer-input")).await?;
        input.send_keys("why does the deploy script fail?").await?;
        input.send_keys("\u{E007}").await?;
        wait_for_text(client, "#messages", "Quote the path on line 12.").await?;
        click(client, "#messages li.from-cairn .rate-up").await?;
        wait_for_text(client, "#messages .rate-noted", "remember").await?;
        let pressed = client
            .execute(
                "return document.querySelector('#messages .rate-up').getAttribute('aria-pressed');",
                vec![],
            )
            .await?;
        assert_eq!(pressed, json!("true"));
        screenshot(client, "reply-rated").await?;
        let found: serde_json::Value = serde_json::from_str(&common::cairn(
            home.path(),
            &["memory", "search", "deploy script fail", "--json"],
        )?)?;
        let memory = &found["hits"][0]["memory"];
        assert_eq!(memory["metadata"]["reward"], 1.0, "{found}");
        assert_eq!(memory["metadata"]["value"], 1.0, "{found}");
        Ok(())
    }
    .await;
    app.close().await;
    outcome
}

/// Issue 48, finding 14: "hello" recalls nothing (it brought back an imported turn about `ls`),
/// and what a reply recalled says why in plain words, the ranking's numbers behind a disclosure.
#[tokio::test]
#[ignore = "needs a display, tauri-driver and WebKitWebDriver: run through ./run test"]
async fn a_recall_says_why_in_plain_words_and_hello_recalls_nothing() -> TestResult {
    let home = tempfile::tempdir()?;
    for text in [
        "User: hello, what is in this folder?\nAssistant: I ran ls: Cargo.toml, src and README.md.",
        "The staging database password rotates every 90 days",
    ] {
        common::cairn(home.path(), &["memory", "add", text])?;
    }
    let model = MockServer::start(vec![
        text_reply("Hello! What are we working on?"),
        text_reply("Every 90 days."),
    ])
    .await?;
    let app = start(home.path(), &model).await?;
    let client = &app.client;
    let outcome = async {
        ask(client, "hello", "What are we working on?").await?;
        ask(
            client,
            "When does the staging database password rotate?",
            "Every 90 days.",
        )
        .await?;
        wait_for_text(client, "#messages .recalled", "1 memory recalled").await?;
        // Only the second reply recalled anything.
        let recalls = client
            .find_all(Locator::Css("#messages .recalled-block"))
            .await?;
        assert_eq!(recalls.len(), 1, "a greeting recalled something");
        click(client, "#messages .recalled-block > summary").await?;
        let why = wait_for_text(
            client,
            "#messages .recalled-why",
            "Matches your words “staging database password rotate”",
        )
        .await?;
        assert!(why.contains("today"), "{why}");
        assert!(!why.contains("fts"), "{why}");
        // The numbers are behind their own disclosure.
        let numbers = client
            .find(Locator::Css("#messages .recalled-numbers"))
            .await?;
        assert_eq!(
            numbers.attr("open").await?,
            None,
            "the numbers show before asked for"
        );
        click(client, "#messages .recalled-numbers > summary").await?;
        assert!(
            numbers.attr("open").await?.is_some(),
            "the numbers did not open"
        );
        wait_for_text(
            client,
            "#messages .recalled-numbers .recalled-meta",
            "fts #1",
        )
        .await?;
        screenshot(client, "recall-why-plain-words").await?;
        Ok(())
    }
    .await;
    app.close().await;
    outcome
}

/// Issue 48, finding 13: while a slow model has said nothing yet, the reply says what it waits
/// for with a counter that ticks, and Stop stays at hand.
#[tokio::test]
#[ignore = "needs a display, tauri-driver and WebKitWebDriver: run through ./run test"]
async fn a_slow_model_shows_what_the_turn_waits_for_with_its_seconds() -> TestResult {
    use cairn_test_support::{delta, finish, Reply};
    let home = tempfile::tempdir()?;
    // The first chunk says nothing; the words come five seconds later.
    let slow = match Reply::sse(&[
        delta(json!({ "role": "assistant" })),
        delta(json!({ "content": "Here at last." })),
        finish("stop"),
    ]) {
        Reply::Sse { data, .. } => Reply::Sse {
            data,
            pause: Duration::from_secs(5),
        },
        other => other,
    };
    let model = MockServer::start(vec![slow]).await?;
    let app = start(home.path(), &model).await?;
    let client = &app.client;
    let outcome = async {
        wait_for_text(client, "#model-pill", "mock/long-model").await?;
        click(client, "#composer-input").await?;
        keys(client, "Take your time\u{E007}").await?;
        let started = Instant::now();
        let first =
            wait_for_text(client, "#messages .turn-status", "Waiting for long-model…").await?;
        let first_status = started.elapsed();
        assert!(first.contains(" s"), "{first}");
        // The counter moves while nothing else does.
        wait_for_text(client, "#messages .turn-status", "· 3 s").await?;
        assert!(
            client
                .find(Locator::Css("#stop"))
                .await?
                .is_displayed()
                .await?,
            "Stop is not at hand while the turn waits"
        );
        screenshot(client, "waiting-status-line").await?;
        eprintln!("time to the first status: {first_status:?}");
        wait_for_text(client, "#messages", "Here at last.").await?;
        assert!(
            client
                .find_all(Locator::Css("#messages .turn-status"))
                .await?
                .is_empty(),
            "the status line stays after the words came"
        );
        Ok(())
    }
    .await;
    app.close().await;
    outcome
}

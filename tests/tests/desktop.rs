//! The real desktop app, end to end: built, started under a display through `tauri-driver` +
//! `WebKitWebDriver`, driven like a person would (click, type, read), a Tauri command called from the
//! page, the local API probed with `runtime.json`, and screenshots kept under `target/e2e/`.
//!
//! Needs a display, `tauri-driver`, `WebKitWebDriver` and a built UI, so it is ignored by a plain
//! `cargo test`; `./run test` runs it with `--include-ignored` under Xvfb.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use cairn_config::read_runtime;
use cairn_protocol::{RuntimeInfo, StatusReport};
use cairn_test_support::{delta, finish, text_reply, tool_call_reply, MockServer, Reply};
use common::{
    cairn, launch_at, run, screenshot, switch_to_window_titled, text_of, wait_for_text, TestResult,
};
use fantoccini::{Client, Locator};
use serde_json::json;

async fn wait_for_runtime(home: &Path) -> TestResult<RuntimeInfo> {
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        if let Ok(Some(info)) = read_runtime(&home.join("runtime.json")) {
            return Ok(info);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Err("the app never wrote runtime.json".into())
}

#[tokio::test]
#[ignore = "needs a display, tauri-driver and WebKitWebDriver: run through ./run test"]
async fn the_desktop_app_starts_and_answers() -> TestResult {
    let home = tempfile::tempdir()?;
    seed_task(home.path())?;
    // The app keeps other agents' history in sync: it gets an empty home, not ours.
    let app = launch_at(home.path(), &[]).await?;
    let outcome = drive(&app.client, home.path()).await;
    if outcome.is_err() {
        app.close().await;
        return outcome;
    }
    // A polite stop (SIGTERM, as a session logout sends) exits cleanly and removes runtime.json.
    let runtime = home.path().join("runtime.json");
    let pid = read_runtime(&runtime)?
        .ok_or("runtime.json is missing")?
        .pid;
    Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()?;
    let deadline = Instant::now() + Duration::from_secs(10);
    while runtime.exists() {
        if Instant::now() > deadline {
            return Err("runtime.json is still there after the app closed".into());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Ok(())
}

async fn drive(client: &Client, home: &Path) -> TestResult {
    // The workbench asks the backend for its status on start.
    let version = env!("CARGO_PKG_VERSION");
    wait_for_text(
        client,
        "#status-line",
        &format!("Cairn {version} · API on 127.0.0.1:"),
    )
    .await?;
    wait_for_text(client, "#model-pill", "No model configured").await?;
    // A task from an earlier run is listed (under "Older"), and opens with its transcript.
    wait_for_text(client, "#task-list", "Older").await?;
    wait_for_text(client, "#task-list", "Fix the flaky login test").await?;
    client
        .find(Locator::Css(
            "[data-title='Fix the flaky login test'] .task",
        ))
        .await?
        .click()
        .await?;
    wait_for_text(
        client,
        "#messages",
        "The login test waits for the session cookie",
    )
    .await?;
    wait_for_text(client, "#messages", "bash: cargo test login").await?;
    // Pinned, it moves to the top group; Ctrl+K goes to the search box.
    client
        .find(Locator::Css(
            "[data-title='Fix the flaky login test'] button[aria-label='Pin']",
        ))
        .await?
        .click()
        .await?;
    wait_for_text(client, "#task-list", "Pinned").await?;
    screenshot(client, "workbench-stored-task").await?;
    client
        .find(Locator::Id("composer-input"))
        .await?
        .send_keys("\u{E009}k")
        .await?;
    assert_eq!(common::focused(client).await?, "task-search");
    client.find(Locator::Id("new-task")).await?.click().await?;

    // Click: check the status again.
    client
        .find(Locator::Id("check-status"))
        .await?
        .click()
        .await?;
    wait_for_text(client, "#status-line", "API on 127.0.0.1:").await?;
    wait_for_text(client, ".setup-card", "Connect a model").await?;
    screenshot(client, "workbench").await?;

    // Type a task and press Enter with no model set up: nothing is sent and no task is made; the
    // words stay in the composer and the setup stays in view, saying what to do.
    let input = client.find(Locator::Id("composer-input")).await?;
    input.send_keys("Summarise yesterday's notes").await?;
    input.send_keys("\u{E007}").await?;
    wait_for_text(client, "#notice", "Connect a model first").await?;
    wait_for_text(client, ".setup-card", "Connect a model").await?;
    assert_eq!(
        input.prop("value").await?.as_deref(),
        Some("Summarise yesterday's notes"),
        "the message is kept"
    );
    assert!(
        !text_of(client, "#task-list")
            .await?
            .unwrap_or_default()
            .contains("Summarise yesterday's notes"),
        "no task is made for a message that was not sent"
    );
    screenshot(client, "workbench-no-model").await?;
    input.clear().await?;

    // Configure a model (a scripted OpenAI-compatible server) and ask again: the answer streams in,
    // with no restart.
    let model = MockServer::start(vec![
        Reply::sse(&[
            delta(json!({ "content": "Start with **tomatoes**" })),
            delta(json!({ "content": " and basil." })),
            finish("stop"),
        ]),
        // The tools flow (below): a command that asks permission, a question, an answer.
        tool_call_reply("c1", "bash", json!({"command": "echo planted"})),
        tool_call_reply(
            "c2",
            "ask_user",
            json!({"question": "Which bed gets the basil?", "options": ["north", "south"]}),
        ),
        text_reply("Basil goes in the **south** bed."),
        // The pet's question continues the task that just finished.
        text_reply("Water it at dawn."),
    ])
    .await?;
    std::fs::write(
        home.join("config.toml"),
        format!(
            "[agent]\nmodel = \"mock/garden-model\"\nyolo = false\n\n[providers.mock]\nbase_url = \"{}\"\nmodels = [\"garden-model\"]\n",
            model.base_url
        ),
    )?;
    input.send_keys("Plan my vegetable garden").await?;
    input.send_keys("\u{E007}").await?;
    wait_for_text(client, "#messages", "Start with tomatoes and basil.").await?;
    let sent = model.requests();
    let asked = sent.first().ok_or("the model was never asked")?;
    assert_eq!(asked["model"], "garden-model");
    let last = asked["messages"]
        .as_array()
        .and_then(|m| m.last().cloned())
        .unwrap_or_default();
    assert!(last["content"]
        .as_str()
        .unwrap_or_default()
        .starts_with("Plan my vegetable garden"));
    wait_for_text(client, "#model-pill", "mock/garden-model").await?;
    screenshot(client, "workbench-task").await?;

    voice(client, home, &model.base_url).await?;
    tools(client).await?;
    slash_commands(client).await?;

    the_app_and_its_api_answer(client, home, version).await?;
    the_pet_talks_and_hides(client, &model).await
}

/// A typed Tauri command, called the way the UI calls it, and the local API behind its guards.
async fn the_app_and_its_api_answer(client: &Client, home: &Path, version: &str) -> TestResult {
    // A typed Tauri command, called the way the UI calls it.
    let answer = client
        .execute_async(
            "const done = arguments[arguments.length - 1];\
             window.__TAURI_INTERNALS__.invoke('app_status', {}).then(done, e => done({ error: String(e) }));",
            vec![],
        )
        .await?;
    let report: StatusReport = serde_json::from_value(answer)?;
    assert_eq!(report.version, version);
    assert!(report.api.running);
    assert_eq!(report.paths.home, home.display().to_string());

    // The API, found through runtime.json the way the CLI and hooks find it.
    let info = wait_for_runtime(home).await?;
    assert_eq!(report.api.url.as_deref(), Some(info.api_url.as_str()));
    let http = reqwest::Client::builder().no_proxy().build()?;
    let get = |path: &str| http.get(format!("{}{path}", info.api_url));
    assert_eq!(get("/api/v1/health").send().await?.status(), 200);
    assert_eq!(get("/api/v1/status").send().await?.status(), 401);
    assert_eq!(
        get("/api/v1/status")
            .bearer_auth("wrong")
            .send()
            .await?
            .status(),
        401
    );
    assert_eq!(
        get("/api/v1/status")
            .bearer_auth(&info.token)
            .send()
            .await?
            .status(),
        200
    );
    let foreign = get("/api/v1/status")
        .bearer_auth(&info.token)
        .header("origin", "https://evil.example");
    assert_eq!(foreign.send().await?.status(), 403);
    let rebinding = get("/api/v1/status")
        .bearer_auth(&info.token)
        .header("host", "evil.example");
    assert_eq!(rebinding.send().await?.status(), 403);
    Ok(())
}

/// The pet: created when first asked for, its badge and bubble (which continues the last task
/// with `model`), its size, and the global shortcut that hides and shows it.
async fn the_pet_talks_and_hides(client: &Client, model: &MockServer) -> TestResult {
    // The pet is created when first asked for (here from the sidebar), not at start.
    assert!(
        pet_window()?.is_none(),
        "the pet waits until it is asked for"
    );
    client
        .find(Locator::Id("toggle-pet"))
        .await?
        .click()
        .await?;
    switch_to_window_titled(client, "Cairn pet").await?;
    // Just created: its page mounts a moment after the window has its title.
    wait_for_text(client, ".pet-stones", "").await?;
    screenshot(client, "pet").await?;

    // The badge counts the task that just finished; the bubble talks to Cairn and continues it.
    wait_for_text(client, "#pet-badge", "1").await?;
    // A click on the stones opens the bubble, with the caret in it.
    client
        .find(Locator::Id("pet-stones"))
        .await?
        .click()
        .await?;
    wait_until_focused(client, "pet-input").await?;
    let bubble = client.find(Locator::Id("pet-input")).await?;
    bubble.send_keys("When should I water it?").await?;
    bubble.send_keys("\u{E007}").await?;
    wait_for_text(client, "#pet-reply", "Water it at dawn.").await?;
    screenshot(client, "pet-bubble").await?;
    let asked = model.requests();
    let last = asked
        .last()
        .ok_or("the pet's question never reached the model")?;
    assert_eq!(
        last["model"], "big-model",
        "the model chosen with /model answers"
    );
    let said: Vec<String> = last["messages"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert!(
        said.iter()
            .any(|c| c.starts_with("Where should the basil go?")),
        "the pet continued the task that had just finished"
    );
    client
        .find(Locator::Css(".pet-close"))
        .await?
        .click()
        .await?;

    // Back to the stones, 160×160, once the bubble closes; the global shortcut hides and shows it.
    wait_until(
        || {
            let pet = pet_window()?.ok_or("the pet window is not visible")?;
            let geometry = run("xdotool", &["getwindowgeometry", &pet])?;
            Ok(geometry.contains("Geometry: 160x160"))
        },
        "the pet to shrink back to 160×160",
    )
    .await?;
    run("xdotool", &["key", "ctrl+shift+space"])?;
    wait_until(
        || Ok(pet_window()?.is_none()),
        "the shortcut to hide the pet",
    )
    .await?;
    run("xdotool", &["key", "ctrl+shift+space"])?;
    wait_until(
        || Ok(pet_window()?.is_some()),
        "the shortcut to show the pet",
    )
    .await?;
    Ok(())
}

/// A turn with tools: the command waits for permission (Allow), ask_user shows a form (a choice,
/// Send answer), the tool cards show what ran, the answer renders as Markdown.
async fn tools(client: &Client) -> TestResult {
    let input = client.find(Locator::Id("composer-input")).await?;
    input.send_keys("Where should the basil go?").await?;
    input.send_keys("\u{E007}").await?;
    wait_for_text(client, ".approval", "Cairn wants to run bash").await?;
    wait_for_text(client, "#stop", "Stop").await?;
    screenshot(client, "tools-approval").await?;
    client.find(Locator::Id("approve")).await?.click().await?;
    wait_for_text(client, ".question-form", "Which bed gets the basil?").await?;
    screenshot(client, "tools-question").await?;
    client
        .find(Locator::XPath("//label[contains(., 'south')]/input"))
        .await?
        .click()
        .await?;
    client.find(Locator::Id("answer")).await?.click().await?;
    wait_for_text(client, "#messages", "Basil goes in the south bed.").await?;
    wait_for_text(client, "#messages", "bash: echo planted").await?;
    // The memory that informed the answer is shown, with why it was chosen.
    wait_for_text(client, ".recalled", "1 memory recalled").await?;
    wait_for_text(client, ".recalled-block", "What was recalled, and why").await?;
    let why = client
        .execute(
            "const d = document.querySelector('.recalled-block'); d.open = true; return d.textContent;",
            vec![],
        )
        .await?;
    assert!(
        why.as_str()
            .unwrap_or_default()
            .contains("basil grew best in the south bed"),
        "{why}"
    );
    let strong = client
        .execute("return Array.from(document.querySelectorAll('#messages strong')).map(e => e.textContent).join(',');", vec![])
        .await?;
    assert!(
        strong.as_str().unwrap_or_default().contains("south"),
        "{strong}"
    );
    wait_for_text(client, "#send", "Send").await?;
    screenshot(client, "tools-done").await?;
    Ok(())
}

/// Slash commands: the palette filters as you type, /model lists the models, an unknown command
/// says so, /new starts afresh.
async fn slash_commands(client: &Client) -> TestResult {
    let input = client.find(Locator::Id("composer-input")).await?;
    input.send_keys("/mo").await?;
    wait_for_text(client, "#slash-palette", "/model").await?;
    screenshot(client, "slash-palette").await?;
    input.send_keys("del").await?;
    input.send_keys("\u{E007}").await?;
    wait_for_text(client, "#notice", "mock/garden-model  (in use)").await?;
    // What the server offers besides, once it answers.
    wait_for_text(
        client,
        "#notice",
        "Also offered by mock: small-model, big-model",
    )
    .await?;
    screenshot(client, "slash-model").await?;
    // A switch is the new default: the chip says so at once (and the pet's question, below,
    // goes to it).
    input.send_keys("/model mock/big-model").await?;
    input.send_keys("\u{E007}").await?;
    wait_for_text(client, "#notice", "The chat now uses mock/big-model").await?;
    wait_for_text(client, "#model-pill", "mock/big-model").await?;
    input.send_keys("/model").await?;
    input.send_keys("\u{E007}").await?;
    wait_for_text(client, "#notice", "mock/big-model  (in use)").await?;
    input.send_keys("/bogus").await?;
    input.send_keys("\u{E007}").await?;
    wait_for_text(
        client,
        "#notice",
        "There is no /bogus command. Type /help for the list.",
    )
    .await?;
    input.send_keys("/new").await?;
    input.send_keys("\u{E007}").await?;
    wait_for_text(client, ".stream-title", "New task").await?;
    Ok(())
}

/// Voice input through the WAV input source: the mic button pressed, the speech transcribed on the
/// device, the words in the composer (not sent).
async fn voice(client: &Client, home: &Path, model_url: &str) -> TestResult {
    let ct2 = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_default()
        .join(".cairn/models/whisper-ct2/tiny.en");
    if !ct2.join("model.bin").exists() {
        if std::env::var_os("CAIRN_REQUIRE_MODELS").is_some() {
            return Err(format!("{} is missing: run ./run setup", ct2.display()).into());
        }
        eprintln!(
            "skipped the voice flow: no whisper model at {}",
            ct2.display()
        );
        return Ok(());
    }
    // As setup leaves it: the downloaded model, converted by the app on first use.
    let downloaded = home.join("models/whisper-ct2");
    std::fs::create_dir_all(&downloaded)?;
    std::os::unix::fs::symlink(&ct2, downloaded.join("tiny.en"))?;
    let eval = std::env::var_os("CAIRN_EVAL_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/eval"));
    let wav = eval.join("audio/remember_to_water_the_plants__espeak-en-s140__16k_mono.wav");
    let wav = if wav.exists() {
        wav
    } else {
        let made = home.join("speech.wav");
        run(
            "espeak-ng",
            &[
                "-v",
                "en",
                "-s",
                "140",
                "-w",
                &made.display().to_string(),
                "remember to water the plants",
            ],
        )?;
        made
    };
    std::fs::write(
        home.join("config.toml"),
        format!(
            "[agent]\nmodel = \"mock/garden-model\"\nyolo = false\n\n[providers.mock]\nbase_url = \"{model_url}\"\nmodels = [\"garden-model\"]\n\n[voice]\ninput = \"{}\"\n",
            wav.display()
        ),
    )?;
    let mic = client.find(Locator::Id("mic")).await?;
    mic.click().await?;
    wait_for_text(client, "#voice-status", "Listening").await?;
    screenshot(client, "voice-listening").await?;
    mic.click().await?;
    let deadline = Instant::now() + Duration::from_secs(60);
    let heard = loop {
        let value = client
            .execute(
                "return document.getElementById('composer-input').value;",
                vec![],
            )
            .await?;
        let value = value.as_str().unwrap_or_default().to_lowercase();
        if value.contains("water the plants") {
            break value;
        }
        if Instant::now() > deadline {
            let status = client
                .execute(
                    "return document.getElementById('voice-status').textContent;",
                    vec![],
                )
                .await?;
            return Err(format!("no transcript in the composer (status: {status})").into());
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert!(heard.starts_with("remember to water the plants"), "{heard}");
    screenshot(client, "voice-transcribed").await?;
    // Not sent by itself: the person edits and sends.
    let messages = client
        .execute(
            "return document.getElementById('messages').textContent;",
            vec![],
        )
        .await?;
    assert!(!messages
        .as_str()
        .unwrap_or_default()
        .contains("water the plants"));
    client
        .execute("const i = document.getElementById('composer-input'); i.value = ''; i.dispatchEvent(new Event('input'));", vec![])
        .await?;
    Ok(())
}

/// A conversation stored by an earlier run, ten days old.
fn seed_task(home: &Path) -> TestResult {
    let dir = home.join("data/sessions");
    std::fs::create_dir_all(&dir)?;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)?
        .as_millis() as i64;
    let old = now - 10 * 86_400_000;
    let session = json!({
        "id": "seeded-1", "title": "Fix the flaky login test", "created_at": old, "updated_at": old,
        "messages": [
            {"role": "system", "content": "You are Cairn."},
            {"role": "user", "content": "Fix the flaky login test\n\nToday is 2026-11-19."},
            {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "name": "bash", "arguments": "{\"command\": \"cargo test login\"}"}]},
            {"role": "tool", "content": "[#0001]\ntest login ... FAILED", "tool_call_id": "c1"},
            {"role": "assistant", "content": "The login test waits for the session cookie; I made it wait for the redirect instead."}
        ]
    });
    std::fs::write(
        dir.join("seeded-1.json"),
        serde_json::to_vec_pretty(&session)?,
    )?;
    // And a memory the basil question will recall.
    cairn(
        home,
        &[
            "memory",
            "add",
            "Last summer the basil grew best in the south bed, next to the tomatoes",
        ],
    )?;
    Ok(())
}

/// The X window id of the visible pet, if it is visible.
fn pet_window() -> TestResult<Option<String>> {
    let found = run(
        "xdotool",
        &["search", "--onlyvisible", "--name", "^Cairn pet$"],
    )?;
    Ok(found.lines().next().map(str::to_owned))
}

async fn wait_until(mut check: impl FnMut() -> TestResult<bool>, what: &str) -> TestResult {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if check()? {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Err(format!("timed out waiting for {what}").into())
}

/// Waits until the element with `id` has the keyboard focus.
async fn wait_until_focused(client: &Client, id: &str) -> TestResult {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let focused = common::focused(client).await?;
        if focused == id {
            return Ok(());
        }
        if Instant::now() > deadline {
            return Err(format!("{id} never had the focus (it is on {focused})").into());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

//! The app's rough edges a new user hit (issue #48, findings 9–12, 15, 16), each as that person
//! met it, against the real app under Xvfb: Settings scrolled to its end, the header's model after
//! Settings changed it and `/model`'s list, Ctrl+N from another page, notices that stay where they
//! were said and fade, Markdown replies (lists, code with Copy, a reply's Copy), the pet's first
//! place, task rows at 720 px and the model descriptions in Chinese. Screenshots go to
//! `target/e2e/rough-*.png`.
//!
//! Ignored by a plain `cargo test`; `./run test` runs it under Xvfb.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use cairn_test_support::{text_reply, MockServer};
use common::{click, focused, keys, screenshot, text_of, wait_for_text, App, TestResult};
use fantoccini::Client;
use serde_json::{json, Value};

/// The app alone on the display (its window's place and the pointer matter), on a fresh home
/// whose config points at `model`, plus `extra` config.
async fn start(home: &Path, model: &MockServer, extra: &str) -> TestResult<App> {
    std::fs::write(
        home.join("config.toml"),
        format!(
            "[agent]\nmodel = \"mock/long-model\"\n\n[providers.mock]\nbase_url = \"{}\"\nmodels = [\"long-model\", \"other-model\"]\n\n[sync]\nauto = false\n{extra}",
            model.base_url
        ),
    )?;
    common::launch_alone_at_window(home, &[], "Cairn").await
}

/// `titles` as stored tasks, the first the newest.
fn seed_tasks(home: &Path, titles: &[&str]) -> TestResult {
    let dir = home.join("data/sessions");
    std::fs::create_dir_all(&dir)?;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)?
        .as_millis() as i64;
    for (i, title) in titles.iter().enumerate() {
        let session = json!({
            "id": format!("rough-{i}"), "title": title,
            "created_at": now - 1000 * i as i64, "updated_at": now - 1000 * i as i64,
            "messages": [
                {"role": "system", "content": "You are Cairn."},
                {"role": "user", "content": format!("Question {i}")},
                {"role": "assistant", "content": format!("Answer {i}")},
            ],
        });
        std::fs::write(
            dir.join(format!("rough-{i}.json")),
            serde_json::to_vec(&session)?,
        )?;
    }
    Ok(())
}

/// Runs `script` until it returns `true` (`what` says what is awaited, for the error).
async fn wait_until(client: &Client, what: &str, script: &str, within: Duration) -> TestResult {
    let deadline = Instant::now() + within;
    let mut last = Value::Null;
    while Instant::now() < deadline {
        last = client.execute(script, vec![]).await?;
        if last == json!(true) {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Err(format!("never {what} (last: {last})").into())
}

/// A window on screen: where and how big (X's own figures).
#[derive(Debug, Clone, Copy)]
struct Screen {
    x: f64,
    y: f64,
    width: f64,
    height: f64,
}

impl Screen {
    fn overlaps(self, other: Screen) -> bool {
        self.x < other.x + other.width
            && other.x < self.x + self.width
            && self.y < other.y + other.height
            && other.y < self.y + self.height
    }
}

/// The X window titled `name` (exactly), if visible.
fn window_id(name: &str) -> TestResult<Option<String>> {
    let found = common::run(
        "xdotool",
        &["search", "--onlyvisible", "--name", &format!("^{name}$")],
    )?;
    Ok(found.lines().next().map(str::to_owned))
}

/// Where the X window `id` is on screen.
fn geometry(id: &str) -> TestResult<Screen> {
    let said = common::run("xdotool", &["getwindowgeometry", "--shell", id])?;
    let value = |key: &str| -> TestResult<f64> {
        said.lines()
            .find_map(|l| l.strip_prefix(&format!("{key}=")))
            .and_then(|v| v.trim().parse().ok())
            .ok_or_else(|| format!("no {key} in {said:?}").into())
    };
    Ok(Screen {
        x: value("X")?,
        y: value("Y")?,
        width: value("WIDTH")?,
        height: value("HEIGHT")?,
    })
}

/// Resizes the workbench's window and waits for the page to see it.
async fn resize(client: &Client, width: u32, height: u32) -> TestResult {
    let window = window_id("Cairn")?.ok_or("the workbench is not on screen")?;
    common::run(
        "xdotool",
        &[
            "windowsize",
            &window,
            &width.to_string(),
            &height.to_string(),
        ],
    )?;
    wait_until(
        client,
        &format!("became {width}×{height}"),
        &format!("return window.innerWidth === {width} && window.innerHeight === {height};"),
        common::WAIT,
    )
    .await
}

/// The element's box in the page: left, top, right, bottom.
async fn rect(client: &Client, css: &str) -> TestResult<[f64; 4]> {
    let found = client
        .execute(
            "const e = document.querySelector(arguments[0]); if (!e) return null;\
             const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom];",
            vec![json!(css)],
        )
        .await?;
    let all: Vec<f64> = found
        .as_array()
        .ok_or_else(|| format!("no {css}"))?
        .iter()
        .filter_map(Value::as_f64)
        .collect();
    all.try_into()
        .map_err(|_| format!("no box for {css}").into())
}

/// Finding 9: scrolled past its end, Settings stays in the window; the window's content never
/// moves up and leaves the lower half blank.
#[tokio::test]
#[ignore = "needs a display, tauri-driver and WebKitWebDriver: run through ./run test"]
async fn settings_scrolled_past_its_end_keeps_the_window_in_place() -> TestResult {
    let home = tempfile::tempdir()?;
    let model = MockServer::start(vec![]).await?;
    let app = start(home.path(), &model, "").await?;
    let client = &app.client;
    let outcome = async {
        wait_for_text(client, "#model-pill", "mock/long-model").await?;
        click(client, "#page-settings").await?;
        wait_for_text(client, ".settings-page", "Diagnostics").await?;
        let window = window_id("Cairn")?.ok_or("the workbench is not on screen")?;
        let at = geometry(&window)?;
        // The wheel, as a person scrolls: down to the end and on past it.
        for _ in 0..3 {
            common::run(
                "xdotool",
                &[
                    "mousemove",
                    &format!("{}", at.x + at.width * 0.6),
                    &format!("{}", at.y + at.height * 0.5),
                    "click",
                    "--repeat",
                    "40",
                    "--delay",
                    "10",
                    "5",
                ],
            )?;
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
        let state = client
            .execute(
                "const p = document.querySelector('main.page');\
                 return { page_at_end: p.scrollTop + p.clientHeight >= p.scrollHeight - 2,\
                          document_scrolled: document.scrollingElement.scrollTop,\
                          document_taller_by: document.scrollingElement.scrollHeight - window.innerHeight,\
                          workbench_top: document.querySelector('.workbench').getBoundingClientRect().top };",
                vec![],
            )
            .await?;
        screenshot(client, "rough-settings-scrolled-to-the-end").await?;
        assert_eq!(state["page_at_end"], json!(true), "{state}");
        assert_eq!(state["document_scrolled"], json!(0), "{state}");
        assert_eq!(state["workbench_top"], json!(0), "{state}");
        assert!(
            state["document_taller_by"].as_f64().unwrap_or(1.0) <= 0.0,
            "the window's content is taller than the window: {state}"
        );
        Ok(())
    }
    .await;
    app.close().await;
    outcome
}

/// Finding 10: the default model changed in Settings shows in the header at once, and `/model`
/// lists Cairn's own models beside the providers'.
#[tokio::test]
#[ignore = "needs a display, tauri-driver and WebKitWebDriver: run through ./run test"]
async fn a_default_changed_in_settings_shows_in_the_header_and_model_lists_own_models() -> TestResult
{
    let home = tempfile::tempdir()?;
    let model = MockServer::start(vec![]).await?;
    let app = start(home.path(), &model, "").await?;
    let client = &app.client;
    let outcome = async {
        wait_for_text(client, "#model-pill", "mock/long-model").await?;
        click(client, "#page-settings").await?;
        wait_for_text(client, "#settings-default-select", "mock/other-model").await?;
        client
            .execute(
                "const s = document.getElementById('settings-default-select'); s.value = 'mock/other-model';\
                 s.dispatchEvent(new Event('change', { bubbles: true }));",
                vec![],
            )
            .await?;
        click(client, "#settings-default-save").await?;
        wait_for_text(client, "#settings-default-model", "mock/other-model").await?;
        click(client, "#new-task").await?;
        common::wait_for_text_within(
            client,
            "#model-pill",
            "mock/other-model",
            Duration::from_secs(5),
        )
        .await?;
        click(client, "#composer-input").await?;
        keys(client, "/model\u{E007}").await?;
        let listed = wait_for_text(client, "#notice", "On this device").await?;
        assert!(
            listed.contains("local/qwen2.5-coder-1.5b") && listed.contains("mock/other-model"),
            "{listed}"
        );
        screenshot(client, "rough-model-lists-own-models").await?;
        Ok(())
    }
    .await;
    app.close().await;
    outcome
}

/// Finding 11: Ctrl+N and New task from another page put the caret in the composer: what is typed
/// next lands there.
#[tokio::test]
#[ignore = "needs a display, tauri-driver and WebKitWebDriver: run through ./run test"]
async fn a_new_task_from_another_page_takes_what_is_typed() -> TestResult {
    let home = tempfile::tempdir()?;
    let model = MockServer::start(vec![]).await?;
    let app = start(home.path(), &model, "").await?;
    let client = &app.client;
    let composer_value = "return document.getElementById('composer-input').value;";
    let outcome = async {
        wait_for_text(client, "#model-pill", "mock/long-model").await?;
        click(client, "#page-settings").await?;
        wait_for_text(client, ".settings-page", "Diagnostics").await?;
        keys(client, "\u{E009}n").await?;
        // A frame later (the task's page shows again), the caret is in the composer.
        wait_until(
            client,
            "focused the composer after Ctrl+N",
            "return document.activeElement && document.activeElement.id === 'composer-input';",
            Duration::from_secs(5),
        )
        .await?;
        keys(client, "typed after Ctrl+N").await?;
        assert_eq!(focused(client).await?, "composer-input");
        assert_eq!(
            client.execute(composer_value, vec![]).await?,
            json!("typed after Ctrl+N")
        );
        click(client, "#page-memory").await?;
        wait_for_text(client, "main.page", "Memory").await?;
        click(client, "#new-task").await?;
        wait_until(
            client,
            "focused the composer after New task",
            "return document.activeElement && document.activeElement.id === 'composer-input';",
            Duration::from_secs(5),
        )
        .await?;
        keys(client, " and after New task").await?;
        assert_eq!(
            client.execute(composer_value, vec![]).await?,
            json!("typed after Ctrl+N and after New task")
        );
        screenshot(client, "rough-new-task-focus").await?;
        Ok(())
    }
    .await;
    app.close().await;
    outcome
}

/// Finding 12: a notice stays with the task where it was said and a one-line one fades; the
/// microphone's failure is said in plain words with the library's text behind it, and fades.
#[tokio::test]
#[ignore = "needs a display, tauri-driver and WebKitWebDriver: run through ./run test"]
async fn notices_stay_where_they_were_said_and_fade() -> TestResult {
    let home = tempfile::tempdir()?;
    seed_tasks(home.path(), &["Garden plan", "Tax forms"])?;
    let model = MockServer::start(vec![]).await?;
    let app = start(home.path(), &model, "").await?;
    let client = &app.client;
    let gone = |css: &str| format!("return !document.querySelector('{css}');");
    let outcome = async {
        wait_for_text(client, "#task-list", "Tax forms").await?;
        click(client, "[data-title='Garden plan'] .task").await?;
        wait_for_text(client, "#messages", "Answer 0").await?;
        click(client, "#composer-input").await?;
        keys(client, "/stop\u{E007}").await?;
        wait_for_text(client, "#notice", "Nothing is running.").await?;
        // Another task: the notice stays behind.
        click(client, "[data-title='Tax forms'] .task").await?;
        wait_for_text(client, "#messages", "Answer 1").await?;
        wait_until(
            client,
            "left the notice behind",
            &gone("#notice"),
            Duration::from_secs(2),
        )
        .await?;
        // Said again, it fades by itself.
        click(client, "#composer-input").await?;
        keys(client, "/stop\u{E007}").await?;
        wait_for_text(client, "#notice", "Nothing is running.").await?;
        wait_until(
            client,
            "faded the notice",
            &gone("#notice"),
            Duration::from_secs(15),
        )
        .await?;
        // The microphone (this display has none): a sentence, the details folded, then gone.
        click(client, "#mic").await?;
        let said = common::wait_until_text(
            client,
            "#voice-status .said",
            "said why the mic cannot listen",
            common::WAIT,
            |t| !t.is_empty(),
        )
        .await?;
        assert!(said.starts_with("Cairn cannot hear a microphone"), "{said}");
        let details = text_of(client, "#voice-status .said-details code").await?;
        assert!(details.is_some_and(|d| !d.is_empty()), "no details");
        screenshot(client, "rough-mic-said-plainly").await?;
        wait_until(
            client,
            "faded the mic's failure",
            "return document.getElementById('voice-status').textContent === '';",
            Duration::from_secs(15),
        )
        .await?;
        Ok(())
    }
    .await;
    app.close().await;
    outcome
}

const REPLY: &str = "Steps:\n\n1. **Plan**\n\n   - first step\n\n   - second step\n\n2. Done\n\n```rust\nfn main() {\n    let answer = 42;\n}\n```\n";

/// Finding 15: a reply's lists have no lone marker lines nor gaps; code blocks are highlighted
/// and copied by their button; the reply has a Copy of its own.
#[tokio::test]
#[ignore = "needs a display, tauri-driver and WebKitWebDriver: run through ./run test"]
async fn replies_read_as_markdown_with_copy_buttons() -> TestResult {
    let home = tempfile::tempdir()?;
    let model = MockServer::start(vec![text_reply(REPLY)]).await?;
    let app = start(home.path(), &model, "").await?;
    let client = &app.client;
    let outcome = async {
        wait_for_text(client, "#model-pill", "mock/long-model").await?;
        click(client, "#composer-input").await?;
        keys(client, "How do I start?\u{E007}").await?;
        wait_for_text(client, "#messages", "second step").await?;
        wait_for_text(client, "#send", "Send").await?;
        // Each item is one line high: its marker is not on a line of its own, no gap under it.
        let heights = client
            .execute(
                "return Array.from(document.querySelectorAll('.from-cairn .markdown li li')).map(li => {\
                   const line = parseFloat(getComputedStyle(li).lineHeight) || 20;\
                   return li.getBoundingClientRect().height / line; });",
                vec![],
            )
            .await?;
        let heights: Vec<f64> = heights
            .as_array()
            .ok_or("no list items")?
            .iter()
            .filter_map(Value::as_f64)
            .collect();
        assert_eq!(heights.len(), 2, "{heights:?}");
        assert!(
            heights.iter().all(|h| *h < 1.5),
            "list items span more than a line: {heights:?}"
        );
        let keyword = text_of(client, ".from-cairn .code-block .tok-kw").await?;
        assert_eq!(keyword.as_deref(), Some("fn"));
        assert_eq!(
            text_of(client, ".from-cairn .code-block .tok-num")
                .await?
                .as_deref(),
            Some("42")
        );
        screenshot(client, "rough-markdown-reply").await?;
        // The code's Copy: "Copied", and the code is what a paste gives.
        click(client, ".from-cairn .code-copy").await?;
        wait_for_text(client, ".from-cairn .code-copy", "Copied").await?;
        screenshot(client, "rough-code-copied").await?;
        click(client, "#composer-input").await?;
        keys(client, "\u{E009}v").await?;
        let pasted = client
            .execute(
                "return document.getElementById('composer-input').value;",
                vec![],
            )
            .await?;
        assert_eq!(
            pasted,
            json!("fn main() {\n    let answer = 42;\n}\n"),
            "the clipboard holds the code"
        );
        // The reply's own Copy: its Markdown.
        client
            .execute(
                "document.getElementById('composer-input').value = '';",
                vec![],
            )
            .await?;
        click(client, ".from-cairn .reply-copy").await?;
        wait_for_text(client, ".from-cairn .reply-copy", "Copied").await?;
        click(client, "#composer-input").await?;
        keys(client, "\u{E009}v").await?;
        let pasted = client
            .execute(
                "return document.getElementById('composer-input').value;",
                vec![],
            )
            .await?;
        assert_eq!(pasted, json!(REPLY.trim()), "the clipboard holds the reply");
        Ok(())
    }
    .await;
    app.close().await;
    outcome
}

/// Finding 16: the pet's first place leaves the workbench's composer (Send/Stop) in view.
#[tokio::test]
#[ignore = "needs a display, tauri-driver and WebKitWebDriver: run through ./run test"]
async fn the_pet_first_shows_clear_of_the_composer() -> TestResult {
    let home = tempfile::tempdir()?;
    let model = MockServer::start(vec![]).await?;
    let app = start(home.path(), &model, "").await?;
    let client = &app.client;
    let outcome = async {
        wait_for_text(client, "#model-pill", "mock/long-model").await?;
        click(client, "#toggle-pet").await?;
        let deadline = Instant::now() + common::WAIT;
        let pet = loop {
            if let Some(pet) = window_id("Cairn pet")? {
                let at = geometry(&pet)?;
                if at.width > 0.0 {
                    break at;
                }
            }
            if Instant::now() > deadline {
                return Err("the pet never showed".into());
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        // Give a late move the time to happen, then read it again.
        tokio::time::sleep(Duration::from_millis(500)).await;
        let pet = window_id("Cairn pet")?
            .map(|id| geometry(&id))
            .transpose()?
            .unwrap_or(pet);
        let workbench = geometry(&window_id("Cairn")?.ok_or("no workbench")?)?;
        let [left, top, right, bottom] = rect(client, "form.composer").await?;
        let composer = Screen {
            x: workbench.x + left,
            y: workbench.y + top,
            width: right - left,
            height: bottom - top,
        };
        common::screenshot(client, "rough-pet-first-place").await?;
        assert!(
            !pet.overlaps(composer),
            "the pet {pet:?} covers the composer {composer:?}"
        );
        Ok(())
    }
    .await;
    app.close().await;
    outcome
}

/// Finding 16: at 720 px a task row's buttons leave its title whole, and a click on the title
/// opens the task (it does not pin it).
#[tokio::test]
#[ignore = "needs a display, tauri-driver and WebKitWebDriver: run through ./run test"]
async fn at_720_px_a_click_on_a_task_title_opens_it() -> TestResult {
    let home = tempfile::tempdir()?;
    seed_tasks(
        home.path(),
        &[
            "Compare the quarterly reports of both regional offices",
            "Other",
        ],
    )?;
    let model = MockServer::start(vec![]).await?;
    let app = start(home.path(), &model, "").await?;
    let client = &app.client;
    let row = "[data-title='Compare the quarterly reports of both regional offices']";
    let outcome = async {
        wait_for_text(client, "#task-list", "Compare the quarterly").await?;
        resize(client, 720, 480).await?;
        // The pointer over the row, as a person's: its buttons show.
        let window = geometry(&window_id("Cairn")?.ok_or("no workbench")?)?;
        let [left, top, _, bottom] = rect(client, &format!("{row} .task-title")).await?;
        common::run(
            "xdotool",
            &[
                "mousemove",
                &format!("{}", window.x + left + 12.0),
                &format!("{}", window.y + (top + bottom) / 2.0),
            ],
        )?;
        wait_until(
            client,
            "showed the row's buttons",
            &format!(
                "const a = document.querySelector(\"{row} .task-actions\");\
                 return !!a && getComputedStyle(a).display !== 'none';"
            ),
            Duration::from_secs(5),
        )
        .await?;
        let title = rect(client, &format!("{row} .task-title")).await?;
        let actions = rect(client, &format!("{row} .task-actions")).await?;
        screenshot(client, "rough-720-task-row-hovered").await?;
        assert!(
            title[2] <= actions[0] + 0.5,
            "the buttons {actions:?} cover the title {title:?}"
        );
        assert!(title[2] - title[0] >= 60.0, "the title is squeezed: {title:?}");
        // A click on the title's middle opens the task and leaves it unpinned.
        let [left, top, right, bottom] = title;
        common::run(
            "xdotool",
            &[
                "mousemove",
                &format!("{}", window.x + (left + right) / 2.0),
                &format!("{}", window.y + (top + bottom) / 2.0),
                "click",
                "1",
            ],
        )?;
        wait_for_text(client, ".stream-title", "Compare the quarterly").await?;
        tokio::time::sleep(Duration::from_millis(500)).await;
        let pin = client
            .execute(
                &format!(
                    "return document.querySelector(\"{row} .task-actions .icon\").getAttribute('aria-label');"
                ),
                vec![],
            )
            .await?;
        assert_eq!(pin, json!("Pin"), "the click pinned the task");
        let pinned = text_of(client, "#task-list").await?.unwrap_or_default();
        assert!(!pinned.contains("Pinned"), "{pinned}");
        Ok(())
    }
    .await;
    app.close().await;
    outcome
}

/// Finding 16: in Chinese, Cairn's own models are described in Chinese.
#[tokio::test]
#[ignore = "needs a display, tauri-driver and WebKitWebDriver: run through ./run test"]
async fn in_chinese_the_models_are_described_in_chinese() -> TestResult {
    let home = tempfile::tempdir()?;
    let model = MockServer::start(vec![]).await?;
    let app = start(home.path(), &model, "\n[ui]\nlanguage = \"zh-CN\"\n").await?;
    let client = &app.client;
    let outcome = async {
        wait_for_text(client, "#page-settings", "设置").await?;
        click(client, "#page-settings").await?;
        wait_for_text(client, "#settings-local-models", "qwen2.5-coder-1.5b").await?;
        let notes = client
            .execute(
                "return Array.from(document.querySelectorAll('.local-model > p.set-muted')).map(p => p.textContent);",
                vec![],
            )
            .await?;
        let notes: Vec<&str> = notes
            .as_array()
            .ok_or("no model rows")?
            .iter()
            .filter_map(Value::as_str)
            .collect();
        assert!(notes.len() >= 5, "{notes:?}");
        let english: Vec<&&str> = notes
            .iter()
            .filter(|n| !n.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c)))
            .collect();
        screenshot(client, "rough-chinese-model-notes").await?;
        assert!(english.is_empty(), "still in English: {english:?}");
        Ok(())
    }
    .await;
    app.close().await;
    outcome
}

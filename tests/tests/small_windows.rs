//! The workbench in small windows (900×600 and 720×480, the smallest it allows), alone on the
//! display: the task list still shows several tasks, the memory search's summary keeps its width
//! above its buttons, the explanation table scrolls instead of being cut, and Settings fits.
//! Screenshots go to `target/e2e/small-*.png`.
//!
//! Ignored by a plain `cargo test`; `./run test` runs it under Xvfb.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::{click, screenshot, text_of, wait_for_text, TestResult};
use fantoccini::{Client, Locator};
use serde_json::{json, Value};

#[tokio::test]
#[ignore = "needs a display, tauri-driver and WebKitWebDriver: run through ./run test"]
async fn the_workbench_stays_usable_in_small_windows() -> TestResult {
    let home = tempfile::tempdir()?;
    std::fs::write(
        home.path().join("config.toml"),
        "[sync]\nauto = false\n\n[agent]\nmodel = \"mock/m\"\n\n[providers.mock]\nbase_url = \"http://127.0.0.1:9/v1\"\nmodels = [\"m\"]\n",
    )?;
    seed_tasks(home.path(), 12)?;
    for text in [
        "The nightly build failed on /var/cache/ci because the disk was full; pruned old images.",
        "Renamed the staging bucket to assets-staging with gsutil mv, as asked.",
        "The settings form validates the port before saving; tests cover 0 and 65535.",
        "The nightly build is scheduled at 02:00 UTC and posts to the #builds channel.",
    ] {
        common::cairn(home.path(), &["memory", "add", text])?;
    }
    let app = common::launch_alone_at_window(home.path(), &[], "Cairn").await?;
    let client = &app.client;
    let outcome = async {
        wait_for_text(client, "#status-line", "API on").await?;
        for (width, height) in [(900, 600), (720, 480)] {
            resize(width, height).await?;
            let tag = format!("{width}x{height}");
            // The task list: several tasks in view, not one.
            click(client, "#new-task").await?;
            wait_for_text(client, "#task-list", "Task 11").await?;
            let visible = visible_rows(client).await?;
            assert!(visible >= 4, "{tag}: only {visible} tasks in view");
            screenshot(client, &format!("small-{tag}-tasks")).await?;

            // The memory search: the summary keeps a readable width, the explanation scrolls.
            click(client, "#page-memory").await?;
            click(client, "#mem-tab-entries").await?;
            click(client, "#mem-search-input").await?;
            let search = client.find(Locator::Id("mem-search-input")).await?;
            search.clear().await?;
            search
                .send_keys("why did the nightly build fail on /var/cache/ci\u{E007}")
                .await?;
            wait_for_text(client, "#mem-search-summary", "recalled").await?;
            let summary = rect(client, "#mem-search-summary").await?;
            assert!(
                summary.width >= 240.0,
                "{tag}: the search summary is squeezed to {summary:?}"
            );
            if text_of(client, "#mem-explain").await?.is_none() {
                click(client, "#mem-explain-toggle").await?;
            }
            wait_for_text(client, "#mem-explain", "Kept").await?;
            let fits = client
                .execute(
                    "const w = document.querySelector('.mem-explain-wrap');\
                     const r = w.getBoundingClientRect();\
                     return r.right <= window.innerWidth + 1 \
                       && (w.scrollWidth <= w.clientWidth + 1 || getComputedStyle(w).overflowX === 'auto');",
                    vec![],
                )
                .await?;
            assert_eq!(fits, json!(true), "{tag}: the explanation is cut");
            screenshot(client, &format!("small-{tag}-memory-search")).await?;

            // Settings: nothing runs off the right edge.
            click(client, "#page-settings").await?;
            wait_for_text(client, ".settings-page", "config").await?;
            let overflow = client
                .execute(
                    "return document.documentElement.scrollWidth - window.innerWidth;",
                    vec![],
                )
                .await?;
            assert!(
                overflow.as_f64().unwrap_or(0.0) <= 1.0,
                "{tag}: the page is wider than the window by {overflow}"
            );
            screenshot(client, &format!("small-{tag}-settings")).await?;
        }
        Ok(())
    }
    .await;
    app.close().await;
    outcome
}

/// `n` stored tasks, "Task 0" … "Task n-1", updated now.
fn seed_tasks(home: &Path, n: usize) -> TestResult {
    let dir = home.join("data/sessions");
    std::fs::create_dir_all(&dir)?;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)?
        .as_millis() as i64;
    for i in 0..n {
        let session = json!({
            "id": format!("small-{i}"), "title": format!("Task {i}"),
            "created_at": now - 1000 * i as i64, "updated_at": now - 1000 * i as i64,
            "messages": [
                {"role": "system", "content": "You are Cairn."},
                {"role": "user", "content": format!("Question {i}")},
                {"role": "assistant", "content": format!("Answer {i}")},
            ],
        });
        std::fs::write(
            dir.join(format!("small-{i}.json")),
            serde_json::to_vec(&session)?,
        )?;
    }
    Ok(())
}

/// Resizes the workbench's window (the X window titled "Cairn") and waits for the page to see it.
async fn resize(width: u32, height: u32) -> TestResult {
    let found = common::run("xdotool", &["search", "--onlyvisible", "--name", "^Cairn$"])?;
    let window = found
        .lines()
        .next()
        .ok_or("the workbench is not on screen")?;
    common::run(
        "xdotool",
        &[
            "windowsize",
            window,
            &width.to_string(),
            &height.to_string(),
        ],
    )?;
    let wanted = format!("Geometry: {width}x{height}");
    let deadline = Instant::now() + common::WAIT;
    while Instant::now() < deadline {
        if common::run("xdotool", &["getwindowgeometry", window])?.contains(&wanted) {
            tokio::time::sleep(Duration::from_millis(300)).await;
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Err(format!("the workbench never became {width}×{height}").into())
}

#[derive(Debug)]
struct Rect {
    width: f64,
}

async fn rect(client: &Client, css: &str) -> TestResult<Rect> {
    let found = client
        .execute(
            "const r = document.querySelector(arguments[0]).getBoundingClientRect();\
             return { width: r.width };",
            vec![json!(css)],
        )
        .await?;
    Ok(Rect {
        width: found["width"].as_f64().unwrap_or(0.0),
    })
}

/// How many task rows are wholly inside the task list's visible box.
async fn visible_rows(client: &Client) -> TestResult<u64> {
    let found: Value = client
        .execute(
            "const list = document.getElementById('task-list').getBoundingClientRect();\
             return Array.from(document.querySelectorAll('#task-list .task-row')).filter(row => {\
               const r = row.getBoundingClientRect();\
               return r.height > 0 && r.top >= list.top - 1 && r.bottom <= Math.min(list.bottom, window.innerHeight) + 1;\
             }).length;",
            vec![],
        )
        .await?;
    Ok(found.as_u64().unwrap_or(0))
}

//! The Memory page of the real desktop app, end to end: a fresh home's empty state; then a home
//! seeded through the `cairn` CLI, its counts, the layer filter, a search with its explanation, an
//! entry opened, edited and deleted (checked back through the CLI), the analytics; and the same
//! page in dark mode; a fact replaced by a later one, with its history; a policy learned from two
//! rated tasks, with its lineage. Screenshots go to
//! `target/e2e/memory-*.png`.
//!
//! Needs a display, `tauri-driver`, `WebKitWebDriver`, a built UI and `cargo build --workspace`
//! (for `cairn-desktop` and `cairn`), so it is ignored by a plain `cargo test`.

mod common;

use std::path::Path;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use cairn_config::read_runtime;
use common::{
    cairn, click, gtk_theme, screenshot_after, set_value, text_of, wait_for_text, wait_until_text,
    App, TestResult, WAIT,
};
use fantoccini::{Client, Locator};
use serde_json::{json, Value};

/// The Memory page's screenshots give it 400 ms to settle after the last step.
async fn screenshot(client: &Client, name: &str) -> TestResult {
    screenshot_after(client, name, Duration::from_millis(400)).await
}

/// Waits until an element matches `css`.
async fn wait_for(client: &Client, css: &str) -> TestResult {
    let deadline = Instant::now() + Duration::from_secs(20);
    while count(client, css).await? == 0 {
        if Instant::now() > deadline {
            return Err(format!("{css} never appeared").into());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Ok(())
}

async fn count(client: &Client, css: &str) -> TestResult<u64> {
    let value = client
        .execute(
            "return document.querySelectorAll(arguments[0]).length;",
            vec![json!(css)],
        )
        .await?;
    Ok(value.as_u64().unwrap_or(0))
}

/// Starts the app on `home` through tauri-driver, on the workbench window with the API up.
async fn launch(home: &Path, dark: bool) -> TestResult<App> {
    // Nothing of this machine's agents' history: the page shows only what the test seeds.
    let app = common::launch_at(home, &[gtk_theme(dark)]).await?;
    wait_for_text(&app.client, "#status-line", "API on").await?;
    Ok(app)
}

/// `cairn memory add … --json`: the new memory's id.
fn add(home: &Path, text: &str, layer: &str, source: Option<&str>) -> TestResult<i64> {
    let mut args = vec!["memory", "add", text, "--layer", layer, "--json"];
    if let Some(source) = source {
        args.extend(["--source", source]);
    }
    let added: Value = serde_json::from_str(&cairn(home, &args)?)?;
    added["id"]
        .as_i64()
        .ok_or_else(|| "no id in the answer".into())
}

/// Sets an input's or textarea's value the way typing does (an `input` event).
const NIGHTLY: &str =
    "The nightly build failed because the cache volume was full; clearing /var/cache/ci fixed it.";
const NIGHTLY_EDITED: &str = "The nightly build failed because the cache volume was full; clearing /var/cache/ci and pruning old images fixed it.";
const QUERY: &str = "why did the nightly build fail on /var/cache/ci";
const BUCKET: &str = "Renamed the staging bucket to assets-staging with gsutil mv, as asked.";

#[tokio::test]
#[ignore = "needs a display, tauri-driver and WebKitWebDriver: run through ./run test"]
async fn the_memory_page_shows_searches_edits_and_deletes() -> TestResult {
    let home = tempfile::tempdir()?;
    let home = home.path();

    // A fresh home: the page says what fills the memory.
    let app = launch(home, false).await?;
    let outcome = empty_state(&app.client).await;
    app.close().await;
    outcome?;

    // Seeded through the CLI while the app is not running.
    let nightly = add(home, NIGHTLY, "L1", Some("claude-code"))?;
    add(
        home,
        "Ran cargo test in the api crate: 42 passed after fixing the flaky port test.",
        "L1",
        Some("codex"),
    )?;
    let bucket = add(home, BUCKET, "L1", Some("codex"))?;
    add(
        home,
        "Before a nightly build, check the free space on the cache volume and clear it above 90%.",
        "L2",
        Some("cairn"),
    )?;
    add(
        home,
        "The staging database runs Postgres 16 on port 5433.",
        "L3",
        None,
    )?;
    add(
        home,
        "Release checklist: bump the version, tag, push the tag, wait for CI, publish the crate.",
        "skill",
        Some("cairn"),
    )?;
    add(
        home,
        "The build server in the office is noisy; its fan needs replacing.",
        "L1",
        Some("cursor"),
    )?;

    let app = launch(home, false).await?;
    let outcome = seeded(&app.client, home, nightly, bucket).await;
    if outcome.is_err() {
        app.close().await;
        return outcome;
    }
    app.close().await;

    // Dark mode, where the system asks for it.
    let app = launch(home, true).await?;
    let outcome = dark(&app.client).await;
    app.close().await;
    outcome
}

async fn empty_state(client: &Client) -> TestResult {
    click(client, "#page-memory").await?;
    wait_for_text(client, "#mem-stat-total", "0").await?;
    wait_for_text(client, "#mem-empty", "Nothing remembered yet").await?;
    wait_for_text(client, "#mem-empty", "cairn memory add").await?;
    screenshot(client, "memory-empty").await?;
    click(client, "#mem-tab-entries").await?;
    wait_for_text(client, "#mem-empty", "Nothing remembered yet").await?;
    click(client, "#mem-layer-skill").await?;
    wait_for_text(client, "#mem-empty", "No skills yet").await?;
    click(client, "#mem-tab-analytics").await?;
    wait_for_text(client, "#mem-per-day", "No memories yet").await?;
    wait_for_text(client, "#mem-recent-searches", "No searches yet").await?;
    wait_for_text(client, "#mem-stat-hit-rate", "—").await?;
    screenshot(client, "memory-empty-analytics").await?;
    Ok(())
}

async fn seeded(client: &Client, home: &Path, nightly: i64, bucket: i64) -> TestResult {
    // Older memories from another agent, through the app's own API, so the chart spans days.
    let info = read_runtime(&home.join("runtime.json"))?.ok_or("runtime.json is missing")?;
    let http = reqwest::Client::builder().no_proxy().build()?;
    let now = SystemTime::now().duration_since(UNIX_EPOCH)?.as_millis() as i64;
    let day = 86_400_000;
    for (i, days_ago) in [9, 7, 7, 4, 2].into_iter().enumerate() {
        let source = if i % 2 == 0 { "cursor" } else { "codex" };
        let answer = http
            .post(format!("{}/api/v1/memory/add", info.api_url))
            .bearer_auth(&info.token)
            .json(&json!({
                "text": format!("Refactored the settings form and its tests in {source} (session {i})."),
                "layer": "L1",
                "source": source,
                "created_at": now - days_ago * day,
            }))
            .send()
            .await?;
        assert_eq!(answer.status(), 200, "{}", answer.text().await?);
    }

    // The overview: 12 memories, by layer and by source.
    click(client, "#page-memory").await?;
    wait_for_text(client, "#mem-stat-total", "12").await?;
    assert_eq!(
        text_of(client, "#mem-overview-L1 .mem-row-count")
            .await?
            .as_deref(),
        Some("9")
    );
    assert_eq!(
        text_of(client, "#mem-overview-L2 .mem-row-count")
            .await?
            .as_deref(),
        Some("1")
    );
    assert_eq!(
        text_of(client, "#mem-overview-skill .mem-row-count")
            .await?
            .as_deref(),
        Some("1")
    );
    let sources = wait_for_text(client, "#mem-by-source", "claude-code").await?;
    assert!(sources.contains("codex4"), "{sources}");
    assert!(sources.contains("cursor4"), "{sources}");
    assert!(sources.contains("cairn3"), "{sources}");
    screenshot(client, "memory-overview").await?;

    // A layer from the overview opens the entries filtered to it.
    click(client, "#mem-overview-L3").await?;
    wait_for_text(client, "#mem-list", "Postgres 16").await?;
    wait_for_text(client, "#mem-range", "1–1 of 1").await?;
    assert_eq!(count(client, "#mem-list .mem-item").await?, 1);
    let pressed = client
        .execute(
            "return document.getElementById('mem-layer-L3').getAttribute('aria-pressed');",
            vec![],
        )
        .await?;
    assert_eq!(pressed, json!("true"));
    screenshot(client, "memory-filter-l3").await?;

    // The L1 filter, then all of them.
    click(client, "#mem-layer-L1").await?;
    wait_for_text(client, "#mem-range", "1–9 of 9").await?;
    assert_eq!(count(client, "#mem-list .mem-item").await?, 9);
    click(client, "#mem-layer-all").await?;
    wait_for_text(client, "#mem-range", "1–12 of 12").await?;

    // A search, and its explanation: every candidate with its channels, scores and outcome. The
    // path in the query reaches the identifier channel; the weak keyword matches are dropped.
    let search = client.find(Locator::Id("mem-search-input")).await?;
    search.send_keys(QUERY).await?;
    search.send_keys("\u{E007}").await?;
    let summary = wait_for_text(client, "#mem-search-summary", "recalled").await?;
    assert!(summary.contains(QUERY), "{summary}");
    assert!(summary.contains("dropped"), "{summary}");
    wait_for_text(client, "#mem-list", "nightly build failed").await?;
    screenshot(client, "memory-search").await?;
    click(client, "#mem-explain-toggle").await?;
    let explained = wait_for_text(client, "#mem-explain", "structural").await?;
    assert!(explained.contains("fts"), "{explained}");
    assert!(explained.contains(&format!("#{nightly}")), "{explained}");
    assert!(explained.contains("under 20% of the best"), "{explained}");
    let first = text_of(client, "#mem-explain tbody tr")
        .await?
        .unwrap_or_default();
    assert!(
        first.contains("Kept") && first.contains("structural"),
        "{first}"
    );
    assert!(count(client, "#mem-explain tbody tr.kept").await? >= 2);
    assert!(count(client, "#mem-explain tbody tr.dropped").await? >= 1);
    // The channels name a rank and a raw score.
    let chip = text_of(client, "#mem-explain .mem-chip")
        .await?
        .unwrap_or_default();
    assert!(chip.contains("#1 ·"), "{chip}");
    screenshot(client, "memory-explain").await?;

    // Open an entry from the explanation: all of it, with its source and dates.
    click(
        client,
        &format!("#mem-explain tr[data-id='{nightly}'] .mem-link"),
    )
    .await?;
    wait_for_text(client, "#mem-detail-text", NIGHTLY).await?;
    let detail = wait_for_text(client, "#mem-detail", "claude-code").await?;
    assert!(detail.contains(&format!("Memory #{nightly}")), "{detail}");
    assert!(detail.contains("Created"), "{detail}");
    screenshot(client, "memory-detail").await?;

    // Edit it: the page, the search and the CLI all see the new text.
    click(client, "#mem-edit").await?;
    wait_for(client, "#mem-edit-text").await?;
    // The editor takes the focus (on the next frame).
    wait_for(client, "#mem-edit-text:focus").await?;
    set_value(client, "#mem-edit-text", NIGHTLY_EDITED).await?;
    screenshot(client, "memory-editing").await?;
    click(client, "#mem-save").await?;
    wait_for_text(client, "#mem-detail-text", "pruning old images").await?;
    wait_for_text(client, "#mem-notice", "saved").await?;
    wait_for_text(client, "#mem-explain", "pruning old images").await?;
    let stored: Value = serde_json::from_str(&cairn(
        home,
        &["memory", "get", &nightly.to_string(), "--json"],
    )?)?;
    assert_eq!(stored["text"], NIGHTLY_EDITED);
    screenshot(client, "memory-edited").await?;

    // Delete another, with a confirmation first.
    click(client, "#mem-search-clear").await?;
    wait_for_text(client, "#mem-range", "1–12 of 12").await?;
    // The list (not only the search) shows the edited text.
    wait_for_text(client, "#mem-list", "pruning old images").await?;
    click(client, &format!("#mem-list button[data-id='{bucket}']")).await?;
    wait_for_text(client, "#mem-detail-text", "staging bucket").await?;
    click(client, "#mem-delete").await?;
    wait_for_text(client, "#mem-confirm", "cannot be undone").await?;
    // The safe answer has the focus: Enter right away keeps the memory.
    wait_for(client, "#mem-delete-cancel:focus").await?;
    screenshot(client, "memory-delete-confirm").await?;
    click(client, "#mem-delete-confirm").await?;
    wait_for_text(client, "#mem-notice", &format!("#{bucket} deleted")).await?;
    wait_until_text(client, "#mem-list", "lost the deleted memory", WAIT, |t| {
        !t.contains("staging bucket")
    })
    .await?;
    wait_for_text(client, "#mem-range", "1–11 of 11").await?;
    assert_eq!(count(client, "#mem-detail").await?, 0);
    assert!(cairn(home, &["memory", "get", &bucket.to_string()]).is_err());
    screenshot(client, "memory-deleted").await?;
    click(client, "#mem-tab-overview").await?;
    wait_for_text(client, "#mem-stat-total", "11").await?;
    let sources = text_of(client, "#mem-by-source").await?.unwrap_or_default();
    assert!(sources.contains("codex3"), "{sources}");
    assert!(sources.contains("cairn3"), "{sources}");

    // A memory added elsewhere (another process) shows without a manual refresh.
    add(
        home,
        "The office printer on the third floor needs the blue driver.",
        "L3",
        Some("codex"),
    )?;
    wait_for_text(client, "#mem-stat-total", "12").await?;
    wait_for_text(client, "#mem-by-source", "codex4").await?;
    click(client, "#mem-tab-entries").await?;
    wait_for_text(client, "#mem-list", "office printer").await?;

    // Analytics: memories per day by source, the searches and their hit rate.
    click(client, "#mem-tab-analytics").await?;
    wait_for_text(client, "#mem-search-log", QUERY).await?;
    let searches = text_of(client, "#mem-stat-searches .mem-stat-value")
        .await?
        .unwrap_or_default();
    assert!(searches.parse::<u32>().unwrap_or(0) >= 1, "{searches}");
    wait_for_text(client, "#mem-stat-hit-rate", "100%").await?;
    assert!(count(client, "#mem-chart rect").await? >= 5);
    let legend = wait_for_text(client, "#mem-per-day .mem-legend", "cursor").await?;
    assert!(legend.contains("claude-code"), "{legend}");
    screenshot(client, "memory-analytics").await?;

    // A logged search runs again, explained.
    click(client, "#mem-search-log .mem-link").await?;
    wait_for_text(client, "#mem-explain", "fts").await?;
    Ok(())
}

async fn dark(client: &Client) -> TestResult {
    let is_dark = client
        .execute(
            "return window.matchMedia('(prefers-color-scheme: dark)').matches;",
            vec![],
        )
        .await?;
    if is_dark != json!(true) {
        eprintln!(
            "GTK_THEME=Adwaita:dark did not reach the webview: the dark screenshots are light"
        );
    }
    click(client, "#page-memory").await?;
    wait_for_text(client, "#mem-stat-total", "12").await?;
    screenshot(client, "memory-dark-overview").await?;
    click(client, "#mem-tab-entries").await?;
    let search = client.find(Locator::Id("mem-search-input")).await?;
    search.send_keys("nightly cache").await?;
    search.send_keys("\u{E007}").await?;
    click(client, "#mem-explain-toggle").await?;
    wait_for_text(client, "#mem-explain", "pruning old images").await?;
    click(client, "#mem-explain tbody tr .mem-link").await?;
    wait_for_text(client, "#mem-detail", "Created").await?;
    screenshot(client, "memory-dark-explain").await?;
    click(client, "#mem-tab-analytics").await?;
    wait_for_text(client, "#mem-search-log", "nightly cache").await?;
    screenshot(client, "memory-dark-analytics").await?;
    Ok(())
}

#[tokio::test]
#[ignore = "needs a display, tauri-driver and WebKitWebDriver: run through ./run test"]
async fn a_replaced_fact_shows_its_history() -> TestResult {
    let home = tempfile::tempdir()?;
    let home = home.path();
    let old = add(home, "User: our staging server is at 10.0.3.5", "L1", None)?;
    // A later time for the update than for the fact it replaces.
    std::thread::sleep(Duration::from_millis(20));
    let new = add(
        home,
        "User: we moved our staging server to 10.0.3.7 now",
        "L1",
        None,
    )?;
    let app = launch(home, false).await?;
    let outcome = history(&app.client, old, new).await;
    app.close().await;
    outcome
}

async fn history(client: &Client, old: i64, new: i64) -> TestResult {
    click(client, "#page-memory").await?;
    click(client, "#mem-tab-entries").await?;
    click(client, &format!("#mem-list button[data-id='{old}']")).await?;
    // The app's background queue links the two; the open entry follows the change.
    wait_for_text(client, "#mem-superseded", &format!("memory #{new}")).await?;
    let history = wait_for_text(client, "#mem-history", "10.0.3.7").await?;
    assert!(history.contains("10.0.3.5"), "{history}");
    assert_eq!(count(client, "#mem-history li").await?, 2);
    screenshot(client, "memory-fact-history").await?;
    click(client, "#mem-superseded button").await?;
    wait_for_text(client, "#mem-detail-title", &format!("Memory #{new}")).await?;
    wait_for_text(client, "#mem-history li.this", "current").await?;
    assert_eq!(count(client, "#mem-superseded").await?, 0);
    Ok(())
}

/// Two rated tasks of one kind in `home`'s memory, read by the background queue's induction as the
/// app would: (the policy, the traces it rests on).
fn learned_policy(home: &Path) -> TestResult<(i64, Vec<i64>)> {
    use cairn_memory::{
        CaptureOutcome, FeedbackRequest, Layer, MemoryStore, Rating, ToolCall, TurnCompletion,
        TurnStart,
    };
    let store = MemoryStore::open(&home.join("data/memory.sqlite"))?;
    let mut traces = Vec::new();
    for (n, request) in [
        "The parser tests fail after the refactor, please fix them",
        "Fix the failing parser tests after my refactor",
    ]
    .into_iter()
    .enumerate()
    {
        let turn = store.start_turn(TurnStart {
            session: format!("task-{n}"),
            request: request.into(),
            source: None,
            idempotency_key: None,
            started_at: None,
            workspace: Some("/home/ana/parser".into()),
        })?;
        let done = store.complete_turn(
            turn,
            TurnCompletion {
                answer: "Fixed the list parser.".into(),
                tool_calls: vec![ToolCall {
                    id: "c1".into(),
                    name: "bash".into(),
                    input: json!({ "command": "cargo test -p parser" }),
                    output: Some("test result: ok".into()),
                    is_error: false,
                }],
                ..TurnCompletion::default()
            },
        )?;
        let CaptureOutcome::Captured { memory_id } = done else {
            return Err(format!("not captured: {done:?}").into());
        };
        store.give_feedback(&FeedbackRequest {
            memory_id: Some(memory_id),
            turn_id: None,
            rating: Rating::Up,
            note: None,
        })?;
        traces.push(memory_id);
    }
    store.induce_all_pending()?;
    let policy = store
        .list(Some(Layer::Policy), 0, 10)?
        .first()
        .map(|p| p.id)
        .ok_or("no policy was induced")?;
    Ok((policy, traces))
}

#[tokio::test]
#[ignore = "needs a display, tauri-driver and WebKitWebDriver: run through ./run test"]
async fn a_learned_policy_shows_its_lineage() -> TestResult {
    let home = tempfile::tempdir()?;
    let home = home.path();
    let (policy, traces) = learned_policy(home)?;
    let app = launch(home, false).await?;
    let outcome = lineage(&app.client, policy, &traces).await;
    app.close().await;
    outcome
}

async fn lineage(client: &Client, policy: i64, traces: &[i64]) -> TestResult {
    click(client, "#page-memory").await?;
    click(client, "#mem-tab-entries").await?;
    click(client, &format!("#mem-list button[data-id='{policy}']")).await?;
    let shown = wait_for_text(client, "#mem-lineage", "2 went well, 0 went badly").await?;
    assert!(shown.contains("Gain"), "{shown}");
    assert_eq!(
        count(client, "#mem-lineage .mem-lineage-link").await?,
        traces.len() as u64
    );
    screenshot(client, "memory-policy-lineage").await?;
    click(client, "#mem-lineage .mem-lineage-link").await?;
    wait_for_text(
        client,
        "#mem-detail-title",
        &format!("Memory #{}", traces[0]),
    )
    .await?;
    wait_for_text(client, "#mem-lineage", "Reward of its episode").await?;
    Ok(())
}

//! The Schedules page in the real desktop app: a schedule added in plain English is listed with
//! its cron in words and its next run, edited, paused and resumed, and removed; a "when" the page cannot
//! read is said and adds nothing. Screenshots land in `target/e2e/schedules-*.png`.
//!
//! Needs a display, `tauri-driver`, `WebKitWebDriver` and a built UI, so it is ignored by a plain
//! `cargo test`; `./run test` runs it with `--include-ignored`.

mod common;

use std::path::Path;

use common::{click, gtk_theme, screenshot, set_value, text_of, wait_for_text, App, TestResult};
use fantoccini::Client;

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs a display, tauri-driver and WebKitWebDriver: run through ./run test"]
async fn the_schedules_page_adds_pauses_and_removes_a_schedule() -> TestResult {
    let home = tempfile::tempdir()?;
    let app: App = common::launch_at(home.path(), &[gtk_theme(false)]).await?;
    let outcome = flow(&app.client, home.path()).await;
    app.close().await;
    outcome
}

async fn flow(client: &Client, home: &Path) -> TestResult {
    wait_for_text(client, "#status-line", "API on").await?;
    click(client, "#page-schedules").await?;
    wait_for_text(client, "#schedules-empty", "No schedules yet").await?;

    set_value(client, "#schedule-when", "whenever you like").await?;
    set_value(
        client,
        "#schedule-message",
        "Summarise what changed in ~/notes",
    )
    .await?;
    click(client, "#schedule-add").await?;
    wait_for_text(client, "#schedules-notice", "every weekday at 9").await?;

    set_value(client, "#schedule-when", "every weekday at 9").await?;
    click(client, "#schedule-add").await?;
    wait_for_text(client, "#schedules-notice", "Added").await?;
    wait_for_text(client, "#schedule-s1", "09:00").await?;
    let item = text_of(client, "#schedule-s1").await?.unwrap_or_default();
    assert!(
        item.contains("Summarise what changed in ~/notes") && item.contains("Next:"),
        "{item}"
    );
    screenshot(client, "schedules").await?;
    let file = std::fs::read_to_string(home.join("data/schedules.json"))?;
    assert!(file.contains("\"cron\": \"0 9 * * 1-5\""), "{file}");

    // Edited: another time, the same task.
    click(client, "#schedule-s1 .schedule-edit").await?;
    wait_for_text(client, "#schedule-add", "Save").await?;
    set_value(client, "#schedule-when", "every monday at 18:30").await?;
    click(client, "#schedule-add").await?;
    wait_for_text(client, "#schedules-notice", "Saved").await?;
    wait_for_text(client, "#schedule-s1", "18:30").await?;
    wait_for_text(client, "#schedule-add", "Add").await?;
    let file = std::fs::read_to_string(home.join("data/schedules.json"))?;
    assert!(file.contains("\"cron\": \"30 18 * * 1\""), "{file}");

    click(client, "#schedule-s1 .schedule-pause").await?;
    wait_for_text(client, "#schedule-s1 .schedule-next", "paused").await?;
    wait_for_text(client, "#schedule-s1 .schedule-pause", "Resume").await?;
    click(client, "#schedule-s1 .schedule-pause").await?;
    wait_for_text(client, "#schedule-s1 .schedule-pause", "Pause").await?;

    click(client, "#schedule-s1 .schedule-remove").await?;
    wait_for_text(client, "#schedules-empty", "No schedules yet").await?;
    Ok(())
}

//! Settings → Devices in the real desktop app, against a real hub on a real PostgreSQL: a laptop
//! already syncs a memory; the app connects with a pairing code the laptop made, recalls the
//! laptop's memory in its Memory page, lists both devices, shows a pairing code of its own, and
//! says it synced in the sidebar's status line. Screenshots land in `target/e2e/devices-*.png`.
//!
//! Needs a display, `tauri-driver`, `WebKitWebDriver`, a built UI and PostgreSQL, so it is
//! ignored by a plain `cargo test`; `./run test` runs it with `--include-ignored`.

mod common;

use std::sync::Arc;

use cairn_memory::{MemoryStore, NewMemory};
use cairn_test_support::Postgres;
use common::{click, gtk_theme, screenshot, set_value, text_of, wait_for_text, App, TestResult};
use fantoccini::Client;

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs a display, tauri-driver, WebKitWebDriver and PostgreSQL: run through ./run test"]
async fn the_devices_page_connects_this_device_to_a_hub() -> TestResult {
    let pg = Postgres::start()?;
    let url = pg.database("hub")?;
    let pool = cairn_hub::pool(&url)?;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let address = format!("http://{}", listener.local_addr()?);
    let server_url = url.clone();
    tokio::spawn(async move {
        let _ = cairn_hub::serve(&server_url, listener, std::future::pending()).await;
    });
    cairn_hub::migrate(&pool).await?;
    let code = cairn_hub::add_account(&pool, "alice").await?;

    // The laptop: joined first, with a memory the app has never seen.
    let laptop = tempfile::tempdir()?;
    let store = Arc::new(MemoryStore::open(&laptop.path().join("memory.sqlite"))?);
    let place = cairn_sync::join(laptop.path(), &address, &code, "laptop", None).await?;
    store.add(NewMemory {
        text: "The office door code is 2580, changed every March".into(),
        ..NewMemory::default()
    })?;
    cairn_sync::sync_once(&store, &place).await?;
    let pairing = cairn_sync::pair(laptop.path()).await?;

    let home = tempfile::tempdir()?;
    let app: App = common::launch_at(home.path(), &[gtk_theme(false)]).await?;
    let outcome = flow(&app.client, &address, &pairing).await;
    app.close().await;
    outcome?;
    // The app's device is on the hub beside the laptop.
    let me = cairn_sync::hub_status(&place).await?;
    let names: Vec<&str> = me.devices.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["laptop", "desk"], "{names:?}");
    Ok(())
}

async fn flow(client: &Client, address: &str, pairing: &str) -> TestResult {
    wait_for_text(client, "#status-line", "API on").await?;
    click(client, "#page-settings").await?;
    wait_for_text(client, "#sync-where", "not connected").await?;
    // Without a code, the page says what is missing and joins nothing.
    set_value(client, "#sync-address", address).await?;
    click(client, "#sync-join").await?;
    wait_for_text(client, "#sync-notice", "a code").await?;
    set_value(client, "#sync-code", pairing).await?;
    set_value(client, "#sync-name", "desk").await?;
    click(client, "#sync-join").await?;
    wait_for_text(client, "#sync-notice", "Connected").await?;
    wait_for_text(client, "#sync-where", "alice's vault").await?;
    wait_for_text(client, "#sync-devices", "laptop").await?;
    wait_for_text(client, "#sync-state", "Synced").await?;
    click(client, "#sync-pair").await?;
    wait_for_text(client, "#sync-pair-code", "+").await?;
    screenshot(client, "devices").await?;

    // The laptop's memory is recalled here.
    click(client, "#page-memory").await?;
    click(client, "#mem-tab-entries").await?;
    wait_for_text(client, "#mem-list", "2580").await?;
    set_value(client, "#mem-search-input", "what is the office door code").await?;
    click(client, "#mem-search-go").await?;
    wait_for_text(client, "#mem-list", "2580").await?;
    wait_for_text(client, "#status-line", "synced").await?;
    let line = text_of(client, "#status-line").await?.unwrap_or_default();
    assert!(line.contains("synced"), "{line}");
    Ok(())
}

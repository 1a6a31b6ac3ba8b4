//! The Sources page in the real desktop app: a fake home holding Claude Code history, the page
//! finding it, a scan streaming its progress to the end with the right count of turns, a deep scan
//! paused, resumed and stopped, and the Claude Code hook installed and removed in the fake
//! `~/.claude/settings.json`. Screenshots land in `target/e2e/sources-*.png` (light, and one dark).
//!
//! Needs a display, `tauri-driver`, `WebKitWebDriver`, a built UI and the `cairn` CLI beside the
//! app, so it is ignored by a plain `cargo test`; `./run test` runs it with `--include-ignored`.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use cairn_importers::synthetic::claude_code_session;
use common::{
    desktop_binary, gtk_theme, screenshot, screenshot_dir, text_of, wait_for_text_within, App,
    TestResult,
};
use fantoccini::{Client, Locator};
use serde_json::{json, Value};

/// Sessions and turns of the fake Claude Code history the page first finds.
const SESSIONS: usize = 3;
const TURNS: usize = 4;

/// Scans can take a while: the waits on this page give it 30 s.
async fn wait_for_text(client: &Client, css: &str, wanted: &str) -> TestResult<String> {
    wait_for_text_within(client, css, wanted, Duration::from_secs(30)).await
}

/// Clicks through the page's script: the element is found by CSS when the click happens.
async fn click(client: &Client, css: &str) -> TestResult {
    let script = "const e = document.querySelector(arguments[0]); if (!e || e.disabled) return false; e.click(); return true;";
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        if client.execute(script, vec![json!(css)]).await? == Value::Bool(true) {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Err(format!("{css} was never there to click").into())
}

/// Claude Code history: `sessions` sessions of `turns` turns in `~/.claude/projects/<project>/`.
fn claude_history(
    home: &Path,
    project: &str,
    first: usize,
    sessions: usize,
    turns: usize,
) -> TestResult {
    let dir = home.join(".claude/projects").join(project);
    std::fs::create_dir_all(&dir)?;
    for s in first..first + sessions {
        let id = format!("00000000-0000-4000-8000-{s:012}");
        std::fs::write(
            dir.join(format!("{id}.jsonl")),
            claude_code_session(&id, "/work/demo", turns),
        )?;
    }
    Ok(())
}

/// Starts `app` under tauri-driver with the fake home (and the dark theme when asked).
async fn start(app: &Path, home: &Path, cairn_home: &Path, dark: bool) -> TestResult<App> {
    // Scans happen when the test presses Scan, not on their own at start-up.
    let config = cairn_home.join("config.toml");
    if !config.exists() {
        std::fs::write(&config, "[sync]\nauto = false\n")?;
    }
    common::launch(
        app,
        &[
            ("HOME", Some(home.as_os_str())),
            ("CAIRN_HOME", Some(cairn_home.as_os_str())),
            ("CAIRN_CONFIG", None),
            ("CLAUDE_CONFIG_DIR", None),
            ("CODEX_HOME", None),
            gtk_theme(dark),
        ],
    )
    .await
}

#[tokio::test]
#[ignore = "needs a display, tauri-driver and WebKitWebDriver: run through ./run test"]
async fn the_sources_page_scans_and_installs_hooks() -> TestResult {
    let cli = desktop_binary()?.with_file_name("cairn");
    if !cli.is_file() {
        return Err(format!(
            "{} is missing: the hooks point at it; run `cargo build --workspace` first",
            cli.display()
        )
        .into());
    }
    let home = tempfile::tempdir()?;
    let cairn_home = tempfile::tempdir()?;
    claude_history(home.path(), "-work-demo", 0, SESSIONS, TURNS)?;

    let app = desktop_binary()?;
    let running = start(&app, home.path(), cairn_home.path(), false).await?;
    let outcome = drive(&running.client, home.path(), cairn_home.path(), &cli).await;
    running.close().await;
    outcome?;

    // The app alone, without the CLI beside it, in the dark theme (WebKit follows GTK_THEME for
    // prefers-color-scheme): the page says the hooks have nothing to run and offers no install.
    let alone = screenshot_dir()?.join("sources-app-alone");
    std::fs::create_dir_all(&alone)?;
    let alone = alone.canonicalize()?;
    let lonely_app = alone.join("cairn-desktop");
    let _ = std::fs::remove_file(&lonely_app);
    if std::fs::hard_link(&app, &lonely_app).is_err() {
        std::fs::copy(&app, &lonely_app)?;
    }
    let running = start(&lonely_app, home.path(), cairn_home.path(), true).await?;
    let client = &running.client;
    let outcome = async {
        click(client, "#page-sources").await?;
        wait_for_text(client, "#source-claude-code", "Last sync").await?;
        let warning =
            wait_for_text(client, "#hooks-no-cli", "The cairn command is missing").await?;
        assert!(
            warning.contains(&alone.join("cairn").display().to_string()),
            "{warning}"
        );
        let disabled = client
            .execute(
                "return document.getElementById('hook-install-claude-code').disabled;",
                vec![],
            )
            .await?;
        assert_eq!(disabled, Value::Bool(true), "no install without the CLI");
        let dark: Value = client
            .execute(
                "return window.matchMedia('(prefers-color-scheme: dark)').matches;",
                vec![],
            )
            .await?;
        eprintln!("the dark run matches prefers-color-scheme: dark: {dark}");
        screenshot(client, "sources-dark").await?;
        scroll_to(client, "#hooks").await?;
        screenshot(client, "sources-dark-no-cli").await
    }
    .await;
    running.close().await;
    let _ = std::fs::remove_dir_all(&alone);
    outcome
}

/// Scrolls the page so the element is at the top (for the screenshots).
async fn scroll_to(client: &Client, css: &str) -> TestResult {
    client
        .execute(
            "const e = document.querySelector(arguments[0]); if (e) e.scrollIntoView({block: 'start'});",
            vec![json!(css)],
        )
        .await?;
    Ok(())
}

async fn drive(client: &Client, home: &Path, cairn_home: &Path, cli: &Path) -> TestResult {
    // The page finds Claude Code's history: detected, three files, nothing imported yet.
    click(client, "#page-sources").await?;
    wait_for_text(client, "#source-claude-code", "Claude Code").await?;
    wait_for_text(client, "#source-claude-code .badge", "Detected").await?;
    let files = wait_for_text(client, "#source-claude-code .stat-files", "3").await?;
    assert_eq!(files.trim(), "3");
    wait_for_text(client, "#source-claude-code", "Never synced").await?;
    let path = text_of(client, "#source-claude-code .source-path")
        .await?
        .unwrap_or_default();
    assert_eq!(
        path,
        home.join(".claude/projects").display().to_string(),
        "the card shows where it reads"
    );
    // Agents not on this machine are not cards.
    assert!(text_of(client, "#source-codex.source-card")
        .await?
        .is_none());
    screenshot(client, "sources").await?;

    // Scan: the progress runs to the end, the summary counts every turn, the card refreshes.
    click(client, "#scan-all").await?;
    wait_for_text(client, "#scan-status", "Scan finished").await?;
    let row = wait_for_text(client, "#scan-panel .scan-row", "3 / 3 files").await?;
    let added = SESSIONS * TURNS;
    assert!(row.contains(&format!("{added} turns added")), "{row}");
    let bar: Value = client
        .execute(
            "const b = document.querySelector('#scan-panel [role=progressbar]'); return [b.getAttribute('aria-valuenow'), b.getAttribute('aria-valuemax')];",
            vec![],
        )
        .await?;
    assert_eq!(bar, json!(["3", "3"]));
    let summary = wait_for_text(client, "#scan-summary", "turns added").await?;
    assert!(
        summary.contains(&format!(
            "{added} turns added from {SESSIONS} conversations"
        )),
        "{summary}"
    );
    assert!(summary.contains("0 failed"), "{summary}");
    assert!(summary.contains("0 malformed lines"), "{summary}");
    wait_for_text(
        client,
        "#source-claude-code .stat-turns",
        &added.to_string(),
    )
    .await?;
    wait_for_text(client, "#source-claude-code .stat-conversations", "3").await?;
    wait_for_text(client, "#source-claude-code", "Last sync just now").await?;
    screenshot(client, "sources-scanned").await?;

    // A second scan finds nothing new.
    click(client, "#scan-dismiss").await?;
    click(client, "#source-claude-code .source-scan").await?;
    wait_for_text(client, "#scan-status", "Scan finished").await?;
    wait_for_text(client, "#scan-summary", "0 turns added").await?;

    deep_scan_paused_resumed_stopped(client, home).await?;

    // The Claude Code hook: installed in the fake ~/.claude/settings.json, pointing at the CLI.
    let settings = home.join(".claude/settings.json");
    wait_for_text(client, "#hook-claude-code", "Not installed").await?;
    wait_for_text(client, "#hook-claude-code", &settings.display().to_string()).await?;
    assert!(!settings.exists());
    scroll_to(client, "#hooks").await?;
    assert!(
        text_of(client, "#hooks-no-cli").await?.is_none(),
        "the cairn CLI is beside the app"
    );
    // A real click, as a person makes it.
    client
        .find(Locator::Id("hook-install-claude-code"))
        .await?
        .click()
        .await?;
    wait_for_text(client, "#hook-claude-code .hook-note", "Installed in").await?;
    wait_for_text(client, "#hook-claude-code .badge", "Installed").await?;
    let doc: Value = serde_json::from_slice(&std::fs::read(&settings)?)?;
    for event in ["UserPromptSubmit", "Stop"] {
        let command = doc["hooks"][event][0]["hooks"][0]["command"]
            .as_str()
            .unwrap_or_default();
        assert_eq!(
            command,
            // The hook reads the app's data home, which is not the default one here.
            format!(
                "'{}' --home '{}' hook {event} --agent claude-code",
                cli.display(),
                cairn_home.display()
            ),
            "{doc}"
        );
    }
    client.find(Locator::Id("hook-remove-claude-code")).await?;
    scroll_to(client, "#hooks").await?;
    screenshot(client, "sources-hook-installed").await?;

    click(client, "#hook-remove-claude-code").await?;
    wait_for_text(client, "#hook-claude-code .hook-note", "Removed from").await?;
    wait_for_text(client, "#hook-claude-code .badge", "Not installed").await?;
    let doc: Value = serde_json::from_slice(&std::fs::read(&settings)?)?;
    assert_eq!(doc["hooks"], json!({}), "{doc}");
    screenshot(client, "sources-hook-removed").await?;
    Ok(())
}

/// A deep scan over a larger history, confirmed, paused (nothing moves), resumed, and stopped.
async fn deep_scan_paused_resumed_stopped(client: &Client, home: &Path) -> TestResult {
    claude_history(home, "-work-big", 100, 400, 25)?;
    click(client, "#scan-dismiss").await?;
    click(client, "#deep-scan-all").await?;
    wait_for_text(client, "#deep-scan-confirm", "rereads every history file").await?;
    let deadline = Instant::now() + Duration::from_secs(5);
    let focused = loop {
        let focused = common::focused(client).await?;
        if focused == "deep-scan-start" || Instant::now() > deadline {
            break focused;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(
        focused, "deep-scan-start",
        "the confirmation takes the focus"
    );
    screenshot(client, "sources-deep-scan-confirm").await?;
    // Enter on the focused button starts it: the confirmation works from the keyboard.
    client.active_element().await?.send_keys("\u{E007}").await?;
    wait_for_text(client, "#scan-status", "Deep scan: reading Claude Code").await?;
    click(client, "#scan-pause").await?;
    wait_for_text(client, "#scan-status", "Deep scan paused").await?;
    wait_for_text(client, "#scan-pause", "Resume").await?;
    // The file in hand finishes; after that nothing moves while paused.
    tokio::time::sleep(Duration::from_millis(800)).await;
    let before = text_of(client, "#scan-panel .scan-row-count").await?;
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let after = text_of(client, "#scan-panel .scan-row-count").await?;
    assert_eq!(before, after, "a paused scan does not move");
    let progress = after.unwrap_or_default();
    assert!(
        !progress.starts_with("403 / 403"),
        "{progress}: paused too late to tell"
    );
    screenshot(client, "sources-scan-paused").await?;

    click(client, "#scan-pause").await?;
    wait_for_text(client, "#scan-status", "Deep scan: reading").await?;
    click(client, "#scan-stop").await?;
    wait_for_text(client, "#scan-status", "Deep scan stopped").await?;
    let summary = wait_for_text(client, "#scan-summary", "turns added").await?;
    let row = text_of(client, "#scan-panel .scan-row-count")
        .await?
        .unwrap_or_default();
    assert!(
        !row.starts_with("403 / 403"),
        "stopped before the end: {row}"
    );
    screenshot(client, "sources-scan-stopped").await?;
    eprintln!("stopped deep scan: {row}; {summary}");
    Ok(())
}

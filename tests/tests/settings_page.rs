//! The Settings page of the real desktop app, end to end: a provider added through the form for a
//! mock OpenAI-compatible server, its connection tested (the server's listed models shown), one made
//! the default (checked in config.toml on disk), the dark theme chosen, and a diagnostic report
//! exported without the API key in it. Screenshots go to `target/e2e/settings-*.png`.
//!
//! Needs a display, `tauri-driver`, `WebKitWebDriver`, a built UI and `cargo build --workspace`, so
//! it is ignored by a plain `cargo test`.

mod common;

use std::path::Path;
use std::time::Duration;

use cairn_test_support::MockServer;
use common::{click, gtk_theme, screenshot_after, set_value, wait_for_text, App, TestResult};
use fantoccini::Client;
use serde_json::json;

const KEY: &str = "sk-settings-test-secret-4242";

async fn screenshot(client: &Client, name: &str) -> TestResult {
    screenshot_after(client, name, Duration::from_millis(400)).await
}

/// Sets an input's value the way typing does (an `input` event).
async fn launch(home: &Path) -> TestResult<App> {
    let app = common::launch_at(home, &[gtk_theme(false)]).await?;
    wait_for_text(&app.client, "#status-line", "API on").await?;
    Ok(app)
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs a display, tauri-driver and WebKitWebDriver: run through ./run test"]
async fn the_settings_page_configures_a_provider_theme_and_diagnostics() -> TestResult {
    let server = MockServer::start(Vec::new()).await?;
    let home = tempfile::tempdir()?;
    let home = home.path();
    let app = launch(home).await?;
    let outcome = flow(&app.client, home, &server.base_url).await;
    app.close().await;
    outcome
}

async fn flow(client: &Client, home: &Path, base_url: &str) -> TestResult {
    click(client, "#page-settings").await?;
    wait_for_text(client, "#settings-no-providers", "No model provider yet").await?;
    // The embedding model recall uses is named, installed or not (this home has none).
    wait_for_text(
        client,
        "#settings-embedding",
        "all-MiniLM-L6-v2 is not installed",
    )
    .await?;
    screenshot(client, "settings-empty").await?;

    // Add the provider through the form.
    click(client, "#settings-add-provider").await?;
    wait_for_text(client, "#provider-form", "Add a provider").await?;
    set_value(client, "#provider-name", "mock").await?;
    set_value(client, "#provider-api-key", KEY).await?;
    // An address without its scheme is said next to the field, and nothing is written.
    set_value(client, "#provider-base-url", "localhost:11434").await?;
    wait_for_text(
        client,
        "#provider-base-url-error",
        "Start the address with http:// or https://",
    )
    .await?;
    click(client, "#provider-save").await?;
    assert_eq!(
        common::focused(client).await?,
        "provider-base-url",
        "the caret goes to the field"
    );
    screenshot(client, "settings-form-bad-address").await?;
    assert!(
        !std::fs::read_to_string(home.join("config.toml"))
            .unwrap_or_default()
            .contains("[providers.mock]"),
        "nothing is saved"
    );
    set_value(client, "#provider-base-url", base_url).await?;
    let error = common::text_of(client, "#provider-base-url-error").await?;
    assert_eq!(error.as_deref(), Some(""), "the error goes with the fix");
    screenshot(client, "settings-form").await?;
    click(client, "#provider-save").await?;
    wait_for_text(client, "#settings-provider-notice", "Saved provider mock").await?;
    let card = ".set-provider[data-provider=\"mock\"]";
    wait_for_text(client, &format!("{card} .provider-key"), "Set").await?;
    let page = client.source().await?;
    assert!(!page.contains(KEY), "the page never shows the key");

    // Test connection: OK, with the models the server lists.
    click(client, &format!("{card} .provider-test")).await?;
    let result = wait_for_text(client, &format!("{card} .provider-test-result"), "OK").await?;
    assert!(
        result.contains("small-model") && result.contains("big-model"),
        "{result}"
    );
    screenshot(client, "settings-tested").await?;
    // Saved with another address, the old test result goes: it said nothing about the new one.
    click(client, &format!("{card} .provider-edit")).await?;
    let dead = format!("http://127.0.0.1:{}/v1", common::free_port()?);
    set_value(client, "#provider-base-url", &dead).await?;
    click(client, "#provider-save").await?;
    wait_for_text(client, &format!("{card} .set-mono"), &dead).await?;
    assert_eq!(
        common::text_of(client, &format!("{card} .provider-test-result")).await?,
        None,
        "no stale connection result"
    );
    click(client, &format!("{card} .provider-edit")).await?;
    set_value(client, "#provider-base-url", base_url).await?;
    click(client, "#provider-save").await?;
    wait_for_text(client, &format!("{card} .set-mono"), base_url).await?;
    click(client, &format!("{card} .provider-test")).await?;
    wait_for_text(client, &format!("{card} .provider-test-result"), "OK").await?;

    // One of them becomes the default.
    click(
        client,
        &format!("{card} .use-default[data-model=\"small-model\"]"),
    )
    .await?;
    wait_for_text(client, "#settings-default-model", "mock/small-model").await?;
    screenshot(client, "settings-default").await?;
    let config = std::fs::read_to_string(home.join("config.toml"))?;
    assert!(config.contains("[providers.mock]"), "{config}");
    assert!(
        config.contains(&format!("base_url = \"{base_url}\"")),
        "{config}"
    );
    assert!(
        config.contains(&format!("api_key = \"{KEY}\"")),
        "written as given: {config}"
    );
    assert!(config.contains("models = [\"small-model\"]"), "{config}");
    assert!(config.contains("model = \"mock/small-model\""), "{config}");

    // The memory's summaries and notes get their own model, picked in its row.
    common::choose(client, "#settings-slot-summary", "mock/small-model").await?;
    wait_for_text(
        client,
        "#settings-provider-notice",
        "Memory summaries and notes now uses mock/small-model.",
    )
    .await?;
    screenshot(client, "settings-slots").await?;
    let config = std::fs::read_to_string(home.join("config.toml"))?;
    assert!(
        config.contains("[models]\nsummary = \"mock/small-model\""),
        "{config}"
    );

    // Start at login: off by default; on writes the XDG autostart entry running this app, off
    // removes it.
    let entry = home.join(".config/autostart/cairn-desktop.desktop");
    let checked = "return document.getElementById('start-at-login').checked;";
    assert_eq!(client.execute(checked, vec![]).await?, json!(false));
    click(client, "#start-at-login").await?;
    wait_for_text(
        client,
        "#settings-appearance-notice",
        "Cairn starts when you log in",
    )
    .await?;
    let text = std::fs::read_to_string(&entry)?;
    let program = common::desktop_binary()?;
    assert!(
        text.contains(&format!("\nExec={}\n", program.display())),
        "{text}"
    );
    assert_eq!(client.execute(checked, vec![]).await?, json!(true));
    screenshot(client, "settings-start-at-login").await?;
    click(client, "#start-at-login").await?;
    wait_for_text(client, "#settings-appearance-notice", "no longer starts").await?;
    assert!(!entry.exists(), "the autostart entry is still there");

    // The dark theme: applied at once, and kept in the config.
    click(client, "#theme-dark").await?;
    wait_for_text(client, "#settings-appearance-notice", "Theme: Dark").await?;
    let theme = client
        .execute(
            "return document.documentElement.getAttribute('data-theme');",
            vec![],
        )
        .await?;
    assert_eq!(theme, json!("dark"));
    let config = std::fs::read_to_string(home.join("config.toml"))?;
    assert!(config.contains("[ui]\ntheme = \"dark\""), "{config}");
    screenshot(client, "settings-dark").await?;

    // The diagnostic report: written under logs/, without the key.
    click(client, "#diagnostics-export").await?;
    let notice = wait_for_text(client, "#diagnostics-path", "Report written to ").await?;
    let path = notice
        .split("Report written to ")
        .nth(1)
        .ok_or("no path in the notice")?
        .trim();
    assert!(Path::new(path).starts_with(home.join("logs")), "{path}");
    assert!(path.contains("diagnostics-"), "{path}");
    let report = std::fs::read_to_string(path)?;
    assert!(!report.contains(KEY), "the report has the key:\n{report}");
    assert!(report.contains("[providers.mock]"), "{report}");
    assert!(report.contains("<redacted>"), "{report}");
    assert!(report.contains("## Memory health"), "{report}");
    client
        .execute(
            "document.querySelector('#diagnostics-export').scrollIntoView();",
            vec![],
        )
        .await?;
    screenshot(client, "settings-diagnostics").await?;
    Ok(())
}

/// The MCP page: the reference server-everything added through the form runs and lists its
/// tools, a server that cannot start says why, one is turned off and another removed (each
/// checked in config.toml), and a variable's value never reaches the page.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs a display, tauri-driver and WebKitWebDriver: run through ./run test"]
async fn the_settings_page_runs_mcp_servers() -> TestResult {
    let everything = std::path::PathBuf::from(std::env::var("HOME")?)
        .join(".cache/cairn/clients/node/node_modules/.bin/mcp-server-everything");
    if !everything.exists() {
        return Err(format!("{} is missing: run scripts/setup.sh", everything.display()).into());
    }
    let home = tempfile::tempdir()?;
    let home = home.path();
    let app = launch(home).await?;
    let outcome = mcp_flow(&app.client, home, &everything).await;
    app.close().await;
    outcome
}

async fn mcp_flow(client: &Client, home: &Path, everything: &Path) -> TestResult {
    const SECRET: &str = "mcp-e2e-secret-7313";
    let config = || std::fs::read_to_string(home.join("config.toml")).unwrap_or_default();
    click(client, "#page-settings").await?;
    wait_for_text(client, "#settings-no-mcp", "No MCP server yet").await?;

    click(client, "#settings-add-mcp").await?;
    wait_for_text(client, "#mcp-form", "Add an MCP server").await?;
    set_value(client, "#mcp-name", "everything").await?;
    set_value(client, "#mcp-command", &everything.display().to_string()).await?;
    set_value(client, "#mcp-args", "stdio").await?;
    set_value(client, "#mcp-env", &format!("DEMO_TOKEN={SECRET}")).await?;
    set_value(client, "#mcp-disabled-tools", "trigger-sampling-request").await?;
    screenshot(client, "settings-mcp-form").await?;
    click(client, "#mcp-save").await?;
    wait_for_text(
        client,
        "#settings-mcp-notice",
        "Saved MCP server everything",
    )
    .await?;
    let card = ".mcp-server[data-mcp=\"everything\"]";
    wait_for_text(client, &format!("{card} .mcp-state"), "Running").await?;
    let tools = wait_for_text(client, &format!("{card} .mcp-tools"), "echo").await?;
    assert!(!tools.contains("trigger-sampling-request"), "{tools}");
    let named = client
        .execute(
            "return document.querySelector(arguments[0]) !== null;",
            vec![json!(format!(
                "{card} [data-tool=\"mcp__everything__echo\"]"
            ))],
        )
        .await?;
    assert_eq!(
        named,
        json!(true),
        "the model's name of the tool is on its chip"
    );
    assert!(
        common::text_of(client, &format!("{card} .set-facts"))
            .await?
            .unwrap_or_default()
            .contains("DEMO_TOKEN"),
        "the variable's name is shown"
    );
    assert!(
        !client.source().await?.contains(SECRET),
        "the page shows the value"
    );
    let written = config();
    assert!(written.contains("[mcp.servers.everything]"), "{written}");
    assert!(written.contains("args = [\"stdio\"]"), "{written}");
    assert!(
        written.contains(&format!("DEMO_TOKEN = \"{SECRET}\"")),
        "{written}"
    );
    screenshot(client, "settings-mcp-running").await?;

    // Edited with the variable named alone, its value stays in the file.
    click(client, &format!("{card} .mcp-edit")).await?;
    wait_for_text(client, "#mcp-form", "Edit MCP server everything").await?;
    let shown = client
        .execute("return document.getElementById('mcp-env').value;", vec![])
        .await?;
    assert_eq!(shown, json!("DEMO_TOKEN"));
    set_value(client, "#mcp-tool-timeout", "30").await?;
    click(client, "#mcp-save").await?;
    // The card already said Running before the save: wait for the file itself.
    let saved = std::time::Instant::now();
    while !config().contains("tool_timeout = 30") && saved.elapsed() < Duration::from_secs(10) {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    wait_for_text(client, &format!("{card} .mcp-state"), "Running").await?;
    let written = config();
    assert!(
        written.contains(&format!("DEMO_TOKEN = \"{SECRET}\"")),
        "{written}"
    );
    assert!(written.contains("tool_timeout = 30"), "{written}");

    // A server that cannot start: failed, with the reason on its card.
    click(client, "#settings-add-mcp").await?;
    set_value(client, "#mcp-name", "broken").await?;
    set_value(client, "#mcp-command", "/nonexistent/mcp-server").await?;
    click(client, "#mcp-save").await?;
    let broken = ".mcp-server[data-mcp=\"broken\"]";
    wait_for_text(client, &format!("{broken} .mcp-state"), "Failed").await?;
    wait_for_text(
        client,
        &format!("{broken} .mcp-error"),
        "/nonexistent/mcp-server",
    )
    .await?;
    screenshot(client, "settings-mcp-failed").await?;

    // Restarted, everything runs again; turned off, it is kept in the file as off.
    click(client, &format!("{card} .mcp-restart")).await?;
    wait_for_text(client, &format!("{card} .mcp-state"), "Running").await?;
    click(client, &format!("{card} .mcp-toggle")).await?;
    wait_for_text(client, "#settings-mcp-notice", "Turned everything off").await?;
    wait_for_text(client, &format!("{card} .mcp-state"), "Off").await?;
    assert!(config().contains("enabled = false"), "{}", config());

    // Removed, the broken one leaves the file.
    click(client, &format!("{broken} .mcp-remove")).await?;
    wait_for_text(client, "#settings-mcp-notice", "Removed MCP server broken").await?;
    assert!(!config().contains("[mcp.servers.broken]"), "{}", config());
    assert!(
        config().contains("[mcp.servers.everything]"),
        "{}",
        config()
    );
    screenshot(client, "settings-mcp-off").await?;
    Ok(())
}

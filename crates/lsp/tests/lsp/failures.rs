//! A server that crashes mid-request or never answers, and the texts for bad input: each is an
//! answer the model reads, and the next call works.

use std::path::Path;
use std::time::Duration;

use cairn_config::{LspConfig, LspServerConfig};
use cairn_lsp::LspHub;
use cairn_tools::{Tool, ToolContext};
use serde_json::json;

use crate::{failed, ok, server, Project, TestResult};

fn fake(mode: &str) -> LspServerConfig {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/lsp/fixtures/fake_server.py");
    let script = script.display().to_string();
    server("fake", Path::new("python3"), &[&script, mode], &[".py"])
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_that_crashes_mid_request_is_started_again() -> TestResult {
    let p = Project::new("py", vec![fake("crash")], Duration::from_secs(10))?;
    let crashed = p
        .call(json!({"action": "hover", "path": "app.py", "symbol": "greet"}))
        .await;
    assert_eq!(
        failed(&crashed),
        "[lsp: fake: hover failed: the server exited: fake: segmentation fault in hover]"
    );
    let again = p
        .call(json!({"action": "hover", "path": "app.py", "symbol": "greet"}))
        .await;
    assert_eq!(ok(&again), "greet: answered after a restart");
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_that_never_answers_is_given_up_on_in_time() -> TestResult {
    let p = Project::new("py", vec![fake("silent")], Duration::from_secs(1))?;
    let started = std::time::Instant::now();
    let silent = p
        .call(json!({"action": "hover", "path": "app.py", "line": 2, "column": 5}))
        .await;
    assert_eq!(
        failed(&silent),
        "[lsp: fake: hover failed: no answer within 1s]"
    );
    assert!(started.elapsed() < Duration::from_secs(5));
    // The server still answers what it answers.
    let symbols = p.call(json!({"action": "symbols", "path": "app.py"})).await;
    assert_eq!(ok(&symbols), "no symbols in app.py");
    p.hub.shutdown().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_input_is_told_in_the_specs_words() -> TestResult {
    let p = Project::new("py", vec![fake("crash")], Duration::from_secs(10))?;
    let cases = [
        (
            json!({"action": "hover", "path": "notes.md", "symbol": "x"}),
            "[lsp: no language server for \"notes.md\" — configured: fake (.py)]",
        ),
        (
            json!({"action": "definition", "path": "app.py", "symbol": "foo"}),
            "[lsp: \"foo\" not found in app.py]",
        ),
        (
            json!({"action": "definition", "path": "app.py", "symbol": "greet", "line": 3}),
            "[lsp: \"greet\" not found on line 3 of app.py]",
        ),
        (
            json!({"action": "definition", "path": "app.py", "line": 3, "column": 40}),
            "[lsp: column 40 is past the end of line 3 (20 characters)]",
        ),
        (
            json!({"action": "definition", "path": "app.py", "line": 99, "column": 1}),
            "[lsp: line 99 is past the end of app.py (16 lines)]",
        ),
        (
            json!({"action": "definition", "path": "app.py"}),
            "[lsp: definition needs a symbol, or a line and a column]",
        ),
        (
            json!({"action": "jump", "path": "app.py"}),
            "[lsp: unknown action \"jump\" — use definition, references, hover, symbols, diagnostics or rename]",
        ),
        (
            json!({"action": "hover", "path": "missing.py", "symbol": "x"}),
            "[lsp: cannot read missing.py: No such file or directory (os error 2)]",
        ),
    ];
    for (input, expected) in cases {
        assert_eq!(failed(&p.call(input.clone()).await), expected, "{input}");
    }
    Ok(())
}

#[test]
fn the_tool_names_its_servers_and_says_what_it_shows() -> TestResult {
    let p = Project::new("py", vec![fake("crash")], Duration::from_secs(10))?;
    let tool = p.tool();
    assert!(tool
        .declaration()
        .description
        .contains("Servers available: fake (.py)."));
    assert_eq!(
        tool.display(&json!({"action": "definition", "path": "main.go", "symbol": "greet"})),
        "🔎 lsp: definition main.go greet"
    );
    assert_eq!(
        tool.display(&json!({"action": "hover", "path": "main.go", "line": 9, "column": 14})),
        "🔎 lsp: hover main.go:9:14"
    );
    assert_eq!(
        tool.display(
            &json!({"action": "rename", "path": "main.go", "symbol": "greet", "new_name": "hello"})
        ),
        "🔎 lsp: rename main.go greet → hello"
    );
    // A project's servers start only once the person let a call run there (they run its code).
    let ctx = ToolContext::new(std::env::temp_dir().join("cairn-lsp-untrusted"));
    assert!(tool.needs_permission(&json!({"action": "hover"}), &ctx));
    p.hub.trust(&ctx.cwd);
    assert!(tool.needs_permission(&json!({"action": "rename"}), &ctx));
    assert!(!tool.needs_permission(&json!({"action": "hover", "path": "a.py"}), &ctx));
    assert!(
        tool.needs_permission(&json!({"action": "hover", "path": "/etc/passwd.py"}), &ctx),
        "a file outside the project asks, as read_file does"
    );
    assert_eq!(
        tool.rejected(&json!({"action": "rename"})),
        "[rename rejected by the user]"
    );
    Ok(())
}

#[test]
fn a_configured_server_missing_from_the_path_is_skipped_with_a_warning() -> TestResult {
    let missing = server("gopls", Path::new("no-such-gopls"), &[], &[".go"]);
    let hub = LspHub::new(&LspConfig {
        servers: vec![missing],
        configured: true,
        timeout: Duration::from_secs(1),
    });
    assert!(hub.is_empty());
    assert_eq!(
        hub.warnings(),
        [
            "[warning: lsp server gopls (no-such-gopls) not found on the PATH — skipped]",
            "[lsp: no language server found on the PATH — the lsp tool is off]"
        ]
    );
    Ok(())
}

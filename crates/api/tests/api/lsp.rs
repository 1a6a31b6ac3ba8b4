//! The `lsp` tool as the agent has it: declared when a configured server is on the PATH, its
//! answers returned to the model, the first start in a project and every rename asking first.

use std::path::{Path, PathBuf};

use cairn_agent::{Event, Op, Runtime};
use cairn_api::{Cairn, ModelChoice};
use cairn_config::Home;
use cairn_test_support::{text_reply, tool_call_reply, MockServer};
use serde_json::json;

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// The results of a turn's calls, its display lines, and its recap; each approval asked for is
/// answered with the next of `allow` (refused when none is left).
async fn turn_approving(
    runtime: &Runtime,
    text: &str,
    allow: &[bool],
) -> (Vec<String>, Vec<String>, Option<String>) {
    let mut decisions = allow.iter().copied();
    let mut events = runtime.submit(Op::UserMessage {
        session: "s".into(),
        text: text.into(),
        images: Vec::new(),
    });
    let (mut results, mut shown, mut recap) = (Vec::new(), Vec::new(), None);
    while let Some(event) = events.recv().await {
        match event {
            Event::ToolResult { output, .. } => results.push(output),
            Event::ToolCall { display, .. } => shown.push(display),
            Event::TurnComplete { counters, .. } => recap = counters.recap(),
            Event::ApprovalRequest { request, .. } => {
                let allow = decisions.next().unwrap_or(false);
                runtime.submit(Op::Approve { request, allow });
            }
            _ => {}
        }
    }
    (results, shown, recap)
}

async fn turn(runtime: &Runtime, text: &str) -> (Vec<String>, Vec<String>, Option<String>) {
    turn_approving(runtime, text, &[]).await
}

/// A copy of the lsp crate's Python fixture project.
fn project(dir: &Path) -> std::io::Result<PathBuf> {
    let root = dir.join("project");
    std::fs::create_dir_all(&root)?;
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("../lsp/tests/lsp/fixtures/py");
    for entry in std::fs::read_dir(fixture)? {
        let entry = entry?;
        std::fs::copy(entry.path(), root.join(entry.file_name()))?;
    }
    root.canonicalize()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agent_asks_pyright_and_a_rename_waits_for_approval() -> TestResult {
    let servers = cairn_test_support::language_servers()?;
    let dir = tempfile::tempdir()?;
    let root = project(dir.path())?;
    let server = MockServer::start(vec![
        tool_call_reply(
            "c1",
            "lsp",
            json!({"action": "definition", "path": "util.py", "symbol": "greet"}),
        ),
        tool_call_reply(
            "c2",
            "lsp",
            json!({"action": "rename", "path": "util.py", "symbol": "greet", "new_name": "welcome"}),
        ),
        text_reply("greet is defined in app.py."),
    ])
    .await?;
    // The first start in a project asks (a server runs the project's code), and so does every
    // rename: the person lets the server start, then refuses the rename.
    std::fs::write(
        dir.path().join("config.toml"),
        format!(
            "[agent]\nmodel = \"mock/m\"\nyolo = false\n\n[providers.mock]\nbase_url = \"{}\"\n\n\
             [lsp.servers.pyright]\ncommand = {:?}\nargs = [\"--stdio\"]\nextensions = [\".py\"]\n",
            server.base_url,
            servers.pyright.display().to_string()
        ),
    )?;
    let cairn = Cairn::new(Home::at(dir.path()));
    assert!(cairn.lsp_warnings().is_empty());
    let runtime = cairn.agent_runtime(ModelChoice::default(), root.clone())?;
    let (results, shown, recap) =
        turn_approving(&runtime, "Where is greet defined?", &[true, false]).await;
    assert_eq!(
        results,
        [
            "[#0001]\napp.py:2:5  def greet(name: str) -> str:",
            "[#0002]\n[rename rejected by the user]",
        ]
    );
    assert_eq!(
        shown,
        [
            "🔎 lsp: definition util.py greet",
            "🔎 lsp: rename util.py greet → welcome"
        ]
    );
    assert_eq!(recap.as_deref(), Some("🔎 2 lsp call(s)"));
    // Refused: nothing on disk changed.
    assert!(std::fs::read_to_string(root.join("util.py"))?.contains("greet"));
    let declared = server.requests()[0]["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|t| t["function"]["name"] == "lsp")
        .cloned()
        .ok_or("lsp is not declared")?;
    assert!(declared["function"]["description"]
        .as_str()
        .is_some_and(|d| d.contains("Servers available: pyright (.py).")));
    cairn.shutdown_language_servers().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_server_on_the_path_the_tool_is_not_declared_and_start_up_says_so() -> TestResult
{
    let dir = tempfile::tempdir()?;
    let server = MockServer::start(vec![text_reply("Hello.")]).await?;
    crate::write_config(
        dir.path(),
        &server.base_url,
        "\n[lsp.servers.gopls]\ncommand = \"no-such-gopls\"\nextensions = [\".go\"]\n",
    )?;
    let cairn = Cairn::new(Home::at(dir.path()));
    assert_eq!(
        cairn.lsp_warnings(),
        [
            "[warning: lsp server gopls (no-such-gopls) not found on the PATH — skipped]",
            "[lsp: no language server found on the PATH — the lsp tool is off]"
        ]
    );
    let runtime = cairn.agent_runtime(ModelChoice::default(), dir.path().to_path_buf())?;
    turn(&runtime, "Hi").await;
    let tools = &server.requests()[0]["tools"];
    assert!(!tools.to_string().contains("\"lsp\""), "{tools}");
    Ok(())
}

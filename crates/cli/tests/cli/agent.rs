//! `cairn agent` against a scripted OpenAI-compatible server, with no config file.

use std::io::Write;
use std::process::{Command, Stdio};

use cairn_test_support::{text_reply, tool_call_reply, MockServer};

use crate::{cairn, stdout};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_piped_task_is_answered_and_remembered() -> Result<(), Box<dyn std::error::Error>> {
    let server = MockServer::start(vec![text_reply("2 + 2 = 4.")]).await?;
    let dir = tempfile::tempdir()?;
    let mut child = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args([
            "agent",
            "--base-url",
            &server.base_url,
            "--model",
            "tiny",
            "--api-key-env",
            "CAIRN_TEST_KEY",
        ])
        .env("CAIRN_HOME", dir.path())
        .env("CAIRN_TEST_KEY", "sk-test-123")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    child
        .stdin
        .take()
        .ok_or("no stdin")?
        .write_all(b"What is 2 + 2?\n")?;
    let output = tokio::task::spawn_blocking(move || child.wait_with_output()).await??;
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(stdout(&output), "2 + 2 = 4.\n");
    assert!(String::from_utf8_lossy(&output.stderr).contains("1 step(s)"));
    let request = &server.requests()[0];
    assert_eq!(request["model"], "tiny");
    assert!(request["messages"][1]["content"]
        .as_str()
        .unwrap_or_default()
        .starts_with("What is 2 + 2?"));

    let found = cairn(dir.path(), &["memory", "search", "what is 2 + 2", "--json"])?;
    let found: serde_json::Value = serde_json::from_str(&stdout(&found))?;
    let text = found["hits"][0]["memory"]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(
        text.contains("User: What is 2 + 2?") && text.contains("Assistant: 2 + 2 = 4."),
        "{found}"
    );
    Ok(())
}

#[test]
fn without_a_model_it_says_how_to_configure_one() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let output = cairn(dir.path(), &["agent", "--message", "hello"])?;
    assert_eq!(output.status.code(), Some(2));
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(err.contains("no model is configured"), "{err}");
    assert!(
        err.contains("[providers.server]")
            && err.contains("--base-url URL --model NAME")
            && err.contains("cairn models install qwen2.5-coder-1.5b"),
        "{err}"
    );
    Ok(())
}

#[test]
fn a_dead_model_server_is_reported_plainly() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let url = format!("http://127.0.0.1:{port}/v1");
    let output = cairn(
        dir.path(),
        &[
            "agent",
            "--base-url",
            &url,
            "--model",
            "m",
            "--message",
            "hi",
        ],
    )?;
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("cannot reach the model server"));
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_configured_anthropic_provider_answers() -> Result<(), Box<dyn std::error::Error>> {
    use cairn_test_support::Reply;
    use serde_json::json;
    let server = MockServer::start(vec![Reply::sse(&[
        json!({ "type": "message_start", "message": { "usage": { "input_tokens": 9 } } }),
        json!({ "type": "content_block_delta", "index": 0, "delta": { "type": "text_delta", "text": "Bonjour." } }),
        json!({ "type": "message_delta", "delta": { "stop_reason": "end_turn" }, "usage": { "output_tokens": 2 } }),
        json!({ "type": "message_stop" }),
    ])])
    .await?;
    let dir = tempfile::tempdir()?;
    std::fs::write(
        dir.path().join("config.toml"),
        format!(
            "[agent]\nmodel = \"claude/claude-test\"\n\n[providers.claude]\nkind = \"anthropic\"\nbase_url = \"{}\"\napi_key = \"${{CAIRN_TEST_ANTHROPIC}}\"\n",
            server.base_url
        ),
    )?;
    let home = dir.path().to_owned();
    let output = tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_cairn"))
            .args(["agent", "--message", "Say hello in French"])
            .env("CAIRN_HOME", &home)
            .env("CAIRN_TEST_ANTHROPIC", "sk-ant-test")
            .output()
    })
    .await??;
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(stdout(&output), "Bonjour.\n");
    let sent = &server.requests()[0];
    assert_eq!(sent["model"], "claude-test");
    assert!(sent["system"]
        .as_str()
        .unwrap_or_default()
        .starts_with("You are Cairn"));
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_line_mode_keeps_a_conversation_until_new_or_exit(
) -> Result<(), Box<dyn std::error::Error>> {
    let server = MockServer::start(vec![
        text_reply("Noted: 7."),
        text_reply("It is 7."),
        text_reply("I don't know yet."),
    ])
    .await?;
    let dir = tempfile::tempdir()?;
    let mut child = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args([
            "agent",
            "--interactive",
            "--base-url",
            &server.base_url,
            "--model",
            "tiny",
        ])
        .env("CAIRN_HOME", dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    child.stdin.take().ok_or("no stdin")?.write_all(
        b"My number is 7\nWhat is my number?\n/bogus\n/new\nAnd now?\n/exit\nnever sent\n",
    )?;
    let output = tokio::task::spawn_blocking(move || child.wait_with_output()).await??;
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(stdout(&output), "Noted: 7.\nIt is 7.\nI don't know yet.\n");
    assert!(String::from_utf8_lossy(&output.stderr).contains("unknown command /bogus"));
    let requests = server.requests();
    assert_eq!(requests.len(), 3, "the line after /exit is not sent");
    assert_eq!(
        requests[1]["messages"].as_array().map(Vec::len),
        Some(4),
        "the second turn carries the first"
    );
    assert_eq!(
        requests[2]["messages"].as_array().map(Vec::len),
        Some(2),
        "/new starts afresh"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_are_listed_renamed_archived_and_deleted() -> Result<(), Box<dyn std::error::Error>>
{
    let server = MockServer::start(vec![text_reply("Sure.")]).await?;
    let dir = tempfile::tempdir()?;
    let home = dir.path().to_owned();
    let url = server.base_url.clone();
    let output = tokio::task::spawn_blocking(move || {
        cairn(
            &home,
            &[
                "agent",
                "--base-url",
                &url,
                "--model",
                "m",
                "--session",
                "plan-1",
                "--message",
                "Plan the release",
            ],
        )
    })
    .await??;
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );

    let list = |args: &[&str]| -> Result<serde_json::Value, Box<dyn std::error::Error>> {
        let mut full = vec!["sessions", "list", "--json"];
        full.extend_from_slice(args);
        Ok(serde_json::from_str(&stdout(&cairn(dir.path(), &full)?))?)
    };
    let sessions = list(&[])?;
    assert_eq!(sessions[0]["id"], "plan-1");
    assert_eq!(sessions[0]["title"], "Plan the release");
    assert!(
        cairn(dir.path(), &["sessions", "rename", "plan-1", "Release 2.0"])?
            .status
            .success()
    );
    assert!(cairn(dir.path(), &["sessions", "archive", "plan-1"])?
        .status
        .success());
    assert_eq!(list(&[])?.as_array().map(Vec::len), Some(0));
    assert_eq!(list(&["--all"])?[0]["title"], "Release 2.0");
    assert!(cairn(dir.path(), &["sessions", "delete", "plan-1"])?
        .status
        .success());
    let missing = cairn(dir.path(), &["sessions", "delete", "plan-1"])?;
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("no conversation \"plan-1\""));
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_are_shown_as_they_run_and_counted_after_the_turn(
) -> Result<(), Box<dyn std::error::Error>> {
    let server = MockServer::start(vec![
        tool_call_reply(
            "c1",
            "bash",
            serde_json::json!({"command": "echo hi from bash"}),
        ),
        tool_call_reply("c2", "read_file", serde_json::json!({"path": "notes.md"})),
        text_reply("All done."),
    ])
    .await?;
    let home = tempfile::tempdir()?;
    let work = tempfile::tempdir()?;
    std::fs::write(work.path().join("notes.md"), "a note\n")?;
    let output = one_turn(&server.base_url, "look", home.path(), work.path())?;
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{err}");
    assert_eq!(stdout(&output), "All done.\n");
    assert!(
        err.contains("🛠️  bash: echo hi from bash\n   hi from bash\n"),
        "{err}"
    );
    assert!(err.contains("📝 read_file: notes.md\n   a note\n"), "{err}");
    assert!(
        err.contains("(⚙ 1 command(s) · 📝 1 file op(s) · 3 step(s)"),
        "{err}"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_line_mode_asks_for_approval_and_answers_questions(
) -> Result<(), Box<dyn std::error::Error>> {
    let server = MockServer::start(vec![
        tool_call_reply(
            "c1",
            "bash",
            serde_json::json!({"command": "touch refused"}),
        ),
        tool_call_reply(
            "c2",
            "ask_user",
            serde_json::json!({"question": "Which one?", "options": ["alpha", "beta"]}),
        ),
        text_reply("You chose beta."),
        text_reply("Summary: chose beta."),
    ])
    .await?;
    let home = tempfile::tempdir()?;
    std::fs::write(home.path().join("config.toml"), "[agent]\nyolo = false\n")?;
    let work = tempfile::tempdir()?;
    let mut child = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args([
            "agent",
            "--interactive",
            "--base-url",
            &server.base_url,
            "--model",
            "tiny",
        ])
        .env("CAIRN_HOME", home.path())
        .current_dir(work.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    child
        .stdin
        .take()
        .ok_or("no stdin")?
        .write_all(b"do it\nn\n2\n/compact\n/exit\n")?;
    let output = tokio::task::spawn_blocking(move || child.wait_with_output()).await??;
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{err}");
    assert!(!work.path().join("refused").exists());
    assert!(err.contains("🔐 run it? [y/N] "), "{err}");
    assert!(
        err.contains("❓ ask_user: 1 question(s)\n❓ Which one?\n  1. alpha\n  2. beta\n"),
        "{err}"
    );
    assert!(
        err.contains("(compacted: the history is now a summary of"),
        "{err}"
    );
    let tools = tool_results(&server.requests()[2]);
    assert_eq!(
        tools,
        vec![
            "[#0001]\n[command rejected by the user]".to_owned(),
            "[#0002]\nThe user answered:\n- Which one? → beta".to_owned()
        ]
    );
    Ok(())
}

fn tool_results(request: &serde_json::Value) -> Vec<String> {
    request["messages"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_declared_in_the_config_runs_its_argv_without_a_shell(
) -> Result<(), Box<dyn std::error::Error>> {
    let server = MockServer::start(vec![
        tool_call_reply(
            "c1",
            "shout",
            serde_json::json!({"word": "hi; touch pwned", "times": "2"}),
        ),
        text_reply("Shouted."),
    ])
    .await?;
    let home = tempfile::tempdir()?;
    std::fs::write(
        home.path().join("config.toml"),
        r#"[[agent.tools]]
name = "shout"
description = "Print a word."
command = ["echo", "{{word}}", "x{{times}}"]
parameters = [
  { name = "word", type = "string", description = "The word." },
  { name = "times", type = "integer", description = "How often.", optional = true, default = 1 },
]
"#,
    )?;
    let work = tempfile::tempdir()?;
    let output = one_turn(&server.base_url, "shout", home.path(), work.path())?;
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{err}");
    assert!(err.contains("🧰 shout: echo hi; touch pwned x2\n"), "{err}");
    assert!(
        !work.path().join("pwned").exists(),
        "no shell ran the value"
    );
    assert_eq!(
        tool_results(&server.requests()[1]),
        vec!["[#0001]\nhi; touch pwned x2\n".to_owned()]
    );
    let declared = &server.requests()[0]["tools"];
    let shout = declared
        .as_array()
        .and_then(|t| t.iter().find(|t| t["function"]["name"] == "shout"))
        .ok_or("shout is not declared")?;
    assert_eq!(
        shout["function"]["description"],
        "Print a word. Required parameters: word. Give each parameter as its own field."
    );
    Ok(())
}

/// `cairn agent --base-url … --model tiny --message <message>` in `work`, with no config file.
fn one_turn(
    base_url: &str,
    message: &str,
    home: &std::path::Path,
    work: &std::path::Path,
) -> std::io::Result<std::process::Output> {
    Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args([
            "agent",
            "--base-url",
            base_url,
            "--model",
            "tiny",
            "--message",
            message,
        ])
        .env("CAIRN_HOME", home)
        .current_dir(work)
        .output()
}

/// A one-shot turn waits for an MCP server slower than the usual short wait (up to its
/// `startup_timeout`), says so, and offers its tools from the first step.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_one_shot_turn_waits_for_a_slow_mcp_server() -> Result<(), Box<dyn std::error::Error>> {
    let server = MockServer::start(vec![text_reply("Done.")]).await?;
    let dir = tempfile::tempdir()?;
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../mcp/tests/mcp/servers/faulty.py")
        .canonicalize()?;
    std::fs::write(
        dir.path().join("config.toml"),
        format!(
            "[agent]\nmodel = \"mock/m\"\n\n[providers.mock]\nbase_url = \"{}\"\n\n[mcp.servers.slow]\ncommand = \"python3\"\nargs = [{:?}, \"slow\", \"5\"]\nstartup_timeout = 30\n",
            server.base_url,
            script.display().to_string()
        ),
    )?;
    let home = dir.path().to_owned();
    let output = tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_cairn"))
            .args(["agent", "--message", "Use the slow server"])
            .env("CAIRN_HOME", &home)
            .current_dir(&home)
            .output()
    })
    .await??;
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(
        stderr.contains("waiting for the MCP server slow to start (up to 30 s)"),
        "{stderr}"
    );
    let tools = server.requests()[0]["tools"].to_string();
    assert!(tools.contains("mcp__slow__work"), "{tools}");
    Ok(())
}

/// A one-shot turn whose edit failed and whose answer claims it anyway is told the failure once,
/// then ends with the line that says what did not work, and `cairn agent` exits 1.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_answered_over_a_failed_edit_says_so_and_exits_1(
) -> Result<(), Box<dyn std::error::Error>> {
    let edit =
        serde_json::json!({"path": "app.py", "edits": [{"old": "limit = 5", "new": "limit = 20"}]});
    let server = MockServer::start(vec![
        tool_call_reply("c1", "edit_file", edit),
        text_reply("I replaced the limit."),
        text_reply("The limit is 20 now."),
    ])
    .await?;
    let home = tempfile::tempdir()?;
    let work = tempfile::tempdir()?;
    std::fs::write(work.path().join("app.py"), "limit = 10\n")?;
    let output = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args([
            "agent",
            "--base-url",
            &server.base_url,
            "--model",
            "tiny",
            "--message",
            "Set the limit to 20",
        ])
        .env("CAIRN_HOME", home.path())
        .current_dir(work.path())
        .output()?;
    let err = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{err}");
    assert!(
        err.contains("[asked again: the reply was written over a failed tool call]"),
        "{err}"
    );
    let said = stdout(&output);
    assert!(
        said.contains("The limit is 20 now.\n\n⚠ Unresolved: the last edit_file call failed ("),
        "{said}"
    );
    assert_eq!(
        std::fs::read_to_string(work.path().join("app.py"))?,
        "limit = 10\n"
    );
    Ok(())
}

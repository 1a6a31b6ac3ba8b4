//! Every memory is found through every door, however it was written: `cairn memory add`, `POST
//! /api/v1/memory/add`, MCP `remember` over stdio (`cairn mcp`) and over HTTP (`/mcp`), each
//! searched with `cairn memory search`, `POST /api/v1/memory/search`, MCP `search_memory` over
//! stdio and HTTP, and the prompt hook's recall — with the app running and without it. No model
//! is needed: the words find them. And an MCP client that passes no CAIRN_HOME on (the official
//! SDKs' default) is told which memory it searched and how to name the right one.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use cairn_protocol::RuntimeInfo;
use serde_json::{json, Value};

use crate::{cairn, start_server, stdout};

type TestResult<T = ()> = Result<T, Box<dyn std::error::Error>>;

/// One memory per door that writes: its text, the query that must find it, and a phrase of it.
const WRITTEN: [(&str, &str, &str); 4] = [
    (
        "The staging database password rotates every 90 days",
        "staging database password",
        "password rotates every 90 days",
    ),
    (
        "The Orchard build cache lives on volume nine",
        "where is the Orchard build cache",
        "volume nine",
    ),
    (
        "Quarterly invoices are signed by Margarethe",
        "who signs the quarterly invoices",
        "signed by Margarethe",
    ),
    (
        "The lighthouse dashboard refreshes at dawn",
        "when does the lighthouse dashboard refresh",
        "refreshes at dawn",
    ),
];

/// `cairn mcp` on stdio: the handshake, then each tool call in turn; the text of each answer.
fn mcp_stdio(command: &mut Command, calls: &[(&str, Value)]) -> TestResult<(Vec<String>, String)> {
    let mut child = command
        .arg("mcp")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let mut input = child.stdin.take().ok_or("no stdin")?;
    let mut output = BufReader::new(child.stdout.take().ok_or("no stdout")?);
    let mut ask = |message: Value, answered: bool| -> TestResult<Value> {
        writeln!(input, "{message}")?;
        input.flush()?;
        if !answered {
            return Ok(Value::Null);
        }
        let mut line = String::new();
        output.read_line(&mut line)?;
        Ok(serde_json::from_str(&line)?)
    };
    ask(
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-03-26", "capabilities": {},
            "clientInfo": {"name": "doors", "version": "1"}}}),
        true,
    )?;
    ask(
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        false,
    )?;
    let mut texts = Vec::new();
    for (id, (tool, arguments)) in calls.iter().enumerate() {
        let answer = ask(
            json!({"jsonrpc": "2.0", "id": id + 1, "method": "tools/call",
                   "params": {"name": tool, "arguments": arguments}}),
            true,
        )?;
        let text = answer["result"]["content"][0]["text"]
            .as_str()
            .ok_or_else(|| format!("{tool} answered {answer}"))?;
        texts.push(text.to_owned());
    }
    drop(input);
    let done = child.wait_with_output()?;
    Ok((texts, String::from_utf8_lossy(&done.stderr).into_owned()))
}

/// `cairn mcp` on stdio in `home`, started with CAIRN_HOME as a shell would.
fn mcp_in(home: &Path, calls: &[(&str, Value)]) -> TestResult<Vec<String>> {
    let mut command = Command::new(env!("CARGO_BIN_EXE_cairn"));
    command.env("CAIRN_HOME", home).env_remove("CAIRN_CONFIG");
    Ok(mcp_stdio(&mut command, calls)?.0)
}

/// One tool call through `/mcp` of the running app, with Cairn's own MCP client.
fn mcp_http(home: &Path, info: &RuntimeInfo, tool: &str, arguments: &Value) -> TestResult<String> {
    let url = format!("{}/mcp", info.api_url);
    let header = format!("Authorization=Bearer {}", info.token);
    let arguments = arguments.to_string();
    let output = cairn(
        home,
        &[
            "mcp",
            "connect",
            &url,
            "--call",
            tool,
            "--arguments",
            &arguments,
            "--header",
            &header,
        ],
    )?;
    assert!(
        output.status.success(),
        "{tool} over /mcp: {}{}",
        stdout(&output),
        String::from_utf8_lossy(&output.stderr)
    );
    Ok(stdout(&output))
}

/// One `POST` to the running app's API; its JSON answer.
fn http(info: &RuntimeInfo, path: &str, body: &Value) -> TestResult<Value> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let response = reqwest::Client::builder()
            .no_proxy()
            .build()?
            .post(format!("{}{path}", info.api_url))
            .bearer_auth(&info.token)
            .json(body)
            .send()
            .await?;
        let status = response.status();
        let answer: Value = response.json().await?;
        if !status.is_success() {
            return Err(format!("{path} answered {status}: {answer}").into());
        }
        Ok(answer)
    })
}

/// What the prompt hook (Claude Code's UserPromptSubmit) gives the agent for `prompt`.
fn hook_recall(home: &Path, prompt: &str) -> TestResult<String> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(["hook", "UserPromptSubmit", "--agent", "claude-code"])
        .env("CAIRN_HOME", home)
        .env_remove("CAIRN_CONFIG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()?;
    let payload = json!({"prompt": prompt, "session_id": "doors-test"});
    child
        .stdin
        .take()
        .ok_or("no stdin")?
        .write_all(payload.to_string().as_bytes())?;
    Ok(stdout(&child.wait_with_output()?))
}

/// Every door that searches, asked for each of `memories`: each answer must hold its phrase.
fn every_door_finds(
    home: &Path,
    app: Option<&RuntimeInfo>,
    memories: &[(&str, &str, &str)],
) -> TestResult {
    let queries: Vec<(&str, Value)> = memories
        .iter()
        .map(|(_, query, _)| ("search_memory", json!({"query": query})))
        .collect();
    let over_stdio = mcp_in(home, &queries)?;
    for ((_, query, phrase), stdio) in memories.iter().zip(&over_stdio) {
        let mut answers = vec![
            ("cairn memory search", {
                let found = cairn(home, &["memory", "search", query])?;
                stdout(&found)
            }),
            ("MCP search_memory over stdio", stdio.clone()),
            ("the prompt hook", hook_recall(home, query)?),
        ];
        if let Some(info) = app {
            let found = http(info, "/api/v1/memory/search", &json!({"query": query}))?;
            answers.push(("POST /api/v1/memory/search", found.to_string()));
            let found = mcp_http(home, info, "search_memory", &json!({"query": query}))?;
            answers.push(("MCP search_memory over /mcp", found));
        }
        for (door, answer) in answers {
            assert!(
                answer.contains(phrase),
                "{door} did not find {phrase:?} for {query:?} (app running: {}):\n{answer}",
                app.is_some()
            );
        }
    }
    Ok(())
}

#[test]
fn every_memory_is_found_through_every_door_however_it_was_written() -> TestResult {
    let dir = tempfile::tempdir()?;
    let home = dir.path();
    let [by_cli, by_mcp_stdio, by_http, by_mcp_http] = WRITTEN;

    // Without the app: the CLI and `cairn mcp` write straight on the database.
    let added = cairn(home, &["memory", "add", by_cli.0])?;
    assert!(
        added.status.success(),
        "{}",
        String::from_utf8_lossy(&added.stderr)
    );
    let remembered = mcp_in(home, &[("remember", json!({"text": by_mcp_stdio.0}))])?;
    assert!(
        remembered[0].starts_with("Remembered (memory "),
        "{remembered:?}"
    );
    every_door_finds(home, None, &[by_cli, by_mcp_stdio])?;

    // With the app: its API and its `/mcp` write; the CLI and the hook go through the app.
    let (mut server, info) = start_server(home)?;
    let written = (|| -> TestResult {
        http(&info, "/api/v1/memory/add", &json!({"text": by_http.0}))?;
        let remembered = mcp_http(home, &info, "remember", &json!({"text": by_mcp_http.0}))?;
        assert!(remembered.contains("Remembered (memory "), "{remembered}");
        every_door_finds(home, Some(&info), &WRITTEN)
    })();
    Command::new("kill").arg(server.id().to_string()).status()?;
    server.wait()?;
    written?;

    // And once the app has gone, everything it wrote is still found straight on the database.
    every_door_finds(home, None, &WRITTEN)
}

#[test]
fn an_mcp_client_that_passes_no_cairn_home_is_told_which_memory_it_searched() -> TestResult {
    let dir = tempfile::tempdir()?;
    let added = cairn(dir.path(), &["memory", "add", WRITTEN[0].0])?;
    assert!(added.status.success());
    // What the official MCP SDKs give a server they start: HOME and PATH, not CAIRN_HOME.
    let elsewhere = tempfile::tempdir()?;
    let scrubbed = |command: &mut Command| {
        command
            .env_clear()
            .env("HOME", elsewhere.path())
            .env("PATH", std::env::var_os("PATH").unwrap_or_default());
    };
    let query = [("search_memory", json!({"query": WRITTEN[0].1}))];

    let mut command = Command::new(env!("CARGO_BIN_EXE_cairn"));
    scrubbed(&mut command);
    let (answers, stderr) = mcp_stdio(&mut command, &query)?;
    let other_home = elsewhere.path().join(".cairn");
    assert_eq!(
        answers[0],
        format!(
            "Nothing in memory matches. Searched the memory of the data home {} (0 memories). \
             If you expected a match, this server may be reading another memory than yours: \
             start it as `cairn --home DIR mcp` with your data home (many MCP clients do not \
             pass CAIRN_HOME on).",
            other_home.display()
        )
    );
    assert!(
        stderr.contains(&format!(
            "cairn mcp: serving the memory of the data home {} (0 memories)",
            other_home.display()
        )),
        "{stderr}"
    );

    // Named with --home, the same scrubbed server finds it.
    let mut command = Command::new(env!("CARGO_BIN_EXE_cairn"));
    command.arg("--home").arg(dir.path());
    scrubbed(&mut command);
    let (answers, stderr) = mcp_stdio(&mut command, &query)?;
    assert!(answers[0].contains(WRITTEN[0].2), "{answers:?}");
    assert!(stderr.contains("(1 memory)"), "{stderr}");
    Ok(())
}

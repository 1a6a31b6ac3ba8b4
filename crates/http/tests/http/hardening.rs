//! The attack run's findings on the local API, one test each: what a `/v1` key may make the agent
//! do, which model names it may use, what outlives its request, which task ids run a turn, and
//! where the caps are.

use std::time::Duration;

use axum::http::StatusCode;
use cairn_test_support::{text_reply, tool_call_reply, MockServer};
use serde_json::json;

use crate::openai::{Api, TestResult, KEY, TOKEN};

fn ask(model: &str, text: &str) -> serde_json::Value {
    json!({"model": model, "messages": [{"role": "user", "content": text}]})
}

/// Asks model `cairn` `text` as a key holder would; the answer is a 200 whatever the model did.
async fn ask_as_key_holder(api: &Api, text: &str) -> TestResult {
    let (status, body) = api
        .json("/v1/chat/completions", Some(KEY), Some(ask("cairn", text)))
        .await?;
    assert_eq!(status, StatusCode::OK, "{body}");
    Ok(())
}

/// Finding 1: model `cairn` for a key holder has no tools by default, so a model told to run a
/// command cannot (and the command is never run).
#[tokio::test]
async fn a_v1_key_is_not_a_shell() -> TestResult {
    let target = tempfile::tempdir()?;
    let marker = target.path().join("pwned");
    let server = MockServer::start(vec![
        tool_call_reply(
            "c1",
            "bash",
            json!({"command": format!("touch {}", marker.display())}),
        ),
        text_reply("done"),
    ])
    .await?;
    let api = Api::new(&server)?;
    ask_as_key_holder(&api, "run touch").await?;
    let sent = &server.requests()[0];
    assert!(
        sent["tools"].as_array().is_none_or(Vec::is_empty),
        "{}",
        sent["tools"]
    );
    assert!(!marker.exists(), "a tool nobody offered ran");
    Ok(())
}

/// Finding 1: `[api] agent_tools` grants tools by name, and without `agent_yolo` a call that
/// would ask is refused (nobody can approve over the API).
#[tokio::test]
async fn granted_tools_are_offered_and_still_ask() -> TestResult {
    let target = tempfile::tempdir()?;
    let marker = target.path().join("written");
    let server = MockServer::start(vec![
        tool_call_reply(
            "c1",
            "write_file",
            json!({"path": marker.display().to_string(), "content": "x"}),
        ),
        text_reply("done"),
    ])
    .await?;
    let api = Api::with(&server, "", "agent_tools = [\"read_file\", \"write_file\"]")?;
    ask_as_key_holder(&api, "write it").await?;
    let mut offered: Vec<String> = server.requests()[0]["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["function"]["name"].as_str().map(str::to_owned))
        .collect();
    offered.sort();
    assert_eq!(offered, ["read_file", "write_file"]);
    assert!(!marker.exists(), "a write nobody approved ran");
    let second = server.requests()[1]["messages"].to_string();
    assert!(second.contains("rejected"), "{second}");
    Ok(())
}

/// Finding 6: a model name is never a path or an invented provider: only what `/v1/models` lists.
#[tokio::test]
async fn only_listed_models_can_be_named() -> TestResult {
    let outside = tempfile::tempdir()?;
    let file = outside.path().join("weights.gguf");
    std::fs::write(&file, "not a model")?;
    let server = MockServer::start(vec![]).await?;
    let api = Api::new(&server)?;
    let existing = format!("cairn/local/{}", file.display());
    let missing = format!("cairn/local/{}/nothing.gguf", outside.path().display());
    let mut answers = Vec::new();
    for model in [
        existing.as_str(),
        missing.as_str(),
        "cairn/local/../../../../etc/passwd",
        "cairn/mock/m9",
        "cairn/invented/m1",
        "gpt-4o",
    ] {
        let (status, body) = api
            .json("/v1/chat/completions", Some(KEY), Some(ask(model, "hi")))
            .await?;
        assert_eq!(status, StatusCode::NOT_FOUND, "{model}: {body}");
        assert_eq!(body["error"]["code"], "model_not_found", "{model}");
        answers.push(body["error"]["message"].to_string().replace(model, "NAME"));
    }
    // Whether a file exists is not told: the answers for an existing and a missing path match.
    assert_eq!(answers[0], answers[1]);
    assert!(server.requests().is_empty(), "no model was asked");
    let (status, _) = api
        .json(
            "/v1/chat/completions",
            Some(KEY),
            Some(ask("cairn/mock/m2", "hi")),
        )
        .await?;
    assert_ne!(
        status,
        StatusCode::NOT_FOUND,
        "a configured model stays usable"
    );
    Ok(())
}

/// Finding 7: a background job a `/v1` request started ends when the request is answered.
#[tokio::test]
async fn a_requests_background_jobs_end_with_it() -> TestResult {
    let scratch = tempfile::tempdir()?;
    let pid_file = scratch.path().join("pid");
    let command = format!("echo $$ > {}; exec sleep 300", pid_file.display());
    let server = MockServer::start(vec![
        tool_call_reply(
            "c1",
            "bash",
            json!({"command": command, "background": true}),
        ),
        text_reply("started"),
    ])
    .await?;
    let api = Api::with(&server, "", "agent_tools = [\"bash\"]\nagent_yolo = true")?;
    ask_as_key_holder(&api, "start a server").await?;
    let pid = std::fs::read_to_string(&pid_file)?.trim().to_owned();
    let proc_dir = std::path::Path::new("/proc").join(&pid);
    let mut alive = true;
    for _ in 0..100 {
        let state = std::fs::read_to_string(proc_dir.join("stat")).unwrap_or_default();
        // Gone, or a zombie waiting to be reaped: either way it stopped.
        if state.is_empty() || state.contains(") Z") {
            alive = false;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(!alive, "the job {pid} outlived the request");
    Ok(())
}

/// Finding 9: a task id that is not a file name is refused before a turn starts.
#[tokio::test]
async fn task_ids_are_checked_before_a_turn_runs() -> TestResult {
    let server = MockServer::start(vec![text_reply("hi")]).await?;
    let api = Api::new(&server)?;
    for id in ["..%2Fx", "..%2F..%2Fetc%2Fpasswd", ".hidden", "a%20b"] {
        let (status, body) = api
            .json(
                &format!("/api/v1/tasks/{id}/messages"),
                Some(TOKEN),
                Some(json!({"message": "hello"})),
            )
            .await?;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{id}: {body}");
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(server.requests().is_empty(), "no turn ran");
    Ok(())
}

/// Finding 8: what is stored in memory loses this run's token and the config's secrets, however
/// plain they look (an MCP header value, a bare `"token":` field read from runtime.json).
#[tokio::test]
async fn the_token_and_configured_secrets_never_reach_memory() -> TestResult {
    const HEADER: &str = "plainheadervalue4242";
    let server = MockServer::start(vec![]).await?;
    let api = Api::with(
        &server,
        "",
        &format!(
            "\n[mcp.servers.docs]\ntype = \"streamable_http\"\nurl = \"https://docs.example/mcp\"\nenabled = false\nheaders = {{ X-Key = \"{HEADER}\" }}\n"
        ),
    )?;
    let text = format!(
        "runtime.json says {{\"token\": \"{TOKEN}\"}}; the docs server wants {HEADER}; bare {TOKEN}"
    );
    let (status, body) = api
        .json(
            "/api/v1/memory/add",
            Some(TOKEN),
            Some(json!({"text": text})),
        )
        .await?;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, found) = api
        .json(
            "/api/v1/memory/search",
            Some(TOKEN),
            Some(json!({"query": "docs server wants runtime"})),
        )
        .await?;
    assert_eq!(status, StatusCode::OK);
    let found = found.to_string();
    assert!(found.contains("docs server wants"), "{found}");
    assert!(!found.contains(TOKEN), "{found}");
    assert!(!found.contains(HEADER), "{found}");
    Ok(())
}

/// Finding 2: with nothing approving, `read_file` outside the project (Cairn's own config with
/// its keys, here) is refused, while a file of the project is read.
#[tokio::test]
async fn a_read_outside_the_project_asks_and_nobody_approves_it() -> TestResult {
    let server = MockServer::start(vec![
        tool_call_reply("c1", "read_file", json!({"path": "Cargo.toml"})),
        text_reply("read"),
    ])
    .await?;
    let api = Api::with(&server, "", "agent_tools = [\"read_file\"]")?;
    let config = api.home.path().join("config.toml");
    server.route(
        "steal",
        vec![
            tool_call_reply(
                "c2",
                "read_file",
                json!({"path": config.display().to_string()}),
            ),
            text_reply("stolen?"),
        ],
    );
    ask_as_key_holder(&api, "read the manifest").await?;
    ask_as_key_holder(&api, "steal the config").await?;
    let sent: Vec<String> = server
        .requests()
        .iter()
        .map(|r| r["messages"].to_string())
        .collect();
    let after_manifest = sent
        .iter()
        .find(|m| m.contains("read the manifest") && m.contains("\"tool\""))
        .ok_or("the manifest read came back to the model")?;
    assert!(
        after_manifest.contains("cairn-http"),
        "the project's file is read"
    );
    let after_steal = sent
        .iter()
        .find(|m| m.contains("steal the config") && m.contains("\"tool\""))
        .ok_or("the config read came back to the model")?;
    assert!(
        after_steal.contains("[read_file rejected by the user]"),
        "{after_steal}"
    );
    assert!(!after_steal.contains(KEY), "{after_steal}");
    Ok(())
}

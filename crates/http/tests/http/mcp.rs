//! `/mcp` on the local API: Cairn's memory over streamable HTTP, reached by an MCP client (Cairn's
//! own, the official Rust SDK) with the token in the `Authorization` header; without the token, or
//! from a foreign Origin, refused before the MCP layer.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use cairn_api::chat::Chat;
use cairn_api::Cairn;
use cairn_config::{Home, McpServerConfig, McpTransport, Secret};
use cairn_mcp::{HubTools, McpHub, ServerState};
use cairn_tools::{ToolContext, ToolSource};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_client_searches_and_adds_memory_over_http() -> Result<(), Box<dyn std::error::Error>>
{
    let dir = tempfile::tempdir()?;
    let cairn = Cairn::with_env(Home::at(dir.path()), Arc::new(|_: &str| None));
    let chat = Arc::new(Chat::new(cairn.clone(), dir.path().to_path_buf()));
    let api = cairn_http::serve(cairn, None, chat).await?;
    let (url, token) = (api.info().api_url.clone(), api.info().token.clone());

    let config = |token: &str| McpServerConfig {
        transport: McpTransport::StreamableHttp {
            url: format!("{url}/mcp"),
            headers: BTreeMap::from([(
                "Authorization".to_owned(),
                Secret::new(format!("Bearer {token}")),
            )]),
        },
        enabled: true,
        startup_timeout: Duration::from_secs(20),
        tool_timeout: Duration::from_secs(20),
        enabled_tools: vec!["*".into()],
        disabled_tools: Vec::new(),
    };
    let hub = McpHub::new(&BTreeMap::from([
        ("cairn".to_owned(), config(&token)),
        ("stranger".to_owned(), config("not-the-token")),
    ]));
    hub.settle().await;
    hub.wait_started(Duration::from_secs(10)).await;
    let statuses = hub.statuses();
    assert_eq!(statuses[0].state, ServerState::Ready, "{statuses:?}");
    assert_eq!(
        statuses[0].tools,
        [
            "mcp__cairn__search_memory",
            "mcp__cairn__remember",
            "mcp__cairn__resume_episode"
        ]
    );
    assert_eq!(
        statuses[1].state,
        ServerState::Failed,
        "a wrong token gets nothing: {statuses:?}"
    );

    let tools = HubTools(hub.clone()).tools();
    let tool = |name: &str| {
        tools
            .iter()
            .find(|t| t.name() == name)
            .cloned()
            .ok_or(format!("no {name}"))
    };
    let ctx = ToolContext::new(dir.path().to_path_buf());
    let added = tool("mcp__cairn__remember")?
        .run(
            json!({"text": "Release trains leave every second Tuesday."}),
            &ctx,
        )
        .await;
    assert!(
        !added.failed && added.text.starts_with("Remembered (memory "),
        "{added:?}"
    );
    let found = tool("mcp__cairn__search_memory")?
        .run(json!({"query": "when do release trains leave"}), &ctx)
        .await;
    assert!(
        !found.failed && found.text.contains("every second Tuesday"),
        "{found:?}"
    );

    // The guards stand in front of the MCP layer.
    let client = reqwest::Client::builder().no_proxy().build()?;
    let hello = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let anonymous = client
        .post(format!("{url}/mcp"))
        .json(&hello)
        .send()
        .await?;
    assert_eq!(anonymous.status(), 401);
    let foreign = client
        .post(format!("{url}/mcp"))
        .bearer_auth(&token)
        .header("Origin", "https://evil.example")
        .json(&hello)
        .send()
        .await?;
    assert_eq!(foreign.status(), 403);
    let in_url = client
        .post(format!("{url}/mcp?token={token}"))
        .json(&hello)
        .send()
        .await?;
    assert_eq!(in_url.status(), 400);
    drop(tools);
    drop(hub);
    api.shutdown().await?;
    Ok(())
}

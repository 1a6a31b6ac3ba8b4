//! An MCP server from the config reaches the agent: the reference server-everything (installed by
//! setup) is started when the turn first offers tools, its tools are declared to the model under
//! `mcp__everything__…`, and a call's result goes back to the model.

use std::path::PathBuf;

use cairn_agent::{Event, Op};
use cairn_api::{Cairn, ModelChoice};
use cairn_config::Home;
use cairn_test_support::{text_reply, tool_call_reply, MockServer};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agent_calls_a_configured_mcp_servers_tool() -> Result<(), Box<dyn std::error::Error>> {
    let everything = PathBuf::from(std::env::var("HOME")?)
        .join(".cache/cairn/clients/node/node_modules/.bin/mcp-server-everything");
    if !everything.exists() {
        return Err(format!("{} is missing: run scripts/setup.sh", everything.display()).into());
    }
    let dir = tempfile::tempdir()?;
    let server = MockServer::start(vec![
        tool_call_reply(
            "c1",
            "mcp__everything__echo",
            json!({"message": "from the agent"}),
        ),
        text_reply("It echoed."),
    ])
    .await?;
    crate::write_config(
        dir.path(),
        &server.base_url,
        &format!(
            "\n[mcp.servers.everything]\ncommand = \"{}\"\nargs = [\"stdio\"]\ndisabled_tools = [\"trigger-sampling-request\"]\n",
            everything.display()
        ),
    )?;
    let cairn = Cairn::new(Home::at(dir.path()));
    let runtime = cairn.agent_runtime(ModelChoice::default(), PathBuf::from("/p"))?;
    let mut events = runtime.submit(Op::UserMessage {
        session: "mcp-1".into(),
        text: "Echo something".into(),
        images: Vec::new(),
    });
    let mut outputs = Vec::new();
    while let Some(event) = events.recv().await {
        match event {
            Event::ToolResult { output, .. } => outputs.push(output),
            Event::TurnComplete { .. } => break,
            Event::Error { message, .. } => return Err(message.into()),
            _ => {}
        }
    }
    assert_eq!(outputs, ["[#0001]\nEcho: from the agent"]);
    let requests = server.requests();
    let offered: Vec<&str> = requests[0]["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    assert!(offered.contains(&"mcp__everything__echo"), "{offered:?}");
    assert!(offered.contains(&"bash"), "{offered:?}");
    assert!(
        !offered
            .iter()
            .any(|t| t.ends_with("trigger-sampling-request")),
        "disabled_tools holds"
    );
    assert!(requests[1]["messages"]
        .to_string()
        .contains("Echo: from the agent"));
    Ok(())
}

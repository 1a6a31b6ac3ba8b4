//! Asking before MCP calls: a server's `readOnlyHint` is only its own say-so, so its read-only
//! tools ask like the others until one call of that server has run (the person approved it);
//! tools not marked read-only ask every time.

use cairn_tools::ToolContext;
use serde_json::json;

use super::{call, faulty, hub, started, tool, TestResult};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_only_tools_ask_until_a_call_of_their_server_ran() -> TestResult {
    let hub = hub(vec![
        ("first", faulty("plain", &[])),
        ("second", faulty("plain", &[])),
    ]);
    started(&hub).await?;
    let ctx = ToolContext::new(std::env::temp_dir());
    let asks = |name: &str| -> Result<bool, Box<dyn std::error::Error>> {
        Ok(tool(&hub, name)?.needs_permission(&json!({}), &ctx))
    };
    assert!(
        asks("mcp__first__work")?,
        "a fresh server's read-only tool asks on its first call"
    );
    assert!(asks("mcp__first__change")?);

    // The person approved a call of the first server's read-only tool: it ran.
    let work = tool(&hub, "mcp__first__work")?;
    assert_eq!(call(&work, json!({})).await, ("worked".to_owned(), false));
    assert!(!asks("mcp__first__work")?, "trusted once a call ran");
    assert!(
        asks("mcp__first__change")?,
        "a tool not marked read-only asks every time"
    );
    assert!(
        asks("mcp__second__work")?,
        "another server is not trusted with it"
    );

    // A restart keeps what the person approved for the hub's life.
    assert!(hub.restart("first"));
    started(&hub).await?;
    assert!(!asks("mcp__first__work")?);

    // Any approved call of a server trusts its read-only tools; its other tools still ask.
    let change = tool(&hub, "mcp__second__change")?;
    assert_eq!(call(&change, json!({})).await, ("worked".to_owned(), false));
    assert!(!asks("mcp__second__work")?);
    assert!(asks("mcp__second__change")?);
    Ok(())
}

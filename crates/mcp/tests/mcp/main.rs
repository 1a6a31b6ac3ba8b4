//! The MCP client against real servers: the reference `server-everything` over each of its
//! three transports (stdio, streamable HTTP, the older SSE), `server-filesystem` (whose tool names are Cairn's own), both installed by
//! setup from npm; and a faulty server for the bad cases (garbage on stdout, a hang at start, a
//! death mid-call, a 50 MB result, an early exit with a message on stderr). `sse` holds the older
//! transport against hand-made servers, `permission` when MCP calls ask first.

mod permission;
mod sse;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cairn_config::{McpServerConfig, McpTransport, Secret};
use cairn_mcp::{HubTools, McpHub, ServerState};
use cairn_tools::{Tool, ToolContext, ToolSource, Toolbox, ToolboxOptions};
use serde_json::{json, Value};

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// Where setup installs the npm servers.
fn npm_bin(name: &str) -> Result<PathBuf, Box<dyn std::error::Error>> {
    let path = PathBuf::from(std::env::var("HOME")?)
        .join(".cache/cairn/clients/node/node_modules/.bin")
        .join(name);
    if !path.exists() {
        return Err(format!("{} is missing: run scripts/setup.sh", path.display()).into());
    }
    Ok(path)
}

fn stdio(command: impl Into<String>, args: &[&str]) -> McpServerConfig {
    McpServerConfig {
        transport: McpTransport::Stdio {
            command: command.into(),
            args: args.iter().map(|a| (*a).to_owned()).collect(),
            env: BTreeMap::new(),
            cwd: None,
        },
        enabled: true,
        startup_timeout: Duration::from_secs(60),
        tool_timeout: Duration::from_secs(30),
        enabled_tools: vec!["*".into()],
        disabled_tools: Vec::new(),
    }
}

fn faulty(mode: &str, extra: &[&str]) -> McpServerConfig {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mcp/servers/faulty.py");
    let mut args = vec![script, mode];
    args.extend_from_slice(extra);
    stdio("python3", &args)
}

fn hub(servers: Vec<(&str, McpServerConfig)>) -> Arc<McpHub> {
    let servers: BTreeMap<String, McpServerConfig> = servers
        .into_iter()
        .map(|(n, c)| (n.to_owned(), c))
        .collect();
    McpHub::new(&servers)
}

/// Starts the hub's servers and waits until each has started or failed (at most a minute).
async fn started(hub: &Arc<McpHub>) -> TestResult {
    hub.settle().await;
    hub.wait_started(Duration::from_secs(60)).await;
    if hub
        .statuses()
        .iter()
        .any(|s| matches!(s.state, ServerState::Starting | ServerState::Idle))
    {
        return Err(format!("still starting: {:?}", hub.statuses()).into());
    }
    Ok(())
}

fn tool(hub: &Arc<McpHub>, name: &str) -> Result<Arc<dyn Tool>, Box<dyn std::error::Error>> {
    HubTools(hub.clone())
        .tools()
        .into_iter()
        .find(|t| t.name() == name)
        .ok_or_else(|| format!("no tool {name} in {:?}", hub.statuses()).into())
}

async fn call(tool: &Arc<dyn Tool>, input: Value) -> (String, bool) {
    let ctx = ToolContext::new(std::env::temp_dir());
    let output = tool.run(input, &ctx).await;
    (output.text, output.failed)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn everything_over_stdio_lists_and_calls_its_tools() -> TestResult {
    let everything = npm_bin("mcp-server-everything")?;
    let hub = hub(vec![(
        "everything",
        stdio(everything.to_string_lossy(), &["stdio"]),
    )]);
    started(&hub).await?;
    let status = &hub.statuses()[0];
    assert_eq!(status.state, ServerState::Ready, "{status:?}");
    assert!(status.tools.len() > 5, "{status:?}");
    assert!(status
        .tools
        .iter()
        .all(|t| t.starts_with("mcp__everything__") && t.len() <= 64));

    let echo = tool(&hub, "mcp__everything__echo")?;
    let ctx = ToolContext::new(std::env::temp_dir());
    assert!(
        echo.needs_permission(&json!({}), &ctx),
        "echo says readOnlyHint, but a fresh server's first call asks"
    );
    let declared = echo.declaration();
    assert_eq!(
        declared.parameters["properties"]["message"]["type"],
        "string"
    );
    assert_eq!(
        call(&echo, json!({"message": "hello there"})).await,
        ("Echo: hello there".to_owned(), false)
    );
    assert!(
        !echo.needs_permission(&json!({}), &ctx),
        "once a call of the server ran, its readOnlyHint tools run at once"
    );

    // A call with arguments the server rejects is the server's error, and the server stays up.
    let (text, failed) = call(&echo, json!({"message": 42})).await;
    assert!(failed, "{text}");
    assert!(
        text.contains("expected string"),
        "the server's own words: {text}"
    );
    assert_eq!(
        call(&echo, json!({"message": "still here"})).await.0,
        "Echo: still here"
    );
    Ok(())
}

/// Starts server-everything in `mode` on a free port; returns it and the port once it listens.
async fn everything_on_http(
    mode: &str,
) -> Result<(tokio::process::Child, u16), Box<dyn std::error::Error>> {
    let everything = npm_bin("mcp-server-everything")?;
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let server = tokio::process::Command::new(everything)
        .arg(mode)
        .env("PORT", port.to_string())
        .kill_on_drop(true)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()?;
    let deadline = Instant::now() + Duration::from_secs(30);
    while tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .is_err()
    {
        if Instant::now() > deadline {
            return Err("server-everything did not listen".into());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Ok((server, port))
}

/// server-everything started in `mode` and reached over `transport` (given its port) as the
/// server `name`: ready, and its echo answers.
async fn echo_over_http(
    mode: &str,
    name: &str,
    transport: impl Fn(u16) -> McpTransport,
) -> TestResult {
    let (mut server, port) = everything_on_http(mode).await?;
    let mut config = stdio("unused", &[]);
    config.transport = transport(port);
    let hub = hub(vec![(name, config)]);
    started(&hub).await?;
    let statuses = hub.statuses();
    assert_eq!(statuses[0].state, ServerState::Ready, "{statuses:?}");
    let echo = tool(&hub, &format!("mcp__{name}__echo"))?;
    assert_eq!(
        call(&echo, json!({"message": mode})).await,
        (format!("Echo: {mode}"), false)
    );
    server.kill().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn everything_over_the_older_sse_transport() -> TestResult {
    echo_over_http("sse", "old", |port| McpTransport::Sse {
        url: format!("http://127.0.0.1:{port}/sse"),
        headers: BTreeMap::new(),
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn everything_over_streamable_http() -> TestResult {
    echo_over_http("streamableHttp", "web", |port| {
        McpTransport::StreamableHttp {
            url: format!("http://127.0.0.1:{port}/mcp"),
            headers: BTreeMap::from([("X-Test".to_owned(), Secret::new("yes"))]),
        }
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn filesystem_tools_do_not_take_cairns_own_names() -> TestResult {
    let filesystem = npm_bin("mcp-server-filesystem")?;
    let dir = tempfile::tempdir()?;
    let root = dir.path().canonicalize()?;
    std::fs::write(root.join("notes.txt"), "alpha")?;
    let hub = hub(vec![(
        "filesystem",
        stdio(filesystem.to_string_lossy(), &[&root.to_string_lossy()]),
    )]);
    let mut toolbox = Toolbox::new(&ToolboxOptions::default());
    toolbox.add_source(Arc::new(HubTools(hub.clone())));
    toolbox.settle().await;
    started(&hub).await?;

    let names = toolbox.names();
    assert!(names.iter().any(|n| n == "read_file"), "{names:?}");
    assert!(
        names.iter().any(|n| n == "mcp__filesystem__read_file"),
        "{names:?}"
    );
    assert_eq!(names.iter().filter(|n| *n == "read_file").count(), 1);
    // Cairn's own read_file stays Cairn's.
    let own = toolbox.get("read_file").ok_or("no read_file")?;
    assert!(
        own.declaration().description
            != tool(&hub, "mcp__filesystem__read_file")?
                .declaration()
                .description
    );

    let list = toolbox
        .get("mcp__filesystem__list_directory")
        .ok_or("no list_directory")?;
    let (text, failed) = call(&list, json!({"path": root.to_string_lossy()})).await;
    assert!(!failed, "{text}");
    assert!(text.contains("notes.txt"), "{text}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_servers_are_reported_and_nothing_hangs() -> TestResult {
    let marker = tempfile::tempdir()?;
    let died_once = marker.path().join("died");
    let mut hang = faulty("hang", &[]);
    hang.startup_timeout = Duration::from_secs(2);
    let mut slow_tool = faulty("big", &[]);
    slow_tool.tool_timeout = Duration::from_secs(60);
    let hub = hub(vec![
        ("garbage", faulty("garbage", &[])),
        ("hang", hang),
        ("die", faulty("die", &[&died_once.to_string_lossy()])),
        ("big", slow_tool),
        ("early", faulty("stderr", &[])),
        (
            "off",
            McpServerConfig {
                enabled: false,
                ..faulty("garbage", &[])
            },
        ),
    ]);
    let waited = Instant::now();
    hub.settle().await;
    assert!(
        waited.elapsed() < Duration::from_millis(3500),
        "settle waits at most mcp_wait_ms"
    );
    started(&hub).await?;
    let statuses: BTreeMap<String, _> = hub
        .statuses()
        .into_iter()
        .map(|s| (s.name.clone(), s))
        .collect();

    // Lines that are not JSON-RPC before the handshake do not stop a server.
    assert_eq!(
        statuses["garbage"].state,
        ServerState::Ready,
        "{:?}",
        statuses["garbage"]
    );
    assert_eq!(
        call(&tool(&hub, "mcp__garbage__work")?, json!({})).await,
        ("worked".to_owned(), false)
    );

    let hang = &statuses["hang"];
    assert_eq!(hang.state, ServerState::Failed);
    assert!(
        hang.error
            .as_deref()
            .unwrap_or("")
            .contains("did not start within 2 s"),
        "{hang:?}"
    );
    assert!(hang.tools.is_empty());

    let early = &statuses["early"];
    assert_eq!(early.state, ServerState::Failed);
    assert!(
        early
            .error
            .as_deref()
            .unwrap_or("")
            .contains("cannot find my config file"),
        "{early:?}"
    );

    assert_eq!(statuses["off"].state, ServerState::Disabled);

    // Death mid-call: the call says so with the server's last words; the next call restarts it.
    let work = tool(&hub, "mcp__die__work")?;
    let (text, failed) = call(&work, json!({})).await;
    assert!(failed);
    assert_eq!(
        text,
        "[error: mcp__die__work — the MCP server \"die\" stopped during the call; the next call starts it again — its stderr ended with:\nfaulty: segmentation fault (simulated)]"
    );
    assert!(text.contains("segmentation fault (simulated)"), "{text}");
    assert_eq!(call(&work, json!({})).await, ("worked".to_owned(), false));

    // 50 MB of text: cut to the tool output limit, not held up.
    let big = tool(&hub, "mcp__big__work")?;
    let mut ctx = ToolContext::new(std::env::temp_dir());
    ctx.max_output = 1000;
    let output = big.run(json!({}), &ctx).await;
    assert!(!output.failed);
    assert!(output.text.chars().count() < 1200, "{}", output.text.len());
    Ok(())
}

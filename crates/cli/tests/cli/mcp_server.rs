//! `cairn mcp` driven by the official Python MCP client (installed by setup): the handshake, the
//! three memory tools, a memory written and recalled, and errors as tool errors; and `cairn mcp
//! status` over a config with a working and a broken server; and `cairn mcp connect`, Cairn's MCP
//! client, through the official conformance suite's client scenarios.

use std::process::Command;

use serde_json::{json, Value};

/// Where setup puts the pinned `mcp` package.
fn mcp_package() -> Result<std::path::PathBuf, Box<dyn std::error::Error>> {
    let dir =
        std::path::PathBuf::from(std::env::var("HOME")?).join(".cache/cairn/clients/python-mcp");
    if !dir.join("mcp").is_dir() {
        return Err(format!(
            "the mcp Python package is not in {}: run scripts/setup.sh",
            dir.display()
        )
        .into());
    }
    Ok(dir)
}

#[test]
fn the_python_mcp_client_uses_cairns_memory() -> Result<(), Box<dyn std::error::Error>> {
    let package = mcp_package()?;
    let home = tempfile::tempdir()?;
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/cli/clients/mcp_client.py"
    );
    let output = Command::new("python3")
        .arg(script)
        .env("PYTHONPATH", package)
        .env("CAIRN_EXE", env!("CARGO_BIN_EXE_cairn"))
        .env("CAIRN_HOME", home.path())
        .env_remove("CAIRN_CONFIG")
        .output()?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let lines: Vec<Value> = stdout
        .lines()
        .map(serde_json::from_str)
        .collect::<Result<_, _>>()?;
    assert_eq!(
        lines,
        [
            json!({"server": "cairn", "instructions": true}),
            json!({"tools": ["remember", "resume_episode", "search_memory"]}),
            json!({"remembered": true, "error": false}),
            json!({"found": true, "error": false}),
            json!({"empty_query": "`query` is required: a non-empty string", "error": true}),
            json!({"resumed": "Nothing in memory matches \"zebra quantum lighthouse\".", "error": false}),
        ]
    );
    Ok(())
}

#[test]
fn mcp_status_starts_the_configured_servers_and_says_how_each_is_doing(
) -> Result<(), Box<dyn std::error::Error>> {
    let everything = std::path::PathBuf::from(std::env::var("HOME")?)
        .join(".cache/cairn/clients/node/node_modules/.bin/mcp-server-everything");
    if !everything.exists() {
        return Err(format!("{} is missing: run scripts/setup.sh", everything.display()).into());
    }
    let home = tempfile::tempdir()?;
    std::fs::write(
        home.path().join("config.toml"),
        format!(
            "[mcp.servers.everything]\ncommand = \"{}\"\nargs = [\"stdio\"]\n\n[mcp.servers.broken]\ncommand = \"/nonexistent/mcp-server\"\n",
            everything.display()
        ),
    )?;
    let output = crate::cairn(home.path(), &["mcp", "status"])?;
    let stdout = crate::stdout(&output);
    assert_eq!(
        output.status.code(),
        Some(1),
        "a failed server fails the status: {stdout}"
    );
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines[0], "broken: failed, 0 tool(s)", "{stdout}");
    assert!(
        lines[1].starts_with("  error: cannot run the server's command"),
        "{stdout}"
    );
    assert!(
        lines[2].starts_with("everything: ready, ") && lines[2].ends_with(" tool(s)"),
        "{stdout}"
    );
    assert!(lines.contains(&"  mcp__everything__echo"), "{stdout}");

    let empty = tempfile::tempdir()?;
    let output = crate::cairn(empty.path(), &["mcp", "status"])?;
    assert!(output.status.success());
    assert!(crate::stdout(&output).starts_with("no MCP servers are configured"));
    Ok(())
}

#[test]
fn cairns_mcp_client_passes_the_conformance_suite() -> Result<(), Box<dyn std::error::Error>> {
    let (node, script) = cairn_test_support::mcp_conformance_suite()?;
    let home = tempfile::tempdir()?;
    let cairn = env!("CARGO_BIN_EXE_cairn");
    // The suite runs the command with its test server's address appended.
    for (scenario, command) in [
        ("initialize", format!("{cairn} mcp connect")),
        (
            "tools_call",
            format!("{cairn} mcp connect --call add_numbers --arguments '{{\"a\":2,\"b\":3}}'"),
        ),
    ] {
        let output = Command::new(&node)
            .arg(&script)
            .args(["client", "--command", &command, "--scenario", scenario])
            .env("CAIRN_HOME", home.path())
            .output()?;
        assert!(
            output.status.success(),
            "{scenario} failed:\n{}\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    Ok(())
}

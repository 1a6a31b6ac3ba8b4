//! `cairn mcp` driven by the official Python MCP client (installed by setup): the handshake, the
//! three memory tools, a memory written and recalled, and errors as tool errors.

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

//! `cairn serve` driven by OpenAI's own clients, Python and Node (installed by setup), against a
//! scripted model server: models, a whole answer, a stream with usage, a caller's tool, two errors.

use std::process::Command;

use cairn_test_support::{text_reply, tool_call_reply, MockServer};
use serde_json::{json, Value};

use crate::start_server;

/// Where setup puts the pinned `openai` package.
fn openai_package() -> Result<std::path::PathBuf, Box<dyn std::error::Error>> {
    let dir = std::path::PathBuf::from(std::env::var("HOME")?).join(".cache/cairn/clients/python");
    if !dir.join("openai").is_dir() {
        return Err(format!(
            "the openai Python package is not in {}: run scripts/setup.sh",
            dir.display()
        )
        .into());
    }
    Ok(dir)
}

/// Runs a client script against `cairn serve` over a scripted model and returns its JSON lines.
async fn drive(
    program: &'static str,
    script: &'static str,
    path_var: &'static str,
    package: std::path::PathBuf,
) -> Result<Vec<Value>, Box<dyn std::error::Error>> {
    let server = MockServer::start(vec![
        text_reply("Four."),
        text_reply("Six."),
        tool_call_reply("call_1", "get_weather", json!({"city": "Paris"})),
    ])
    .await?;
    let home = tempfile::tempdir()?;
    std::fs::write(
        home.path().join("config.toml"),
        format!(
            "[agent]\nmodel = \"mock/m1\"\n\n[providers.mock]\nkind = \"openai\"\nbase_url = \"{}\"\nmodels = [\"m1\"]\n",
            server.base_url
        ),
    )?;
    let (mut serve, info) = start_server(home.path())?;
    let output = tokio::task::spawn_blocking(move || {
        Command::new(program)
            .arg(script)
            .env(path_var, package)
            .env("CAIRN_API", &info.api_url)
            .env("CAIRN_KEY", &info.token)
            .output()
    })
    .await??;
    let _ = serve.kill();
    let _ = serve.wait();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    Ok(stdout
        .lines()
        .map(serde_json::from_str)
        .collect::<Result<_, _>>()?)
}

/// What both clients see, in order.
fn expected() -> Vec<Value> {
    vec![
        json!({"models": ["cairn", "cairn/mock/m1"]}),
        json!({"whole": "Four.", "finish": "stop"}),
        json!({"streamed": "Six.", "usage_is_int": true}),
        json!({"tool": "get_weather", "arguments": {"city": "Paris"}, "finish": "tool_calls"}),
        json!({"unknown_model": 404}),
        json!({"wrong_key": 401}),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openais_python_client_talks_to_cairn_serve() -> Result<(), Box<dyn std::error::Error>> {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/cli/clients/openai_client.py"
    );
    let lines = drive("python3", script, "PYTHONPATH", openai_package()?).await?;
    assert_eq!(lines, expected());
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openais_node_client_talks_to_cairn_serve() -> Result<(), Box<dyn std::error::Error>> {
    let modules = std::path::PathBuf::from(std::env::var("HOME")?)
        .join(".cache/cairn/clients/node/node_modules");
    if !modules.join("openai").is_dir() {
        return Err(format!(
            "the openai npm package is not in {}: run scripts/setup.sh",
            modules.display()
        )
        .into());
    }
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/cli/clients/openai_client.cjs"
    );
    let lines = drive("node", script, "NODE_PATH", modules).await?;
    assert_eq!(lines, expected());
    Ok(())
}

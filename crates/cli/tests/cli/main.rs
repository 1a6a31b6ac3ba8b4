//! The `cairn` binary as a user runs it: status (text and JSON), config errors, serve.

mod agent;
mod dreams;
mod eval;
mod local_model;
mod mcp_server;
mod memory;
mod memory_doors;
mod openai_client;
mod schedule;
mod serve;
mod sources;
mod status;
mod sync;
mod voice;

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use cairn_config::read_runtime;
use cairn_protocol::RuntimeInfo;

pub fn cairn(home: &Path, args: &[&str]) -> std::io::Result<Output> {
    Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(args)
        .env("CAIRN_HOME", home)
        .env_remove("CAIRN_CONFIG")
        .output()
}

/// A fresh data home whose `models/` is this machine's, or `None` when `model` (a path under
/// `models/`) is not installed and CAIRN_REQUIRE_MODELS does not say it must be.
pub fn home_with_model(
    model: &str,
) -> Result<Option<tempfile::TempDir>, Box<dyn std::error::Error>> {
    let models = std::env::var_os("CAIRN_MODELS_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".cairn")))
        .ok_or("no HOME")?
        .join("models");
    let file = models.join(model);
    if !file.is_file() {
        assert!(
            std::env::var_os("CAIRN_REQUIRE_MODELS").is_none(),
            "{} is missing: run ./run setup (or cairn models install)",
            file.display()
        );
        eprintln!("skipped: {} is not installed", file.display());
        return Ok(None);
    }
    let home = tempfile::tempdir()?;
    std::os::unix::fs::symlink(&models, home.path().join("models"))?;
    Ok(Some(home))
}

pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Starts `cairn serve` in `home` and waits for its runtime.json.
pub fn start_server(home: &Path) -> Result<(Child, RuntimeInfo), Box<dyn std::error::Error>> {
    let mut server = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .arg("serve")
        .env("CAIRN_HOME", home)
        .stdout(Stdio::null())
        .spawn()?;
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Ok(Some(info)) = read_runtime(&home.join("runtime.json")) {
            return Ok((server, info));
        }
        if Instant::now() > deadline {
            let _ = server.kill();
            return Err("the server never wrote runtime.json".into());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

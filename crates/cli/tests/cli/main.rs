//! The `cairn` binary as a user runs it: status (text and JSON), config errors, serve.

mod agent;
mod eval;
mod local_model;
mod mcp_server;
mod memory;
mod openai_client;
mod serve;
mod sources;
mod status;
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

//! The `cairn` binary as a user runs it: status (text and JSON), config errors, serve.

mod agent;
mod eval;
mod memory;
mod serve;
mod status;

use std::path::Path;
use std::process::{Command, Output};

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

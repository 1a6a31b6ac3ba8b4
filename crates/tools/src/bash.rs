//! `bash`: one command in a new `bash -c`, no stdin, 30 s, output merged and read back from a file.

use serde::Deserialize;
use serde_json::{json, Value};
use tokio::process::Command;

use crate::counters::Counter;
use crate::process;
use crate::{field, parse, Declaration, Tool, ToolContext, ToolFuture, ToolOutput};

pub struct Bash;

#[derive(Deserialize)]
struct Input {
    command: String,
}

impl Tool for Bash {
    fn name(&self) -> &str {
        "bash"
    }

    fn declaration(&self) -> Declaration {
        Declaration {
            name: "bash".into(),
            description: "Run a shell command with `bash -c` in the working directory (no stdin, \
30 s timeout). stdout and stderr come back merged; a non-zero exit is reported."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {"command": {"type": "string", "description": "The shell command to run."}},
                "required": ["command"]
            }),
        }
    }

    fn needs_permission(&self, _input: &Value) -> bool {
        true
    }

    fn display(&self, input: &Value) -> String {
        format!("🛠️  bash: {}", field(input, "command"))
    }

    fn counter(&self) -> Option<Counter> {
        Some(Counter::Command)
    }

    fn run<'a>(&'a self, input: Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let input: Input = match parse("bash", input) {
                Ok(i) => i,
                Err(e) => return ToolOutput::failed(e),
            };
            let mut command = Command::new("bash");
            command.arg("-c").arg(&input.command);
            match process::run(command, ctx.bash_timeout, ctx).await {
                Ok(done) => ToolOutput {
                    text: done.text,
                    failed: done.failed,
                    ..ToolOutput::default()
                },
                Err(e) => ToolOutput::failed(format!("[error: bash cannot be started: {e}]")),
            }
        })
    }
}

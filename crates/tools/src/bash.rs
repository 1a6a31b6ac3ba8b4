//! `bash`: one command in a new `bash -c`, no stdin, 30 s, output merged and read back from a file;
//! with `background: true`, or still running at its timeout, it goes on as a background job.

use serde::Deserialize;
use serde_json::{json, Value};
use tokio::process::Command;

use crate::counters::Counter;
use crate::process;
use crate::texts::{fill, JOB_STARTED};
use crate::{field, parse, Declaration, Tool, ToolContext, ToolFuture, ToolOutput};

pub struct Bash;

#[derive(Deserialize)]
struct Input {
    command: String,
    #[serde(default)]
    background: bool,
}

impl Tool for Bash {
    fn name(&self) -> &str {
        "bash"
    }

    fn declaration(&self) -> Declaration {
        Declaration {
            name: "bash".into(),
            description: "Run a shell command with `bash -c` in the working directory (no stdin, \
30 s timeout). stdout and stderr come back merged; a non-zero exit is reported. With background: \
true it runs as a background job (a server, a long build) and you are told when it ends; a \
command still running at the timeout goes on the same way."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "command": {"type": "string", "description": "The shell command to run."},
                    "background": {"type": "boolean", "description": "Run it as a background job and return at once."}
                },
                "required": ["command"]
            }),
        }
    }

    fn needs_permission(&self, _input: &Value, _ctx: &ToolContext) -> bool {
        true
    }

    fn leaves_folder(&self, input: &Value, ctx: &ToolContext) -> bool {
        crate::access::command_leaves(field(input, "command"), &ctx.cwd)
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
            if input.background {
                return match ctx.jobs.start(&input.command, ctx) {
                    Ok(id) => ToolOutput::ok(fill(
                        JOB_STARTED,
                        &[("id", &id), ("command", &input.command)],
                    )),
                    Err(refusal) => ToolOutput::failed(refusal),
                };
            }
            let mut command = Command::new("bash");
            command.arg("-c").arg(&input.command);
            match process::run_or_keep(command, ctx.bash_timeout, ctx, Some(&input.command)).await {
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

/// Whether a bash command only reads (a team's lead may run it; it backs no claimed change): each
/// part of a pipeline or list starts with a reading command, and nothing is written to a file.
pub fn reading_command(command: &str) -> bool {
    const READERS: &[&str] = &[
        "ls", "cat", "head", "tail", "wc", "grep", "rg", "find", "pwd", "echo", "tree", "file",
        "stat", "du", "df", "which", "diff", "sort", "uniq", "less", "git",
    ];
    const GIT_READERS: &[&str] = &[
        "status", "log", "diff", "show", "branch", "blame", "ls-files",
    ];
    if command.contains('>') || command.contains("-delete") || command.contains("-exec") {
        return false;
    }
    command
        .split(['|', ';', '&'])
        .map(str::trim)
        .filter(|part| !part.is_empty())
        .all(|part| {
            let mut words = part.split_whitespace();
            match words.next() {
                Some("git") => words.next().is_some_and(|sub| GIT_READERS.contains(&sub)),
                Some(first) => READERS.contains(&first),
                None => true,
            }
        })
}

#[cfg(test)]
mod tests {
    use super::reading_command;

    #[test]
    fn reading_commands_are_told_from_writing_ones() {
        assert!(reading_command("ls -la | grep rs && git status"));
        assert!(!reading_command("cargo build"));
        assert!(!reading_command("cat a > b"));
        assert!(!reading_command("find . -delete"));
    }
}

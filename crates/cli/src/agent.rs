//! `cairn agent`: one turn from `--message` or standard input, streamed to the terminal.

use std::io::{IsTerminal, Read, Write};

use anyhow::{bail, Context};
use cairn_agent::{Event, Op};
use cairn_api::{Cairn, ModelChoice};

pub struct AgentArgs {
    pub message: Option<String>,
    pub base_url: Option<String>,
    pub model: Option<String>,
    pub api_key_env: Option<String>,
    pub session: Option<String>,
}

pub async fn run(cairn: &Cairn, args: AgentArgs) -> anyhow::Result<std::process::ExitCode> {
    let message = match args.message {
        Some(message) => message,
        None if !std::io::stdin().is_terminal() => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .context("cannot read standard input")?;
            text
        }
        None => bail!("give the task with --message \"…\" or pipe it in: echo \"…\" | cairn agent"),
    };
    if message.trim().is_empty() {
        bail!("the message is empty");
    }
    let api_key = match &args.api_key_env {
        Some(var) => Some(
            std::env::var(var)
                .with_context(|| format!("the environment variable {var} is not set"))?,
        ),
        None => None,
    };
    let root = std::env::current_dir().context("cannot read the current directory")?;
    let runtime = cairn.agent_runtime(
        ModelChoice {
            base_url: args.base_url,
            model: args.model,
            api_key,
        },
        root,
    )?;
    let session = args
        .session
        .unwrap_or_else(|| format!("cli-{}", std::process::id()));
    let mut events = runtime.submit(Op::UserMessage {
        session,
        text: message.trim().to_owned(),
    });
    let mut stdout = std::io::stdout();
    let mut recalled = 0;
    while let Some(event) = events.recv().await {
        match event {
            Event::Recalled { hits, .. } => recalled = hits,
            Event::Text(text) => {
                print!("{text}");
                let _ = stdout.flush();
            }
            Event::Reasoning(_) => {}
            Event::Nudged { reason } => eprintln!("\n[asked again: the reply was {reason}]"),
            Event::WrappedUp { limit } => {
                eprintln!("\n[the {limit} was reached: asked for a final answer]")
            }
            Event::TurnComplete { usage, steps, .. } => {
                println!();
                eprintln!(
                    "({steps} step(s) · {} tokens in, {} out · {recalled} memor{} recalled)",
                    usage.input_tokens,
                    usage.output_tokens,
                    if recalled == 1 { "y" } else { "ies" }
                );
                return Ok(std::process::ExitCode::SUCCESS);
            }
            Event::Error { message } => {
                println!();
                bail!("{message}");
            }
        }
    }
    bail!("the agent stopped without finishing the turn")
}

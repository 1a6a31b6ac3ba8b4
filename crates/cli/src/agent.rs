//! `cairn agent`: one turn from `--message` or piped standard input, or a conversation line by line
//! (at a terminal, or with `--interactive`), the answers streamed to the terminal.

use std::io::{BufRead, IsTerminal, Read, Write};

use anyhow::{bail, Context};
use cairn_agent::{Event, Op, Runtime};
use cairn_api::{Cairn, ModelChoice};

#[derive(Debug, Default, clap::Args)]
pub struct AgentArgs {
    /// The task. Without it: piped standard input is one task; at a terminal, a conversation.
    #[arg(long, short)]
    pub message: Option<String>,
    /// An OpenAI-compatible API root to use instead of the configured provider
    /// (e.g. http://127.0.0.1:8080/v1); needs --model.
    #[arg(long)]
    pub base_url: Option<String>,
    /// The model: an id, or provider/model for a configured provider.
    #[arg(long)]
    pub model: Option<String>,
    /// Read the API key from this environment variable.
    #[arg(long, value_name = "VAR")]
    pub api_key_env: Option<String>,
    /// Continue this conversation id (default: a new one).
    #[arg(long)]
    pub session: Option<String>,
    /// Read standard input line by line as a conversation, even when it is not a terminal.
    #[arg(long)]
    pub interactive: bool,
}

const HELP: &str = "Type a message and press Enter. /new starts a new conversation, /exit leaves.";

pub async fn run(cairn: &Cairn, args: AgentArgs) -> anyhow::Result<std::process::ExitCode> {
    let terminal = std::io::stdin().is_terminal();
    let conversation = args.message.is_none() && (args.interactive || terminal);
    let message = match (&args.message, conversation) {
        (Some(message), _) => Some(message.clone()),
        (None, true) => None,
        (None, false) => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .context("cannot read standard input")?;
            Some(text)
        }
    };
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
    let mut session = args.session.unwrap_or_else(new_session);
    let Some(message) = message else {
        return converse(&runtime, &mut session, terminal).await;
    };
    if message.trim().is_empty() {
        bail!("the message is empty");
    }
    turn(&runtime, &session, message.trim()).await?;
    Ok(std::process::ExitCode::SUCCESS)
}

fn new_session() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!("cli-{}-{nanos}", std::process::id())
}

/// The line mode: each line is a turn of one conversation, until /exit or the end of input.
async fn converse(
    runtime: &Runtime,
    session: &mut String,
    terminal: bool,
) -> anyhow::Result<std::process::ExitCode> {
    if terminal {
        eprintln!("{HELP}");
    }
    let stdin = std::io::stdin();
    let mut lines = stdin.lock().lines();
    loop {
        if terminal {
            eprint!("› ");
            let _ = std::io::stderr().flush();
        }
        let Some(line) = lines.next() else { break };
        let line = line.context("cannot read standard input")?;
        let text = line.trim();
        match text {
            "" => continue,
            "/exit" | "/quit" => break,
            "/new" => {
                *session = new_session();
                eprintln!("(a new conversation)");
            }
            "/help" => eprintln!("{HELP}"),
            command if command.starts_with('/') => eprintln!("unknown command {command}: {HELP}"),
            _ => {
                if let Err(e) = turn(runtime, session, text).await {
                    eprintln!("cairn: {e:#}");
                }
            }
        }
    }
    Ok(std::process::ExitCode::SUCCESS)
}

/// One turn, its answer streamed to standard output and a recap to standard error.
async fn turn(runtime: &Runtime, session: &str, text: &str) -> anyhow::Result<()> {
    let mut events = runtime.submit(Op::UserMessage {
        session: session.to_owned(),
        text: text.to_owned(),
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
                return Ok(());
            }
            Event::Error { message } => {
                println!();
                bail!("{message}");
            }
        }
    }
    bail!("the agent stopped without finishing the turn")
}

//! The live hooks: `cairn hook <event>` is the command other agents run (JSON on stdin, JSON on
//! stdout), and `cairn sources hook install|remove <agent>` edits their hook files (through
//! `cairn_api::install_hooks`: atomically, idempotently, keeping other tools' entries). Hooks
//! fail open: when anything goes wrong the hook prints nothing and exits 0, so the agent carries
//! on without Cairn.

use std::io::Read;
use std::path::Path;

use anyhow::{bail, Context};
use cairn_api::{Cairn, RESUME_HINT};
use serde_json::{json, Value};

#[derive(Debug, clap::Subcommand)]
pub enum HookSetup {
    /// Add Cairn's hooks to an agent's hook file (claude-code, codex, cursor).
    Install {
        agent: String,
        /// Also register `cairn mcp` as an MCP server in the agent's config, so that it can
        /// search and add to Cairn's memory itself.
        #[arg(long)]
        mcp: bool,
    },
    /// Take Cairn's hooks (and its MCP registration) out again, leaving the others.
    Remove { agent: String },
}

#[derive(Debug, clap::Args)]
pub struct HookArgs {
    /// The hook event as the agent names it: UserPromptSubmit, Stop (Claude Code, Codex),
    /// stop, afterAgentResponse (Cursor).
    pub event: String,
    /// The agent running the hook.
    #[arg(long, default_value = "claude-code")]
    pub agent: String,
}

/// `cairn hook <event>`: never fails the agent.
pub async fn run(cairn: &Cairn, args: HookArgs) -> std::process::ExitCode {
    let mut input = String::new();
    let _ = std::io::stdin().read_to_string(&mut input);
    let payload: Value = serde_json::from_str(&input).unwrap_or(Value::Null);
    let outcome = match args.event.as_str() {
        "UserPromptSubmit" | "beforeSubmitPrompt" => prompt(cairn, &args.agent, &payload).await,
        "Stop" | "stop" | "afterAgentResponse" | "SubagentStop" => {
            capture(cairn, &args.agent, &payload).map(|()| None)
        }
        other => Err(anyhow::anyhow!("unknown hook event {other}")),
    };
    match outcome {
        Ok(Some(output)) => println!("{output}"),
        Ok(None) => {}
        Err(e) => eprintln!("cairn: the {} hook failed open: {e:#}", args.event),
    }
    std::process::ExitCode::SUCCESS
}

/// UserPromptSubmit: the memories relevant to the prompt, as additional context (or, for
/// `/cairn-resume`, the episodes to resume).
async fn prompt(cairn: &Cairn, agent: &str, payload: &Value) -> anyhow::Result<Option<String>> {
    let text = payload["prompt"].as_str().unwrap_or("");
    let session = payload["session_id"].as_str().unwrap_or("");
    let context = cairn.hook_prompt_context(agent, session, text).await?;
    if context.is_empty() {
        return Ok(None);
    }
    Ok(Some(
        json!({"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": context}})
            .to_string(),
    ))
}

/// Stop: the conversation's transcript (Claude Code, Codex) captured into memory.
fn capture(cairn: &Cairn, agent: &str, payload: &Value) -> anyhow::Result<()> {
    let transcript = payload["transcript_path"].as_str().map(Path::new);
    Ok(cairn.hook_capture(agent, transcript)?)
}

/// `cairn resume <words>`: the best episodes for the words; `cairn resume <n>`: the context of
/// the n-th episode of the last list.
pub fn resume(cairn: &Cairn, words: &str) -> anyhow::Result<()> {
    let text = cairn.resume_text(words, RESUME_HINT)?;
    if text.is_empty() {
        bail!("nothing in memory matches {words:?}");
    }
    println!("{text}");
    Ok(())
}

pub fn setup(cairn: &Cairn, setup: HookSetup) -> anyhow::Result<()> {
    match setup {
        HookSetup::Install { agent, mcp } => {
            let exe = std::env::current_exe().context("cannot find the cairn executable")?;
            let exe = cairn_api::CairnCommand::new(exe, cairn.home().root());
            let path = cairn_api::install_hooks(&agent, &exe)?;
            println!("installed Cairn's {agent} hooks in {}", path.display());
            if mcp {
                let path = cairn_api::register_mcp(&agent, &exe)?;
                println!(
                    "registered `cairn mcp` as {agent}'s MCP server \"cairn\" in {}",
                    path.display()
                );
            }
        }
        HookSetup::Remove { agent } => {
            let path = cairn_api::remove_hooks(&agent)?;
            println!("removed Cairn's {agent} hooks from {}", path.display());
            let path = cairn_api::unregister_mcp(&agent)?;
            println!("no MCP server \"cairn\" left in {}", path.display());
        }
    }
    Ok(())
}

//! The live hooks: `cairn hook <event>` is the command other agents run (JSON on stdin, JSON on
//! stdout), and `cairn sources hook install|remove <agent>` edits their hook files (through
//! `cairn_api::install_hooks`: atomically, idempotently, keeping other tools' entries). Hooks
//! fail open: when anything goes wrong the hook prints nothing and exits 0, so the agent carries
//! on without Cairn.

use std::io::Read;
use std::path::Path;
use std::time::Duration;

use anyhow::{bail, Context};
use cairn_api::Cairn;
use cairn_importers::sources::ClaudeCode;
use cairn_importers::{import_conversation, session_key, HistorySource, SourceEnv, SourceReport};
use cairn_memory::{render_injection, MemoryStore, SearchHit, SearchQuery};
use serde_json::{json, Value};

/// How long recall may take on the prompt path (Claude Code allows about 30 s in all).
const RECALL_BUDGET: Duration = Duration::from_secs(8);
/// Memories injected into a prompt.
const RECALL_LIMIT: usize = 6;
/// How the CLI and the hooks pick an episode `resume` listed.
const RESUME_HINT: &str = "cairn resume N, or /cairn-resume N";

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
    let text = payload["prompt"].as_str().unwrap_or("").trim();
    if text.is_empty() || agent == "cursor" {
        // Cursor's prompt hook can only allow or block.
        return Ok(None);
    }
    let session = payload["session_id"].as_str().unwrap_or("");
    let context = match text.strip_prefix("/cairn-resume") {
        Some(words) => cairn.resume_text(words.trim(), RESUME_HINT)?,
        None => {
            let mut query = SearchQuery::new(text).limit(RECALL_LIMIT);
            query.exclude_session = Some(session_key(agent, session));
            let hits = tokio::time::timeout(RECALL_BUDGET, recall(cairn, query))
                .await
                .context("recall ran out of time")??;
            render_injection(&hits)
        }
    };
    if context.is_empty() {
        return Ok(None);
    }
    Ok(Some(
        json!({"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": context}})
            .to_string(),
    ))
}

/// Recall through the running app when there is one (its embeddings are loaded), else straight
/// on the database with the lexical channels (no model to load on the prompt path).
async fn recall(cairn: &Cairn, query: SearchQuery) -> anyhow::Result<Vec<SearchHit>> {
    if let Some(info) = cairn.running_api().await {
        let http = reqwest::Client::builder().no_proxy().build()?;
        let answer: cairn_api::SearchAnswer = http
            .post(format!("{}/api/v1/memory/search", info.api_url))
            .bearer_auth(&info.token)
            .json(&query)
            .send()
            .await?
            .error_for_status()?
            .json()
            .await?;
        return Ok(answer.result.hits);
    }
    let store = lexical_store(cairn)?;
    Ok(store.search(&query)?.hits)
}

fn lexical_store(cairn: &Cairn) -> anyhow::Result<MemoryStore> {
    Ok(MemoryStore::open(&cairn.memory_path())?)
}

/// Stop: the conversation's transcript imported with the same keys a scan uses, so the turn is
/// in memory now and a later scan adds nothing.
fn capture(cairn: &Cairn, agent: &str, payload: &Value) -> anyhow::Result<()> {
    let store = lexical_store(cairn)?;
    let env = SourceEnv::from_process(Default::default());
    let mut report = SourceReport::default();
    match agent {
        "claude-code" | "codex" => {
            let Some(path) = payload["transcript_path"].as_str() else {
                bail!("the hook input has no transcript_path");
            };
            let source: Box<dyn HistorySource> = match agent {
                "codex" => source_named(&env, "codex")?,
                _ => Box::new(ClaudeCode::new(&env)),
            };
            for conversation in source.read(Path::new(path))? {
                import_conversation(&store, source.name(), &conversation, &mut report)?;
            }
        }
        _ => {
            // Cursor's hooks carry no transcript: bring its history up to date instead.
            let control = cairn_importers::ScanControl::default();
            cairn.scan_sources(
                Some(agent),
                cairn_importers::ScanMode::Incremental,
                &control,
                &mut |_| {},
            )?;
        }
    }
    Ok(())
}

fn source_named(env: &SourceEnv, name: &str) -> anyhow::Result<Box<dyn HistorySource>> {
    cairn_importers::sources::all(env)
        .into_iter()
        .find(|s| s.name() == name)
        .with_context(|| format!("no source called {name}"))
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

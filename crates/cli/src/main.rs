//! The `cairn` command line: argument parsing and terminal output over `cairn-api`.

mod agent;
mod eval;
mod hook;
mod memory;
mod models;
mod schedule;
mod sessions;
mod sources;
mod status;
mod sync;
mod voice;

use std::path::PathBuf;

use anyhow::Context;
use cairn_api::{Cairn, McpProbe};
use cairn_config::Home;
use cairn_protocol::settings::McpServerState;
use clap::{Parser, Subcommand};

/// mimalloc: an import parses on one thread and writes on another, and glibc's allocator made
/// every cross-thread free take a lock (import 29 → 41 MB/s with it, `cargo bench --bench import`).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Cairn: a local-first AI agent with a long memory.
#[derive(Debug, Parser)]
#[command(name = "cairn", version, about, propagate_version = true)]
struct Cli {
    /// Cairn's data home [default: $CAIRN_HOME, else ~/.cairn]
    #[arg(long, global = true, value_name = "DIR")]
    home: Option<PathBuf>,
    /// The config file [default: $CAIRN_CONFIG, else <home>/config.toml]
    #[arg(long, global = true, value_name = "FILE")]
    config: Option<PathBuf>,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Show the version, paths, config validity, whether the app or API is running, and the
    /// configured providers and models. Exits 1 when the config file is invalid.
    Status {
        /// Print the report as JSON (the same document `GET /api/v1/status` returns).
        #[arg(long)]
        json: bool,
    },
    /// Talk to the agent: one turn from --message or piped standard input, or a conversation line
    /// by line at a terminal (`cairn` alone does the same). Recalls from memory before each request
    /// and captures each turn after.
    Agent(agent::AgentArgs),
    /// The agent's conversations: list, rename, archive, restore, delete.
    #[command(subcommand)]
    Sessions(sessions::SessionsCommand),
    /// Search, add, read and delete memories (through the running app when there is one).
    #[command(subcommand)]
    Memory(memory::MemoryCommand),
    /// Tasks that run on a schedule ("every weekday at 9"): list, add, pause, resume, remove, run.
    #[command(subcommand)]
    Schedule(schedule::ScheduleCommand),
    /// One memory on every device: join a hub, pair another device, sync now, see the devices,
    /// revoke one, leave, pause.
    #[command(subcommand)]
    Sync(sync::SyncCommand),
    /// The sync hub for your devices (in front of PostgreSQL): serve it, add people. Alone, it
    /// prints how to run it behind TLS.
    Hub(sync::HubArgs),
    /// Measure memory recall quality on a benchmark file.
    #[command(subcommand)]
    Eval(EvalCommand),
    /// Measure the speed of Cairn's parts.
    #[command(subcommand)]
    Bench(BenchCommand),
    /// Other agents' history: list the sources, scan them into memory, keep in sync, hooks.
    #[command(subcommand)]
    Sources(sources::SourcesCommand),
    /// The hook command other agents run (JSON on stdin): recall on UserPromptSubmit, capture on
    /// Stop. It always exits 0: if Cairn is down, the agent carries on.
    Hook(hook::HookArgs),
    /// Find past episodes by their words and print one's context (`cairn resume 2` picks the
    /// second of the last list).
    Resume {
        /// Words to look for, or the number of an episode in the last list.
        #[arg(required = true)]
        words: Vec<String>,
    },
    /// Cairn's own language models, run on this device: list, install, remove.
    #[command(subcommand)]
    Models(models::ModelsCommand),
    /// Voice input: whisper models, import, transcribe a WAV file, listen to the microphone.
    #[command(subcommand)]
    Voice(voice::VoiceCommand),
    /// Serve the local HTTP API on 127.0.0.1 until interrupted. The address and the per-run token
    /// are written to <home>/runtime.json.
    Serve {
        /// Port to listen on [default: the config's api.port, else a free port]
        #[arg(long)]
        port: Option<u16>,
    },
    /// Serve Cairn's memory as an MCP server on stdin/stdout (tools: search_memory, remember,
    /// resume_episode), for any MCP-capable agent: register the command `cairn mcp` in it
    /// (`cairn --home DIR mcp` when your data home is not ~/.cairn: MCP clients do not pass
    /// CAIRN_HOME on). `cairn mcp status` starts the MCP servers of the config and shows how
    /// each is doing.
    Mcp {
        #[command(subcommand)]
        command: Option<McpCommand>,
    },
}

#[derive(Debug, Subcommand)]
enum McpCommand {
    /// Start every MCP server of the config ([mcp.servers.*]) and print its state, its tools as
    /// the agent sees them, and its error; exits 1 when one failed.
    Status,
    /// Connect to the MCP server at URL (streamable HTTP, or --sse), list its tools, and call one
    /// with --call: a quick way to try a server before adding it to the config.
    Connect {
        /// The server's address, e.g. http://127.0.0.1:3001/mcp.
        url: String,
        /// Call this tool and print its result.
        #[arg(long, value_name = "TOOL")]
        call: Option<String>,
        /// The call's arguments, a JSON object.
        #[arg(long, value_name = "JSON", default_value = "{}")]
        arguments: String,
        /// A header to send, NAME=value (repeatable), e.g. Authorization=Bearer ${TOKEN}.
        #[arg(long = "header", value_name = "NAME=VALUE")]
        headers: Vec<String>,
        /// Use the older SSE transport.
        #[arg(long)]
        sse: bool,
    },
}

#[derive(Debug, Subcommand)]
enum EvalCommand {
    /// Ingest a LoCoMo-format file (each dialog turn one memory), ask every question through
    /// Cairn's recall and a plain BM25 baseline, and print turn recall@k and session recall_any@k
    /// per category (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop) and overall.
    Locomo {
        /// The LoCoMo JSON file.
        file: PathBuf,
        /// Cut-offs, comma-separated.
        #[arg(long, value_delimiter = ',', default_value = "5,10,25")]
        k: Vec<usize>,
        /// Leave out the vector channel (compare lexical recall alone).
        #[arg(long)]
        lexical: bool,
        /// Each conversation's memory dreams (without a summary model) before it is asked.
        #[arg(long)]
        dream: bool,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Ingest a knowledge-update file (LoCoMo format with facts that change), ask every question
    /// through Cairn's recall and a plain BM25 baseline, and print per category (6 current value,
    /// 7 past value) latest@1, latest_recall@5/@10, superseded_above_latest@5 and the diagnostics.
    KnowledgeUpdate {
        /// The knowledge-update JSON file.
        file: PathBuf,
        /// Leave out the vector channel (compare lexical recall alone).
        #[arg(long)]
        lexical: bool,
        /// Each conversation's memory dreams (without a summary model) before it is asked.
        #[arg(long)]
        dream: bool,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
        /// Also write Cairn's ranking of every question here, in the run format of the set's
        /// reference scorer (`score_ku.py`).
        #[arg(long, value_name = "FILE")]
        run: Option<PathBuf>,
    },
    /// Synthesise sentences of technical speech with espeak-ng (several voices and speeds),
    /// transcribe each plainly, primed with the person's vocabulary from memory, and so primed
    /// with beam search (as voice input does), and print the word error rate of each.
    Voice {
        /// The whisper model (default: the configured one).
        #[arg(long)]
        model: Option<String>,
        /// Speak these sentences instead of the built-in twelve: one a line (blank lines and
        /// `#` comments skipped). Fresh sentences measure what tuning has not seen.
        #[arg(long, value_name = "FILE")]
        sentences: Option<PathBuf>,
        /// espeak-ng voices and speeds to speak them in, as `voice:words-a-minute`,
        /// comma-separated.
        #[arg(long, value_name = "LIST", default_value = eval::DEFAULT_VOICES)]
        voices: String,
        /// Print the report (and every transcript) as JSON.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
enum BenchCommand {
    /// Build a synthetic corpus of L1 memories in a temporary database and print the ingest rate
    /// and search latency percentiles.
    Recall {
        /// How many memories to build.
        #[arg(long, default_value_t = 100_000)]
        memories: usize,
        /// How many searches to time.
        #[arg(long, default_value_t = 300)]
        queries: usize,
        /// Print the figures as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Build a synthetic memory of conversations (a twentieth restated in other words), dream
    /// over it and restore it, and print the time of each, the restore point's size and the
    /// resident memory the dream took.
    Dream {
        /// How many memories to build.
        #[arg(long, default_value_t = 10_000)]
        memories: usize,
        /// Print the figures as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Load each installed local model and print its load time, resident memory, time to first
    /// token, prompt and generation tokens/s, and the prompt time of an agent turn's second step
    /// with and without prefix reuse.
    Model {
        /// Only these models [default: every installed one].
        #[arg(long = "model", value_name = "NAME")]
        models: Vec<String>,
        /// Threads [default: one per core].
        #[arg(long)]
        threads: Option<i32>,
        /// Print the figures as JSON.
        #[arg(long)]
        json: bool,
    },
}

fn main() -> std::process::ExitCode {
    match run() {
        Ok(code) => code,
        Err(e) => {
            eprintln!("cairn: {e:#}");
            std::process::ExitCode::from(2)
        }
    }
}

/// `cairn mcp status`: every configured server started, then reported.
async fn mcp_status(cairn: &Cairn) -> anyhow::Result<std::process::ExitCode> {
    if cairn.load_config()?.mcp_servers.is_empty() {
        println!("no MCP servers are configured: add a [mcp.servers.NAME] table to the config");
        return Ok(std::process::ExitCode::SUCCESS);
    }
    let mut failed = false;
    for status in cairn.mcp_statuses_started().await? {
        let state = match status.state {
            McpServerState::Ready => "ready",
            McpServerState::Disabled => "disabled",
            McpServerState::Failed => {
                failed = true;
                "failed"
            }
            McpServerState::Starting | McpServerState::Idle => "still starting",
        };
        println!("{}: {state}, {} tool(s)", status.name, status.tools.len());
        for tool in &status.tools {
            println!("  {tool}");
        }
        if let Some(error) = &status.error {
            for line in error.lines() {
                println!("  error: {line}");
            }
        }
    }
    Ok(if failed {
        std::process::ExitCode::FAILURE
    } else {
        std::process::ExitCode::SUCCESS
    })
}

/// `cairn mcp connect URL [--call TOOL --arguments JSON]`: the server's tools, and one call's
/// result (exit 1 when the tool reports an error).
async fn mcp_connect(
    url: &str,
    call: Option<&str>,
    arguments: &str,
    headers: &[String],
    sse: bool,
) -> anyhow::Result<std::process::ExitCode> {
    let headers = headers
        .iter()
        .map(|h| {
            let (name, value) = h
                .split_once('=')
                .with_context(|| format!("{h:?} is not NAME=value"))?;
            Ok((
                name.trim().to_owned(),
                cairn_config::Secret::new(value.trim().to_owned()),
            ))
        })
        .collect::<anyhow::Result<_>>()?;
    let arguments: serde_json::Value = serde_json::from_str(arguments)
        .with_context(|| format!("--arguments is not JSON: {arguments}"))?;
    let call = call.map(|tool| (tool, arguments));
    let failed = match cairn_api::probe_mcp(url, headers, sse, call).await? {
        McpProbe::Tools(tools) => {
            for tool in tools {
                println!("{tool}");
            }
            false
        }
        McpProbe::Answer { text, failed } => {
            println!("{text}");
            failed
        }
    };
    Ok(if failed {
        std::process::ExitCode::FAILURE
    } else {
        std::process::ExitCode::SUCCESS
    })
}

fn run() -> anyhow::Result<std::process::ExitCode> {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("CAIRN_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .init();

    let mut home = match cli.home {
        Some(dir) => {
            let home = Home::at(dir);
            match std::env::var("CAIRN_CONFIG").ok().filter(|v| !v.is_empty()) {
                Some(file) => home.with_config_file(file),
                None => home,
            }
        }
        None => Home::from_process_env()?,
    };
    if let Some(file) = cli.config {
        home = home.with_config_file(file);
    }
    let cairn = Cairn::new(home);
    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    runtime.block_on(async move {
        let command = cli
            .command
            .unwrap_or(Command::Agent(agent::AgentArgs::default()));
        match command {
            Command::Status { json } => status::print(&cairn, json).await,
            Command::Serve { port } => serve(cairn, port).await,
            Command::Mcp { command: None } => {
                // The client's log shows which memory answers (the data home is easily another).
                match cairn_api::McpMemory(cairn.clone()).serving() {
                    Ok(serving) => eprintln!("{serving}"),
                    Err(e) => eprintln!("cairn mcp: the memory cannot be opened: {e}"),
                }
                cairn.serve_mcp_stdio().await?;
                Ok(std::process::ExitCode::SUCCESS)
            }
            Command::Mcp {
                command: Some(McpCommand::Status),
            } => mcp_status(&cairn).await,
            Command::Mcp {
                command:
                    Some(McpCommand::Connect {
                        url,
                        call,
                        arguments,
                        headers,
                        sse,
                    }),
            } => mcp_connect(&url, call.as_deref(), &arguments, &headers, sse).await,
            Command::Agent(args) => agent::run(&cairn, args).await,
            Command::Sessions(command) => {
                sessions::run(&cairn, command).map(|()| std::process::ExitCode::SUCCESS)
            }
            Command::Sources(command) => {
                sources::run(&cairn, command).map(|()| std::process::ExitCode::SUCCESS)
            }
            Command::Voice(command) => {
                voice::run(&cairn, command).map(|()| std::process::ExitCode::SUCCESS)
            }
            Command::Models(command) => models::run(&cairn, command)
                .await
                .map(|()| std::process::ExitCode::SUCCESS),
            Command::Hook(args) => Ok(hook::run(&cairn, args).await),
            Command::Resume { words } => {
                hook::resume(&cairn, &words.join(" ")).map(|()| std::process::ExitCode::SUCCESS)
            }
            Command::Sync(command) => sync::run(&cairn, command)
                .await
                .map(|()| std::process::ExitCode::SUCCESS),
            Command::Hub(args) => sync::run_hub(args)
                .await
                .map(|()| std::process::ExitCode::SUCCESS),
            Command::Memory(command) => memory::run(&cairn, command)
                .await
                .map(|()| std::process::ExitCode::SUCCESS),
            Command::Schedule(command) => schedule::run(&cairn, command).await,
            Command::Eval(EvalCommand::Locomo {
                file,
                k,
                lexical,
                dream,
                json,
            }) => eval::locomo(&cairn, &file, &k, lexical, dream, json)
                .map(|()| std::process::ExitCode::SUCCESS),
            Command::Eval(EvalCommand::KnowledgeUpdate {
                file,
                lexical,
                dream,
                json,
                run,
            }) => eval::knowledge_update(&cairn, &file, lexical, dream, json, run.as_deref())
                .map(|()| std::process::ExitCode::SUCCESS),
            Command::Eval(EvalCommand::Voice {
                model,
                sentences,
                voices,
                json,
            }) => eval::Speech::new(sentences.as_deref(), &voices)
                .and_then(|speech| eval::voice(&cairn, &speech, model.as_deref(), json))
                .map(|()| std::process::ExitCode::SUCCESS),
            Command::Bench(BenchCommand::Recall {
                memories,
                queries,
                json,
            }) => eval::bench_recall(&cairn, memories.max(1), queries.max(1), json)
                .map(|()| std::process::ExitCode::SUCCESS),
            Command::Bench(BenchCommand::Dream { memories, json }) => {
                eval::bench_dream(memories, json).map(|()| std::process::ExitCode::SUCCESS)
            }
            Command::Bench(BenchCommand::Model {
                models,
                threads,
                json,
            }) => models::bench(&cairn, &models, threads, json)
                .await
                .map(|()| std::process::ExitCode::SUCCESS),
        }
    })
}

async fn serve(cairn: Cairn, port: Option<u16>) -> anyhow::Result<std::process::ExitCode> {
    let config = cairn.load_config()?;
    if let Some(running) = cairn.running_api().await {
        anyhow::bail!(
            "Cairn is already serving at {} (pid {}); stop it first",
            running.api_url,
            running.pid
        );
    }
    // Tasks over the API work in their own folders, as the app's do.
    let chat = std::sync::Arc::new(cairn_api::chat::Chat::new(cairn.clone(), cairn.workspace()));
    // An edit of the config file applies without a restart.
    let _config = chat.follow_config();
    let _schedules = chat.run_schedules();
    let api = cairn_http::serve(cairn.clone(), port.or(config.api_port), chat).await?;
    let _dreams = cairn.spawn_daily_dream();
    let _sync = cairn.spawn_sync();
    println!(
        "Cairn API listening on {} (token in {})",
        api.info().api_url,
        cairn.home().runtime_file().display()
    );
    shutdown_signal().await;
    api.shutdown().await?;
    Ok(std::process::ExitCode::SUCCESS)
}

async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

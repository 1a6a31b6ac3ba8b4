//! `cairn memory …`: health, search, add, get, delete and dreams, through the running app's API when there
//! is one (so the app sees the same writes at once), otherwise straight on the database.

use std::fmt::Write;
use std::time::Duration;

use anyhow::{bail, Context};
use cairn_api::{Cairn, MemoryHealth, SearchAnswer};
use cairn_protocol::memory::{
    Dream, DreamChangeKind, DreamState, Layer, MemoryRecord, NewMemory, Restored, SearchHit,
    SearchQuery,
};
use cairn_protocol::{ApiError, RuntimeInfo};
use clap::Subcommand;
use reqwest::Method;
use serde::de::DeserializeOwned;
use serde::Serialize;

#[derive(Debug, Subcommand)]
pub enum MemoryCommand {
    /// Is the memory database sound, and what does it hold?
    Health {
        #[arg(long)]
        json: bool,
    },
    /// Recall memories for a query, best first.
    Search {
        query: String,
        #[arg(long, default_value_t = 10)]
        limit: usize,
        /// Only these layers (L1, L2, L3, skill), comma-separated.
        #[arg(long, value_delimiter = ',')]
        layer: Vec<String>,
        /// Only memories from these sources, comma-separated.
        #[arg(long, value_delimiter = ',')]
        source: Vec<String>,
        /// Explain every candidate: channels, raw scores, why kept or dropped.
        #[arg(long)]
        verbose: bool,
        #[arg(long)]
        json: bool,
    },
    /// Write a memory.
    Add {
        text: String,
        #[arg(long, default_value = "L1")]
        layer: String,
        #[arg(long)]
        source: Option<String>,
        /// Your own id for it: adding the same source + id again changes nothing.
        #[arg(long)]
        external_id: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Show one memory.
    Get {
        id: i64,
        #[arg(long)]
        json: bool,
    },
    /// Delete one memory (its text leaves the database).
    Delete { id: i64 },
    /// Consolidate the memory now: catch up the background work, merge memories that say the
    /// same, write notes of finished episodes, archive stale candidates, compact. A restore point
    /// is taken first.
    Dream {
        /// Say what would change, changing nothing.
        #[arg(long)]
        dry_run: bool,
        #[arg(long)]
        json: bool,
    },
    /// The dreams so far, newest first, with what each changed and why.
    DreamLog {
        /// Every change of each dream, not only the counts.
        #[arg(long)]
        verbose: bool,
        #[arg(long)]
        json: bool,
    },
    /// Put the memory back exactly as it was before dream ID (it, later dreams and every other
    /// change since are undone).
    DreamRestore {
        id: i64,
        #[arg(long)]
        json: bool,
    },
}

/// Where the commands go.
pub(crate) enum Backend {
    Remote {
        info: RuntimeInfo,
        http: reqwest::Client,
    },
    Local(Cairn),
}

impl Backend {
    pub(crate) async fn connect(cairn: &Cairn) -> Self {
        match (
            cairn.running_api().await,
            reqwest::Client::builder().no_proxy().build(),
        ) {
            (Some(info), Ok(http)) => Self::Remote { info, http },
            _ => Self::Local(cairn.clone()),
        }
    }

    /// One operation: over HTTP to the running app, or `local` straight on the database.
    async fn op<T: DeserializeOwned>(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<&impl Serialize>,
        local: impl FnOnce(&Cairn) -> Result<T, cairn_api::Error>,
    ) -> anyhow::Result<T> {
        match self {
            Self::Remote { info, http } => Self::call(info, http, method, path, body).await,
            Self::Local(cairn) => Ok(local(cairn)?),
        }
    }

    pub(crate) async fn call<T: DeserializeOwned>(
        info: &RuntimeInfo,
        http: &reqwest::Client,
        method: reqwest::Method,
        path: &str,
        body: Option<&impl Serialize>,
    ) -> anyhow::Result<T> {
        let mut request = http
            .request(method, format!("{}{path}", info.api_url))
            .bearer_auth(&info.token);
        if let Some(body) = body {
            request = request.json(body);
        }
        let response = request
            .send()
            .await
            .context("the Cairn API did not answer")?;
        if response.status().is_success() {
            return Ok(response.json().await?);
        }
        let status = response.status();
        match response.json::<ApiError>().await {
            Ok(error) => bail!("{}", error.message),
            Err(_) => bail!("the Cairn API answered {status}"),
        }
    }
}

pub async fn run(cairn: &Cairn, command: MemoryCommand) -> anyhow::Result<()> {
    let backend = Backend::connect(cairn).await;
    let none: Option<&()> = None;
    match command {
        MemoryCommand::Health { json } => {
            let health: MemoryHealth = match &backend {
                Backend::Remote { info, http } => {
                    let overview =
                        Backend::call(info, http, Method::GET, "/api/v1/panel/overview", none)
                            .await?;
                    MemoryHealth {
                        status: "ok".into(),
                        database: format!("served by {}", info.api_url),
                        integrity: "checked by the running app".into(),
                        overview,
                    }
                }
                Backend::Local(cairn) => cairn.memory_health()?,
            };
            if json {
                println!("{}", serde_json::to_string_pretty(&health)?);
            } else {
                let o = &health.overview;
                println!("memory {} — {}", health.status, health.database);
                println!(
                    "  {} memories, {} sessions, {} turns ({} skipped as too large), {:.1} MB",
                    o.total,
                    o.sessions,
                    o.turns,
                    o.skipped_turns,
                    o.storage_bytes as f64 / 1e6
                );
                for (layer, n) in &o.by_layer {
                    println!("  {layer:<6}{n}");
                }
                match &o.embedder {
                    Some(model) => println!("  recall by meaning: embedded by {model}"),
                    None => println!("  recall by words only: no embedding model installed"),
                }
                let b = &o.backlog;
                println!(
                    "  waiting in the background: {} to embed, {} to read for facts, {} rated \
                     episodes to learn from, {} policies to reword",
                    b.embeddings, b.facts, b.outcomes, b.rewording
                );
            }
        }
        MemoryCommand::Search {
            query,
            limit,
            layer,
            source,
            verbose,
            json,
        } => {
            let mut q = SearchQuery::new(query).limit(limit);
            q.layers = parse_layers(&layer)?;
            q.sources = source;
            q.verbose = verbose;
            let answer: SearchAnswer = backend
                .op(Method::POST, "/api/v1/memory/search", Some(&q), |c| {
                    caught_up(c)?;
                    c.search_memory(q.clone())
                })
                .await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&answer)?);
            } else {
                print!("{}", render_hits(&answer, verbose));
            }
        }
        MemoryCommand::Add {
            text,
            layer,
            source,
            external_id,
            json,
        } => {
            let layer = layer.parse::<Layer>()?;
            let memory = NewMemory {
                text,
                layer: Some(layer),
                source,
                external_id,
                ..NewMemory::default()
            };
            let added: MemoryRecord = backend
                .op(Method::POST, "/api/v1/memory/add", Some(&memory), |c| {
                    let added = c.add_memory(memory.clone())?;
                    caught_up(c)?;
                    Ok(added)
                })
                .await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&added)?);
            } else {
                println!("added memory {}", added.id);
            }
        }
        MemoryCommand::Get { id, json } => {
            let path = format!("/api/v1/memory/{id}");
            let memory: MemoryRecord = backend
                .op(Method::GET, &path, none, |c| c.get_memory(id))
                .await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&memory)?);
            } else {
                println!(
                    "#{} [{} · {} · {}]",
                    memory.id,
                    memory.layer.as_str(),
                    memory.source,
                    memory.status.as_str()
                );
                println!("{}", memory.text);
            }
        }
        MemoryCommand::Delete { id } => {
            let path = format!("/api/v1/memory/{id}");
            let Deleted { deleted } = backend
                .op(Method::DELETE, &path, none, |c| {
                    c.delete_memory(id).map(|deleted| Deleted { deleted })
                })
                .await?;
            if !deleted {
                bail!("memory {id} not found");
            }
            println!("deleted memory {id}");
        }
        MemoryCommand::Dream { dry_run, json } => {
            let body = serde_json::json!({ "dry_run": dry_run });
            let dream: Dream = backend
                .op(Method::POST, "/api/v1/memory/dream", Some(&body), |c| {
                    c.dream(dry_run, "cli")
                })
                .await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&dream)?);
            } else {
                print!("{}", dream_text(&dream, true));
            }
            if dream.state == DreamState::Failed {
                bail!("the dream failed; the memory is as it was before it");
            }
        }
        MemoryCommand::DreamLog { verbose, json } => {
            let log: Vec<Dream> = backend
                .op(Method::GET, "/api/v1/memory/dreams", none, |c| {
                    c.dream_log(100)
                })
                .await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&log)?);
            } else if log.is_empty() {
                println!("no dreams yet: `cairn memory dream` runs one");
            } else {
                for dream in &log {
                    print!("{}", dream_text(dream, verbose));
                }
            }
        }
        MemoryCommand::DreamRestore { id, json } => {
            let path = format!("/api/v1/memory/dreams/{id}/restore");
            let restored: Restored = backend
                .op(Method::POST, &path, Some(&serde_json::json!({})), |c| {
                    c.restore_dream(id)
                })
                .await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&restored)?);
            } else {
                println!(
                    "the memory is back as it was before dream {id}: dreams {} undone, {} changes taken back",
                    restored
                        .undone
                        .iter()
                        .map(i64::to_string)
                        .collect::<Vec<_>>()
                        .join(", "),
                    restored.changes_undone
                );
            }
        }
    }
    Ok(())
}

/// A dream as the log shows it: its line, what it caught up and left, and (`changes`) each
/// change with why.
fn dream_text(dream: &Dream, changes: bool) -> String {
    let mut out = String::new();
    let count = |kind| dream.changes.iter().filter(|c| c.kind == kind).count();
    let took = dream
        .finished_at
        .map(|f| format!(" in {:.1} s", (f - dream.started_at) as f64 / 1000.0))
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "dream {} · {} · {} ({}){took}: {} merged, {} episode notes, {} archived",
        dream.id,
        cairn_protocol::calendar::date(dream.started_at),
        dream.state.as_str(),
        dream.trigger,
        count(DreamChangeKind::Merged),
        count(DreamChangeKind::Noted),
        count(DreamChangeKind::Archived),
    );
    let c = &dream.caught_up;
    if c.embedded + c.read + c.learned + c.rewritten > 0 {
        let _ = writeln!(
            out,
            "  caught up first: {} embedded, {} read for facts, {} rated tasks learned from, {} rewritten",
            c.embedded, c.read, c.learned, c.rewritten
        );
    }
    if dream.freed_bytes > 0 {
        let _ = writeln!(
            out,
            "  compacted: {:.1} MB freed",
            dream.freed_bytes as f64 / 1e6
        );
    }
    if let Some(undone) = &dream.undone {
        let _ = writeln!(
            out,
            "  undone by `cairn memory dream-restore {}`",
            undone.by_restore_of
        );
    } else if dream.state == DreamState::Done && dream.restore_point_bytes > 0 {
        let _ = writeln!(out, "  undo with `cairn memory dream-restore {}`", dream.id);
    }
    if let Some(error) = &dream.error {
        let _ = writeln!(out, "  error: {error}");
    }
    for left in &dream.left {
        let _ = writeln!(out, "  left: {left}");
    }
    if changes {
        for change in &dream.changes {
            let memory = if change.memory > 0 {
                format!("#{} ", change.memory)
            } else {
                String::new()
            };
            let _ = writeln!(out, "  {} {memory}— {}", change.kind.as_str(), change.why);
        }
    }
    out
}

/// The answer of `DELETE /api/v1/memory/{id}`.
#[derive(serde::Deserialize)]
struct Deleted {
    deleted: bool,
}

fn parse_layers(names: &[String]) -> anyhow::Result<Vec<Layer>> {
    names.iter().map(|n| Ok(n.parse::<Layer>()?)).collect()
}

/// How long a command run without the app does the background queue's work itself, and on how
/// many memories to embed at most: enough for what a person adds by hand, not for an import's
/// backlog (the app or `cairn serve` does that in the background).
const CATCH_UP: Duration = Duration::from_secs(3);
const CATCH_UP_MOST: i64 = 100;

/// Without the app nothing lives long enough to embed what a command writes and read it for
/// facts that change: the command does it before it answers, and says what is left. A failure
/// here (a damaged model file) is said and the command goes on: recall keeps its other channels.
fn caught_up(cairn: &Cairn) -> Result<(), cairn_api::Error> {
    match cairn
        .memory()?
        .catch_up(CATCH_UP, CATCH_UP_MOST)
    {
        Ok(0) => {}
        Ok(waiting) => eprintln!(
            "{waiting} memories still wait to be embedded: the app or `cairn serve` does it in the background"
        ),
        Err(e) => eprintln!("memories could not be embedded now ({e}): recall goes on without them"),
    }
    Ok(())
}

fn render_hits(answer: &SearchAnswer, verbose: bool) -> String {
    let mut out = String::new();
    if answer.result.hits.is_empty() {
        out.push_str("no memories found\n");
    }
    let line = |out: &mut String, i: usize, hit: &SearchHit| {
        let channels: Vec<String> = hit
            .channels
            .iter()
            .map(|c| format!("{}#{} ({:.2})", c.channel, c.rank + 1, c.score))
            .collect();
        let m = &hit.memory;
        let text: String = m.text.chars().take(240).collect();
        let _ = writeln!(
            out,
            "{i:>2}. #{} score {:.3}  [{} · {}]  {}",
            m.id,
            hit.score,
            m.layer.as_str(),
            m.source,
            channels.join(", ")
        );
        let _ = writeln!(out, "    {}", text.replace('\n', "\n    "));
        if verbose {
            let _ = writeln!(out, "    {}", hit.reason);
        }
    };
    for (i, hit) in answer.result.hits.iter().enumerate() {
        line(&mut out, i + 1, hit);
    }
    if verbose && !answer.result.dropped.is_empty() {
        let _ = writeln!(out, "\ndropped candidates:");
        for (i, hit) in answer.result.dropped.iter().enumerate() {
            line(&mut out, i + 1, hit);
        }
    }
    let _ = writeln!(out, "({:.1} ms)", answer.result.took_ms);
    out
}

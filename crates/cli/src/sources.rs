//! `cairn sources`: which agents' history is on this machine, scans into memory (with a progress
//! bar, or a JSON summary), continuous sync, and the live hooks of the agents that have them.

use std::io::{IsTerminal, Write};

use cairn_api::{Cairn, FollowEvent, ScanControl, ScanMode};
use cairn_protocol::{ScanProgress as Progress, SourceReport};

#[derive(Debug, clap::Subcommand)]
pub enum SourcesCommand {
    /// The agents Cairn can import from: detected or not, where, how much, last sync.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Bring new turns into memory (only what changed since the last scan, unless --full).
    Scan {
        /// Only this source (e.g. claude-code).
        #[arg(long)]
        source: Option<String>,
        /// Read every file again; adds only what memory does not hold yet.
        #[arg(long)]
        full: bool,
        /// Print the summary as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Scan, then keep scanning as the agents write (until interrupted).
    Watch {
        /// Only this source.
        #[arg(long)]
        source: Option<String>,
    },
    /// Install or remove Cairn's live hooks in an agent (claude-code, codex, cursor).
    #[command(subcommand)]
    Hook(crate::hook::HookSetup),
}

pub fn run(cairn: &Cairn, command: SourcesCommand) -> anyhow::Result<()> {
    match command {
        SourcesCommand::List { json } => list(cairn, json),
        SourcesCommand::Scan { source, full, json } => {
            let mode = if full {
                ScanMode::Full
            } else {
                ScanMode::Incremental
            };
            let control = std::sync::Arc::new(ScanControl::default());
            let stopper = control.clone();
            on_ctrl_c(move || stopper.stop());
            let reports = scan(cairn, source.as_deref(), mode, !json, &control)?;
            if json {
                println!("{}", serde_json::to_string_pretty(&summary(&reports))?);
            } else {
                print_reports(&reports);
            }
            Ok(())
        }
        SourcesCommand::Watch { source } => watch(cairn, source.as_deref()),
        SourcesCommand::Hook(setup) => crate::hook::setup(cairn, setup),
    }
}

fn list(cairn: &Cairn, json: bool) -> anyhow::Result<()> {
    let sources = cairn.list_sources();
    if json {
        println!("{}", serde_json::to_string_pretty(&sources)?);
        return Ok(());
    }
    for s in &sources {
        let state = match (s.detected, s.enabled) {
            (_, false) => "disabled",
            (true, true) => "detected",
            (false, true) => "not found",
        };
        let last = s
            .last_sync
            .map(|t| format!("last sync {}", cairn_protocol::calendar::date(t)))
            .unwrap_or_else(|| "never synced".into());
        println!(
            "{:<14} {:<10} {:>5} files {:>6} conversations {:>7} turns  {last}  {}",
            s.name, state, s.files, s.conversations, s.turns, s.path
        );
    }
    Ok(())
}

/// The JSON summary: one object per source, and the totals.
fn summary(reports: &[SourceReport]) -> serde_json::Value {
    let mut totals = SourceReport {
        source: "total".into(),
        ..SourceReport::default()
    };
    for r in reports {
        totals.add(r);
    }
    serde_json::json!({ "sources": reports, "totals": totals })
}

fn print_reports(reports: &[SourceReport]) {
    if reports.is_empty() {
        eprintln!("no agent history found (see `cairn sources list`)");
    }
    for r in reports {
        println!(
            "{}: {} conversations, {} turns seen, {} added, {} skipped, {} failed, {} malformed lines{}",
            r.source,
            r.conversations,
            r.turns_seen,
            r.turns_added,
            r.turns_skipped,
            r.turns_failed,
            r.lines_malformed,
            if r.files_failed > 0 {
                format!(", {} unreadable files", r.files_failed)
            } else {
                String::new()
            }
        );
    }
}

/// Scans with a progress bar on a terminal's standard error; Ctrl-C stops after the current file
/// (everything done so far is kept).
fn scan(
    cairn: &Cairn,
    only: Option<&str>,
    mode: ScanMode,
    show: bool,
    control: &ScanControl,
) -> anyhow::Result<Vec<SourceReport>> {
    let bar = show && std::io::stderr().is_terminal();
    let mut on_progress = |p: Progress| {
        if !bar {
            return;
        }
        let mut err = std::io::stderr();
        match p {
            Progress::File {
                source,
                done,
                files,
                report,
            } => {
                let width = 24;
                let filled = (done * width) / files.max(1);
                let _ = write!(
                    err,
                    "\r{source:<12} [{}{}] {done}/{files} files · {} turns added ",
                    "#".repeat(filled),
                    "-".repeat(width - filled),
                    report.turns_added
                );
                let _ = err.flush();
            }
            Progress::SourceDone { .. } | Progress::Stopped => {
                let _ = writeln!(err);
            }
            Progress::SourceStarted { .. } => {}
        }
    };
    Ok(cairn.scan_sources(only, mode, control, &mut on_progress)?)
}

/// Runs `stop` on Ctrl-C (scans are synchronous; the signal is caught on the async runtime).
fn on_ctrl_c(stop: impl Fn() + Send + 'static) {
    if let Ok(handle) = tokio::runtime::Handle::try_current() {
        handle.spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                stop();
            }
        });
    }
}

/// Scans, then rescans a source within seconds of its files changing (debounced), until Ctrl-C.
fn watch(cairn: &Cairn, only: Option<&str>) -> anyhow::Result<()> {
    let control = std::sync::Arc::new(ScanControl::default());
    let stopper = control.clone();
    on_ctrl_c(move || stopper.stop());
    let mut watching_anything = true;
    cairn.follow_sources(only, &control, &mut |event| match event {
        FollowEvent::Watching(watched) if watched.is_empty() => watching_anything = false,
        FollowEvent::Watching(watched) => eprintln!(
            "watching {} for new turns (Ctrl-C to stop)",
            watched
                .iter()
                .map(|(n, r)| format!("{n} ({})", r.display()))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        FollowEvent::Added(report) => {
            eprintln!("{}: {} new turn(s)", report.source, report.turns_added)
        }
    })?;
    if !watching_anything {
        anyhow::bail!("no agent history to watch (see `cairn sources list`)");
    }
    Ok(())
}

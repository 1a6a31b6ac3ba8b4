//! Imports a generated Claude Code history (200 MB by default) into a fresh memory database and
//! prints MB/s and turns/s (embeddings excluded: they run later, in the background), then the
//! cost of a rescan with nothing changed.
//!
//! `cargo bench -p cairn-importers --bench import [-- MEGABYTES]`

use std::time::Instant;

use cairn_importers::sources::ClaudeCode;
use cairn_importers::synthetic::claude_code_session;
use cairn_importers::{scan, HistorySource, ScanControl, ScanMode, SourceEnv};
use cairn_memory::MemoryStore;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let megabytes: u64 = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(200);
    let dir = tempfile::tempdir()?;
    let home = dir.path().join("home");
    let project = home.join(".claude/projects/-work-bench");
    std::fs::create_dir_all(&project)?;
    let mut bytes = 0u64;
    let mut sessions = 0;
    while bytes < megabytes * 1_000_000 {
        let id = format!("bench-{sessions:06}");
        let text = claude_code_session(&id, "/work/bench", 200);
        bytes += text.len() as u64;
        std::fs::write(project.join(format!("{id}.jsonl")), text)?;
        sessions += 1;
    }
    let env = SourceEnv {
        home: home.clone(),
        ..SourceEnv::default()
    };
    let source = ClaudeCode::new(&env);
    let sources: Vec<&dyn HistorySource> = vec![&source];
    let memory = MemoryStore::open(&dir.path().join("memory.sqlite"))?;
    let state = dir.path().join("sources.json");
    let control = ScanControl::default();

    let started = Instant::now();
    let reports = scan(
        &sources,
        &memory,
        &state,
        ScanMode::Incremental,
        &control,
        &mut |_| {},
    )?;
    let took = started.elapsed().as_secs_f64();
    let turns: usize = reports.iter().map(|r| r.turns_added).sum();
    println!(
        "import {:.0} MB of Claude Code history ({sessions} sessions, {turns} turns): {:.1} s, {:.1} MB/s, {:.0} turns/s",
        bytes as f64 / 1e6,
        took,
        bytes as f64 / 1e6 / took,
        turns as f64 / took
    );

    let started = Instant::now();
    let again = scan(
        &sources,
        &memory,
        &state,
        ScanMode::Incremental,
        &control,
        &mut |_| {},
    )?;
    let added: usize = again.iter().map(|r| r.turns_added).sum();
    println!(
        "rescan with nothing changed: {:.0} ms ({added} turns added)",
        started.elapsed().as_secs_f64() * 1e3
    );

    let started = Instant::now();
    let full = scan(
        &sources,
        &memory,
        &state,
        ScanMode::Full,
        &control,
        &mut |_| {},
    )?;
    let added: usize = full.iter().map(|r| r.turns_added).sum();
    println!(
        "full rescan (every file read again, nothing new): {:.1} s, {:.1} MB/s ({added} turns added)",
        started.elapsed().as_secs_f64(),
        bytes as f64 / 1e6 / started.elapsed().as_secs_f64()
    );
    Ok(())
}

//! Imports a generated Claude Code history (200 MB by default) into a fresh memory database and
//! prints MB/s and turns/s (embeddings excluded: they run later, in the background), then the
//! cost of a rescan with nothing changed.
//!
//! `cargo bench -p cairn-importers --bench import [-- MEGABYTES]`

use std::time::Instant;

/// The allocator the `cairn` binary ships with (see its `main.rs`).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

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

    // One scan: its time in seconds and the turns it added.
    let timed_scan = |mode: ScanMode| -> Result<(f64, usize), Box<dyn std::error::Error>> {
        let started = Instant::now();
        let reports = scan(&sources, &memory, &state, mode, &control, &mut |_| {})?;
        let added = reports.iter().map(|r| r.turns_added).sum();
        Ok((started.elapsed().as_secs_f64(), added))
    };
    let megabytes = bytes as f64 / 1e6;

    let (took, turns) = timed_scan(ScanMode::Incremental)?;
    println!(
        "import {megabytes:.0} MB of Claude Code history ({sessions} sessions, {turns} turns): {took:.1} s, {:.1} MB/s, {:.0} turns/s",
        megabytes / took,
        turns as f64 / took
    );
    let (took, added) = timed_scan(ScanMode::Incremental)?;
    println!(
        "rescan with nothing changed: {:.0} ms ({added} turns added)",
        took * 1e3
    );
    let (took, added) = timed_scan(ScanMode::Full)?;
    println!(
        "full rescan (every file read again, nothing new): {took:.1} s, {:.1} MB/s ({added} turns added)",
        megabytes / took
    );
    Ok(())
}

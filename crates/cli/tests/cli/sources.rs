#![allow(clippy::unwrap_used, clippy::expect_used)]

//! `cairn sources` and `cairn hook` as a person (and another agent) runs them, with a fake home:
//! scan and rescan, a scan killed midway, hook install/remove, a Claude-Code-style hook exchange.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use cairn_importers::synthetic::claude_code_session;
use serde_json::{json, Value};

use crate::stdout;

/// `cairn` with a fake HOME (where the agents' history is) and a Cairn home.
fn run(home: &Path, cairn_home: &Path, args: &[&str], input: Option<&str>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(args)
        .env("HOME", home)
        .env("CAIRN_HOME", cairn_home)
        .env_remove("CAIRN_CONFIG")
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("CODEX_HOME")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("cairn starts");
    if let Some(input) = input {
        let _ = child
            .stdin
            .take()
            .map(|mut s| s.write_all(input.as_bytes()));
    }
    drop(child.stdin.take());
    child.wait_with_output().expect("cairn ends")
}

fn claude_project(home: &Path, sessions: usize, turns: usize) {
    let dir = home.join(".claude/projects/-work-garden");
    std::fs::create_dir_all(&dir).expect("project folder");
    for s in 0..sessions {
        let id = format!("00000000-0000-4000-8000-{s:012}");
        std::fs::write(
            dir.join(format!("{id}.jsonl")),
            claude_code_session(&id, "/work/garden", turns),
        )
        .expect("session file");
    }
}

fn turn_count(cairn_home: &Path) -> (i64, i64) {
    try_turn_count(cairn_home).expect("count")
}

/// The turns imported so far; an error while the database is still being created.
fn try_turn_count(cairn_home: &Path) -> rusqlite::Result<(i64, i64)> {
    let db = rusqlite::Connection::open(cairn_home.join("data/memory.sqlite"))?;
    db.query_row(
        "SELECT COUNT(*), COUNT(DISTINCT idempotency_key) FROM turns WHERE source = 'claude-code'",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
}

#[test]
fn a_scan_imports_turns_and_a_rescan_adds_nothing() {
    let home = tempfile::tempdir().unwrap();
    let cairn_home = tempfile::tempdir().unwrap();
    claude_project(home.path(), 2, 3);
    let listed = run(
        home.path(),
        cairn_home.path(),
        &["sources", "list", "--json"],
        None,
    );
    let listed: Value = serde_json::from_str(&stdout(&listed)).unwrap();
    let claude = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "claude-code")
        .unwrap();
    assert_eq!(claude["detected"], true);
    assert_eq!(claude["files"], 2);

    let first = run(
        home.path(),
        cairn_home.path(),
        &["sources", "scan", "--json"],
        None,
    );
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let first: Value = serde_json::from_str(&stdout(&first)).unwrap();
    assert_eq!(first["totals"]["turns_added"], 6, "{first}");
    assert_eq!(first["sources"][0]["source"], "claude-code");
    assert_eq!(first["sources"][0]["conversations"], 2);
    assert_eq!(first["sources"][0]["turns_seen"], 6);

    let again = run(
        home.path(),
        cairn_home.path(),
        &["sources", "scan", "--json"],
        None,
    );
    let again: Value = serde_json::from_str(&stdout(&again)).unwrap();
    assert_eq!(again["totals"]["turns_added"], 0, "{again}");
    let full = run(
        home.path(),
        cairn_home.path(),
        &["sources", "scan", "--full", "--json"],
        None,
    );
    let full: Value = serde_json::from_str(&stdout(&full)).unwrap();
    assert_eq!(full["totals"]["turns_added"], 0, "{full}");
    assert_eq!(full["totals"]["turns_seen"], 6);

    // The imported turns are recallable with where they came from.
    let found = run(
        home.path(),
        cairn_home.path(),
        &["memory", "search", "why does build step 2 fail", "--json"],
        None,
    );
    let found: Value = serde_json::from_str(&stdout(&found)).unwrap();
    let hit = &found["hits"][0]["memory"];
    assert_eq!(hit["source"], "claude-code");
    assert!(
        hit["text"].as_str().unwrap().contains("Tool Bash("),
        "{hit}"
    );
    assert_eq!(hit["metadata"]["origin"]["workspace"], "/work/garden");

    // A turn appended later is the only one the next scan adds.
    let file = home
        .path()
        .join(".claude/projects/-work-garden/00000000-0000-4000-8000-000000000000.jsonl");
    let id = "00000000-0000-4000-8000-000000000000";
    std::fs::write(&file, claude_code_session(id, "/work/garden", 4)).unwrap();
    let more = run(
        home.path(),
        cairn_home.path(),
        &["sources", "scan", "--json"],
        None,
    );
    let more: Value = serde_json::from_str(&stdout(&more)).unwrap();
    assert_eq!(more["totals"]["turns_added"], 1, "{more}");
}

#[test]
fn a_scan_killed_midway_then_rescanned_loses_and_duplicates_nothing() {
    let home = tempfile::tempdir().unwrap();
    let cairn_home = tempfile::tempdir().unwrap();
    claude_project(home.path(), 40, 25);
    let mut scan = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(["sources", "scan", "--json"])
        .env("HOME", home.path())
        .env("CAIRN_HOME", cairn_home.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Kill it once some files are checkpointed, before it finishes.
    let state = cairn_home.path().join("data/sources.json");
    let deadline = Instant::now() + Duration::from_secs(60);
    while !state.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    scan.kill().unwrap();
    let _ = scan.wait();
    let (partial, _) = turn_count(cairn_home.path());
    assert!(
        partial < 1000,
        "the scan was killed before the end ({partial} turns)"
    );

    let rescan = run(
        home.path(),
        cairn_home.path(),
        &["sources", "scan", "--json"],
        None,
    );
    assert!(
        rescan.status.success(),
        "{}",
        String::from_utf8_lossy(&rescan.stderr)
    );
    let (turns, distinct) = turn_count(cairn_home.path());
    assert_eq!((turns, distinct), (1000, 1000), "every turn once");
    let db = rusqlite::Connection::open(cairn_home.path().join("data/memory.sqlite")).unwrap();
    let traces: i64 = db
        .query_row(
            "SELECT COUNT(*) FROM memories WHERE source = 'claude-code' AND layer = 'L1'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(traces, 1000, "one trace per turn");
}

#[test]
fn hooks_install_idempotently_keep_other_entries_and_remove_cleanly() {
    let home = tempfile::tempdir().unwrap();
    let cairn_home = tempfile::tempdir().unwrap();
    let settings = home.path().join(".claude/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    let other = json!({"type": "command", "command": "node other-tool.js", "timeout": 5});
    std::fs::write(
        &settings,
        json!({"model": "opus", "hooks": {"Stop": [{"matcher": "", "hooks": [other]}]}})
            .to_string(),
    )
    .unwrap();
    for _ in 0..2 {
        let out = run(
            home.path(),
            cairn_home.path(),
            &["sources", "hook", "install", "claude-code"],
            None,
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let doc: Value = serde_json::from_slice(&std::fs::read(&settings).unwrap()).unwrap();
    assert_eq!(doc["model"], "opus");
    let stop = doc["hooks"]["Stop"].as_array().unwrap();
    assert_eq!(
        stop.len(),
        2,
        "the other tool's group and ours, once: {doc}"
    );
    assert_eq!(stop[0]["hooks"][0], other);
    let ours = stop[1]["hooks"][0]["command"].as_str().unwrap();
    assert!(ours.ends_with("hook Stop --agent claude-code"), "{ours}");
    // The hook reads this data home, not the one `cairn` would find without CAIRN_HOME.
    assert!(
        ours.contains(&format!("--home '{}'", cairn_home.path().display())),
        "{ours}"
    );
    assert_eq!(
        doc["hooks"]["UserPromptSubmit"].as_array().unwrap().len(),
        1
    );

    let out = run(
        home.path(),
        cairn_home.path(),
        &["sources", "hook", "remove", "claude-code"],
        None,
    );
    assert!(out.status.success());
    let doc: Value = serde_json::from_slice(&std::fs::read(&settings).unwrap()).unwrap();
    assert_eq!(
        doc["hooks"]["Stop"],
        json!([{"matcher": "", "hooks": [other]}])
    );
    assert!(doc["hooks"].get("UserPromptSubmit").is_none(), "{doc}");
}

#[test]
fn a_claude_code_hook_exchange_recalls_then_captures_without_duplicates() {
    let home = tempfile::tempdir().unwrap();
    let cairn_home = tempfile::tempdir().unwrap();
    let added = run(
        home.path(),
        cairn_home.path(),
        &[
            "memory",
            "add",
            "The staging database password rotates every Friday at noon",
        ],
        None,
    );
    assert!(
        added.status.success(),
        "{}",
        String::from_utf8_lossy(&added.stderr)
    );
    let prompt = json!({"hook_event_name": "UserPromptSubmit", "session_id": "live-1",
        "prompt": "when does the staging database password rotate?", "cwd": "/work/garden",
        "transcript_path": "/nonexistent"});
    let out = run(
        home.path(),
        cairn_home.path(),
        &["hook", "UserPromptSubmit", "--agent", "claude-code"],
        Some(&prompt.to_string()),
    );
    assert!(out.status.success());
    let answer: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(
        answer["hookSpecificOutput"]["hookEventName"],
        "UserPromptSubmit"
    );
    let context = answer["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(
        context.contains("rotates every Friday at noon"),
        "{context}"
    );

    // Stop: the transcript's turns are captured now; a later scan of the same file adds nothing.
    claude_project(home.path(), 1, 2);
    let transcript = home
        .path()
        .join(".claude/projects/-work-garden/00000000-0000-4000-8000-000000000000.jsonl");
    let stop = json!({"hook_event_name": "Stop", "session_id": "00000000-0000-4000-8000-000000000000",
        "transcript_path": transcript, "cwd": "/work/garden"});
    let out = run(
        home.path(),
        cairn_home.path(),
        &["hook", "Stop", "--agent", "claude-code"],
        Some(&stop.to_string()),
    );
    assert!(out.status.success());
    assert_eq!(turn_count(cairn_home.path()), (2, 2));
    let scan = run(
        home.path(),
        cairn_home.path(),
        &["sources", "scan", "--json"],
        None,
    );
    let scan: Value = serde_json::from_str(&stdout(&scan)).unwrap();
    assert_eq!(scan["totals"]["turns_added"], 0, "{scan}");
    assert_eq!(turn_count(cairn_home.path()), (2, 2));

    // Garbage on stdin, or Cairn's data unusable: the hook still exits 0 and says nothing.
    let out = run(
        home.path(),
        cairn_home.path(),
        &["hook", "UserPromptSubmit"],
        Some("not json"),
    );
    assert!(out.status.success());
    assert_eq!(stdout(&out), "");
}

#[test]
fn watching_brings_a_new_turn_in_within_seconds() {
    let home = tempfile::tempdir().unwrap();
    let cairn_home = tempfile::tempdir().unwrap();
    claude_project(home.path(), 1, 2);
    let mut watch = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(["sources", "watch", "--source", "claude-code"])
        .env("HOME", home.path())
        .env("CAIRN_HOME", cairn_home.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let wait_for = |turns: i64| {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            // The watcher may still be creating the schema: a failed count is "not yet".
            if try_turn_count(cairn_home.path()).is_ok_and(|(n, _)| n >= turns) {
                return;
            }
            assert!(Instant::now() < deadline, "{turns} turns never arrived");
            std::thread::sleep(Duration::from_millis(100));
        }
    };
    wait_for(2);
    // Another agent writes a new turn: it is in memory seconds later.
    let file = home
        .path()
        .join(".claude/projects/-work-garden/00000000-0000-4000-8000-000000000000.jsonl");
    std::fs::write(
        &file,
        claude_code_session("00000000-0000-4000-8000-000000000000", "/work/garden", 3),
    )
    .unwrap();
    wait_for(3);
    let _ = watch.kill();
    let _ = watch.wait();
    assert_eq!(turn_count(cairn_home.path()), (3, 3));
}

#[test]
fn hook_install_with_mcp_registers_cairn_in_the_agents_config_and_remove_takes_it_out(
) -> Result<(), Box<dyn std::error::Error>> {
    let home = tempfile::tempdir()?;
    let cairn_home = tempfile::tempdir()?;
    let user_config = home.path().join(".claude.json");
    std::fs::write(
        &user_config,
        json!({"numStartups": 7, "mcpServers": {"github": {"type": "stdio", "command": "gh-mcp"}}})
            .to_string(),
    )?;
    for _ in 0..2 {
        let out = run(
            home.path(),
            cairn_home.path(),
            &["sources", "hook", "install", "claude-code", "--mcp"],
            None,
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let doc: Value = serde_json::from_slice(&std::fs::read(&user_config)?)?;
    assert_eq!(doc["numStartups"], 7);
    assert_eq!(doc["mcpServers"]["github"]["command"], "gh-mcp");
    assert_eq!(
        doc["mcpServers"]["cairn"],
        json!({"type": "stdio", "command": env!("CARGO_BIN_EXE_cairn"),
            "args": ["--home", cairn_home.path().display().to_string(), "mcp"]})
    );

    let out = run(
        home.path(),
        cairn_home.path(),
        &["sources", "hook", "remove", "claude-code"],
        None,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&std::fs::read(&user_config)?)?;
    assert!(doc["mcpServers"].get("cairn").is_none(), "{doc}");
    assert_eq!(doc["mcpServers"]["github"]["command"], "gh-mcp");
    Ok(())
}

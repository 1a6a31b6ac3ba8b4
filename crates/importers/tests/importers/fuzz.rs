//! Fuzzing every record parser for a bounded time: seed records from the fixtures are mutated at
//! the JSON level (a value swapped for one of another type, a key dropped, records repeated or
//! reordered, deep nesting) and at the byte level (truncated, bytes flipped, lines torn), and each
//! source reads the result. Nothing may panic. `CAIRN_FUZZ_SECONDS` sets the time per target
//! (default 2); a failing input is saved under `target/fuzz-failures/`.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use cairn_importers::{sources, HistorySource};
use serde_json::{json, Value};

use crate::{env_at, shared};

/// A small deterministic generator (xorshift).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn odd_value(rng: &mut Rng) -> Value {
    match rng.below(12) {
        0 => Value::Null,
        1 => json!(true),
        2 => json!(-1),
        3 => json!(1e300),
        4 => json!(""),
        5 => json!("é🙂\u{0}\u{202e}"),
        6 => json!([]),
        7 => json!({}),
        8 => json!("x".repeat(5000)),
        9 => {
            let mut v = json!("deep");
            for _ in 0..60 {
                v = json!([v]);
            }
            v
        }
        10 => json!({"type": "text", "text": 7}),
        _ => json!([{"type": "tool_result"}, {"type": "tool_use", "id": null}]),
    }
}

/// Replaces a random node of `v` (or drops a key) — walks down a random path.
fn mutate_value(v: &mut Value, rng: &mut Rng, depth: usize) {
    let stop = depth > 6 || rng.below(4) == 0;
    match v {
        Value::Object(map) if !map.is_empty() && !stop => {
            let keys: Vec<String> = map.keys().cloned().collect();
            let key = &keys[rng.below(keys.len())];
            if rng.below(6) == 0 {
                map.remove(key);
            } else if let Some(child) = map.get_mut(key) {
                mutate_value(child, rng, depth + 1);
            }
        }
        Value::Array(items) if !items.is_empty() && !stop => {
            let i = rng.below(items.len());
            mutate_value(&mut items[i], rng, depth + 1);
        }
        _ => *v = odd_value(rng),
    }
}

/// A mutated copy of `seed`, JSON-aware when it parses (JSONL lines or one document).
fn mutate(seed: &[u8], rng: &mut Rng) -> Vec<u8> {
    let text = String::from_utf8_lossy(seed);
    let mut out: Vec<u8> = if let Ok(mut doc) = serde_json::from_str::<Value>(&text) {
        for _ in 0..=rng.below(3) {
            mutate_value(&mut doc, rng, 0);
        }
        doc.to_string().into_bytes()
    } else {
        let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
        for _ in 0..=rng.below(4) {
            if lines.is_empty() {
                break;
            }
            let i = rng.below(lines.len());
            match rng.below(5) {
                0 => {
                    let copy = lines[i].clone();
                    lines.insert(rng.below(lines.len()), copy);
                }
                1 => {
                    let j = rng.below(lines.len());
                    lines.swap(i, j);
                }
                _ => {
                    if let Ok(mut v) = serde_json::from_str::<Value>(&lines[i]) {
                        mutate_value(&mut v, rng, 0);
                        lines[i] = v.to_string();
                    }
                }
            }
        }
        (lines.join("\n") + "\n").into_bytes()
    };
    match rng.below(6) {
        0 if !out.is_empty() => out.truncate(rng.below(out.len())),
        1 if !out.is_empty() => {
            let i = rng.below(out.len());
            out[i] ^= 1 << rng.below(8);
        }
        2 => {
            let at = rng.below(out.len() + 1);
            out.splice(at..at, [0xff, 0xfe, b'{', b'"', b'\n']);
        }
        _ => {}
    }
    out
}

fn seconds() -> Duration {
    let s = std::env::var("CAIRN_FUZZ_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2.0);
    Duration::from_secs_f64(s)
}

fn source(name: &str) -> Box<dyn HistorySource> {
    sources::all(&env_at(Path::new("/nonexistent")))
        .into_iter()
        .find(|s| s.name() == name)
        .unwrap_or_else(|| panic!("no source {name}"))
}

/// Mutates `seeds` in turn, writes each result to `file` and has `name` read it, for the bound.
fn fuzz_file(name: &str, seeds: &[Vec<u8>], file: &Path) {
    let source = source(name);
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ name.len() as u64);
    let deadline = Instant::now() + seconds();
    let mut runs = 0;
    while Instant::now() < deadline {
        let input = mutate(&seeds[runs % seeds.len()], &mut rng);
        std::fs::write(file, &input).unwrap();
        let outcome = catch_unwind(AssertUnwindSafe(|| source.read(file)));
        if outcome.is_err() {
            let saved = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../../target/fuzz-failures")
                .join(format!("{name}-{runs}"));
            let _ = std::fs::create_dir_all(saved.parent().unwrap());
            let _ = std::fs::write(&saved, &input);
            panic!(
                "{name} panicked on a mutated input, saved as {}",
                saved.display()
            );
        }
        runs += 1;
    }
    assert!(runs > 10, "{name}: only {runs} runs");
}

fn bytes(path: PathBuf) -> Vec<u8> {
    std::fs::read(path).unwrap()
}

#[test]
fn claude_code_and_qwenwork_records() {
    let dir = tempfile::tempdir().unwrap();
    let seeds = vec![
        bytes(shared("claude-code/agent-sessions__stage0_claude_small.jsonl")),
        bytes(shared("claude-code/agent-sessions__subagent/0a1b2c3d-4e5f-4061-8071-2a3b4c5d6e7f/subagents/agent-a0ad4f44468bdf20d.jsonl")),
    ];
    fuzz_file("claude-code", &seeds, &dir.path().join("s.jsonl"));
    fuzz_file("qwenwork", &seeds, &dir.path().join("q.jsonl"));
}

#[test]
fn codex_records() {
    let dir = tempfile::tempdir().unwrap();
    let seeds = vec![
        bytes(shared("codex/agent-sessions__stage0_codex_small.jsonl")),
        bytes(shared("codex/claude-code-log__rollout-2026-01-02T03-04-05-11111111-1111-4111-8111-111111111111.jsonl")),
    ];
    fuzz_file(
        "codex",
        &seeds,
        &dir.path()
            .join("rollout-2026-01-02T03-04-05-11111111-1111-4111-8111-111111111111.jsonl"),
    );
}

#[test]
fn gemini_documents() {
    let dir = tempfile::tempdir().unwrap();
    let seeds = vec![bytes(shared("gemini/agent-sessions__gemini_small.json"))];
    fuzz_file("gemini", &seeds, &dir.path().join("session-1.json"));
}

#[test]
fn cursor_agent_records() {
    let dir = tempfile::tempdir().unwrap();
    let seeds = vec![
        bytes(shared(
            "cursor/agent-sessions__cursor-cli_agent-transcript.jsonl",
        )),
        bytes(shared(
            "cursor/agent-sessions__cursor-cli_subagent-transcript.jsonl",
        )),
    ];
    fuzz_file("cursor-agent", &seeds, &dir.path().join("t.jsonl"));
}

#[test]
fn pi_workbuddy_and_hermes_records() {
    let dir = tempfile::tempdir().unwrap();
    let pi = [
        json!({"type": "session", "version": 3, "id": "p1", "timestamp": "2026-01-01T00:00:00Z", "cwd": "/w"}),
        json!({"type": "message", "id": "e1", "parentId": null, "timestamp": "2026-01-01T00:00:01Z", "message": {"role": "user", "content": [{"type": "text", "text": "hi"}]}}),
        json!({"type": "message", "id": "e2", "parentId": "e1", "timestamp": "2026-01-01T00:00:02Z", "message": {"role": "assistant", "content": [{"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": "ls"}}]}}),
        json!({"type": "message", "id": "e3", "parentId": "e2", "timestamp": "2026-01-01T00:00:03Z", "message": {"role": "toolResult", "toolCallId": "c1", "toolName": "bash", "content": [{"type": "text", "text": "a"}], "isError": false}}),
        json!({"type": "message", "id": "e4", "parentId": "e3", "timestamp": "2026-01-01T00:00:04Z", "message": {"role": "assistant", "content": [{"type": "text", "text": "done"}]}}),
    ];
    let chat = [
        json!({"role": "user", "content": "<system-reminder>x</system-reminder><user_query>hello</user_query>", "timestamp": "2026-01-01T00:00:00Z", "session_id": "h1"}),
        json!({"message": {"role": "assistant", "content": [{"type": "text", "text": "hi"}, {"type": "tool_use", "id": "t", "name": "x", "input": {}}]}}),
        json!({"type": "tool", "tool_call_id": "t", "content": "out"}),
        json!({"payload": {"role": "assistant", "content": {"text": "bye"}}}),
    ];
    let lines = |records: &[Value]| {
        records
            .iter()
            .map(|r| format!("{r}\n"))
            .collect::<String>()
            .into_bytes()
    };
    fuzz_file("pi", &[lines(&pi)], &dir.path().join("p.jsonl"));
    fuzz_file("workbuddy", &[lines(&chat)], &dir.path().join("w.jsonl"));
    fuzz_file("hermes", &[lines(&chat)], &dir.path().join("h.jsonl"));
}

#[test]
fn opencode_parts_and_messages() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("storage");
    copy_tree(&shared("opencode/agent-sessions__storage_v2"), &root);
    let mut targets: Vec<PathBuf> =
        cairn_importers::files_under(&root, &|p| cairn_importers::has_extension(p, "json"))
            .into_iter()
            .filter(|p| !p.starts_with(root.join("session")))
            .collect();
    targets.sort();
    let sessions = cairn_importers::files_under(&root.join("session"), &|p| {
        cairn_importers::has_extension(p, "json")
    });
    let source = source("opencode");
    let mut rng = Rng(42);
    let deadline = Instant::now() + seconds();
    let mut runs = 0;
    while Instant::now() < deadline {
        let target = &targets[rng.below(targets.len())];
        let original = std::fs::read(target).unwrap();
        std::fs::write(target, mutate(&original, &mut rng)).unwrap();
        for session in &sessions {
            let outcome = catch_unwind(AssertUnwindSafe(|| source.read(session)));
            assert!(
                outcome.is_ok(),
                "opencode panicked with {} mutated",
                target.display()
            );
        }
        std::fs::write(target, original).unwrap();
        runs += 1;
    }
    assert!(runs > 10);
}

#[test]
fn cursor_ide_values() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("state.vscdb");
    std::fs::copy(
        shared("cursor/SYNTHETIC_cursor-ide_globalStorage_state.vscdb"),
        &db,
    )
    .unwrap();
    let conn = rusqlite::Connection::open(&db).unwrap();
    let rows: Vec<(String, Vec<u8>)> = {
        let mut stmt = conn
            .prepare("SELECT key, CAST(value AS BLOB) FROM cursorDiskKV")
            .unwrap();
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .flatten()
            .collect()
    };
    let source = source("cursor");
    let mut rng = Rng(7);
    let deadline = Instant::now() + seconds();
    let mut runs = 0;
    while Instant::now() < deadline {
        let (key, value) = &rows[rng.below(rows.len())];
        let mutated = String::from_utf8_lossy(&mutate(value, &mut rng)).into_owned();
        conn.execute(
            "UPDATE cursorDiskKV SET value = ?2 WHERE key = ?1",
            rusqlite::params![key, mutated],
        )
        .unwrap();
        let outcome = catch_unwind(AssertUnwindSafe(|| source.read(&db)));
        assert!(
            outcome.is_ok(),
            "cursor panicked with {key} = {mutated:.200}"
        );
        conn.execute(
            "UPDATE cursorDiskKV SET value = ?2 WHERE key = ?1",
            rusqlite::params![key, value],
        )
        .unwrap();
        runs += 1;
    }
    assert!(runs > 10);
}

fn copy_tree(from: &Path, to: &Path) {
    for file in cairn_importers::files_under(from, &|_| true) {
        let target = to.join(file.strip_prefix(from).unwrap());
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::copy(&file, &target).unwrap();
    }
}

//! Hermes (no shared fixture: all built here): `state.db` with rewound rows, gateway JSONL
//! transcripts in their several record shapes, the same session in both read once, injected
//! prompts, a torn line, detection.

use std::path::Path;

use cairn_importers::sources::Hermes;
use cairn_importers::{stable_id, HistorySource};
use serde_json::json;

use crate::env_at;

/// A Hermes home with `state.db` (sessions s1, s2) and transcripts: `sessions/s1.jsonl` (s1
/// again), `sessions/session_s2.jsonl` (s2 again) and `sessions/telegram/s3.jsonl` (only there).
fn hermes_home(home: &Path) {
    std::fs::create_dir_all(home.join("sessions/telegram")).unwrap();
    let db = rusqlite::Connection::open(home.join("state.db")).unwrap();
    db.execute_batch(
        r#"PRAGMA journal_mode=WAL;
        CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT, model TEXT, model_config TEXT,
          cwd TEXT, title TEXT, started_at REAL);
        CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL,
          role TEXT NOT NULL, content TEXT, tool_call_id TEXT, tool_calls TEXT, tool_name TEXT,
          timestamp REAL NOT NULL, token_count INTEGER, finish_reason TEXT, reasoning TEXT,
          active INTEGER DEFAULT 1);
        INSERT INTO sessions VALUES ('s1', 'cli', 'm', NULL, '/home/me/proj1', 'Files', 1735689600);
        INSERT INTO sessions VALUES ('s2', 'cli', 'm', '{"cwd":"/srv/x"}', NULL, NULL, 1735689800);
        INSERT INTO messages (id, session_id, role, content, tool_call_id, tool_calls, tool_name, timestamp, reasoning, active) VALUES
          (1, 's1', 'user', 'list files', NULL, NULL, NULL, 1735689600.5, NULL, 1),
          (2, 's1', 'assistant', '', NULL,
             '[{"id":"call_a","type":"function","function":{"name":"terminal","arguments":"{\"command\":\"ls\"}"}}]',
             NULL, 1735689601, NULL, 1),
          (3, 's1', 'tool', 'a
b', 'call_a', NULL, 'terminal', 1735689602, NULL, 1),
          (4, 's1', 'assistant', 'Two files.', NULL, NULL, NULL, 1735689603, NULL, 1),
          (5, 's1', 'user', 'delete them', NULL, NULL, NULL, 1735689604, NULL, 0),
          (6, 's1', 'assistant', 'Deleted.', NULL, NULL, NULL, 1735689605, NULL, 0),
          (7, 's1', 'user', 'thanks', NULL, NULL, NULL, 1735689606, NULL, NULL),
          (8, 's2', 'user', 'ping', NULL, NULL, NULL, 1735689800, NULL, 1),
          (9, 's2', 'assistant', 'pong', NULL, NULL, NULL, 1735689801, 'trivial', 1);"#,
    )
    .unwrap();
    std::fs::write(
        home.join("sessions/s1.jsonl"),
        "{\"role\":\"user\",\"content\":\"list files\"}\n{\"role\":\"assistant\",\"content\":\"Two files.\"}\n",
    )
    .unwrap();
    std::fs::write(
        home.join("sessions/session_s2.jsonl"),
        "{\"role\":\"user\",\"content\":\"ping\"}\n",
    )
    .unwrap();
    let lines = [
        json!({"role": "session_meta", "cwd": "/home/me/proj", "model": "x", "platform": "telegram"}).to_string(),
        json!({"role": "user", "content": "hello", "timestamp": "2025-01-01T00:00:00Z", "id": "m1"}).to_string(),
        json!({"payload": {"role": "assistant", "content": [{"type": "text", "text": "Hi!"}]},
               "timestamp": "2025-01-01T00:00:01Z"})
        .to_string(),
        json!({"role": "user", "content": "Review the conversation above and consider saving to memory. Be brief."})
            .to_string(),
        json!({"role": "assistant", "content": "Saved 1 memory."}).to_string(),
        json!({"message": {"role": "user", "content": {"text":
            "[SYSTEM: The user has invoked the \"weather\" skill.]\n\nSkill text.\n\nThe user has provided the following instruction alongside the skill invocation: what's the weather"}},
               "timestamp": 1735689700})
        .to_string(),
        json!({"role": "assistant", "content": "It's sunny.", "surprise": {"nested": [1]}}).to_string(),
        json!({"role": "tool", "content": "orphan"}).to_string(),
        json!({"type": "weird_record", "data": 1}).to_string(),
        json!({"role": "assistant", "content": 42}).to_string(),
        "{\"role\":\"user\",\"content\":\"are yo".to_owned(),
    ];
    std::fs::write(home.join("sessions/telegram/s3.jsonl"), lines.join("\n")).unwrap();
}

fn source_at(home: &Path) -> Hermes {
    let mut env = env_at(Path::new("/nonexistent"));
    env.vars
        .insert("HERMES_HOME".into(), home.display().to_string());
    Hermes::new(&env)
}

#[test]
fn state_db_sessions_skip_rewound_rows() {
    let home = tempfile::tempdir().unwrap();
    hermes_home(home.path());
    let source = source_at(home.path());
    let conversations = source.read(&home.path().join("state.db")).unwrap();
    assert_eq!(conversations.len(), 2);

    let s1 = &conversations[0];
    assert_eq!(s1.id, "s1");
    assert_eq!(s1.title.as_deref(), Some("Files"));
    assert_eq!(s1.workspace.as_deref(), Some("/home/me/proj1"));
    assert_eq!(s1.malformed, 0);
    assert_eq!(
        s1.turns.len(),
        2,
        "the rewound 'delete them' rows are not the conversation"
    );
    let t = &s1.turns[0];
    assert_eq!(t.id, "1");
    assert_eq!(t.request, "list files");
    assert_eq!(t.started_at, 1_735_689_600_500);
    assert_eq!(t.ended_at, 1_735_689_603_000);
    assert_eq!(t.tool_calls.len(), 1);
    assert_eq!(t.tool_calls[0].id, "call_a");
    assert_eq!(t.tool_calls[0].name, "terminal");
    assert_eq!(t.tool_calls[0].input, json!({"command": "ls"}));
    assert_eq!(t.tool_calls[0].output.as_deref(), Some("a\nb"));
    assert_eq!(t.answer, "Two files.");
    assert!(t.complete);
    assert_eq!(s1.turns[1].id, "7");
    assert_eq!(s1.turns[1].request, "thanks");
    assert!(!s1.turns[1].complete, "no answer yet");

    let s2 = &conversations[1];
    assert_eq!(s2.id, "s2");
    assert_eq!(s2.workspace.as_deref(), Some("/srv/x"), "from model_config");
    assert_eq!(s2.turns.len(), 1);
    assert_eq!(s2.turns[0].id, "8");
    assert_eq!(s2.turns[0].answer, "pong");
    assert_eq!(s2.turns[0].reasoning.as_deref(), Some("trivial"));
    assert!(s2.turns[0].complete);
}

#[test]
fn a_transcript_of_a_session_in_state_db_reads_as_nothing() {
    let home = tempfile::tempdir().unwrap();
    hermes_home(home.path());
    let source = source_at(home.path());
    assert!(source
        .read(&home.path().join("sessions/s1.jsonl"))
        .unwrap()
        .is_empty());
    assert!(source
        .read(&home.path().join("sessions/session_s2.jsonl"))
        .unwrap()
        .is_empty());
    // Everything, once.
    let all: Vec<_> = source
        .files()
        .iter()
        .flat_map(|f| source.read(f).unwrap())
        .collect();
    let ids: Vec<&str> = all.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["s1", "s2", "s3"]);
}

#[test]
fn transcripts_in_every_record_shape_without_injected_prompts() {
    let home = tempfile::tempdir().unwrap();
    hermes_home(home.path());
    let source = source_at(home.path());
    let conversations = source
        .read(&home.path().join("sessions/telegram/s3.jsonl"))
        .unwrap();
    assert_eq!(conversations.len(), 1);
    let c = &conversations[0];
    assert_eq!(c.id, "s3");
    assert_eq!(
        c.workspace.as_deref(),
        Some("/home/me/proj"),
        "from the session_meta line"
    );
    assert_eq!(c.malformed, 1, "the torn last line");
    assert_eq!(c.turns.len(), 2);
    let t = &c.turns[0];
    assert_eq!(t.id, "m1");
    assert_eq!(t.request, "hello");
    assert_eq!(t.started_at, 1_735_689_600_000);
    assert_eq!(
        t.answer, "Hi!",
        "the review prompt and its reply are Hermes's, not the turn's"
    );
    assert!(t.complete);
    let t = &c.turns[1];
    assert_eq!(
        t.request, "what's the weather",
        "the skill preamble is injected"
    );
    assert_eq!(
        t.id,
        stable_id(&["s3", "1735689700000", "what's the weather"])
    );
    assert_eq!(t.answer, "It's sunny.");
    assert!(
        t.tool_calls.is_empty(),
        "a result with no call to go to is dropped"
    );
    assert!(t.complete);
}

#[test]
fn detection_follows_hermes_home_and_the_default() {
    let home = tempfile::tempdir().unwrap();
    assert!(!Hermes::new(&env_at(home.path())).detected());
    let default = home.path().join(".hermes");
    hermes_home(&default);
    let source = Hermes::new(&env_at(home.path()));
    assert!(source.detected());
    assert_eq!(
        source.files(),
        vec![
            default.join("state.db"),
            default.join("sessions/s1.jsonl"),
            default.join("sessions/session_s2.jsonl"),
            default.join("sessions/telegram/s3.jsonl"),
        ]
    );
    let elsewhere = home.path().join("hh");
    std::fs::create_dir_all(elsewhere.join("sessions")).unwrap();
    std::fs::write(elsewhere.join("sessions/x.jsonl"), "").unwrap();
    assert_eq!(
        source_at(&elsewhere).files(),
        vec![elsewhere.join("sessions/x.jsonl")]
    );
    let mut env = env_at(home.path());
    env.overrides.insert("hermes".into(), elsewhere.clone());
    assert_eq!(Hermes::new(&env).roots(), vec![elsewhere]);
}

#[test]
fn other_databases_read_as_nothing_and_a_minimal_schema_reads() {
    let dir = tempfile::tempdir().unwrap();
    let source = source_at(dir.path());
    let other = dir.path().join("other.db");
    rusqlite::Connection::open(&other)
        .unwrap()
        .execute_batch("CREATE TABLE notes (id INTEGER, body TEXT);")
        .unwrap();
    assert!(source.read(&other).unwrap().is_empty());

    let minimal = dir.path().join("state.db");
    rusqlite::Connection::open(&minimal)
        .unwrap()
        .execute_batch(
            "CREATE TABLE messages (session_id TEXT, role TEXT, content TEXT);
             INSERT INTO messages VALUES ('m', 'user', 'one'), ('m', 'assistant', 'two'),
               ('m', 'user', '[{\"type\":\"text\",\"text\":\"three\"},{\"type\":\"image_url\"}]');",
        )
        .unwrap();
    let c = &source.read(&minimal).unwrap()[0];
    assert_eq!(c.turns.len(), 2);
    assert_eq!(c.turns[0].id, "1", "the row id");
    assert_eq!(c.turns[0].answer, "two");
    assert_eq!(c.turns[1].request, "three");

    std::fs::write(dir.path().join("broken.db"), "this is not a database file").unwrap();
    assert!(source.read(&dir.path().join("broken.db")).is_err());
}

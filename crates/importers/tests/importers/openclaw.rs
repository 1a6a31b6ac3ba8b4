//! OpenClaw (no shared fixture: all built here): a conversation store, a memory plugin's chunk
//! store, OpenClaw's own search index (not conversations), damaged rows, detection.

use std::path::Path;

use cairn_importers::sources::OpenClaw;
use cairn_importers::HistorySource;
use serde_json::json;

use crate::env_at;

fn source() -> OpenClaw {
    OpenClaw::new(&env_at(Path::new("/nonexistent")))
}

fn db(path: &Path, sql: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    rusqlite::Connection::open(path)
        .unwrap()
        .execute_batch(sql)
        .unwrap();
}

const CONVERSATIONS: &str = r#"
    CREATE TABLE conversations (id TEXT PRIMARY KEY, workspace_path TEXT, created_at TEXT, title TEXT);
    CREATE TABLE messages (id TEXT PRIMARY KEY, conversation_id TEXT, role TEXT, content BLOB,
      created_at TEXT, model TEXT);
    INSERT INTO conversations VALUES ('conv-a', '/home/me/site', '2025-03-01T10:00:00Z', 'Deploy');
    INSERT INTO messages VALUES
      ('m5', 'conv-a', 'system', 'You are OpenClaw.', '2025-03-01T09:59:59Z', NULL),
      ('m1', 'conv-a', 'user', 'deploy the site', '2025-03-01T10:00:00Z', NULL),
      ('m2', 'conv-a', 'assistant',
        '[{"type":"thinking","thinking":"make has a deploy target"},{"type":"text","text":"Deploying."},{"type":"toolCall","id":"tc1","name":"exec","arguments":{"cmd":"make deploy"}},{"type":"sparkle","x":1}]',
        '2025-03-01T10:00:01Z', 'm'),
      ('m3', 'conv-a', 'tool', 'deployed ok', '2025-03-01T10:00:05Z', NULL),
      ('m4', 'conv-a', 'assistant', 'Done: it is live.', '2025-03-01T10:00:06Z', NULL),
      ('zz-user', 'conv-b', 'user', 'same instant, first', 1740823300, NULL),
      ('aa-asst', 'conv-b', 'assistant', 'same instant, second', 1740823300, NULL),
      ('m7', 'conv-b', NULL, 'a row with no role', 1740823301, NULL),
      ('m8', 'conv-b', 'user', 'are you there?', 1740823302000, NULL);
    INSERT INTO messages VALUES ('m9', 'conv-b', 'assistant', CAST(X'FFFE41' AS BLOB), 1740823303000, NULL);
"#;

#[test]
fn a_conversation_store_reads_in_time_order() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("conversations.db");
    db(&file, CONVERSATIONS);
    let conversations = source().read(&file).unwrap();
    assert_eq!(conversations.len(), 2);

    let a = &conversations[0];
    assert_eq!(a.id, "conv-a");
    assert_eq!(a.workspace.as_deref(), Some("/home/me/site"));
    assert_eq!(a.malformed, 0);
    assert_eq!(a.turns.len(), 1, "the system prompt is not a turn");
    let t = &a.turns[0];
    assert_eq!(t.id, "m1");
    assert_eq!(t.request, "deploy the site");
    assert_eq!(t.started_at, 1_740_823_200_000);
    assert_eq!(t.ended_at, 1_740_823_206_000);
    assert_eq!(t.reasoning.as_deref(), Some("make has a deploy target"));
    assert_eq!(t.answer, "Deploying.\n\nDone: it is live.");
    assert_eq!(t.tool_calls.len(), 1);
    assert_eq!(t.tool_calls[0].id, "tc1");
    assert_eq!(t.tool_calls[0].name, "exec");
    assert_eq!(t.tool_calls[0].input, json!({"cmd": "make deploy"}));
    assert_eq!(
        t.tool_calls[0].output.as_deref(),
        Some("deployed ok"),
        "a bare tool row goes to the waiting call"
    );
    assert!(t.complete);

    let b = &conversations[1];
    assert_eq!(b.id, "conv-b");
    assert_eq!(b.workspace, None, "no conversations row");
    assert_eq!(
        b.malformed, 2,
        "the row with no role and the content that is not UTF-8"
    );
    assert_eq!(b.turns.len(), 2);
    assert_eq!(
        b.turns[0].request, "same instant, first",
        "insertion order breaks the tie"
    );
    assert_eq!(b.turns[0].answer, "same instant, second");
    assert_eq!(b.turns[0].started_at, 1_740_823_300_000, "seconds");
    assert!(b.turns[0].complete);
    assert_eq!(b.turns[1].id, "m8");
    assert_eq!(b.turns[1].started_at, 1_740_823_302_000, "milliseconds");
    assert!(!b.turns[1].complete, "no answer yet");
}

const CHUNKS: &str = r#"
    CREATE TABLE chunks (id INTEGER PRIMARY KEY, session_key TEXT NOT NULL, turn_id INTEGER NOT NULL,
      seq INTEGER NOT NULL, role TEXT NOT NULL, content TEXT NOT NULL, created_at INTEGER NOT NULL,
      embedding BLOB, tokens INTEGER);
    INSERT INTO chunks (session_key, turn_id, seq, role, content, created_at) VALUES
      ('agent:main:main', 2, 0, 'user', 'thanks', 1740823400000),
      ('agent:main:main', 1, 2, 'assistant', 'Here is the summary.', 1740823310000),
      ('agent:main:main', 1, 1, 'user', 'meeting notes', 1740823300000),
      ('agent:main:main', 1, 0, 'user', 'summarize the', 1740823300000),
      ('agent:main:other', 7, 0, 'user', 'hello', 1740823500000),
      ('agent:main:other', 7, 1, 'assistant', '[{"type":"text","text":"Hi."}]', 1740823501000);
"#;

#[test]
fn a_memory_chunk_store_groups_by_session_and_turn() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("memory/lcm.sqlite");
    db(&file, CHUNKS);
    let conversations = source().read(&file).unwrap();
    assert_eq!(conversations.len(), 2);
    let main = &conversations[0];
    assert_eq!(main.id, "agent:main:main");
    assert_eq!(main.workspace, None);
    assert_eq!(main.turns.len(), 2);
    assert_eq!(main.turns[0].id, "1");
    assert_eq!(
        main.turns[0].request, "summarize the\nmeeting notes",
        "one message in two chunks"
    );
    assert_eq!(main.turns[0].answer, "Here is the summary.");
    assert_eq!(main.turns[0].started_at, 1_740_823_300_000);
    assert!(main.turns[0].complete);
    assert_eq!(main.turns[1].id, "2");
    assert_eq!(main.turns[1].request, "thanks");
    assert!(!main.turns[1].complete);
    let other = &conversations[1];
    assert_eq!(other.id, "agent:main:other");
    assert_eq!(other.turns.len(), 1);
    assert_eq!(other.turns[0].id, "7");
    assert_eq!(other.turns[0].answer, "Hi.");
}

#[test]
fn openclaws_own_search_index_and_other_databases_are_not_conversations() {
    let dir = tempfile::tempdir().unwrap();
    let index = dir.path().join("memory/main.sqlite");
    db(
        &index,
        "CREATE TABLE chunks (id TEXT PRIMARY KEY, path TEXT, source TEXT, start_line INTEGER,
           end_line INTEGER, hash TEXT, model TEXT, text TEXT, embedding TEXT, updated_at INTEGER);
         INSERT INTO chunks VALUES ('c', 'MEMORY.md', 'memory', 1, 3, 'h', 'm', 'notes', '[]', 1);",
    );
    assert!(source().read(&index).unwrap().is_empty());
    let both = dir.path().join("both.db");
    db(&both, &format!("{CONVERSATIONS}\n{CHUNKS}"));
    assert_eq!(
        source().read(&both).unwrap().len(),
        4,
        "a file may hold both stores"
    );
    std::fs::write(dir.path().join("bad.db"), "not a database, only words").unwrap();
    assert!(source().read(&dir.path().join("bad.db")).is_err());
}

#[test]
fn the_pure_reader_tolerates_drifting_content() {
    let m = |id: &str, role: &str, content: &str, at: i64| json!({"id": id, "role": role, "content": content, "created_at": at});
    let c = source().conversation(
        "k",
        Some("/nowhere/at/all".into()),
        &[
            m("1", "user", r#"{"weird": true}"#, 1),
            m(
                "2",
                "assistant",
                r#"[{"type":"tool_use","id":"t1","name":"read","input":{"p":"x"}}]"#,
                2,
            ),
            m(
                "3",
                "user",
                r#"[{"type":"tool_result","tool_use_id":"t1","content":"data"}]"#,
                3,
            ),
            m("4", "toolResult", "late and unpaired", 4),
            m("5", "critic", "who am I?", 5),
            m("6", "assistant", "[not json either", 6),
            json!({"id": 7, "role": "User", "content": [{"type": "text", "text": "as JSON"}], "created_at": "2025-03-01T10:00:00Z"}),
        ],
    );
    assert_eq!(c.workspace.as_deref(), Some("/nowhere/at/all"));
    assert_eq!(c.git_root, None);
    assert_eq!(c.turns.len(), 2);
    assert_eq!(c.turns[1].id, "7");
    assert_eq!(c.turns[1].request, "as JSON");
    assert_eq!(c.turns[1].started_at, 1_740_823_200_000);
    assert_eq!(
        c.turns[0].request, r#"{"weird": true}"#,
        "JSON that is not blocks is text"
    );
    assert_eq!(c.turns[0].tool_calls[0].output.as_deref(), Some("data"));
    assert_eq!(c.turns[0].answer, "[not json either");
    assert!(c.turns[0].complete);
}

#[test]
fn detection_finds_databases_but_not_the_workspace() {
    let home = tempfile::tempdir().unwrap();
    let state = home.path().join(".openclaw");
    let keep = [
        state.join("conversations.db"),
        state.join("memory/lcm.sqlite"),
    ];
    let skip = [
        state.join("workspace/app/data.db"),
        state.join("workspace-dev/x.sqlite"),
        state.join("extensions/mem/node_modules/pkg/test.db"),
        state.join(".cache/c.db"),
        state.join("conversations.db-wal"),
        state.join("agents/main/sessions/s.jsonl"),
    ];
    for f in keep.iter().chain(&skip) {
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        std::fs::write(f, "").unwrap();
    }
    let source = OpenClaw::new(&env_at(home.path()));
    assert!(source.detected());
    assert_eq!(source.files(), keep.to_vec());

    let mut env = env_at(home.path());
    env.vars.insert(
        "OPENCLAW_STATE_DIR".into(),
        state.join("memory").display().to_string(),
    );
    assert_eq!(
        OpenClaw::new(&env).files(),
        vec![state.join("memory/lcm.sqlite")]
    );
    let mut env = env_at(Path::new("/nonexistent"));
    env.overrides.insert("openclaw".into(), state.clone());
    assert_eq!(OpenClaw::new(&env).roots(), vec![state]);
    assert!(!OpenClaw::new(&env_at(Path::new("/nonexistent"))).detected());
}

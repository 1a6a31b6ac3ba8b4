//! Cursor: the IDE's `state.vscdb` (shared synthetic fixture and databases built here: workspace
//! links, inline conversations, damaged rows) and the agent CLI's JSONL transcripts.

use std::path::Path;

use cairn_importers::sources::{CursorAgent, CursorIde};
use cairn_importers::{stable_id, HistorySource};
use serde_json::json;

use crate::{env_at, shared};

fn ide() -> CursorIde {
    CursorIde::new(&env_at(Path::new("/nonexistent")))
}

fn agent() -> CursorAgent {
    CursorAgent::new(&env_at(Path::new("/nonexistent")))
}

#[test]
fn the_synthetic_ide_database_reads_as_one_chat() {
    let conversations = ide()
        .read(&shared(
            "cursor/SYNTHETIC_cursor-ide_globalStorage_state.vscdb",
        ))
        .unwrap();
    assert_eq!(conversations.len(), 1);
    let c = &conversations[0];
    assert_eq!(c.id, "724686cd-875e-47da-a90b-dbc3e523efb8");
    assert_eq!(c.title.as_deref(), Some("Hello in rust"));
    assert_eq!(c.workspace, None, "no workspaceStorage beside the fixture");
    assert_eq!(c.malformed, 0);
    assert_eq!(c.turns.len(), 1);
    let t = &c.turns[0];
    assert_eq!(t.id, "11111111-1111-4111-a111-111111111111");
    assert_eq!(t.request, "make a hello in rust");
    assert_eq!(t.answer, "Created `hello`; run it with `cargo run`.");
    assert_eq!(
        t.reasoning.as_deref(),
        Some("cargo new scaffolds a hello world")
    );
    assert_eq!(t.started_at, 1_780_272_000_000);
    assert_eq!(t.ended_at, 1_780_272_002_000);
    assert_eq!(t.tool_calls.len(), 1);
    let call = &t.tool_calls[0];
    assert_eq!(call.id, "tool_sh");
    assert_eq!(call.name, "run_terminal_command_v2");
    assert_eq!(call.input, json!({"command": "cargo new hello"}));
    assert_eq!(
        call.output.as_deref(),
        Some("Created binary (application) `hello` package\n")
    );
    assert!(!call.is_error);
    assert!(t.complete);
}

/// A global `state.vscdb` with the given `cursorDiskKV` rows (values as TEXT, or BLOB when the
/// key ends with `#blob`, which is then dropped).
fn global_db(path: &Path, rows: &[(&str, String)]) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let db = rusqlite::Connection::open(path).unwrap();
    db.execute_batch(
        "CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB);
         CREATE TABLE cursorDiskKV (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB);",
    )
    .unwrap();
    for (key, value) in rows {
        match key.strip_suffix("#blob") {
            Some(key) => db.execute(
                "INSERT INTO cursorDiskKV VALUES (?1, ?2)",
                rusqlite::params![key, value.as_bytes()],
            ),
            None => db.execute(
                "INSERT INTO cursorDiskKV VALUES (?1, ?2)",
                rusqlite::params![key, value],
            ),
        }
        .unwrap();
    }
}

fn composer(id: &str, name: &str, bubbles: &[(&str, i64)]) -> String {
    let headers: Vec<_> = bubbles
        .iter()
        .map(|(b, t)| json!({"bubbleId": b, "type": t}))
        .collect();
    json!({"composerId": id, "name": name, "createdAt": 1_700_000_000_000i64,
           "fullConversationHeadersOnly": headers})
    .to_string()
}

fn bubble(kind: i64, id: &str, text: &str, at: &str) -> String {
    json!({"type": kind, "bubbleId": id, "text": text, "createdAt": at}).to_string()
}

#[test]
fn chats_link_to_their_workspace_folder() {
    let user = tempfile::tempdir().unwrap();
    let global = user.path().join("globalStorage/state.vscdb");
    global_db(
        &global,
        &[
            (
                "composerData:c1",
                composer("c1", "linked", &[("b1", 1), ("b2", 2)]),
            ),
            (
                "bubbleId:c1:b1",
                bubble(1, "b1", "what is here?", "2025-01-01T00:00:00Z"),
            ),
            (
                "bubbleId:c1:b2",
                bubble(2, "b2", "A README.", "2025-01-01T00:00:05Z"),
            ),
            (
                "composerData:c2",
                composer("c2", "unlinked", &[("b3", 1), ("b4", 2)]),
            ),
            (
                "bubbleId:c2:b3",
                bubble(1, "b3", "hello", "2025-01-02T00:00:00Z"),
            ),
            (
                "bubbleId:c2:b4",
                bubble(2, "b4", "hi", "2025-01-02T00:00:01Z"),
            ),
            ("composerData:empty", composer("empty", "never used", &[])),
        ],
    );
    let ws = user.path().join("workspaceStorage/0123abcd");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(
        ws.join("workspace.json"),
        r#"{"folder":"file:///home/me/My%20Project"}"#,
    )
    .unwrap();
    let db = rusqlite::Connection::open(ws.join("state.vscdb")).unwrap();
    db.execute_batch(
        r#"CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB);
           INSERT INTO ItemTable VALUES ('composer.composerData',
             '{"allComposers":[{"composerId":"c1","name":"linked"}],"selectedComposerIds":["c1"]}');"#,
    )
    .unwrap();
    drop(db);
    // A workspace folder with no database, and one without workspace.json: skipped.
    std::fs::create_dir_all(user.path().join("workspaceStorage/nodb")).unwrap();
    std::fs::write(
        user.path().join("workspaceStorage/nodb/workspace.json"),
        r#"{"folder":"file:///elsewhere"}"#,
    )
    .unwrap();

    let mut env = env_at(Path::new("/nonexistent"));
    env.overrides
        .insert("cursor".into(), user.path().to_path_buf());
    let source = CursorIde::new(&env);
    assert_eq!(source.files(), vec![global.clone()]);
    let mut conversations = source.read(&global).unwrap();
    conversations.sort_by(|a, b| a.id.cmp(&b.id));
    assert_eq!(conversations.len(), 2, "the empty chat is left out");
    assert_eq!(conversations[0].id, "c1");
    assert_eq!(
        conversations[0].workspace.as_deref(),
        Some("/home/me/My Project")
    );
    assert_eq!(conversations[0].turns[0].request, "what is here?");
    assert_eq!(conversations[0].turns[0].answer, "A README.");
    assert_eq!(conversations[1].id, "c2");
    assert_eq!(conversations[1].workspace, None);
}

#[test]
fn older_inline_conversations_and_damaged_rows() {
    let dir = tempfile::tempdir().unwrap();
    let global = dir.path().join("globalStorage/state.vscdb");
    let inline = json!({
        "composerId": "old", "name": "old chat", "createdAt": 1_600_000_000_000i64,
        "conversation": [
            {"type": 1, "bubbleId": "o1", "text": "explain this"},
            {"type": 2, "bubbleId": "o2", "text": "It parses JSON.", "thinking": {"text": "look at it"}},
            {"type": 1, "bubbleId": "o3", "text": "and now?"}
        ]
    });
    global_db(
        &global,
        &[
            ("composerData:old", inline.to_string()),
            // Schema drift: extra fields, a BLOB value, a bubble type nobody knows, a header
            // without a stored bubble, a bubble that does not parse (cut short).
            (
                "composerData:new#blob",
                composer("new", "new chat", &[("n1", 1), ("n2", 2), ("n3", 7), ("gone", 2), ("n4", 2), ("n5", 1)]),
            ),
            (
                "bubbleId:new:n1#blob",
                json!({"type": 1, "bubbleId": "n1", "text": "run the tests", "createdAt": 1_700_000_001_000i64,
                       "richText": {"root": {}}, "unknownField": [1, 2, 3]})
                .to_string(),
            ),
            (
                "bubbleId:new:n2",
                json!({"type": 2, "bubbleId": "n2", "text": "", "createdAt": 1_700_000_002_000i64,
                       "toolFormerData": {"toolCallId": "t9", "name": "run_terminal_command_v2",
                         "params": "{\"command\":\"cargo test\"}", "status": "error",
                         "result": "{\"output\":\"1 failed\",\"exitCode\":101}"}})
                .to_string(),
            ),
            ("bubbleId:new:n3", json!({"type": 7, "bubbleId": "n3", "text": "a status line"}).to_string()),
            ("bubbleId:new:n4", r#"{"type": 2, "bubbleId": "n4", "text": "One test fa"#.to_owned()),
            ("bubbleId:new:n5", bubble(1, "n5", "fix it", "2023-11-14T22:13:30Z")),
            ("composerData:broken", "{not json".to_owned()),
        ],
    );
    let mut conversations = ide().read(&global).unwrap();
    conversations.sort_by(|a, b| a.id.cmp(&b.id));
    assert_eq!(conversations.len(), 3);

    let broken = &conversations[0];
    assert_eq!(broken.id, "broken");
    assert_eq!(broken.malformed, 1);
    assert!(broken.turns.is_empty());

    let new = &conversations[1];
    assert_eq!(new.id, "new");
    assert_eq!(new.malformed, 1, "the bubble cut short");
    assert_eq!(new.turns.len(), 2);
    assert_eq!(new.turns[0].id, "n1");
    assert_eq!(new.turns[0].request, "run the tests");
    assert_eq!(new.turns[0].answer, "");
    assert_eq!(new.turns[0].tool_calls[0].id, "t9");
    assert_eq!(
        new.turns[0].tool_calls[0].input,
        json!({"command": "cargo test"})
    );
    assert_eq!(
        new.turns[0].tool_calls[0].output.as_deref(),
        Some("1 failed")
    );
    assert!(new.turns[0].tool_calls[0].is_error);
    assert!(new.turns[0].complete, "the person spoke again");
    assert_eq!(new.turns[1].id, "n5");
    assert_eq!(new.turns[1].started_at, 1_700_000_010_000);
    assert!(!new.turns[1].complete, "no answer yet");

    let old = &conversations[2];
    assert_eq!(old.id, "old");
    assert_eq!(old.title.as_deref(), Some("old chat"));
    assert_eq!(old.turns.len(), 2);
    assert_eq!(old.turns[0].id, "o1");
    assert_eq!(old.turns[0].answer, "It parses JSON.");
    assert_eq!(old.turns[0].reasoning.as_deref(), Some("look at it"));
    assert_eq!(
        old.turns[0].started_at, 1_600_000_000_000,
        "no bubble time: the chat's"
    );
    assert!(old.turns[0].complete);
    assert_eq!(old.turns[1].request, "and now?");
    assert!(!old.turns[1].complete);
}

#[test]
fn ide_detection_follows_the_config_folder_and_the_override() {
    let home = tempfile::tempdir().unwrap();
    let none = CursorIde::new(&env_at(home.path()));
    assert!(!none.detected());
    assert!(none.files().is_empty());

    let global = home
        .path()
        .join(".config/Cursor/User/globalStorage/state.vscdb");
    std::fs::create_dir_all(global.parent().unwrap()).unwrap();
    std::fs::write(&global, "").unwrap();
    if cfg!(target_os = "linux") {
        let source = CursorIde::new(&env_at(home.path()));
        assert!(source.detected());
        assert_eq!(source.files(), vec![global.clone()]);
        let mut env = env_at(home.path());
        env.vars.insert(
            "XDG_CONFIG_HOME".into(),
            home.path().join("cfg").display().to_string(),
        );
        assert_eq!(
            CursorIde::new(&env).roots(),
            vec![home.path().join("cfg/Cursor/User")]
        );
    }
    let mut env = env_at(Path::new("/nonexistent"));
    env.overrides
        .insert("cursor".into(), home.path().join(".config/Cursor/User"));
    assert_eq!(CursorIde::new(&env).files(), vec![global]);
}

#[test]
fn a_file_that_is_not_a_database_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("state.vscdb");
    std::fs::write(&file, "plain text, no SQLite header here").unwrap();
    assert!(ide().read(&file).is_err());
    // A database without Cursor's table: nothing, not an error.
    let other = dir.path().join("other.vscdb");
    rusqlite::Connection::open(&other)
        .unwrap()
        .execute_batch("CREATE TABLE ItemTable (key TEXT, value BLOB);")
        .unwrap();
    assert!(ide().read(&other).unwrap().is_empty());
}

#[test]
fn the_cli_transcript_reads_as_two_turns() {
    let conversations = agent()
        .read(&shared(
            "cursor/agent-sessions__cursor-cli_agent-transcript.jsonl",
        ))
        .unwrap();
    assert_eq!(conversations.len(), 1);
    let c = &conversations[0];
    let id = "agent-sessions__cursor-cli_agent-transcript";
    assert_eq!(c.id, id);
    assert_eq!(c.workspace, None);
    assert_eq!(c.malformed, 0);
    assert_eq!(c.turns.len(), 2);

    let t = &c.turns[0];
    assert_eq!(t.id, stable_id(&[id, "0", "run ls command"]));
    assert_eq!(t.request, "run ls command");
    assert_eq!(
        t.answer,
        "Running the ls command for you.\n\nHere are the directory contents:\n\n```\ntotal 0\n\
         drwxrwxrwt  12 root  wheel  384 Jan  1 00:00 .\ndrwxr-xr-x   6 root  wheel  192 Jan  1 00:00 ..\n```"
    );
    assert_eq!(t.tool_calls.len(), 1);
    assert_eq!(t.tool_calls[0].name, "Shell");
    assert_eq!(
        t.tool_calls[0].input,
        json!({"command": "ls -la /tmp", "description": "List directory contents"})
    );
    assert_eq!(
        t.tool_calls[0].output, None,
        "the transcript holds no results"
    );
    assert!(t.complete);
    assert_eq!(t.started_at, 0, "the format has no times");

    let t = &c.turns[1];
    assert_eq!(t.id, stable_id(&[id, "0", "now show me the git status"]));
    assert_eq!(t.request, "now show me the git status");
    // "[REDACTED]" stands for text the CLI withheld: not words to keep.
    assert_eq!(
        t.answer,
        "The repository is clean — no uncommitted changes."
    );
    assert_eq!(t.tool_calls.len(), 1);
    assert_eq!(t.tool_calls[0].name, "Shell");
    assert_eq!(
        t.tool_calls[0].input,
        json!({"command": "git status", "description": "Check git status"})
    );
    assert!(t.complete);
}

#[test]
fn the_cli_subagent_transcript_reads_as_one_turn() {
    let c = &agent()
        .read(&shared(
            "cursor/agent-sessions__cursor-cli_subagent-transcript.jsonl",
        ))
        .unwrap()[0];
    assert_eq!(c.id, "agent-sessions__cursor-cli_subagent-transcript");
    assert_eq!(c.turns.len(), 1);
    let t = &c.turns[0];
    assert_eq!(
        t.request,
        "Run ls -la in the workspace directory and return the output."
    );
    assert_eq!(t.answer, "Done. The directory has 12 entries.");
    assert_eq!(t.tool_calls.len(), 1);
    assert_eq!(t.tool_calls[0].name, "Shell");
    assert_eq!(
        t.tool_calls[0].input,
        json!({"command": "ls -la /tmp", "description": "List workspace files"})
    );
    assert!(t.complete);
}

const OWN_TRANSCRIPT: &str = r#"{"role":"user","message":{"content":[{"type":"text","text":"<user_info>\nOS: linux\nShell: bash\n</user_info>\n<user_query>\ncontinue\n</user_query>"}]}}
{"role":"assistant","message":{"content":[{"type":"thinking","thinking":"what next"},{"type":"tool_use","id":"tu_1","name":"Read","input":{"path":"a.rs"}}]},"extra":{"ignored":true}}
{"role":"user","message":{"content":[{"type":"tool_result","tool_use_id":"tu_1","content":[{"type":"text","text":"fn main() {}"}]}]}}
{"role":"assistant","message":{"content":[{"type":"image","data":"…"},{"type":"text","text":"It is empty."}]}}
{"role":"system","message":{"content":"you are an agent"}}
{"role":"user","message":{"content":"<system_reminder>be brief</system_reminder>\ncontinue"}}
{"role":"assistant","message":{"content":[{"type":"text","text":"Continuing."}]}}
{"role":"user","message":{"content":[{"type":"text","text":"<user_query>and the tests?</user_query>"}]}}
{"role":"assistant","message":{"content":[{"type":"text","text":"Running th"#;

#[test]
fn cli_injected_blocks_repeats_drift_and_a_torn_line() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("chat-1/subagents/sub-9.jsonl");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, OWN_TRANSCRIPT).unwrap();
    let c = &agent().read(&file).unwrap()[0];
    assert_eq!(
        c.id, "chat-1:sub-9",
        "a sub-agent belongs to its parent chat"
    );
    assert_eq!(c.malformed, 1, "the torn last line");
    assert_eq!(c.turns.len(), 3);
    assert_eq!(
        c.turns[0].request, "continue",
        "the user_info block is injected"
    );
    assert_eq!(c.turns[0].reasoning.as_deref(), Some("what next"));
    assert_eq!(c.turns[0].tool_calls[0].id, "tu_1");
    assert_eq!(
        c.turns[0].tool_calls[0].output.as_deref(),
        Some("fn main() {}")
    );
    assert_eq!(c.turns[0].answer, "It is empty.");
    assert!(c.turns[0].complete);
    // The same words again: told apart by how often they came before, not by line.
    assert_eq!(
        c.turns[1].request, "continue",
        "the reminder block is injected"
    );
    assert_eq!(c.turns[0].id, stable_id(&["chat-1:sub-9", "0", "continue"]));
    assert_eq!(
        c.turns[1].id,
        stable_id(&["chat-1:sub-9", "0", "continue", "2"])
    );
    assert_eq!(c.turns[1].answer, "Continuing.");
    assert_eq!(c.turns[2].request, "and the tests?");
    assert!(
        !c.turns[2].complete,
        "the answer was cut off with the torn line"
    );
}

#[test]
fn cli_detection_finds_transcripts_under_projects() {
    let home = tempfile::tempdir().unwrap();
    let projects = home.path().join(".cursor/projects");
    let a = projects.join("home-me-app/agent-transcripts/c1.jsonl");
    let b = projects.join("home-me-app/agent-transcripts/c2/c2.jsonl");
    let sub = projects.join("home-me-app/agent-transcripts/c2/subagents/s1.jsonl");
    let other = projects.join("home-me-app/mcp-logs/log.jsonl");
    for f in [&a, &b, &sub, &other] {
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        std::fs::write(f, "").unwrap();
    }
    let source = CursorAgent::new(&env_at(home.path()));
    assert!(source.detected());
    assert_eq!(source.files(), vec![a.clone(), b.clone(), sub.clone()]);

    let mut env = env_at(Path::new("/nonexistent"));
    env.overrides
        .insert("cursor-agent".into(), projects.join("home-me-app"));
    assert_eq!(CursorAgent::new(&env).files(), vec![a, b, sub]);
    assert!(!CursorAgent::new(&env_at(Path::new("/nonexistent"))).detected());
}

//! OpenCode: the shared `storage/` fixture, the v1.2 SQLite database (built here with the same
//! data), a session in both read once, damaged files, injected parts, detection.

use std::path::Path;

use cairn_importers::sources::OpenCode;
use cairn_importers::{HistorySource, ImportedConversation};
use serde_json::json;

use crate::{env_at, shared};

const FIXTURE: &str = "opencode/agent-sessions__storage_v2";

/// A source whose folder is `root` (a data folder or a `storage/` folder).
fn source_at(root: &Path) -> OpenCode {
    let mut env = env_at(Path::new("/nonexistent"));
    env.overrides.insert("opencode".into(), root.to_path_buf());
    OpenCode::new(&env)
}

fn read_all(source: &OpenCode) -> Vec<ImportedConversation> {
    source
        .files()
        .iter()
        .flat_map(|f| source.read(f).unwrap())
        .collect()
}

/// The fixture's two sessions, as read from any layout.
fn assert_fixture_sessions(conversations: &[ImportedConversation]) {
    assert_eq!(conversations.len(), 2);
    let large = conversations
        .iter()
        .find(|c| c.id == "s_stage0_large")
        .unwrap();
    let small = conversations
        .iter()
        .find(|c| c.id == "s_stage0_small")
        .unwrap();

    assert_eq!(small.title.as_deref(), Some("OpenCode Small"));
    assert_eq!(small.workspace.as_deref(), Some("/tmp/repo"));
    assert_eq!(small.malformed, 0);
    assert_eq!(small.turns.len(), 1);
    let t = &small.turns[0];
    assert_eq!(t.id, "m_user_small");
    assert_eq!(t.request, "Hello");
    assert_eq!(t.answer, "Found 2 files.");
    assert_eq!(t.started_at, 1_730_000_001_000);
    assert_eq!(t.ended_at, 1_730_000_003_100);
    assert_eq!(t.tool_calls.len(), 1);
    assert_eq!(t.tool_calls[0].id, "call_1");
    assert_eq!(t.tool_calls[0].name, "bash");
    assert_eq!(
        t.tool_calls[0].input,
        json!({"command": "ls", "cwd": "/tmp/repo"})
    );
    assert_eq!(t.tool_calls[0].output.as_deref(), Some("a.txt\nb.txt\n"));
    assert!(!t.tool_calls[0].is_error);
    assert_eq!(t.reasoning, None);
    assert!(t.complete);

    assert_eq!(large.title.as_deref(), Some("OpenCode Large"));
    assert_eq!(large.workspace.as_deref(), Some("/tmp/large"));
    assert_eq!(large.malformed, 0);
    assert_eq!(large.turns.len(), 2);
    let (first, second) = (&large.turns[0], &large.turns[1]);
    assert_eq!(first.id, "m_user_large_1");
    assert_eq!(first.request, "Step 1");
    // The aborted reply: a failed command, reasoning, and only a synthetic text part (OpenCode's
    // own "Command failed…" note), which is nobody's words.
    assert_eq!(first.answer, "");
    assert_eq!(first.tool_calls.len(), 1);
    assert_eq!(first.tool_calls[0].id, "call_large_1");
    assert_eq!(first.tool_calls[0].name, "bash");
    assert_eq!(
        first.tool_calls[0].input,
        json!({"command": "ls /non-existent-directory", "cwd": "/tmp/large"})
    );
    assert_eq!(
        first.tool_calls[0].output.as_deref(),
        Some("ls: /non-existent-directory: No such file or directory\n")
    );
    assert_eq!(
        first.reasoning.as_deref(),
        Some("Investigating failing command.")
    );
    assert!(first.complete, "the person moved on: the turn ended");
    assert_eq!(second.id, "m_user_large_2");
    assert_eq!(second.request, "Step 2");
    assert_eq!(second.answer, "Ok");
    assert!(second.tool_calls.is_empty());
    assert!(second.complete);
}

#[test]
fn the_storage_fixture_reads_as_two_sessions() {
    let source = source_at(&shared(FIXTURE));
    let files = source.files();
    let names: Vec<String> = files
        .iter()
        .map(|f| f.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        ["ses_s_stage0_large.json", "ses_s_stage0_small.json"]
    );
    for file in &files {
        assert_eq!(
            source.read(file).unwrap().len(),
            1,
            "one conversation per session file"
        );
    }
    assert_fixture_sessions(&read_all(&source));
}

/// The fixture's JSON files as `(relative path, JSON)`.
fn fixture_json() -> Vec<(String, serde_json::Value)> {
    let root = shared(FIXTURE);
    let mut out = Vec::new();
    let mut stack = vec![root.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "json") {
                let rel = path
                    .strip_prefix(&root)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                out.push((
                    rel,
                    serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap(),
                ));
            }
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// A v1.2 database (the columns OpenCode's schema declares) holding the fixture's data.
fn build_db(path: &Path) {
    let db = rusqlite::Connection::open(path).unwrap();
    db.execute_batch(
        "PRAGMA journal_mode=WAL;
         CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT NOT NULL, workspace_id TEXT,
           parent_id TEXT, slug TEXT NOT NULL, directory TEXT NOT NULL, title TEXT NOT NULL,
           version TEXT NOT NULL, share_url TEXT, time_created INTEGER NOT NULL,
           time_updated INTEGER NOT NULL, time_compacting INTEGER, time_archived INTEGER);
         CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT NOT NULL,
           time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL);
         CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT NOT NULL, session_id TEXT NOT NULL,
           time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL);",
    )
    .unwrap();
    let mut seq = 0;
    for (rel, mut v) in fixture_json() {
        let obj = v.as_object_mut().unwrap();
        let id = obj["id"].as_str().unwrap().to_owned();
        if rel.starts_with("session/") {
            db.execute(
                "INSERT INTO session VALUES (?1, ?2, NULL, NULL, ?3, ?4, ?5, ?6, NULL, ?7, ?7, NULL, NULL)",
                rusqlite::params![
                    id,
                    obj["projectID"].as_str(),
                    obj.get("slug").and_then(serde_json::Value::as_str).unwrap_or("slug"),
                    obj["directory"].as_str(),
                    obj["title"].as_str(),
                    obj["version"].as_str(),
                    obj["time"]["created"].as_i64(),
                ],
            )
            .unwrap();
        } else if rel.starts_with("message/") {
            let session = obj.remove("sessionID").unwrap();
            obj.remove("id");
            let created = obj["time"]["created"].as_i64();
            db.execute(
                "INSERT INTO message VALUES (?1, ?2, ?3, ?3, ?4)",
                rusqlite::params![id, session.as_str(), created, v.to_string()],
            )
            .unwrap();
        } else {
            // Part ids sort in creation order in OpenCode; the fixture's do not, so give each a
            // sortable id in its file order, as OpenCode would have.
            let message = rel.split('/').nth(1).unwrap().to_owned();
            obj.remove("id");
            obj.remove("messageID");
            obj.remove("sessionID");
            seq += 1;
            // A BLOB value: the importer reads TEXT and BLOB alike.
            db.execute(
                "INSERT INTO part VALUES (?1, ?2, 'x', 0, 0, ?3)",
                rusqlite::params![format!("prt_{seq:04}"), message, v.to_string().into_bytes()],
            )
            .unwrap();
        }
    }
}

#[test]
fn the_v1_2_database_reads_like_the_storage_folder() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("opencode");
    std::fs::create_dir_all(&data).unwrap();
    build_db(&data.join("opencode.db"));
    let source = source_at(&data);
    assert_eq!(source.files(), vec![data.join("opencode.db")]);
    assert_fixture_sessions(&source.read(&data.join("opencode.db")).unwrap());
}

#[test]
fn a_session_in_the_database_and_in_storage_is_read_once() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("opencode");
    let storage = data.join("storage");
    for (rel, v) in fixture_json() {
        let path = storage.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, v.to_string()).unwrap();
    }
    build_db(&data.join("opencode.db"));
    let source = source_at(&data);
    let files = source.files();
    assert_eq!(
        files.len(),
        3,
        "the database and two session files: {files:?}"
    );
    for file in files
        .iter()
        .filter(|f| f.extension().is_some_and(|e| e == "json"))
    {
        assert!(
            source.read(file).unwrap().is_empty(),
            "{} is in the database",
            file.display()
        );
    }
    assert_fixture_sessions(&read_all(&source));
}

/// A storage folder with one session of the given messages and parts.
fn write_storage(root: &Path, messages: &[(&str, &str)], parts: &[(&str, &str, &str)]) {
    let write = |rel: String, text: &str| {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write(
        "session/p1/ses_a.json".into(),
        r#"{"id":"ses_a","directory":"/work/a","title":"A","time":{"created":1}}"#,
    );
    for (id, text) in messages {
        write(format!("message/ses_a/{id}.json"), text);
    }
    for (message, id, text) in parts {
        write(format!("part/{message}/{id}.json"), text);
    }
}

#[test]
fn a_torn_part_file_is_counted_and_the_earlier_turns_stay() {
    let dir = tempfile::tempdir().unwrap();
    write_storage(
        dir.path(),
        &[
            (
                "msg_1",
                r#"{"id":"msg_1","role":"user","time":{"created":1000}}"#,
            ),
            (
                "msg_2",
                r#"{"id":"msg_2","role":"assistant","time":{"created":2000}}"#,
            ),
            (
                "msg_3",
                r#"{"id":"msg_3","role":"user","time":{"created":3000}}"#,
            ),
            ("msg_4", r#"{"id":"msg_4","role":"assistant","time":{"cre"#),
        ],
        &[
            (
                "msg_1",
                "prt_1",
                r#"{"type":"text","text":"first question"}"#,
            ),
            ("msg_2", "prt_2", r#"{"type":"text","text":"first answer"}"#),
            (
                "msg_3",
                "prt_3",
                r#"{"type":"text","text":"second question"}"#,
            ),
            ("msg_4", "prt_4", r#"{"type":"text","text":"second ans"#),
        ],
    );
    let source = source_at(dir.path());
    let conversations = read_all(&source);
    assert_eq!(conversations.len(), 1);
    let c = &conversations[0];
    assert_eq!(c.malformed, 1, "the half-written message file");
    assert_eq!(c.turns.len(), 2);
    assert_eq!(c.turns[0].answer, "first answer");
    assert!(c.turns[0].complete);
    assert_eq!(c.turns[1].request, "second question");
    assert!(!c.turns[1].complete, "no answer yet: left for a later sync");
}

#[test]
fn schema_drift_is_tolerated_and_injected_parts_left_out() {
    let dir = tempfile::tempdir().unwrap();
    write_storage(
        dir.path(),
        &[
            (
                "msg_1",
                r#"{"id":"msg_1","role":"user","time":{"created":1000},"newField":{"x":[1,2]}}"#,
            ),
            (
                "msg_2",
                r#"{"id":"msg_2","role":"assistant","time":{"created":"2024-10-27T03:35:02Z"}}"#,
            ),
            (
                "msg_3",
                r#"{"id":"msg_3","role":"moderator","time":{"created":2500}}"#,
            ),
        ],
        &[
            (
                "msg_1",
                "prt_1",
                r#"{"type":"text","text":"fix the build"}"#,
            ),
            (
                "msg_1",
                "prt_2",
                r#"{"type":"text","text":"Called the Read tool with {\"path\":\"a.rs\"}","synthetic":true}"#,
            ),
            (
                "msg_1",
                "prt_3",
                r#"{"type":"file","url":"file:///work/a/a.rs"}"#,
            ),
            ("msg_2", "prt_1", r#"{"type":"hologram","beam":true}"#),
            ("msg_2", "prt_2", r#"{"type":"text","text":42}"#),
            (
                "msg_2",
                "prt_3",
                r#"{"type":"tool","callID":"c1","tool":"edit","state":{"status":"error","input":{"file":"a.rs"},"error":"no such file"}}"#,
            ),
            (
                "msg_2",
                "prt_4",
                r#"{"type":"tool","callID":"c2","tool":"bash","state":"weird"}"#,
            ),
            (
                "msg_2",
                "prt_5",
                r#"{"type":"text","text":"Done.","time":{"start":1730000000000}}"#,
            ),
            (
                "msg_3",
                "prt_1",
                r#"{"type":"text","text":"not a role we know"}"#,
            ),
        ],
    );
    let source = source_at(dir.path());
    let c = &read_all(&source)[0];
    assert_eq!(c.id, "ses_a");
    assert_eq!(c.workspace.as_deref(), Some("/work/a"));
    assert_eq!(c.malformed, 0);
    assert_eq!(c.turns.len(), 1);
    let t = &c.turns[0];
    assert_eq!(t.id, "msg_1");
    assert_eq!(
        t.request, "fix the build",
        "the synthetic part is OpenCode's, not the person's"
    );
    assert_eq!(t.answer, "Done.");
    assert_eq!(t.tool_calls.len(), 2);
    assert_eq!(t.tool_calls[0].name, "edit");
    assert_eq!(t.tool_calls[0].output.as_deref(), Some("no such file"));
    assert!(t.tool_calls[0].is_error);
    assert_eq!(t.tool_calls[1].name, "bash");
    assert_eq!(t.tool_calls[1].output, None);
    assert!(t.complete);
}

#[test]
fn detection_follows_xdg_data_home_and_the_default() {
    let home = tempfile::tempdir().unwrap();
    let default_data = home.path().join(".local/share/opencode");
    std::fs::create_dir_all(default_data.join("storage/session/p")).unwrap();
    std::fs::write(default_data.join("storage/session/p/ses_1.json"), "{}").unwrap();
    std::fs::write(default_data.join("opencode.db"), "").unwrap();
    std::fs::write(default_data.join("opencode.db-wal"), "").unwrap();
    let source = OpenCode::new(&env_at(home.path()));
    assert!(source.detected());
    assert_eq!(
        source.files(),
        vec![
            default_data.join("opencode.db"),
            default_data.join("storage/session/p/ses_1.json")
        ]
    );

    let xdg = home.path().join("xdg");
    std::fs::create_dir_all(xdg.join("opencode")).unwrap();
    std::fs::write(xdg.join("opencode/opencode.db"), "").unwrap();
    let mut env = env_at(home.path());
    env.vars
        .insert("XDG_DATA_HOME".into(), xdg.display().to_string());
    let source = OpenCode::new(&env);
    assert_eq!(source.roots(), vec![xdg.join("opencode")]);
    assert_eq!(source.files(), vec![xdg.join("opencode/opencode.db")]);

    let empty = tempfile::tempdir().unwrap();
    assert!(!OpenCode::new(&env_at(empty.path())).detected());
}

#[test]
fn a_file_that_is_not_a_database_is_an_error_and_an_unparsable_session_is_counted() {
    let dir = tempfile::tempdir().unwrap();
    let source = source_at(dir.path());
    std::fs::write(
        dir.path().join("opencode.db"),
        "not sqlite at all, just text",
    )
    .unwrap();
    assert!(source.read(&dir.path().join("opencode.db")).is_err());
    let session = dir.path().join("storage/session/p/ses_x.json");
    std::fs::create_dir_all(session.parent().unwrap()).unwrap();
    std::fs::write(&session, "{\"id\":").unwrap();
    let conversations = source.read(&session).unwrap();
    assert_eq!(conversations[0].malformed, 1);
    assert!(conversations[0].turns.is_empty());
}

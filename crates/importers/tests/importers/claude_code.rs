//! Claude Code transcripts: turns, tool pairing, branches, sub-agents, meta records, torn lines.

use std::path::Path;

use cairn_importers::sources::ClaudeCode;
use cairn_importers::{HistorySource, ImportedConversation};
use serde_json::json;

use crate::{env_at, shared};

fn source() -> ClaudeCode {
    ClaudeCode::new(&env_at(Path::new("/nonexistent")))
}

fn read(path: &Path) -> ImportedConversation {
    let mut conversations = source().read(path).unwrap();
    assert_eq!(conversations.len(), 1);
    conversations.remove(0)
}

#[test]
fn the_small_session_keeps_the_live_branch_and_pairs_tools() {
    let c = read(&shared(
        "claude-code/agent-sessions__stage0_claude_small.jsonl",
    ));
    assert_eq!(c.id, "ses_stage0_small");
    assert_eq!(c.workspace.as_deref(), Some("/tmp"));
    let first = &c.turns[0];
    assert_eq!(first.id, "u1");
    assert_eq!(first.request, "Hello");
    // u1 was answered twice (a rewind); the branch holding the latest records is the live one.
    assert!(
        first.answer.starts_with("Listing the files."),
        "{}",
        first.answer
    );
    assert_eq!(first.tool_calls.len(), 1);
    assert_eq!(first.tool_calls[0].name, "Bash");
    assert_eq!(
        first.tool_calls[0].output.as_deref(),
        Some("a.txt\nb.txt\n")
    );
    assert!(first.reasoning.is_some());
    assert!(first.complete);
    assert!(
        !c.turns.iter().any(|t| t.answer.contains("Partial reply")
            || t.request.contains("Summary of prior context")),
        "the abandoned branch is not imported"
    );
    let ids: std::collections::HashSet<&str> = c.turns.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(
        ids.len(),
        c.turns.len(),
        "turn ids are unique even where the file repeats uuids"
    );
}

#[test]
fn a_subagent_transcript_is_its_own_conversation_under_its_session() {
    let dir = shared("claude-code/agent-sessions__subagent");
    let parent = read(&dir.join("0a1b2c3d-4e5f-4061-8071-2a3b4c5d6e7f.jsonl"));
    assert_eq!(parent.turns.len(), 1);
    assert_eq!(
        parent.turns[0].request,
        "Delegate a repo search to a subagent"
    );
    assert_eq!(parent.turns[0].answer, "Spawning a subagent.");
    assert_eq!(parent.turns[0].tool_calls[0].name, "Task");
    assert!(
        !parent.turns[0].complete,
        "the Task call has no result yet: the turn waits"
    );
    let child = read(
        &dir.join("0a1b2c3d-4e5f-4061-8071-2a3b4c5d6e7f/subagents/agent-a0ad4f44468bdf20d.jsonl"),
    );
    assert!(
        child.id.ends_with(":agent-a0ad4f44468bdf20d"),
        "{}",
        child.id
    );
    assert_eq!(child.turns[0].request, "Search the repo for TODO comments");
    assert_eq!(
        child.turns[0].tool_calls[0].output.as_deref(),
        Some("a.txt:1: TODO fix")
    );
    // The files are found under a home's projects folder.
    let home = tempfile::tempdir().unwrap();
    let project = home.path().join(".claude/projects/-tmp");
    std::fs::create_dir_all(project.join("s1/subagents")).unwrap();
    std::fs::write(project.join("s1.jsonl"), "").unwrap();
    std::fs::write(project.join("s1/subagents/agent-1.jsonl"), "").unwrap();
    std::fs::write(project.join("notes.txt"), "").unwrap();
    let found = ClaudeCode::new(&env_at(home.path())).files();
    assert_eq!(found.len(), 2, "{found:?}");
}

fn lines(records: &[serde_json::Value]) -> String {
    records.iter().map(|r| format!("{r}\n")).collect()
}

#[test]
fn meta_wrappers_torn_lines_drift_and_an_unfinished_turn() {
    let dir = tempfile::tempdir().unwrap();
    let base = |t: &str, uuid: &str, parent: Option<&str>| {
        json!({"type": t, "uuid": uuid, "parentUuid": parent,
        "sessionId": "s", "cwd": "/w", "timestamp": "2026-01-01T10:00:00Z"})
    };
    let mut records = vec![
        {
            let mut r = base("user", "m0", None);
            r["isMeta"] = json!(true);
            r["message"] = json!({"role": "user", "content": "Caveat: injected context"});
            r
        },
        {
            let mut r = base("user", "u1", Some("m0"));
            r["message"] = json!({"role": "user", "content": "<system-reminder>be nice</system-reminder>Fix the login bug"});
            r
        },
        {
            let mut r = base("assistant", "a1", Some("u1"));
            r["message"] = json!({"id": "msg1", "role": "assistant", "content": [{"type": "text", "text": "Fixed."}], "brandNewField": {"x": 1}});
            r
        },
        json!({"type": "some-future-record", "payload": [1, 2, 3]}),
        {
            let mut r = base("user", "u2", Some("a1"));
            r["message"] = json!({"role": "user", "content": [{"type": "text", "text": "<command-name>/clear</command-name>"}]});
            r
        },
        {
            let mut r = base("user", "u3", Some("u2"));
            r["message"] = json!({"role": "user", "content": 42});
            r
        },
        {
            let mut r = base("user", "u4", Some("u3"));
            r["message"] = json!({"role": "user", "content": "And the logout bug?"});
            r
        },
        {
            let mut r = base("assistant", "a4", Some("u4"));
            r["message"] = json!({"id": "msg4", "role": "assistant", "content": [{"type": "tool_use", "id": "t4", "name": "Read", "input": {"file": "logout.rs"}}]});
            r
        },
    ];
    let mut text = lines(&records);
    text.push_str("{\"type\": \"user\", \"uuid\": \"torn\", \"message\": {\"role\"");
    let path = dir.path().join("s.jsonl");
    std::fs::write(&path, &text).unwrap();
    let c = read(&path);
    assert_eq!(c.malformed, 1, "the torn last line is counted");
    assert_eq!(c.turns.len(), 2);
    assert_eq!(c.turns[0].request, "Fix the login bug");
    assert_eq!(c.turns[0].answer, "Fixed.");
    assert!(c.turns[0].complete);
    assert_eq!(c.turns[1].request, "And the logout bug?");
    assert!(
        !c.turns[1].complete,
        "still waiting for the tool result and the answer"
    );

    // Once the answer is written, the same turn (same id) is complete.
    records.push({
        let mut r = base("user", "r4", Some("a4"));
        r["message"] = json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t4", "content": [{"type": "text", "text": "fn logout() {}"}]}]});
        r
    });
    records.push({
        let mut r = base("assistant", "f4", Some("r4"));
        r["message"] = json!({"id": "msg5", "role": "assistant", "content": [{"type": "text", "text": "Logout is fine."}]});
        r
    });
    std::fs::write(&path, lines(&records)).unwrap();
    let c = read(&path);
    assert_eq!(c.turns[1].id, "u4");
    assert!(c.turns[1].complete);
    assert_eq!(
        c.turns[1].tool_calls[0].output.as_deref(),
        Some("fn logout() {}")
    );
}

#[test]
fn the_config_dir_variable_moves_the_history() {
    let home = tempfile::tempdir().unwrap();
    let mut env = env_at(home.path());
    env.vars
        .insert("CLAUDE_CONFIG_DIR".into(), "/elsewhere/claude".into());
    assert_eq!(
        ClaudeCode::new(&env).roots()[0],
        Path::new("/elsewhere/claude/projects")
    );
    env.overrides.insert("claude-code".into(), "/mine".into());
    assert_eq!(ClaudeCode::new(&env).roots()[0], Path::new("/mine"));
}

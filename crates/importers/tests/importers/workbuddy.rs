//! WorkBuddy transcripts in their drifting shapes: item records, Anthropic-style blocks,
//! OpenAI-style tool calls, `<user_query>` wrapping, compaction records, torn lines, detection.

use std::path::{Path, PathBuf};

use cairn_importers::sources::WorkBuddy;
use cairn_importers::{parse_time, HistorySource, ImportedConversation, SourceEnv};
use serde_json::json;

use crate::env_at;

fn source() -> WorkBuddy {
    WorkBuddy::new(&env_at(Path::new("/nonexistent")))
}

fn read_text(name: &str, text: &str) -> ImportedConversation {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    let mut conversations = source().read(&path).unwrap();
    assert_eq!(conversations.len(), 1);
    conversations.remove(0)
}

fn lines(records: &[serde_json::Value]) -> String {
    records
        .iter()
        .map(|r| r.to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Item records: a session start, messages, and tool calls and results of their own.
fn items() -> Vec<serde_json::Value> {
    vec![
        json!({"type": "session_start", "sessionId": "wb-1", "timestamp": "2026-05-01T18:00:00.000Z", "cwd": "/home/me/site", "providerData": {"modelId": "wb"}}),
        json!({"type": "message", "id": "m1", "sessionId": "wb-1", "timestamp": 1_777_658_401_000_i64, "role": "user",
               "content": [{"type": "input_text", "text": "<system-reminder>Today is Friday.</system-reminder>\n<user_info>OS: linux</user_info>\n<user_query>\nWhy is the homepage slow?\n</user_query>"}]}),
        json!({"type": "message", "id": "m2", "timestamp": 1_777_658_402_000_i64, "role": "assistant", "content": [{"type": "output_text", "text": "Let me profile it."}]}),
        json!({"type": "function_call", "id": "fc1", "callId": "call_1", "timestamp": 1_777_658_403_000_i64, "name": "run_command", "arguments": "{\"command\":\"lighthouse /\"}"}),
        json!({"type": "function_call_result", "callId": "call_1", "timestamp": 1_777_658_404_000_i64, "name": "run_command", "output": {"type": "text", "text": "LCP 4.2s: hero.png 3MB"}}),
        json!({"type": "message", "id": "m3", "timestamp": 1_777_658_405_000_i64, "role": "assistant", "content": "The 3 MB hero image delays the first paint."}),
    ]
}

#[test]
fn item_records_make_a_turn_with_its_tool_call() {
    let c = read_text("wb-1.jsonl", &lines(&items()));
    assert_eq!(c.id, "wb-1");
    assert_eq!(c.workspace.as_deref(), Some("/home/me/site"));
    assert_eq!(c.malformed, 0);
    assert_eq!(c.turns.len(), 1);
    let t = &c.turns[0];
    assert_eq!(t.id, "m1");
    assert_eq!(
        t.request, "Why is the homepage slow?",
        "only the query, not the reminders"
    );
    assert_eq!(
        t.answer,
        "Let me profile it.\n\nThe 3 MB hero image delays the first paint."
    );
    assert_eq!(t.tool_calls.len(), 1);
    let call = &t.tool_calls[0];
    assert_eq!(
        (call.id.as_str(), call.name.as_str()),
        ("call_1", "run_command")
    );
    assert_eq!(call.input, json!({"command": "lighthouse /"}));
    assert_eq!(call.output.as_deref(), Some("LCP 4.2s: hero.png 3MB"));
    assert_eq!(
        (t.started_at, t.ended_at),
        (1_777_658_401_000, 1_777_658_405_000)
    );
    assert!(t.complete);
}

#[test]
fn anthropic_and_openai_shapes_and_compaction_records() {
    let records = [
        json!({"type": "user", "uuid": "u1", "sessionId": "wb-2", "cwd": "/repo", "timestamp": "2026-05-02T09:00:00Z",
               "message": {"role": "user", "content": "List the migrations"}}),
        json!({"type": "assistant", "uuid": "a1", "timestamp": "2026-05-02T09:00:01Z",
               "message": {"role": "assistant", "content": [
                   {"type": "thinking", "thinking": "Use ls."},
                   {"type": "tool_use", "id": "tu1", "name": "Bash", "input": {"command": "ls migrations"}}]}}),
        json!({"type": "user", "uuid": "r1", "timestamp": "2026-05-02T09:00:02Z",
               "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "tu1", "content": [{"type": "text", "text": "001_init.sql"}]}]}}),
        json!({"type": "assistant", "uuid": "a2", "timestamp": "2026-05-02T09:00:03Z",
               "message": {"role": "assistant", "content": [{"type": "text", "text": "One migration: 001_init.sql."}]}}),
        // Compaction: a summary record and a summary written as the person's message.
        json!({"type": "summary", "summary": "The user listed migrations.", "leafUuid": "a2"}),
        json!({"type": "user", "uuid": "c1", "isCompactSummary": true, "timestamp": "2026-05-02T09:05:00Z",
               "message": {"role": "user", "content": "This session is being continued from a previous conversation..."}}),
        json!({"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted"}),
        // OpenAI chat shape.
        json!({"role": "user", "id": "u2", "timestamp": "2026-05-02T09:06:00Z", "content": "And the seeds?"}),
        json!({"role": "assistant", "timestamp": "2026-05-02T09:06:01Z", "content": null,
               "tool_calls": [{"id": "tc9", "type": "function", "function": {"name": "list_dir", "arguments": "{\"path\":\"seeds\"}"}}]}),
        json!({"role": "tool", "tool_call_id": "tc9", "timestamp": "2026-05-02T09:06:02Z", "content": "none", "is_error": false}),
        json!({"role": "assistant", "timestamp": "2026-05-02T09:06:03Z", "content": "There are no seeds."}),
        json!({"role": "system", "content": "You are WorkBuddy."}),
    ];
    let c = read_text("wb-2.jsonl", &lines(&records));
    assert_eq!(c.id, "wb-2");
    assert_eq!(c.workspace.as_deref(), Some("/repo"));
    let turns: Vec<(&str, &str, &str)> = c
        .turns
        .iter()
        .map(|t| (t.id.as_str(), t.request.as_str(), t.answer.as_str()))
        .collect();
    assert_eq!(
        turns,
        vec![
            ("u1", "List the migrations", "One migration: 001_init.sql."),
            ("u2", "And the seeds?", "There are no seeds."),
        ]
    );
    let first = &c.turns[0];
    assert_eq!(first.reasoning.as_deref(), Some("Use ls."));
    assert_eq!(
        first.tool_calls[0].input,
        json!({"command": "ls migrations"})
    );
    assert_eq!(first.tool_calls[0].output.as_deref(), Some("001_init.sql"));
    let second = &c.turns[1];
    assert_eq!(
        (
            second.tool_calls[0].id.as_str(),
            second.tool_calls[0].name.as_str()
        ),
        ("tc9", "list_dir")
    );
    assert_eq!(second.tool_calls[0].input, json!({"path": "seeds"}));
    assert_eq!(second.tool_calls[0].output.as_deref(), Some("none"));
    assert!(c.turns.iter().all(|t| t.complete));
}

#[test]
fn schema_drift_is_read_tolerantly() {
    let records = [
        json!({"kind": "conversation.created", "conversation_id": "wb-drift", "time": "2026-05-01T19:00:00.000Z", "projectRoot": "/tmp/proj", "title": "Small file"}),
        json!({"kind": "message", "time": 1_777_662_001, "author": {"role": "human"}, "content": {"text": "Open the small file"}}),
        json!({"kind": "tool-call", "time": 1_777_662_002_000_i64, "function": {"name": "open_file"}, "parameters": {"path": "hello.py"}}),
        json!({"kind": "tool-result", "time": 1_777_662_003_000_000_i64, "functionName": "open_file", "message": {"content": "print(\"hello\")"}}),
        json!({"event_type": "assistant_message", "updatedAt": "2026-05-01T19:00:04Z", "message": {"content": [{"text": {"value": "It prints hello."}}]}}),
        json!({"kind": "workspace.snapshot", "time": "2026-05-01T19:00:05Z", "files": ["hello.py"]}),
        json!({"kind": "message", "role": 7, "content": ["odd"]}),
        json!(["not", "an", "object"]),
    ];
    let c = read_text("drift.jsonl", &lines(&records));
    assert_eq!(c.id, "wb-drift");
    assert_eq!(c.workspace.as_deref(), Some("/tmp/proj"));
    assert_eq!(c.title.as_deref(), Some("Small file"));
    assert_eq!(c.malformed, 1, "a line that is JSON but not a record");
    assert_eq!(c.turns.len(), 1);
    let t = &c.turns[0];
    assert_eq!(t.request, "Open the small file");
    assert_eq!(t.started_at, 1_777_662_001_000, "seconds");
    assert_eq!(t.answer, "It prints hello.");
    assert_eq!(t.ended_at, parse_time("2026-05-01T19:00:04Z").unwrap());
    assert_eq!(t.tool_calls.len(), 1);
    assert_eq!(t.tool_calls[0].name, "open_file");
    assert_eq!(t.tool_calls[0].input, json!({"path": "hello.py"}));
    assert_eq!(
        t.tool_calls[0].output.as_deref(),
        Some("print(\"hello\")"),
        "paired by tool name"
    );
    assert!(t.complete);
}

#[test]
fn a_torn_last_line_is_counted_and_earlier_turns_stay() {
    let text = format!(
        "{}\n{}",
        lines(&items()),
        r#"{"type":"message","role":"user","content":"And the CS"#
    );
    let c = read_text("torn.jsonl", &text);
    assert_eq!(c.malformed, 1);
    assert_eq!(c.turns.len(), 1);
    assert_eq!(
        c.turns[0].answer,
        "Let me profile it.\n\nThe 3 MB hero image delays the first paint."
    );
    assert!(c.turns[0].complete);
}

#[test]
fn a_last_turn_without_an_answer_waits() {
    let mut records = items();
    records.truncate(5); // the call's result is in, the answer is not
    let c = read_text("open.jsonl", &lines(&records));
    assert_eq!(c.turns.len(), 1);
    assert_eq!(c.turns[0].answer, "Let me profile it.");
    assert!(!c.turns[0].complete);
}

#[test]
fn reminders_without_a_query_are_cut_out() {
    let records = [
        json!({"role": "user", "id": "u1", "content": "<system-reminder>\nPlan mode is on.\n</system-reminder>\nDraft the plan"}),
        json!({"role": "assistant", "content": "Plan: one step."}),
        json!({"role": "user", "id": "u2", "content": "<system-reminder>Only a reminder.</system-reminder>"}),
        json!({"role": "user", "id": "u3", "isMeta": true, "content": "Caveat: injected"}),
    ];
    let c = read_text("reminders.jsonl", &lines(&records));
    assert_eq!(c.turns.len(), 1);
    assert_eq!(c.turns[0].request, "Draft the plan");
    assert!(c.turns[0].complete);
}

fn touch(path: &Path) -> PathBuf {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, "{\"type\":\"session_start\"}\n").unwrap();
    path.to_path_buf()
}

#[test]
fn transcripts_are_found_under_projects() {
    let home = tempfile::tempdir().unwrap();
    let source = WorkBuddy::new(&env_at(home.path()));
    assert!(!source.detected());
    let a = touch(&home.path().join(".workbuddy/projects/site/wb-1.jsonl"));
    let b = touch(
        &home
            .path()
            .join(".workbuddy/projects/site/nested/wb-2.jsonl"),
    );
    touch(&home.path().join(".workbuddy/settings.json"));
    assert!(source.detected());
    assert_eq!((source.name(), source.label()), ("workbuddy", "WorkBuddy"));
    assert_eq!(
        source.files(),
        vec![b, a],
        "sorted: nested/ before wb-1.jsonl"
    );

    let other = tempfile::tempdir().unwrap();
    let moved = touch(&other.path().join("projects/p/s.jsonl"));
    let mut env = env_at(home.path());
    env.vars.insert(
        "WORKBUDDY_CONFIG_DIR".into(),
        other.path().display().to_string(),
    );
    assert_eq!(WorkBuddy::new(&env).files(), vec![moved.clone()]);

    let env = SourceEnv {
        overrides: [("workbuddy".to_owned(), other.path().join("projects"))].into(),
        ..env_at(home.path())
    };
    assert_eq!(WorkBuddy::new(&env).files(), vec![moved]);
}

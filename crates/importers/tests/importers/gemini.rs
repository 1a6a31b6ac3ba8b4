//! Gemini CLI chats: the JSON document and the newer JSONL (patches, rewritten messages), tool
//! calls with structured results, thoughts, injected text, torn lines and detection.

use std::path::{Path, PathBuf};

use cairn_importers::sources::Gemini;
use cairn_importers::{parse_time, HistorySource, ImportedConversation, SourceEnv};
use serde_json::json;

use crate::{env_at, shared};

fn source() -> Gemini {
    Gemini::new(&env_at(Path::new("/nonexistent")))
}

fn read(path: &Path) -> ImportedConversation {
    let mut conversations = source().read(path).unwrap();
    assert_eq!(conversations.len(), 1);
    conversations.remove(0)
}

fn read_text(name: &str, text: &str) -> ImportedConversation {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    read(&path)
}

fn at(time: &str) -> i64 {
    parse_time(time).unwrap()
}

#[test]
fn the_small_chat_is_one_answered_turn() {
    let c = read(&shared("gemini/agent-sessions__gemini_small.json"));
    assert_eq!(c.id, "session-2026-01-16T18-34-3739ef95");
    assert_eq!(
        c.workspace, None,
        "only a hash of the project path is on disk"
    );
    assert_eq!(c.git_root, None);
    assert_eq!(c.title, None);
    assert_eq!(c.malformed, 0);
    assert_eq!(c.turns.len(), 1);
    let t = &c.turns[0];
    assert_eq!(t.id, "m1");
    assert_eq!(t.request, "Hello");
    assert_eq!(t.answer, "Hi!");
    assert_eq!(t.reasoning.as_deref(), Some("Short reasoning placeholder."));
    assert!(t.tool_calls.is_empty());
    assert_eq!(t.started_at, at("2026-01-16T18:34:01.000Z"));
    assert_eq!(t.ended_at, at("2026-01-16T18:34:02.000Z"));
    assert!(t.complete);
}

const JSONL: &str = r#"{"sessionId":"g-jsonl","projectHash":"abc","startTime":"2026-04-29T21:39:22.319Z","lastUpdated":"2026-04-29T21:39:22.319Z","kind":"main"}
{"id":"u1","timestamp":"2026-04-29T21:39:33.155Z","type":"user","content":[{"text":"Say hello and list files."}]}
{"$set":{"lastUpdated":"2026-04-29T21:39:33.156Z","summary":"Listing files"}}
{"id":"a1","timestamp":"2026-04-29T21:39:35.125Z","type":"gemini","content":"","thoughts":[{"subject":"Listing","description":"I should run ls."}],"toolCalls":[{"id":"sh1","name":"run_shell_command","args":{"command":"ls -F"},"status":"executing"}]}
{"id":"a1","timestamp":"2026-04-29T21:39:35.125Z","type":"gemini","content":"","thoughts":[{"subject":"Listing","description":"I should run ls."}],"toolCalls":[{"id":"sh1","name":"run_shell_command","args":{"command":"ls -F"},"result":[{"functionResponse":{"id":"sh1","name":"run_shell_command","response":{"output":"src/\nREADME.md"}}}],"status":"success","timestamp":"2026-04-29T21:39:35.364Z"},{"id":"rd1","name":"read_file","args":"{\"path\":\"missing.txt\"}","result":[{"functionResponse":{"id":"rd1","name":"read_file","response":{"error":"File not found"}}}],"status":"error"}]}
{"id":"i1","timestamp":"2026-04-29T21:39:40.000Z","type":"info","content":"Switched model"}
{"id":"a2","timestamp":"2026-04-29T21:39:45.996Z","type":"gemini","content":"Hello! There is src/ and a README.","thoughts":[]}
"#;

#[test]
fn jsonl_chats_merge_patches_and_rewritten_messages() {
    let c = read_text("session-2026-04-29T21-39-g-jsonl.jsonl", JSONL);
    assert_eq!(c.id, "g-jsonl");
    assert_eq!(
        c.title.as_deref(),
        Some("Listing files"),
        "from a $set patch"
    );
    assert_eq!(c.malformed, 0);
    assert_eq!(c.turns.len(), 1);
    let t = &c.turns[0];
    assert_eq!(t.id, "u1");
    assert_eq!(t.request, "Say hello and list files.");
    assert_eq!(t.answer, "Hello! There is src/ and a README.");
    assert_eq!(
        t.reasoning.as_deref(),
        Some("Listing: I should run ls."),
        "thoughts of the rewritten message once"
    );
    assert_eq!(
        t.tool_calls.len(),
        2,
        "the message written twice counts once"
    );
    let shell = &t.tool_calls[0];
    assert_eq!(
        (shell.id.as_str(), shell.name.as_str()),
        ("sh1", "run_shell_command")
    );
    assert_eq!(shell.input, json!({"command": "ls -F"}));
    assert_eq!(shell.output.as_deref(), Some("src/\nREADME.md"));
    assert!(!shell.is_error);
    let read = &t.tool_calls[1];
    assert_eq!(
        read.input,
        json!({"path": "missing.txt"}),
        "string arguments are parsed"
    );
    assert_eq!(read.output.as_deref(), Some("File not found"));
    assert!(read.is_error);
    assert_eq!(t.ended_at, at("2026-04-29T21:39:45.996Z"));
    assert!(t.complete);
}

#[test]
fn schema_drift_is_skipped_without_losing_turns() {
    let doc = json!({
        "sessionId": "g-drift",
        "projectHash": 12,
        "futureField": {"nested": true},
        "messages": [
            "not a message",
            {"id": "x0", "type": "hologram", "content": "beam me up"},
            {"id": "u1", "timestamp": 1_777_000_000, "type": "user", "content": 42},
            {"id": "u2", "timestamp": "2026-05-01T10:00:00Z", "type": "user", "content": [{"text": "Explain the cache"}, {"inlineData": {"mimeType": "image/png"}}], "extra": [1, 2]},
            {"id": "a2", "timestamp": "2026-05-01T10:00:05Z", "type": "gemini", "content": [{"text": "hidden", "thought": true}, {"text": "It is an LRU."}],
             "thoughts": "not a list", "toolCalls": {"not": "a list"}, "tokens": "lots"},
            {"id": "e1", "timestamp": "2026-05-01T10:00:06Z", "type": "error", "content": "quota"}
        ]
    });
    let c = read_text("session-drift.json", &doc.to_string());
    assert_eq!(c.malformed, 0);
    assert_eq!(c.turns.len(), 1);
    let t = &c.turns[0];
    assert_eq!(
        (t.id.as_str(), t.request.as_str(), t.answer.as_str()),
        ("u2", "Explain the cache", "It is an LRU.")
    );
    assert_eq!(t.reasoning, None);
    assert!(t.complete);
}

#[test]
fn a_torn_last_line_is_counted_and_earlier_turns_stay() {
    let text = format!(
        "{}{}",
        JSONL,
        r#"{"id":"u9","timestamp":"2026-04-29T21:40:00.000Z","type":"user","content":"And the tes"#
    );
    let c = read_text("session-torn.jsonl", &text);
    assert_eq!(c.malformed, 1);
    assert_eq!(c.turns.len(), 1);
    assert_eq!(c.turns[0].answer, "Hello! There is src/ and a README.");
    assert!(c.turns[0].complete);

    // A JSON document cut short has nothing to read: one damaged record, no error.
    let c = read_text(
        "session-cut.json",
        "{\n  \"sessionId\": \"s\",\n  \"messages\": [\n    {\"id\": \"m1\"",
    );
    assert_eq!((c.malformed, c.turns.len()), (1, 0));
}

#[test]
fn a_last_turn_without_an_answer_waits() {
    let doc = json!({"sessionId": "g-open", "messages": [
        {"id": "u1", "timestamp": "2026-05-01T10:00:00Z", "type": "user", "content": "Deploy"},
        {"id": "a1", "timestamp": "2026-05-01T10:00:01Z", "type": "gemini", "content": "Deploying now.",
         "toolCalls": [{"id": "d1", "name": "run_shell_command", "args": {"command": "make deploy"}, "status": "executing"}]}
    ]});
    let c = read_text("session-open.json", &doc.to_string());
    assert_eq!(c.turns.len(), 1);
    let t = &c.turns[0];
    assert_eq!(t.answer, "Deploying now.");
    assert_eq!(t.tool_calls[0].output, None);
    assert!(!t.complete, "the model is still running its tool");
}

#[test]
fn injected_text_is_not_the_persons_words() {
    let doc = json!({"sessionId": "g-inject", "messages": [
        {"id": "u1", "timestamp": "2026-05-01T10:00:00Z", "type": "user",
         "content": [{"text": "Summarise @notes.md"}, {"text": "\n--- Content from referenced files ---\nContent from @notes.md:\nsecret plans\n--- End of content ---"}]},
        {"id": "a1", "timestamp": "2026-05-01T10:00:01Z", "type": "gemini", "content": "They are plans."},
        {"id": "u2", "timestamp": "2026-05-01T10:00:02Z", "type": "user", "content": "Fix it", "displayContent": "Fix it"},
        {"id": "a2", "timestamp": "2026-05-01T10:00:03Z", "type": "gemini", "content": "Fixed."}
    ]});
    let mut text = doc.to_string();
    text.push('\n');
    let c = read_text("session-inject.json", &text);
    let requests: Vec<&str> = c.turns.iter().map(|t| t.request.as_str()).collect();
    assert_eq!(requests, vec!["Summarise @notes.md", "Fix it"]);

    // A compression snapshot patched into the messages is not a turn, and drops nothing said.
    let jsonl = format!(
        "{JSONL}{}\n",
        json!({"$set": {"messages": [{"id": "snap", "type": "user", "content": "<state_snapshot>the story so far</state_snapshot>"}]}})
    );
    let c = read_text("session-compressed.jsonl", &jsonl);
    assert_eq!(c.turns.len(), 1);
    assert_eq!(c.turns[0].request, "Say hello and list files.");
}

fn touch(path: &Path) -> PathBuf {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, "{\"sessionId\":\"s\",\"messages\":[]}").unwrap();
    path.to_path_buf()
}

#[test]
fn chats_are_found_under_each_project_hash() {
    let home = tempfile::tempdir().unwrap();
    let source = Gemini::new(&env_at(home.path()));
    assert!(!source.detected());
    let tmp = home.path().join(".gemini/tmp");
    let a = touch(&tmp.join("0b7d/chats/session-2026-01-16T18-34-3739ef95.json"));
    let b = touch(&tmp.join("9f00/chats/session-2026-04-29T21-39-aa.jsonl"));
    touch(&tmp.join("0b7d/logs.json"));
    touch(&tmp.join("0b7d/checkpoint-x.json"));
    assert!(source.detected());
    assert_eq!((source.name(), source.label()), ("gemini", "Gemini CLI"));
    assert_eq!(source.files(), vec![a, b]);

    // GEMINI_CLI_HOME moves the home Gemini CLI uses.
    let other = tempfile::tempdir().unwrap();
    let moved = touch(&other.path().join(".gemini/tmp/1234/chats/session-x.json"));
    let mut env = env_at(home.path());
    env.vars
        .insert("GEMINI_CLI_HOME".into(), other.path().display().to_string());
    assert_eq!(Gemini::new(&env).files(), vec![moved.clone()]);

    // A folder override wins.
    let env = SourceEnv {
        overrides: [("gemini".to_owned(), other.path().join(".gemini/tmp"))].into(),
        ..env_at(home.path())
    };
    assert_eq!(Gemini::new(&env).files(), vec![moved]);
}

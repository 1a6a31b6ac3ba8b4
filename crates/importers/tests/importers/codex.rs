//! Codex rollouts: the response-item stream, injected context, tool pairing by call id, old
//! unwrapped files, the event fallback, resumed sessions, torn lines and detection.

use std::path::{Path, PathBuf};

use cairn_importers::sources::Codex;
use cairn_importers::{
    git_root, parse_time, stable_id, HistorySource, ImportedConversation, SourceEnv,
};
use serde_json::json;

use crate::{env_at, shared};

fn source() -> Codex {
    Codex::new(&env_at(Path::new("/nonexistent")))
}

fn read(path: &Path) -> ImportedConversation {
    let mut conversations = source().read(path).unwrap();
    assert_eq!(conversations.len(), 1);
    conversations.remove(0)
}

/// Writes `lines` as a rollout file in a fresh folder and reads it.
fn read_lines(name: &str, lines: &[&str]) -> ImportedConversation {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, lines.join("\n")).unwrap();
    read(&path)
}

fn at(time: &str) -> i64 {
    parse_time(time).unwrap()
}

#[test]
fn the_small_session_reads_one_turn_from_the_response_items() {
    let c = read(&shared("codex/agent-sessions__stage0_codex_small.jsonl"));
    let conv = "019fc8be-3658-7ca3-9e29-000000000000";
    assert_eq!(c.id, conv);
    // Later session_meta / turn_context lines (a resume, sub-agent metadata) do not replace it.
    assert_eq!(c.workspace.as_deref(), Some("/tmp/repo"));
    assert_eq!(c.git_root, git_root("/tmp/repo"));
    assert_eq!(c.title.as_deref(), Some("[trimmed for fixture]"));
    assert_eq!(c.malformed, 0);
    // The event_msg user_message / agent_message lines repeat the response items: one turn.
    assert_eq!(c.turns.len(), 1);
    let t = &c.turns[0];
    let t0 = at("2026-08-03T10:48:56.000Z");
    assert_eq!(t.request, "List the files");
    assert_eq!(t.id, stable_id(&[conv, &t0.to_string(), "List the files"]));
    assert_eq!((t.started_at, t.ended_at), (t0, t0));
    assert_eq!(t.answer, "Found 2 files.");
    assert_eq!(t.reasoning.as_deref(), Some("[trimmed for fixture]"));
    // task_complete closed the turn even though tool lines follow the answer in this file.
    assert!(t.complete);
    let calls: Vec<(&str, &str, Option<&str>)> = t
        .tool_calls
        .iter()
        .map(|c| (c.id.as_str(), c.name.as_str(), c.output.as_deref()))
        .collect();
    assert_eq!(
        calls,
        vec![
            ("call-1", "shell", Some("a.txt\nb.txt\n")),
            ("call-2", "shell", Some("a.txt\n")),
            ("ws-1", "web_search", None),
            (
                "[trimmed for fixture]",
                "[trimmed for fixture]",
                Some("[trimmed for fixture]\n\n[trimmed for fixture]")
            ),
            (
                "[trimmed for fixture]",
                "[trimmed for fixture]",
                Some("[trimmed for fixture]")
            ),
        ]
    );
    assert_eq!(
        t.tool_calls[0].input,
        json!({"command": ["ls"]}),
        "a JSON input string is parsed"
    );
    assert_eq!(t.tool_calls[1].input, json!({"command": ["ls"]}));
    assert_eq!(t.tool_calls[2].input["query"], "example");
    assert_eq!(
        t.tool_calls[3].input,
        json!("[trimmed for fixture]"),
        "free text stays text"
    );
    assert_eq!(t.tool_calls[4].input, serde_json::Value::Null);
    assert!(t.tool_calls.iter().all(|c| !c.is_error));
}

#[test]
fn the_claude_code_log_rollout_pairs_three_kinds_of_tool_call() {
    let c = read(&shared(
        "codex/claude-code-log__rollout-2026-01-02T03-04-05-11111111-1111-4111-8111-111111111111.jsonl",
    ));
    let conv = "11111111-1111-4111-8111-111111111111";
    assert_eq!(c.id, conv);
    assert_eq!(c.workspace.as_deref(), Some("/workspace/synthetic-project"));
    assert_eq!(c.title, None);
    assert_eq!(
        c.malformed, 0,
        "an unknown record type is skipped, not malformed"
    );
    assert_eq!(c.turns.len(), 1);
    let t = &c.turns[0];
    let t0 = at("2026-01-02T03:04:07.001Z");
    assert_eq!(t.request, "List the synthetic files.");
    assert_eq!(
        t.id,
        stable_id(&[conv, &t0.to_string(), "List the synthetic files."])
    );
    assert_eq!(t.started_at, t0);
    assert_eq!(t.ended_at, at("2026-01-02T03:04:15.001Z"));
    assert_eq!(t.answer, "The synthetic files are alpha.txt and beta.txt.");
    assert_eq!(
        t.reasoning.as_deref(),
        Some("I will inspect the synthetic directory.")
    );
    assert!(t.complete);
    assert_eq!(t.tool_calls.len(), 3);
    let exec = &t.tool_calls[0];
    assert_eq!(
        (exec.id.as_str(), exec.name.as_str()),
        ("call-structured-001", "exec_command")
    );
    assert_eq!(exec.input, json!({"cmd": "find . -maxdepth 1 -type f"}));
    assert_eq!(exec.output.as_deref(), Some("./alpha.txt\n./beta.txt"));
    let patch = &t.tool_calls[1];
    assert_eq!(
        (patch.id.as_str(), patch.name.as_str()),
        ("call-custom-001", "apply_patch")
    );
    assert_eq!(
        patch.input,
        json!("*** Begin Patch\n*** Add File: gamma.txt\n+synthetic\n*** End Patch")
    );
    assert_eq!(patch.output.as_deref(), Some("Done!"));
    let mcp = &t.tool_calls[2];
    assert_eq!(
        (mcp.id.as_str(), mcp.name.as_str()),
        ("call-mcp-001", "mcp__synthetic__lookup")
    );
    assert_eq!(mcp.input, json!({"query": "fixture"}));
    assert_eq!(mcp.output.as_deref(), Some("{\"status\":\"ok\"}"));
    assert!(t.tool_calls.iter().all(|c| !c.is_error));
}

const META: &str = r#"{"timestamp":"2026-02-01T10:00:00.000Z","type":"session_meta","payload":{"id":"22222222-2222-4222-8222-222222222222","cwd":"/work/app","cli_version":"0.9.0"}}"#;

fn user(time: &str, text: &str) -> String {
    json!({"timestamp": time, "type": "response_item", "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}}).to_string()
}

fn assistant(time: &str, text: &str) -> String {
    json!({"timestamp": time, "type": "response_item", "payload": {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]}}).to_string()
}

#[test]
fn schema_drift_is_skipped_without_losing_turns() {
    let lines = [
        META.to_owned(),
        // An unknown record type, an unknown payload type, extra fields, and fields of the wrong type.
        r#"{"timestamp":"2026-02-01T10:00:00.500Z","type":"hologram","payload":{"beam":true}}"#.to_owned(),
        r#"{"timestamp":"2026-02-01T10:00:00.600Z","type":"response_item","payload":{"type":"telepathy","call_id":7}}"#.to_owned(),
        r#"{"timestamp":"2026-02-01T10:00:00.700Z","type":"response_item","payload":"not an object"}"#.to_owned(),
        r#"{"timestamp":"2026-02-01T10:00:01.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"Run the tests","mood":"hopeful"}],"future":{"x":1}}}"#.to_owned(),
        r#"{"timestamp":"2026-02-01T10:00:02.000Z","type":"response_item","payload":{"type":"message","role":"user","content":42}}"#.to_owned(),
        r#"{"timestamp":12345,"type":"response_item","payload":{"type":"function_call","name":"shell","arguments":{"command":["cargo","test"]},"call_id":"c1"}}"#.to_owned(),
        r#"{"timestamp":"2026-02-01T10:00:04.000Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":{"content":"test result: FAILED","success":false}}}"#.to_owned(),
        r#"{"timestamp":"2026-02-01T10:00:05.000Z","type":"response_item","payload":{"type":"reasoning","summary":"not a list"}}"#.to_owned(),
        assistant("2026-02-01T10:00:06.000Z", "One test fails."),
    ];
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    let c = read_lines(
        "rollout-2026-02-01T10-00-00-22222222-2222-4222-8222-222222222222.jsonl",
        &lines,
    );
    assert_eq!(c.malformed, 0);
    assert_eq!(c.turns.len(), 1);
    let t = &c.turns[0];
    assert_eq!(t.request, "Run the tests");
    assert_eq!(t.answer, "One test fails.");
    assert_eq!(t.tool_calls.len(), 1);
    assert_eq!(t.tool_calls[0].input, json!({"command": ["cargo", "test"]}));
    assert_eq!(
        t.tool_calls[0].output.as_deref(),
        Some("test result: FAILED")
    );
    assert!(t.tool_calls[0].is_error);
    assert_eq!(t.reasoning, None);
    assert!(t.complete);
}

#[test]
fn a_torn_last_line_is_counted_and_earlier_turns_stay() {
    let lines = [
        META.to_owned(),
        user("2026-02-01T10:00:01.000Z", "First question"),
        assistant("2026-02-01T10:00:02.000Z", "First answer"),
        user("2026-02-01T10:00:03.000Z", "Second question"),
        r#"{"timestamp":"2026-02-01T10:00:04.000Z","type":"response_item","payload":{"type":"message","role":"assis"#.to_owned(),
    ];
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    let c = read_lines("rollout-torn.jsonl", &lines);
    assert_eq!(c.malformed, 1);
    assert_eq!(c.id, "22222222-2222-4222-8222-222222222222");
    assert_eq!(c.turns.len(), 2);
    assert_eq!(
        (c.turns[0].request.as_str(), c.turns[0].answer.as_str()),
        ("First question", "First answer")
    );
    assert!(c.turns[0].complete);
    assert_eq!(c.turns[1].request, "Second question");
    assert!(!c.turns[1].complete);
}

#[test]
fn a_last_turn_without_an_answer_waits() {
    let lines = [
        META.to_owned(),
        user("2026-02-01T10:00:01.000Z", "Refactor the parser"),
        json!({"timestamp": "2026-02-01T10:00:02.000Z", "type": "response_item", "payload": {"type": "function_call", "name": "shell", "arguments": "{\"command\":[\"ls\"]}", "call_id": "c9"}}).to_string(),
    ];
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    let c = read_lines("rollout-open.jsonl", &lines);
    assert_eq!(c.turns.len(), 1);
    let t = &c.turns[0];
    assert!(!t.complete);
    assert_eq!(t.answer, "");
    assert_eq!(t.tool_calls[0].output, None);
}

#[test]
fn injected_context_is_not_the_persons_words() {
    let agents = "# AGENTS.md instructions for /work/app\n\n<INSTRUCTIONS>\nAlways run clippy.\n</INSTRUCTIONS>";
    let env = "<environment_context>\n  <cwd>/work/app</cwd>\n  <shell>zsh</shell>\n</environment_context>";
    let lines = [
        META.to_owned(),
        r#"{"timestamp":"2026-02-01T10:00:00.100Z","type":"response_item","payload":{"type":"message","role":"developer","content":[{"type":"input_text","text":"<permissions instructions>sandboxed</permissions instructions>"}]}}"#.to_owned(),
        user("2026-02-01T10:00:00.200Z", agents),
        user("2026-02-01T10:00:00.300Z", env),
        user("2026-02-01T10:00:00.400Z", "<user_instructions>\nBe terse.\n</user_instructions>"),
        json!({"timestamp": "2026-02-01T10:00:01.000Z", "type": "response_item", "payload": {"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": env},
            {"type": "input_text", "text": "Why does the build fail?"}
        ]}}).to_string(),
        assistant("2026-02-01T10:00:02.000Z", "A missing feature flag."),
        user("2026-02-01T10:00:03.000Z", "<turn_aborted>\nThe user interrupted the previous turn.\n</turn_aborted>"),
        user("2026-02-01T10:00:04.000Z", "<skill>\n<name>deploy</name>\nsteps\n</skill>\nShip it"),
        assistant("2026-02-01T10:00:05.000Z", "Shipped."),
    ];
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    let c = read_lines("rollout-injected.jsonl", &lines);
    let requests: Vec<&str> = c.turns.iter().map(|t| t.request.as_str()).collect();
    assert_eq!(requests, vec!["Why does the build fail?", "Ship it"]);
    assert_eq!(c.turns[0].answer, "A missing feature flag.");
    assert!(c.turns.iter().all(|t| t.complete));
}

#[test]
fn old_unwrapped_files_read_with_the_bare_first_line() {
    let lines = [
        r#"{"id":"33333333-3333-4333-8333-333333333333","timestamp":"2025-05-01T08:00:00.000Z","instructions":null,"git":{"branch":"main"}}"#,
        r#"{"record_type":"state"}"#,
        r#"{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>\n  <cwd>/home/me/old</cwd>\n</environment_context>"}]}"#,
        r#"{"type":"message","role":"user","content":[{"type":"input_text","text":"yes"}]}"#,
        r#"{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Done once."}]}"#,
        r#"{"record_type":"state"}"#,
        r#"{"type":"message","role":"user","content":[{"type":"input_text","text":"yes"}]}"#,
        r#"{"type":"local_shell_call","call_id":"ls1","status":"completed","action":{"type":"exec","command":["ls"]}}"#,
        r#"{"type":"function_call_output","call_id":"ls1","output":"{\"output\":\"README.md\\n\",\"metadata\":{\"exit_code\":0}}"}"#,
        r#"{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Done twice."}]}"#,
    ];
    let c = read_lines(
        "rollout-2025-05-01-33333333-3333-4333-8333-333333333333.jsonl",
        &lines,
    );
    let conv = "33333333-3333-4333-8333-333333333333";
    assert_eq!(c.id, conv);
    assert_eq!(
        c.workspace.as_deref(),
        Some("/home/me/old"),
        "from the environment context"
    );
    assert_eq!(c.turns.len(), 2);
    let t0 = at("2025-05-01T08:00:00.000Z");
    assert!(c
        .turns
        .iter()
        .all(|t| t.started_at == t0 && t.request == "yes"));
    // The same words at the same moment still make two turns with two ids.
    assert_eq!(c.turns[0].id, stable_id(&[conv, &t0.to_string(), "yes"]));
    assert_ne!(c.turns[0].id, c.turns[1].id);
    assert_eq!(c.turns[1].tool_calls[0].name, "local_shell");
    assert_eq!(
        c.turns[1].tool_calls[0].input,
        json!({"type": "exec", "command": ["ls"]})
    );
    assert_eq!(
        c.turns[1].tool_calls[0].output.as_deref(),
        Some("README.md\n")
    );
    assert_eq!(c.turns[1].answer, "Done twice.");
}

#[test]
fn the_first_codex_json_document_reads_its_items() {
    let doc = json!({
        "session": {"id": "77777777-7777-4777-8777-777777777777", "timestamp": "2025-04-20T12:00:00.000Z", "instructions": ""},
        "items": [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Add a README"}]},
            {"type": "function_call", "name": "shell", "arguments": "{\"command\":[\"touch\",\"README.md\"]}", "call_id": "t1"},
            {"type": "function_call_output", "call_id": "t1", "output": "{\"output\":\"\",\"metadata\":{\"exit_code\":1}}"},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Could not create it."}]}
        ]
    });
    let dir = tempfile::tempdir().unwrap();
    let path = dir
        .path()
        .join("rollout-2025-04-20-77777777-7777-4777-8777-777777777777.json");
    std::fs::write(&path, doc.to_string()).unwrap();
    let c = read(&path);
    assert_eq!(c.id, "77777777-7777-4777-8777-777777777777");
    assert_eq!(c.turns.len(), 1);
    let t = &c.turns[0];
    assert_eq!(
        (t.request.as_str(), t.answer.as_str()),
        ("Add a README", "Could not create it.")
    );
    assert_eq!(t.started_at, at("2025-04-20T12:00:00.000Z"));
    assert_eq!(t.tool_calls[0].output.as_deref(), Some(""));
    assert!(t.tool_calls[0].is_error, "a non-zero exit code");
    assert!(t.complete);
}

#[test]
fn without_user_response_items_the_events_are_read() {
    let lines = [
        META.to_owned(),
        r#"{"timestamp":"2026-02-01T10:00:01.000Z","type":"event_msg","payload":{"type":"user_message","message":"Summarise the log"}}"#.to_owned(),
        r#"{"timestamp":"2026-02-01T10:00:02.000Z","type":"event_msg","payload":{"type":"agent_reasoning","text":"thinking"}}"#.to_owned(),
        r#"{"timestamp":"2026-02-01T10:00:03.000Z","type":"event_msg","payload":{"type":"agent_message","message":"It is quiet."}}"#.to_owned(),
        r#"{"timestamp":"2026-02-01T10:00:04.000Z","type":"event_msg","payload":{"type":"task_complete"}}"#.to_owned(),
    ];
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    let c = read_lines("rollout-events.jsonl", &lines);
    assert_eq!(c.turns.len(), 1);
    assert_eq!(c.turns[0].request, "Summarise the log");
    assert_eq!(c.turns[0].answer, "It is quiet.");
    assert!(c.turns[0].complete);
}

#[test]
fn a_resumed_session_does_not_repeat_turns() {
    let first = user("2026-02-01T10:00:01.000Z", "Start the server");
    let answer = assistant("2026-02-01T10:00:02.000Z", "Started.");
    let lines = [
        META.to_owned(),
        first.clone(),
        answer.clone(),
        // Resumed: the meta line again (same id, a later time), and the history replayed verbatim.
        META.replace("10:00:00.000Z", "11:00:00.000Z"),
        first,
        answer,
        r#"{"timestamp":"2026-02-01T11:00:01.000Z","type":"turn_context","payload":{"cwd":"/elsewhere"}}"#.to_owned(),
        user("2026-02-01T11:00:02.000Z", "Stop it"),
        assistant("2026-02-01T11:00:03.000Z", "Stopped."),
    ];
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    let c = read_lines("rollout-resumed.jsonl", &lines);
    assert_eq!(c.id, "22222222-2222-4222-8222-222222222222");
    assert_eq!(c.workspace.as_deref(), Some("/work/app"));
    let turns: Vec<(&str, &str)> = c
        .turns
        .iter()
        .map(|t| (t.request.as_str(), t.answer.as_str()))
        .collect();
    assert_eq!(
        turns,
        vec![("Start the server", "Started."), ("Stop it", "Stopped.")]
    );
}

#[test]
fn the_conversation_id_falls_back_to_the_file_names_uuid() {
    let lines = [
        user("2026-02-01T10:00:01.000Z", "hi"),
        assistant("2026-02-01T10:00:02.000Z", "hello"),
    ];
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    let c = read_lines(
        "rollout-2026-02-01T10-00-00-44444444-4444-4444-8444-444444444444.jsonl",
        &lines,
    );
    assert_eq!(c.id, "44444444-4444-4444-8444-444444444444");
    assert_eq!(c.workspace, None);
}

fn touch(path: &Path) -> PathBuf {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, format!("{META}\n")).unwrap();
    path.to_path_buf()
}

#[test]
fn files_are_found_in_sessions_and_archived_sessions() {
    let home = tempfile::tempdir().unwrap();
    let source = Codex::new(&env_at(home.path()));
    assert!(!source.detected());
    let codex = home.path().join(".codex");
    let live = touch(&codex.join("sessions/2026/02/01/rollout-2026-02-01T10-00-00-22222222-2222-4222-8222-222222222222.jsonl"));
    let archived = touch(&codex.join(
        "archived_sessions/rollout-2026-01-01T10-00-00-55555555-5555-4555-8555-555555555555.jsonl",
    ));
    touch(&codex.join("history.jsonl"));
    touch(&codex.join("sessions/2026/02/01/notes.jsonl"));
    assert!(source.detected());
    assert_eq!(source.name(), "codex");
    assert_eq!(source.label(), "Codex");
    assert_eq!(
        source.roots(),
        vec![codex.join("sessions"), codex.join("archived_sessions")]
    );
    let mut expected = vec![live, archived];
    expected.sort();
    assert_eq!(source.files(), expected);

    // CODEX_HOME moves it.
    let elsewhere = tempfile::tempdir().unwrap();
    let moved = touch(&elsewhere.path().join("sessions/2026/03/01/rollout-2026-03-01T10-00-00-66666666-6666-4666-8666-666666666666.jsonl"));
    let mut env = env_at(home.path());
    env.vars
        .insert("CODEX_HOME".into(), elsewhere.path().display().to_string());
    assert_eq!(Codex::new(&env).files(), vec![moved.clone()]);

    // A folder override wins over both.
    let env = SourceEnv {
        overrides: [("codex".to_owned(), elsewhere.path().join("sessions"))].into(),
        ..env_at(home.path())
    };
    let source = Codex::new(&env);
    assert_eq!(source.roots(), vec![elsewhere.path().join("sessions")]);
    assert_eq!(source.files(), vec![moved]);
}

//! Pi sessions: the live branch of the entry tree, tool calls paired by id, thinking, injected
//! skill text, schema drift, torn lines and detection.

use std::path::{Path, PathBuf};

use cairn_importers::sources::Pi;
use cairn_importers::{parse_time, stable_id, HistorySource, ImportedConversation, SourceEnv};
use serde_json::json;

use crate::env_at;

fn source() -> Pi {
    Pi::new(&env_at(Path::new("/nonexistent")))
}

fn read_text(name: &str, text: &str) -> ImportedConversation {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    let mut conversations = source().read(&path).unwrap();
    assert_eq!(conversations.len(), 1);
    conversations.remove(0)
}

fn at(time: &str) -> i64 {
    parse_time(time).unwrap()
}

/// A session whose person rewound after the first answer: the branch from `u2` is abandoned and
/// `u3` continues from `a1`.
const REWOUND: &str = r#"{"type":"session","version":3,"id":"pi-session-1","timestamp":"2026-05-12T01:00:00.000Z","cwd":"/home/me/project"}
{"type":"model_change","id":"m0","parentId":null,"timestamp":"2026-05-12T01:00:00.010Z","provider":"anthropic","modelId":"claude"}
{"type":"message","id":"u1","parentId":"m0","timestamp":"2026-05-12T01:00:01.000Z","message":{"role":"user","content":[{"type":"text","text":"Read hello.py"}],"timestamp":1778547601000}}
{"type":"message","id":"a1","parentId":"u1","timestamp":"2026-05-12T01:00:02.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"Just read it."},{"type":"toolCall","id":"c1","name":"read","arguments":{"path":"hello.py"}}],"stopReason":"toolUse"}}
{"type":"message","id":"r1","parentId":"a1","timestamp":"2026-05-12T01:00:03.000Z","message":{"role":"toolResult","toolCallId":"c1","toolName":"read","content":[{"type":"text","text":"print('hi')"}],"isError":false}}
{"type":"message","id":"a1b","parentId":"r1","timestamp":"2026-05-12T01:00:04.000Z","message":{"role":"assistant","content":[{"type":"text","text":"It prints hi."}],"stopReason":"stop"}}
{"type":"message","id":"u2","parentId":"a1b","timestamp":"2026-05-12T01:00:05.000Z","message":{"role":"user","content":[{"type":"text","text":"Delete it"}]}}
{"type":"message","id":"a2","parentId":"u2","timestamp":"2026-05-12T01:00:06.000Z","message":{"role":"assistant","content":[{"type":"text","text":"Deleted."}]}}
{"type":"branch_summary","id":"b1","parentId":"a1b","timestamp":"2026-05-12T01:00:07.000Z","fromId":"a2","summary":"The user asked to delete hello.py."}
{"type":"message","id":"u3","parentId":"b1","timestamp":"2026-05-12T01:00:08.000Z","message":{"role":"user","content":"Rename it to greet.py"}}
{"type":"message","id":"a3","parentId":"u3","timestamp":"2026-05-12T01:00:09.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"c3","name":"bash","arguments":{"command":"mv hello.py greet.py"}}]}}
{"type":"message","id":"r3","parentId":"a3","timestamp":"2026-05-12T01:00:10.000Z","message":{"role":"toolResult","toolCallId":"c3","toolName":"bash","content":[{"type":"text","text":"mv: permission denied"}],"isError":true}}
{"type":"compaction","id":"k1","parentId":"r3","timestamp":"2026-05-12T01:00:11.000Z","summary":"Renaming failed.","firstKeptEntryId":"u3","tokensBefore":100}
{"type":"message","id":"a3b","parentId":"k1","timestamp":"2026-05-12T01:00:12.000Z","message":{"role":"assistant","content":[{"type":"text","text":"I could not rename it: permission denied."}]}}
{"type":"session_info","id":"n1","parentId":"a3b","timestamp":"2026-05-12T01:00:13.000Z","name":"hello.py chores"}
"#;

#[test]
fn the_live_branch_is_read_and_the_rewound_one_dropped() {
    let c = read_text("2026-05-12T01-00-00_pi-session-1.jsonl", REWOUND);
    assert_eq!(c.id, "pi-session-1");
    assert_eq!(c.workspace.as_deref(), Some("/home/me/project"));
    assert_eq!(c.title.as_deref(), Some("hello.py chores"));
    assert_eq!(c.malformed, 0);
    let requests: Vec<&str> = c.turns.iter().map(|t| t.request.as_str()).collect();
    assert_eq!(
        requests,
        vec!["Read hello.py", "Rename it to greet.py"],
        "`Delete it` was rewound"
    );

    let t = &c.turns[0];
    assert_eq!(t.id, "u1");
    assert_eq!(t.answer, "It prints hi.");
    assert_eq!(t.reasoning.as_deref(), Some("Just read it."));
    assert_eq!(t.tool_calls.len(), 1);
    assert_eq!(
        (t.tool_calls[0].id.as_str(), t.tool_calls[0].name.as_str()),
        ("c1", "read")
    );
    assert_eq!(t.tool_calls[0].input, json!({"path": "hello.py"}));
    assert_eq!(t.tool_calls[0].output.as_deref(), Some("print('hi')"));
    assert_eq!(
        (t.started_at, t.ended_at),
        (
            at("2026-05-12T01:00:01.000Z"),
            at("2026-05-12T01:00:04.000Z")
        )
    );
    assert!(t.complete);

    let t = &c.turns[1];
    assert_eq!(t.id, "u3");
    assert_eq!(t.answer, "I could not rename it: permission denied.");
    assert_eq!(
        t.tool_calls[0].output.as_deref(),
        Some("mv: permission denied")
    );
    assert!(t.tool_calls[0].is_error);
    assert!(t.complete);
}

#[test]
fn schema_drift_is_skipped_without_losing_turns() {
    let text = [
        r#"{"type":"session","version":9,"id":"pi-drift","timestamp":"2026-05-12T01:00:00.000Z","cwd":"/p","future":{"x":1}}"#,
        r#"{"type":"hologram","id":"h1","parentId":null,"beam":true}"#,
        r#"{"type":"message","id":"u1","parentId":"h1","timestamp":"2026-05-12T01:00:01.000Z","message":{"role":"user","content":[{"type":"text","text":"Count lines"},{"type":"image","data":"AAAA","mimeType":"image/png"}],"mood":"curious"}}"#,
        r#"{"type":"message","id":"x1","parentId":"u1","timestamp":"2026-05-12T01:00:02.000Z","message":{"role":"bashExecution","command":"wc -l","output":"3"}}"#,
        r#"{"type":"message","id":"x2","parentId":"x1","timestamp":"2026-05-12T01:00:03.000Z","message":{"role":"assistant","content":17}}"#,
        r#"{"type":"message","id":"x3","parentId":"x2","timestamp":"2026-05-12T01:00:04.000Z","message":"not an object"}"#,
        r#"{"type":"message","id":"a1","parentId":"x3","timestamp":1778547604000,"message":{"role":"assistant","content":[{"type":"hologram"},{"type":"text","text":"Three lines.","textSignature":"sig"}]}}"#,
    ]
    .join("\n");
    let c = read_text("drift.jsonl", &text);
    assert_eq!(c.malformed, 0);
    assert_eq!(c.turns.len(), 1);
    let t = &c.turns[0];
    assert_eq!(
        (t.id.as_str(), t.request.as_str(), t.answer.as_str()),
        ("u1", "Count lines", "Three lines.")
    );
    assert_eq!(
        t.ended_at, 1_778_547_604_000,
        "a number time is milliseconds"
    );
    assert!(t.complete);
}

#[test]
fn a_torn_last_line_is_counted_and_earlier_turns_stay() {
    let text = format!(
        "{REWOUND}{}",
        r#"{"type":"message","id":"u4","parentId":"n1","timestamp":"2026-05-12T01:00:14.000Z","message":{"role":"user","content":"And the te"#
    );
    let c = read_text("torn.jsonl", &text);
    assert_eq!(c.malformed, 1);
    assert_eq!(c.turns.len(), 2);
    assert_eq!(
        c.turns[1].answer,
        "I could not rename it: permission denied."
    );
    assert!(c.turns[1].complete);
}

#[test]
fn a_last_turn_without_an_answer_waits() {
    let text = [
        r#"{"type":"session","version":3,"id":"pi-open","timestamp":"2026-05-12T01:00:00.000Z","cwd":"/p"}"#,
        r#"{"type":"message","id":"u1","parentId":null,"timestamp":"2026-05-12T01:00:01.000Z","message":{"role":"user","content":"Run the build"}}"#,
        r#"{"type":"message","id":"a1","parentId":"u1","timestamp":"2026-05-12T01:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"Building."},{"type":"toolCall","id":"c1","name":"bash","arguments":{"command":"make"}}]}}"#,
    ]
    .join("\n");
    let c = read_text("open.jsonl", &text);
    assert_eq!(c.turns.len(), 1);
    assert_eq!(c.turns[0].answer, "Building.");
    assert_eq!(c.turns[0].tool_calls[0].output, None);
    assert!(!c.turns[0].complete);
}

#[test]
fn injected_skill_text_is_not_the_persons_words() {
    let text = [
        r#"{"type":"session","version":3,"id":"pi-skill","timestamp":"2026-05-12T01:00:00.000Z","cwd":"/p"}"#,
        &json!({"type": "message", "id": "u1", "parentId": null, "timestamp": "2026-05-12T01:00:01.000Z",
                "message": {"role": "user", "content": [{"type": "text", "text": "<skill name=\"release\" location=\"/skills/release/SKILL.md\">\nBump the version, tag, push.\n</skill>\n\nrelease 1.2.0"}]}})
        .to_string(),
        r#"{"type":"message","id":"a1","parentId":"u1","timestamp":"2026-05-12T01:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"Released 1.2.0."}]}}"#,
        r#"{"type":"message","id":"c1","parentId":"a1","timestamp":"2026-05-12T01:00:03.000Z","message":{"role":"custom","customType":"note","content":"extension text","display":true}}"#,
    ]
    .join("\n");
    let c = read_text("skill.jsonl", &text);
    assert_eq!(c.turns.len(), 1);
    assert_eq!(c.turns[0].request, "release 1.2.0");
    assert!(c.turns[0].complete);
}

#[test]
fn version_one_files_without_ids_read_in_order() {
    let text = [
        r#"{"type":"session","id":"pi-v1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/old"}"#,
        r#"{"type":"message","timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hello"}}"#,
        r#"{"type":"message","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"hi"}]}}"#,
    ]
    .join("\n");
    let c = read_text("v1.jsonl", &text);
    assert_eq!(c.turns.len(), 1);
    let t0 = at("2026-01-01T00:00:01.000Z");
    assert_eq!(
        c.turns[0].id,
        stable_id(&["pi-v1", &t0.to_string(), "hello"]),
        "no record id: the hash"
    );
    assert_eq!(c.turns[0].answer, "hi");
}

fn touch(path: &Path) -> PathBuf {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, "{\"type\":\"session\",\"id\":\"s\"}\n").unwrap();
    path.to_path_buf()
}

#[test]
fn sessions_are_found_under_the_agent_dir() {
    let home = tempfile::tempdir().unwrap();
    let source = Pi::new(&env_at(home.path()));
    assert!(!source.detected());
    let file = touch(
        &home
            .path()
            .join(".pi/agent/sessions/--home-me-project--/2026-05-12T01-00-00_abc.jsonl"),
    );
    touch(&home.path().join(".pi/agent/settings.json"));
    assert!(source.detected());
    assert_eq!((source.name(), source.label()), ("pi", "Pi"));
    assert_eq!(source.files(), vec![file]);

    let other = tempfile::tempdir().unwrap();
    let moved = touch(&other.path().join("sessions/--p--/s.jsonl"));
    let mut env = env_at(home.path());
    env.vars.insert(
        "PI_CODING_AGENT_DIR".into(),
        other.path().display().to_string(),
    );
    assert_eq!(Pi::new(&env).files(), vec![moved.clone()]);

    let env = SourceEnv {
        overrides: [("pi".to_owned(), other.path().join("sessions"))].into(),
        ..env_at(home.path())
    };
    assert_eq!(Pi::new(&env).files(), vec![moved]);
}

//! Generated Claude Code history of any size, for the crash test and the import benchmark:
//! realistic records (a prompt, thinking, a tool call and its result, an answer; meta and
//! snapshot records between) with unique ids.

use serde_json::json;

/// One session file's text: `turns` turns of the session `session` working in `cwd`.
pub fn claude_code_session(session: &str, cwd: &str, turns: usize) -> String {
    let mut out = String::new();
    let mut parent: Option<String> = None;
    let line = |value: serde_json::Value, out: &mut String| {
        out.push_str(&value.to_string());
        out.push('\n');
    };
    for t in 0..turns {
        let minute = t % 60;
        let hour = (t / 60) % 24;
        let at = |second: usize| {
            format!(
                "2026-03-{:02}T{hour:02}:{minute:02}:{second:02}.000Z",
                1 + (t / 1440) % 28
            )
        };
        let user = format!("{session}-u{t}");
        line(
            json!({"type": "user", "uuid": user, "parentUuid": parent, "sessionId": session, "cwd": cwd,
            "timestamp": at(0), "isSidechain": false, "userType": "external", "version": "2.1.80", "gitBranch": "main",
            "message": {"role": "user", "content": format!("Please check why build step {t} of the {session} pipeline fails with error E{:04} in src/module_{}.rs", t * 7 % 10000, t % 50)}}),
            &mut out,
        );
        let think = format!("{session}-a{t}");
        line(
            json!({"type": "assistant", "uuid": think, "parentUuid": user, "sessionId": session, "cwd": cwd,
            "timestamp": at(2), "requestId": format!("req-{session}-{t}"),
            "message": {"id": format!("msg-{session}-{t}"), "role": "assistant", "model": "claude-sonnet-4",
                "content": [{"type": "thinking", "thinking": format!("The error E{:04} usually means a missing import; read the module first.", t * 7 % 10000)},
                    {"type": "tool_use", "id": format!("toolu-{session}-{t}"), "name": "Bash", "input": {"command": format!("cargo build -p module_{} 2>&1 | tail -40", t % 50)}}],
                "usage": {"input_tokens": 1200, "output_tokens": 80}}}),
            &mut out,
        );
        let result = format!("{session}-r{t}");
        let log: String = (0..30)
            .map(|i| format!("   Compiling dependency_{i} v0.{i}.{t}\n"))
            .collect();
        line(
            json!({"type": "user", "uuid": result, "parentUuid": think, "sessionId": session, "cwd": cwd,
            "timestamp": at(20), "toolUseResult": {"stdout": log, "stderr": "", "interrupted": false},
            "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": format!("toolu-{session}-{t}"),
                "content": format!("{log}error[E{:04}]: cannot find value `config` in this scope\n --> src/module_{}.rs:{}:9", t * 7 % 10000, t % 50, t % 300)}]}}),
            &mut out,
        );
        line(
            json!({"type": "file-history-snapshot", "messageId": result, "snapshot": {"trackedFileBackups": {}}}),
            &mut out,
        );
        let answer = format!("{session}-f{t}");
        line(
            json!({"type": "assistant", "uuid": answer, "parentUuid": result, "sessionId": session, "cwd": cwd,
            "timestamp": at(31),
            "message": {"id": format!("msg-{session}-{t}-b"), "role": "assistant", "model": "claude-sonnet-4",
                "content": [{"type": "text", "text": format!("Step {t} fails because `config` is not imported in src/module_{}.rs. Add `use crate::config;` at the top and rebuild; the rest of the pipeline is unaffected.", t % 50)}],
                "usage": {"input_tokens": 2400, "output_tokens": 60}}}),
            &mut out,
        );
        parent = Some(answer);
    }
    out
}

//! Dreams as a person runs them: `cairn memory dream [--dry-run]`, `dream-log` and
//! `dream-restore`, straight on the database and through the running API (which needs the
//! token); and a dream on Cairn's own model, which writes a finished conversation's note.

use std::process::Command;

use cairn_protocol::memory::{Dream, DreamChangeKind, DreamState};
use cairn_protocol::RuntimeInfo;
use serde_json::{json, Value};

use crate::{cairn, home_with_model, start_server, stdout};

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// One request to the running app's API (`token`: with its token): the status and the JSON.
fn call(
    info: &RuntimeInfo,
    method: reqwest::Method,
    path: &str,
    body: Option<Value>,
    token: bool,
) -> Result<(u16, Value), Box<dyn std::error::Error>> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let mut request = reqwest::Client::builder()
            .no_proxy()
            .build()?
            .request(method, format!("{}{path}", info.api_url));
        if token {
            request = request.bearer_auth(&info.token);
        }
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await?;
        let status = response.status().as_u16();
        Ok((status, response.json().await.unwrap_or(Value::Null)))
    })
}

fn search_count(home: &std::path::Path, query: &str) -> Result<usize, Box<dyn std::error::Error>> {
    let found = cairn(home, &["memory", "search", query, "--json"])?;
    let found: serde_json::Value = serde_json::from_str(&stdout(&found))?;
    Ok(found["hits"].as_array().map_or(0, Vec::len))
}

#[test]
fn a_dream_merges_is_logged_and_is_undone_with_and_without_the_app() -> TestResult {
    let dir = tempfile::tempdir()?;
    let home = dir.path();
    for text in [
        "I moved to Lisbon with my sister last spring.",
        "Last spring I moved to Lisbon with my sister",
    ] {
        assert!(cairn(home, &["memory", "add", text])?.status.success());
    }
    assert_eq!(search_count(home, "Lisbon sister")?, 2);

    let dry = cairn(home, &["memory", "dream", "--dry-run"])?;
    let said = stdout(&dry);
    assert!(
        said.starts_with("dream 1 ·")
            && said.contains("dry run (cli)")
            && said.contains("1 merged"),
        "{said}"
    );
    assert_eq!(search_count(home, "Lisbon sister")?, 2);

    let dreamt = cairn(home, &["memory", "dream", "--json"])?;
    assert!(dreamt.status.success());
    let dream: Dream = serde_json::from_str(&stdout(&dreamt))?;
    assert_eq!(dream.state, DreamState::Done);
    assert_eq!(dream.changes[0].kind, DreamChangeKind::Merged);
    assert_eq!(search_count(home, "Lisbon sister")?, 1);

    // With the app running, the same commands go through its API.
    let (mut server, info) = start_server(home)?;
    let outcome = (|| -> TestResult {
        let log = stdout(&cairn(home, &["memory", "dream-log"])?);
        assert!(
            log.contains("dream 2 ·") && log.contains("undo with `cairn memory dream-restore 2`"),
            "{log}"
        );
        assert!(log.find("dream 2").ok_or("2")? < log.find("dream 1").ok_or("1")?);
        // The log is the memory's: no token, no answer.
        let path = "/api/v1/memory/dreams";
        assert_eq!(call(&info, reqwest::Method::GET, path, None, false)?.0, 401);
        let (status, log) = call(&info, reqwest::Method::GET, path, None, true)?;
        assert_eq!(status, 200);
        assert_eq!(serde_json::from_value::<Vec<Dream>>(log)?.len(), 2);

        let restored = cairn(home, &["memory", "dream-restore", "2"])?;
        assert!(
            stdout(&restored).starts_with("the memory is back as it was before dream 2"),
            "{}{}",
            stdout(&restored),
            String::from_utf8_lossy(&restored.stderr)
        );
        assert_eq!(search_count(home, "Lisbon sister")?, 2);
        let again = cairn(home, &["memory", "dream-restore", "1"])?;
        assert!(!again.status.success());
        assert!(String::from_utf8_lossy(&again.stderr).contains("dry run"));
        let log = stdout(&cairn(home, &["memory", "dream-log"])?);
        assert!(
            log.contains("undone by `cairn memory dream-restore 2`"),
            "{log}"
        );
        Ok(())
    })();
    Command::new("kill").arg(server.id().to_string()).status()?;
    server.wait()?;
    outcome
}

/// A conversation of three turns from yesterday gets a note from Cairn's own model, dated with
/// it, that names what the conversation was about.
#[test]
fn a_dream_on_the_local_model_writes_a_finished_conversations_note() -> TestResult {
    let Some(home) = home_with_model("llm/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf")? else {
        return Ok(());
    };
    let (mut server, info) = start_server(home.path())?;
    let outcome = (|| -> TestResult {
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH)?;
        let yesterday = now.as_millis() as i64 - 24 * 60 * 60 * 1000;
        for (i, text) in [
            "user: I'm planning a trip to Kyoto in April with my brother Tomas.",
            "assistant: Nice! April is cherry blossom season in Kyoto. Do you have a hotel yet?",
            "user: Yes, we booked the Hotel Sakura near Gion for five nights.",
        ]
        .iter()
        .enumerate()
        {
            let memory = json!({
                "text": text,
                "session": "kyoto-trip",
                "created_at": yesterday + i as i64 * 60_000,
            });
            let (status, _) = call(
                &info,
                reqwest::Method::POST,
                "/api/v1/memory/add",
                Some(memory),
                true,
            )?;
            assert_eq!(status, 200);
        }
        let (_, dream) = call(
            &info,
            reqwest::Method::POST,
            "/api/v1/memory/dream",
            Some(json!({})),
            true,
        )?;
        let dream: Dream = serde_json::from_value(dream)?;
        assert_eq!(dream.state, DreamState::Done, "{:?}", dream);
        let note = dream
            .changes
            .iter()
            .find(|c| c.kind == DreamChangeKind::Noted)
            .ok_or_else(|| format!("no note: {dream:?}"))?;
        let path = format!("/api/v1/memory/{}", note.memory);
        let (_, written) = call(&info, reqwest::Method::GET, &path, None, true)?;
        let text = written["text"].as_str().ok_or("text")?;
        assert!(
            ["Kyoto", "Tomas", "Sakura"]
                .iter()
                .any(|w| text.contains(w)),
            "the note names nothing of the conversation: {text}"
        );
        assert_eq!(written["source"], "cairn-dream");
        assert_eq!(written["created_at"], yesterday + 2 * 60_000);
        Ok(())
    })();
    Command::new("kill").arg(server.id().to_string()).status()?;
    server.wait()?;
    outcome
}

//! Finding 13: a real server on loopback holds at most so many event streams, MCP sessions,
//! running tasks and `/v1` answers for keys at once; past each cap a clear 429, and the rest —
//! the owner's own `/v1` request included — is still served.

use std::sync::Arc;
use std::time::Duration;

use cairn_api::chat::Chat;
use cairn_api::Cairn;
use cairn_config::Home;
use cairn_test_support::{delta, finish, MockServer, Reply};
use serde_json::{json, Value};

const KEY: &str = "sk-cairn-caps-test-key-for-programs";

/// A reply that starts at once and ends `pause` later: an answer still being written.
fn slow(pause: Duration) -> Reply {
    Reply::Sse {
        data: vec![
            delta(json!({"content": "working"})).to_string(),
            finish("stop").to_string(),
            "[DONE]".into(),
        ],
        pause,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streams_sessions_tasks_and_key_answers_are_capped_and_the_owner_still_served(
) -> Result<(), Box<dyn std::error::Error>> {
    let model = MockServer::start((0..40).map(|_| slow(Duration::from_secs(20))).collect()).await?;
    let dir = tempfile::tempdir()?;
    std::fs::write(
        dir.path().join("config.toml"),
        format!(
            "[agent]\nmodel = \"mock/m1\"\n\n[providers.mock]\nkind = \"openai\"\nbase_url = \"{}\"\nmodels = [\"m1\"]\n\n[api]\nkeys = [\"{KEY}\"]\n",
            model.base_url
        ),
    )?;
    let cairn = Cairn::with_env(Home::at(dir.path()), Arc::new(|_: &str| None));
    let chat = Arc::new(Chat::new(cairn.clone(), dir.path().to_path_buf()));
    let api = cairn_http::serve(cairn, None, chat).await?;
    let (url, token) = (api.info().api_url.clone(), api.info().token.clone());
    let client = reqwest::Client::builder().no_proxy().build()?;
    let owner_is_served = || async {
        let listed = client
            .get(format!("{url}/api/v1/tasks"))
            .bearer_auth(&token)
            .send()
            .await?;
        Ok::<_, reqwest::Error>(listed.status() == 200)
    };

    // Event streams.
    let events = || {
        client
            .get(format!("{url}/api/v1/events"))
            .bearer_auth(&token)
            .send()
    };
    let mut streams = Vec::new();
    for _ in 0..cairn_http::MAX_EVENT_STREAMS {
        let stream = events().await?;
        assert_eq!(stream.status(), 200);
        streams.push(stream);
    }
    let refused = events().await?;
    assert_eq!(refused.status(), 429);
    let body: Value = refused.json().await?;
    assert_eq!(body["code"], "too_many", "{body}");
    assert!(owner_is_served().await?);
    drop(streams.pop());
    let mut reopened = false;
    for _ in 0..50 {
        let again = events().await?;
        if again.status() == 200 {
            reopened = true;
            streams.push(again);
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(reopened, "a closed stream frees its place");

    // MCP sessions.
    let hello = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let initialize = || {
        client
            .post(format!("{url}/mcp"))
            .bearer_auth(&token)
            .header("accept", "application/json, text/event-stream")
            .json(&hello)
            .send()
    };
    let mut sessions = Vec::new();
    for _ in 0..cairn_http::MAX_MCP_SESSIONS {
        let session = initialize().await?;
        assert_eq!(session.status(), 200);
        assert!(session.headers().contains_key("mcp-session-id"));
        sessions.push(session);
    }
    assert_eq!(initialize().await?.status(), 429);
    assert!(owner_is_served().await?);

    // Tasks running.
    let create = || {
        client
            .post(format!("{url}/api/v1/tasks"))
            .bearer_auth(&token)
            .json(&json!({"message": "take your time"}))
            .send()
    };
    for _ in 0..cairn_http::MAX_RUNNING_TASKS {
        assert_eq!(create().await?.status(), 201);
    }
    assert_eq!(create().await?.status(), 429);
    assert!(owner_is_served().await?);

    // Answers for API keys; the owner's own is not counted.
    let completion = |key: &str| {
        client
            .post(format!("{url}/v1/chat/completions"))
            .bearer_auth(key)
            .json(&json!({"model": "cairn", "stream": true,
                "messages": [{"role": "user", "content": "hello"}]}))
            .send()
    };
    let mut answers = Vec::new();
    for _ in 0..cairn_http::MAX_KEY_COMPLETIONS {
        let answer = completion(KEY).await?;
        assert_eq!(answer.status(), 200);
        answers.push(answer);
    }
    let refused = completion(KEY).await?;
    assert_eq!(refused.status(), 429);
    let body: Value = refused.json().await?;
    assert_eq!(body["error"]["code"], "too_many_requests", "{body}");
    assert_eq!(
        completion(&token).await?.status(),
        200,
        "the owner is served at the cap"
    );
    Ok(())
}

//! The memory API as an external agent's hook uses it.

use axum::body::Body;
use axum::http::{Method, Request, StatusCode};
use axum::Router;
use serde_json::{json, Value};
use tower::ServiceExt;

const TOKEN: &str = "feedfacefeedfacefeedfacefeedfacefeedfacefeedfacefeedfacefeedface";

struct Api {
    router: Router,
    _home: tempfile::TempDir,
}

impl Api {
    fn new() -> Result<Self, Box<dyn std::error::Error>> {
        let home = tempfile::tempdir()?;
        let router = crate::test_app(home.path(), TOKEN);
        Ok(Self {
            router,
            _home: home,
        })
    }

    async fn call(
        &self,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> Result<(StatusCode, Value), Box<dyn std::error::Error>> {
        let request = Request::builder()
            .method(method)
            .uri(path)
            .header("host", "127.0.0.1:9")
            .header("authorization", format!("Bearer {TOKEN}"))
            .header("content-type", "application/json");
        let request = match body {
            Some(body) => request.body(Body::from(body.to_string()))?,
            None => request.body(Body::empty())?,
        };
        let response = self.router.clone().oneshot(request).await?;
        let status = response.status();
        let bytes = axum::body::to_bytes(response.into_body(), 16 << 20).await?;
        let value = if bytes.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&bytes)?
        };
        Ok((status, value))
    }
}

#[tokio::test]
async fn a_hook_captures_a_turn_and_recalls_it_later() -> Result<(), Box<dyn std::error::Error>> {
    let api = Api::new()?;
    let (status, opened) = api
        .call(
            Method::POST,
            "/api/v1/sessions/open",
            Some(json!({ "session_id": "cc-1", "source": "claude-code" })),
        )
        .await?;
    assert_eq!(status, StatusCode::OK, "{opened}");
    let (status, started) = api
        .call(
            Method::POST,
            "/api/v1/turns/start",
            Some(json!({ "session": "cc-1", "source": "claude-code", "request": "why does the deploy to fly.io fail?", "idempotency_key": "cc-1:1" })),
        )
        .await?;
    assert_eq!(status, StatusCode::OK, "{started}");
    let turn = started["turn_id"].as_i64().ok_or("no turn id")?;
    let (status, done) = api
        .call(
            Method::POST,
            &format!("/api/v1/turns/{turn}/complete"),
            Some(json!({
                "answer": "The fly.toml health check pointed at port 8080 while the app listens on 3000.",
                "tool_calls": [{ "id": "t1", "name": "bash", "input": { "command": "fly logs" }, "output": "health check failed on :8080" }]
            })),
        )
        .await?;
    assert_eq!(status, StatusCode::OK, "{done}");
    assert_eq!(done["outcome"], "captured");
    let (_, again) = api
        .call(
            Method::POST,
            &format!("/api/v1/turns/{turn}/complete"),
            Some(json!({ "answer": "x" })),
        )
        .await?;
    assert_eq!(again["outcome"], "already_captured");

    let (status, found) = api
        .call(
            Method::POST,
            "/api/v1/memory/search",
            Some(json!({ "query": "fly.io deploy health check port", "verbose": true })),
        )
        .await?;
    assert_eq!(status, StatusCode::OK, "{found}");
    assert_eq!(found["hits"][0]["memory"]["source"], "claude-code");
    assert!(found["hits"][0]["channels"][0]["channel"].is_string());
    assert!(found["injection"]
        .as_str()
        .unwrap_or_default()
        .contains("port 8080"));
    assert!(found["took_ms"].is_number());
    Ok(())
}

#[tokio::test]
async fn add_get_delete_round_trip_with_external_ids() -> Result<(), Box<dyn std::error::Error>> {
    let api = Api::new()?;
    let memory = json!({
        "text": "Team standup moved to 9:30",
        "source": "notes",
        "external_id": "note-7",
        "created_at": 1_700_000_000_000i64,
        "metadata": { "author": "ada" }
    });
    let (status, added) = api
        .call(Method::POST, "/api/v1/memory/add", Some(memory.clone()))
        .await?;
    assert_eq!(status, StatusCode::OK, "{added}");
    let id = added["id"].as_i64().ok_or("no id")?;
    let (_, same) = api
        .call(Method::POST, "/api/v1/memory/add", Some(memory))
        .await?;
    assert_eq!(same["id"], id, "the same external id is the same memory");

    let (_, found) = api
        .call(
            Method::POST,
            "/api/v1/memory/search",
            Some(json!({ "query": "standup", "sources": ["notes"] })),
        )
        .await?;
    let hit = &found["hits"][0]["memory"];
    assert_eq!(hit["external_id"], "note-7");
    assert_eq!(hit["created_at"], 1_700_000_000_000i64);
    assert_eq!(hit["metadata"]["author"], "ada");

    let (status, got) = api
        .call(Method::GET, &format!("/api/v1/memory/{id}"), None)
        .await?;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(got["text"], "Team standup moved to 9:30");
    let (status, deleted) = api
        .call(Method::DELETE, &format!("/api/v1/memory/{id}"), None)
        .await?;
    assert_eq!(
        (status, deleted["deleted"].as_bool()),
        (StatusCode::OK, Some(true))
    );
    let (status, gone) = api
        .call(Method::GET, &format!("/api/v1/memory/{id}"), None)
        .await?;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(gone["code"], "not_found");
    Ok(())
}

#[tokio::test]
async fn bad_requests_get_clear_json_errors() -> Result<(), Box<dyn std::error::Error>> {
    let api = Api::new()?;
    let (status, body) = api
        .call(
            Method::POST,
            "/api/v1/memory/add",
            Some(json!({ "txt": "typo" })),
        )
        .await?;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(body["code"], "bad_request");
    let (status, body) = api
        .call(
            Method::POST,
            "/api/v1/memory/search",
            Some(json!({ "query": "  " })),
        )
        .await?;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(body["message"]
        .as_str()
        .unwrap_or_default()
        .contains("needs a query"));
    let (status, _) = api
        .call(Method::GET, "/api/v1/memory/not-a-number", None)
        .await?;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let (status, body) = api
        .call(Method::GET, "/api/v1/panel/items?layer=L9", None)
        .await?;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(body["message"]
        .as_str()
        .unwrap_or_default()
        .contains("unknown layer"));
    let (status, _) = api
        .call(
            Method::POST,
            "/api/v1/turns/999/complete",
            Some(json!({ "answer": "a" })),
        )
        .await?;
    assert_eq!(status, StatusCode::NOT_FOUND);
    Ok(())
}

#[tokio::test]
async fn the_panel_reports_overview_items_and_analysis() -> Result<(), Box<dyn std::error::Error>> {
    let api = Api::new()?;
    for (text, layer) in [
        ("policy: always run tests", "L2"),
        ("trace: ran tests", "L1"),
    ] {
        api.call(
            Method::POST,
            "/api/v1/memory/add",
            Some(json!({ "text": text, "layer": layer })),
        )
        .await?;
    }
    api.call(
        Method::POST,
        "/api/v1/memory/search",
        Some(json!({ "query": "tests" })),
    )
    .await?;
    let (status, overview) = api
        .call(Method::GET, "/api/v1/panel/overview", None)
        .await?;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(overview["total"], 2);
    let (_, items) = api
        .call(Method::GET, "/api/v1/panel/items?layer=L2", None)
        .await?;
    assert_eq!(items.as_array().map(Vec::len), Some(1));
    assert_eq!(items[0]["layer"], "L2");
    let (_, analysis) = api
        .call(Method::GET, "/api/v1/panel/analysis", None)
        .await?;
    assert_eq!(analysis["searches"], 1);
    assert_eq!(analysis["hit_rate"], 100.0);
    Ok(())
}

#[tokio::test]
async fn every_memory_route_needs_the_token() -> Result<(), Box<dyn std::error::Error>> {
    let api = Api::new()?;
    for (method, path) in [
        (Method::POST, "/api/v1/sessions/open"),
        (Method::POST, "/api/v1/turns/start"),
        (Method::POST, "/api/v1/memory/search"),
        (Method::POST, "/api/v1/memory/add"),
        (Method::GET, "/api/v1/memory/1"),
        (Method::DELETE, "/api/v1/memory/1"),
        (Method::GET, "/api/v1/panel/overview"),
    ] {
        let request = Request::builder()
            .method(method.clone())
            .uri(path)
            .header("host", "127.0.0.1:9")
            .body(Body::empty())?;
        let response = api.router.clone().oneshot(request).await?;
        assert_eq!(
            response.status(),
            StatusCode::UNAUTHORIZED,
            "{method} {path}"
        );
    }
    Ok(())
}

#[tokio::test]
async fn sources_are_listed_and_an_unknown_one_is_refused() -> Result<(), Box<dyn std::error::Error>>
{
    let api = Api::new()?;
    let (status, listed) = api.call(Method::GET, "/api/v1/sources", None).await?;
    assert_eq!(status, StatusCode::OK);
    let names: Vec<&str> = listed
        .as_array()
        .ok_or("not a list")?
        .iter()
        .filter_map(|s| s["name"].as_str())
        .collect();
    for name in [
        "claude-code",
        "codex",
        "cursor",
        "opencode",
        "gemini",
        "hermes",
        "pi",
    ] {
        assert!(names.contains(&name), "{name} in {names:?}");
    }
    let (status, error) = api
        .call(
            Method::POST,
            "/api/v1/sources/scan",
            Some(json!({"source": "nope"})),
        )
        .await?;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(error["message"]
        .as_str()
        .unwrap_or("")
        .starts_with("no source called \"nope\""));
    Ok(())
}

#[tokio::test]
async fn a_superseded_fact_shows_its_history_and_the_current_value_first(
) -> Result<(), Box<dyn std::error::Error>> {
    let api = Api::new()?;
    let mut ids = Vec::new();
    for (day, text) in [
        (1, "Ada: our staging server is at 10.0.3.5"),
        (2, "Ada: I moved our staging server to 10.0.3.7 now"),
    ] {
        let (status, added) = api
            .call(
                Method::POST,
                "/api/v1/memory/add",
                Some(
                    json!({ "text": text, "created_at": 1_700_000_000_000i64 + day * 86_400_000 }),
                ),
            )
            .await?;
        assert_eq!(status, StatusCode::OK, "{added}");
        ids.push(added["id"].as_i64().ok_or("no id")?);
    }
    // The background queue reads new memories for facts that change.
    let mut versions = Value::Null;
    for _ in 0..100 {
        let (status, body) = api
            .call(
                Method::GET,
                &format!("/api/v1/memory/{}/versions", ids[0]),
                None,
            )
            .await?;
        assert_eq!(status, StatusCode::OK, "{body}");
        versions = body;
        if versions.as_array().is_some_and(|v| v.len() == 2) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let order: Vec<i64> = versions
        .as_array()
        .ok_or("a list")?
        .iter()
        .filter_map(|m| m["id"].as_i64())
        .collect();
    assert_eq!(order, ids, "oldest first: {versions}");
    assert_eq!(versions[0]["metadata"]["superseded_by"], ids[1]);

    let (_, found) = api
        .call(
            Method::POST,
            "/api/v1/memory/search",
            Some(json!({ "query": "where is our staging server now?" })),
        )
        .await?;
    assert_eq!(found["hits"][0]["memory"]["id"], ids[1], "{found}");

    let (status, missing) = api
        .call(Method::GET, "/api/v1/memory/999999/versions", None)
        .await?;
    assert_eq!(status, StatusCode::NOT_FOUND, "{missing}");
    Ok(())
}

#[tokio::test]
async fn a_reply_is_rated_over_http_and_bad_feedback_is_refused(
) -> Result<(), Box<dyn std::error::Error>> {
    let api = Api::new()?;
    let (_, started) = api
        .call(
            Method::POST,
            "/api/v1/turns/start",
            Some(json!({ "session": "w-1", "request": "why is the login test flaky?" })),
        )
        .await?;
    let turn = started["turn_id"].as_i64().ok_or("no turn id")?;
    let (_, done) = api
        .call(
            Method::POST,
            &format!("/api/v1/turns/{turn}/complete"),
            Some(json!({ "answer": "It races the session cookie; await the redirect first." })),
        )
        .await?;
    let memory = done["memory_id"].as_i64().ok_or("no memory id")?;

    let (status, reward) = api
        .call(
            Method::POST,
            "/api/v1/feedback",
            Some(json!({ "turn_id": turn, "rating": "up", "note": "fixed it" })),
        )
        .await?;
    assert_eq!(status, StatusCode::OK, "{reward}");
    assert_eq!(reward["memory_id"], memory);
    assert_eq!(reward["reward"], 1.0);
    let (_, stored) = api
        .call(Method::GET, &format!("/api/v1/memory/{memory}"), None)
        .await?;
    assert_eq!(stored["metadata"]["value"], 1.0);

    for (body, expected) in [
        (
            json!({ "memory_id": 999_999, "rating": "up" }),
            StatusCode::NOT_FOUND,
        ),
        (json!({ "rating": "down" }), StatusCode::BAD_REQUEST),
        (
            json!({ "memory_id": memory, "rating": "meh" }),
            StatusCode::BAD_REQUEST,
        ),
    ] {
        let (status, error) = api
            .call(Method::POST, "/api/v1/feedback", Some(body.clone()))
            .await?;
        assert_eq!(status, expected, "{body} → {error}");
        assert!(error["message"].is_string(), "{error}");
    }
    Ok(())
}

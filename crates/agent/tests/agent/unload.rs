//! unload_model through the loop, against fake model servers that answer like Ollama and
//! llama.cpp's llama-server: the results compared whole.

use std::sync::{Arc, Mutex};

use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::{Json, Router};
use cairn_agent::{Event, Runtime};
use cairn_test_support::{serve, text_reply, tool_calls_reply, MockServer};
use cairn_tools::{ModelServer, UnloadModel};
use serde_json::{json, Value};
use tempfile::TempDir;

use crate::support::{results, run, Setup};

type TestResult = Result<(), Box<dyn std::error::Error>>;

fn displays(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::ToolCall { display, .. } => Some(display.clone()),
            _ => None,
        })
        .collect()
}

/// Runs one step calling unload_model with each of `models`, against `server`.
async fn unload(
    server: ModelServer,
    own: &str,
    models: &[&str],
) -> Result<Vec<Event>, Box<dyn std::error::Error>> {
    let dir = TempDir::new()?;
    let calls: Vec<(String, Value)> = models
        .iter()
        .enumerate()
        .map(|(i, m)| (format!("c{i}"), json!({"model": m})))
        .collect();
    let calls: Vec<(&str, &str, Value)> = calls
        .iter()
        .map(|(id, args)| (id.as_str(), "unload_model", args.clone()))
        .collect();
    let model = MockServer::start(vec![tool_calls_reply("", &calls), text_reply("Done.")]).await?;
    let mut settings = Setup::new(&model, dir.path()).settings();
    settings.tools.add(Arc::new(UnloadModel::new(server, own)));
    let runtime = Runtime::new(settings, None);
    Ok(run(&runtime, "s", "free some memory").await)
}

#[tokio::test]
async fn ollama_models_are_unloaded_only_when_loaded() -> TestResult {
    let generated: Arc<Mutex<Vec<Value>>> = Arc::default();
    let seen = generated.clone();
    let root = serve(
        Router::new()
            .route(
                "/api/ps",
                get(|| async {
                    Json(json!({"models": [{"name": "llama3:latest", "model": "llama3:latest"}]}))
                }),
            )
            .route(
                "/api/generate",
                post(move |Json(body): Json<Value>| {
                    let seen = seen.clone();
                    async move {
                        if let Ok(mut seen) = seen.lock() {
                            seen.push(body.clone());
                        }
                        Json(json!({"model": body["model"], "done": true, "done_reason": "unload"}))
                    }
                }),
            ),
    )
    .await?;
    let events = unload(
        ModelServer::Ollama { root },
        "llama3",
        &["llama3", "qwen2.5:7b", ""],
    )
    .await?;
    assert_eq!(
        results(&events),
        [
            "[#0001]\nunloaded llama3",
            "[#0002]\nqwen2.5:7b was not loaded: nothing to unload",
            "[#0003]\nunloaded llama3",
        ]
    );
    assert_eq!(
        displays(&events),
        [
            "🧹 unload_model: llama3",
            "🧹 unload_model: qwen2.5:7b",
            "🧹 unload_model: (own model)"
        ]
    );
    let generated = generated.lock().map(|g| g.clone()).unwrap_or_default();
    let unload = json!({"model": "llama3:latest", "keep_alive": 0});
    assert_eq!(
        generated,
        [unload.clone(), unload],
        "a model that is not loaded is never asked for"
    );
    Ok(())
}

#[tokio::test]
async fn llama_cpp_unloads_in_router_mode_and_explains_otherwise() -> TestResult {
    let router = serve(Router::new().route(
        "/models/unload",
        post(|Json(body): Json<Value>| async move {
            if body["model"] == "qwen" {
                (StatusCode::OK, Json(json!({"success": true})))
            } else {
                (
                    StatusCode::BAD_REQUEST,
                    Json(json!({"error": {"message": "model is not loaded"}})),
                )
            }
        }),
    ))
    .await?;
    let events = unload(
        ModelServer::OpenAiCompatible { root: router },
        "qwen",
        &["", "gemma"],
    )
    .await?;
    assert_eq!(
        results(&events),
        [
            "[#0001]\nunloaded qwen",
            "[#0002]\ngemma was not loaded: nothing to unload"
        ]
    );

    let single = serve(Router::new()).await?;
    let events = unload(
        ModelServer::OpenAiCompatible { root: single },
        "qwen",
        &[""],
    )
    .await?;
    assert_eq!(
        results(&events),
        ["[#0001]\ncannot unload qwen: the server has no /models/unload: llama-server offers it in router mode only (started without a model); otherwise start it with --sleep-idle-seconds N, or stop the server"]
    );
    Ok(())
}

#[tokio::test]
async fn a_hosted_or_unreachable_server_cannot_unload() -> TestResult {
    let events = unload(
        ModelServer::Hosted {
            kind: "anthropic".into(),
        },
        "claude",
        &[""],
    )
    .await?;
    assert_eq!(
        results(&events),
        ["[#0001]\ncannot unload claude: the anthropic provider cannot unload a model"]
    );
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    let root = format!("http://{}", listener.local_addr()?);
    drop(listener);
    let events = unload(ModelServer::Ollama { root: root.clone() }, "llama3", &[""]).await?;
    let out = results(&events);
    assert!(
        out[0].starts_with(&format!(
            "[#0001]\ncannot unload llama3: {root}/api/ps is unreachable ("
        )),
        "{}",
        out[0]
    );
    Ok(())
}

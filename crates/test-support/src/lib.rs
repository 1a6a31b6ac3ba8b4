//! Test helpers shared by the crates' tests: a mock model server (OpenAI chat completions and
//! Anthropic messages, on one script) that plays scripted replies (SSE streams or HTTP errors) in
//! order and records each request body; and [`serve`], any router on a free loopback port (the
//! web pages fetch_content reads in tests); and [`Postgres`], a throwaway PostgreSQL cluster.

mod postgres;

pub use postgres::Postgres;

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use futures_util::stream;
use serde_json::Value;

/// One scripted answer.
pub enum Reply {
    /// SSE `data:` payloads, sent in order with `pause` before each after the first.
    Sse { data: Vec<String>, pause: Duration },
    /// An HTTP error with an optional Retry-After.
    Status {
        status: u16,
        retry_after: Option<&'static str>,
        body: String,
    },
}

impl Reply {
    /// An SSE stream of `chunks`, then `[DONE]`.
    pub fn sse(chunks: &[Value]) -> Self {
        let mut data: Vec<String> = chunks.iter().map(Value::to_string).collect();
        data.push("[DONE]".into());
        Self::Sse {
            data,
            pause: Duration::ZERO,
        }
    }
}

#[derive(Default)]
struct Script {
    replies: Mutex<VecDeque<Reply>>,
    /// Replies for the conversations whose first user message contains the key (a subagent's,
    /// running beside the conversation that started it), each in its own order; when several
    /// keys are in it, the one found first.
    routes: Mutex<Vec<(String, VecDeque<Reply>)>>,
    requests: Mutex<Vec<Value>>,
    /// What answers when no scripted reply is left: a model whose next step depends on what it
    /// was sent.
    responder: Mutex<Option<Responder>>,
}

/// A reply computed from the request body.
pub type Responder = Arc<dyn Fn(&Value) -> Reply + Send + Sync>;

pub struct MockServer {
    pub base_url: String,
    script: Arc<Script>,
}

/// Serves `app` on a free loopback port until the test's runtime ends; returns `http://127.0.0.1:PORT`.
pub async fn serve(app: Router) -> Result<String, std::io::Error> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let origin = format!("http://{}", listener.local_addr()?);
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    Ok(origin)
}

impl MockServer {
    /// Starts on a free loopback port; `base_url` ends in `/v1`.
    pub async fn start(replies: Vec<Reply>) -> Result<Self, Box<dyn std::error::Error>> {
        let script = Arc::new(Script {
            replies: Mutex::new(replies.into()),
            routes: Mutex::default(),
            requests: Mutex::default(),
            responder: Mutex::default(),
        });
        let app = Router::new()
            .route("/v1/chat/completions", post(complete))
            .route("/v1/messages", post(complete))
            .route("/v1/models", get(models))
            .with_state(script.clone());
        let origin = serve(app).await?;
        Ok(Self {
            base_url: format!("{origin}/v1"),
            script,
        })
    }

    /// Answers the conversations whose first user message contains `key` with `replies`, in
    /// order, instead of the main script: concurrent conversations each get their own replies.
    pub fn route(&self, key: &str, replies: Vec<Reply>) {
        if let Ok(mut routes) = self.script.routes.lock() {
            routes.push((key.to_owned(), replies.into()));
        }
    }

    /// Answers every request the script does not with `responder(body)`: a scripted model that
    /// reads what it is sent (its conversation, what was recalled for it) to pick its next step.
    pub fn respond_with(&self, responder: impl Fn(&Value) -> Reply + Send + Sync + 'static) {
        if let Ok(mut slot) = self.script.responder.lock() {
            *slot = Some(Arc::new(responder));
        }
    }

    /// Every request body received so far, in order.
    pub fn requests(&self) -> Vec<Value> {
        self.script
            .requests
            .lock()
            .map(|r| r.clone())
            .unwrap_or_default()
    }
}

async fn models() -> Json<Value> {
    Json(
        serde_json::json!({ "object": "list", "data": [{ "id": "small-model" }, { "id": "big-model" }] }),
    )
}

async fn complete(State(script): State<Arc<Script>>, Json(body): Json<Value>) -> Response {
    let first_user = body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|m| m["role"] == "user")
        .map(|m| m["content"].to_string())
        .unwrap_or_default();
    let responder = script.responder.lock().ok().and_then(|r| r.clone());
    let computed = responder.map(|respond| respond(&body));
    if let Ok(mut requests) = script.requests.lock() {
        requests.push(body);
    }
    let routed = script.routes.lock().ok().and_then(|mut routes| {
        // The key found earliest wins: a conversation's own prompt comes before what it
        // recalled from the others.
        routes
            .iter_mut()
            .filter_map(|(key, replies)| first_user.find(key.as_str()).map(|at| (at, replies)))
            .min_by_key(|(at, _)| *at)
            .map(|(_, replies)| replies.pop_front())
    });
    let reply = match routed {
        Some(reply) => reply,
        None => script
            .replies
            .lock()
            .ok()
            .and_then(|mut r| r.pop_front())
            .or(computed),
    };
    match reply {
        None => (StatusCode::INTERNAL_SERVER_ERROR, "no scripted reply left").into_response(),
        Some(Reply::Status {
            status,
            retry_after,
            body,
        }) => {
            let mut response = (
                StatusCode::from_u16(status).unwrap_or(StatusCode::IM_A_TEAPOT),
                body,
            )
                .into_response();
            if let Some(value) = retry_after {
                response
                    .headers_mut()
                    .insert("retry-after", HeaderValue::from_static(value));
            }
            response
        }
        Some(Reply::Sse { data, pause }) => {
            let events = stream::unfold(
                (data.into_iter(), true),
                move |(mut rest, first)| async move {
                    let item = rest.next()?;
                    if !first {
                        tokio::time::sleep(pause).await;
                    }
                    Some((
                        Ok::<_, std::io::Error>(format!("data: {item}\n\n")),
                        (rest, false),
                    ))
                },
            );
            let mut response = Response::new(Body::from_stream(events));
            response.headers_mut().insert(
                "content-type",
                HeaderValue::from_static("text/event-stream"),
            );
            response
        }
    }
}

/// A chunk carrying one delta (`{"content": …}`, `{"tool_calls": …}`…).
pub fn delta(d: Value) -> Value {
    serde_json::json!({ "choices": [{ "index": 0, "delta": d, "finish_reason": null }] })
}

/// The chunk that ends a reply with `reason` (`stop`, `length`, `tool_calls`).
pub fn finish(reason: &str) -> Value {
    serde_json::json!({ "choices": [{ "index": 0, "delta": {}, "finish_reason": reason }] })
}

/// A whole text reply.
pub fn text_reply(text: &str) -> Reply {
    Reply::sse(&[
        delta(serde_json::json!({ "content": text })),
        finish("stop"),
    ])
}

/// A reply that calls tools: `(id, name, arguments)` each, streamed as OpenAI tool-call deltas
/// (the arguments in two pieces, as servers send them), after an optional `text`.
pub fn tool_calls_reply(text: &str, calls: &[(&str, &str, Value)]) -> Reply {
    let mut chunks = Vec::new();
    if !text.is_empty() {
        chunks.push(delta(serde_json::json!({ "content": text })));
    }
    for (index, (id, name, arguments)) in calls.iter().enumerate() {
        let arguments = arguments.to_string();
        let mut middle = arguments.len() / 2;
        while !arguments.is_char_boundary(middle) {
            middle -= 1;
        }
        let (head, tail) = arguments.split_at(middle);
        chunks.push(delta(serde_json::json!({ "tool_calls": [{
            "index": index, "id": id, "type": "function",
            "function": { "name": name, "arguments": head }
        }]})));
        chunks.push(delta(serde_json::json!({ "tool_calls": [{
            "index": index, "function": { "arguments": tail }
        }]})));
    }
    chunks.push(finish("tool_calls"));
    Reply::sse(&chunks)
}

/// A reply that calls one tool.
pub fn tool_call_reply(id: &str, name: &str, arguments: Value) -> Reply {
    tool_calls_reply("", &[(id, name, arguments)])
}

/// The MCP conformance suite setup installs (`@modelcontextprotocol/conformance`): the Node 22 it
/// runs on, and its script, ready for `node script server|client …`.
pub fn mcp_conformance_suite() -> Result<(std::path::PathBuf, std::path::PathBuf), String> {
    let home = std::env::var("HOME").map_err(|_| "HOME is not set".to_owned())?;
    let root = std::path::Path::new(&home).join(".cache/cairn/clients/conformance");
    let node = root.join("node_modules/.bin/node");
    let script = root.join("node_modules/@modelcontextprotocol/conformance/dist/index.js");
    if node.exists() && script.exists() {
        Ok((node, script))
    } else {
        Err(format!(
            "the MCP conformance suite is missing in {}: run scripts/setup.sh",
            root.display()
        ))
    }
}

/// The language servers setup installs for the `lsp` tool's tests.
pub struct LanguageServers {
    /// `pyright-langserver` (run with `--stdio`).
    pub pyright: std::path::PathBuf,
    /// `typescript-language-server` (run with `--stdio`).
    pub typescript: std::path::PathBuf,
    /// The folder holding python-lsp-server: `python3 -m pylsp` with it as `PYTHONPATH`.
    pub pylsp_path: std::path::PathBuf,
}

/// The language servers in `~/.cache/cairn/clients`, or what to run when they are missing.
pub fn language_servers() -> Result<LanguageServers, String> {
    let home = std::env::var("HOME").map_err(|_| "HOME is not set".to_owned())?;
    let clients = std::path::Path::new(&home).join(".cache/cairn/clients");
    let bin = clients.join("lsp/node_modules/.bin");
    let servers = LanguageServers {
        pyright: bin.join("pyright-langserver"),
        typescript: bin.join("typescript-language-server"),
        pylsp_path: clients.join("pylsp"),
    };
    if servers.pyright.exists()
        && servers.typescript.exists()
        && servers.pylsp_path.join("pylsp").exists()
    {
        Ok(servers)
    } else {
        Err(format!(
            "the language servers are missing in {}: run scripts/setup.sh",
            clients.display()
        ))
    }
}

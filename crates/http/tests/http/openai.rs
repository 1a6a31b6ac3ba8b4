//! The OpenAI-compatible routes against a scripted model server: Cairn's agent answering a whole
//! conversation, a caller's own tools streamed back, usage, keys and errors in OpenAI's shape.

use axum::body::Body;
use axum::http::{Request, StatusCode};
use axum::Router;
use cairn_test_support::{text_reply, tool_call_reply, MockServer};
use serde_json::{json, Value};
use tower::ServiceExt;

pub(crate) const TOKEN: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
pub(crate) const KEY: &str = "sk-cairn-test-key-for-other-programs";

pub(crate) type TestResult = Result<(), Box<dyn std::error::Error>>;

pub(crate) struct Api {
    pub router: Router,
    pub home: tempfile::TempDir,
}

impl Api {
    /// A home whose default model is `mock/m1` on `server`, with one extra key for other programs.
    pub fn new(server: &MockServer) -> Result<Self, Box<dyn std::error::Error>> {
        Self::with(server, "", "")
    }

    /// The same, with `agent` added to `[agent]` and `api` to `[api]`.
    pub fn with(
        server: &MockServer,
        agent: &str,
        api: &str,
    ) -> Result<Self, Box<dyn std::error::Error>> {
        let home = tempfile::tempdir()?;
        std::fs::write(
            home.path().join("config.toml"),
            format!(
                "[agent]\nmodel = \"mock/m1\"\n{agent}\n\n[providers.mock]\nkind = \"openai\"\nbase_url = \"{}\"\nmodels = [\"m1\", \"m2\"]\n\n[api]\nkeys = [\"{KEY}\"]\n{api}\n",
                server.base_url
            ),
        )?;
        let router = crate::test_app(home.path(), TOKEN);
        Ok(Self { router, home })
    }

    pub async fn send(
        &self,
        path: &str,
        key: Option<&str>,
        body: Option<Value>,
    ) -> Result<(StatusCode, String), Box<dyn std::error::Error>> {
        let mut request = Request::builder()
            .method(if body.is_some() { "POST" } else { "GET" })
            .uri(path)
            .header("host", "127.0.0.1:9")
            .header("content-type", "application/json");
        if let Some(key) = key {
            request = request.header("authorization", format!("Bearer {key}"));
        }
        let request = request.body(body.map_or_else(Body::empty, |b| Body::from(b.to_string())))?;
        let response = self.router.clone().oneshot(request).await?;
        let status = response.status();
        let bytes = axum::body::to_bytes(response.into_body(), 16 << 20).await?;
        Ok((status, String::from_utf8(bytes.to_vec())?))
    }

    pub async fn json(
        &self,
        path: &str,
        key: Option<&str>,
        body: Option<Value>,
    ) -> Result<(StatusCode, Value), Box<dyn std::error::Error>> {
        let (status, text) = self.send(path, key, body).await?;
        Ok((status, serde_json::from_str(&text)?))
    }
}

/// The `data:` payloads of an SSE body.
fn sse_data(body: &str) -> Vec<String> {
    body.lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .map(str::to_owned)
        .collect()
}

#[tokio::test]
async fn models_lists_cairn_and_every_configured_model() -> TestResult {
    let server = MockServer::start(vec![]).await?;
    let api = Api::new(&server)?;
    let (status, list) = api.json("/v1/models", Some(TOKEN), None).await?;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(list["object"], "list");
    let ids: Vec<&str> = list["data"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m["id"].as_str())
        .collect();
    assert_eq!(ids, ["cairn", "cairn/mock/m1", "cairn/mock/m2"]);
    assert_eq!(list["data"][0]["object"], "model");
    Ok(())
}

#[tokio::test]
async fn cairns_agent_answers_the_whole_conversation_and_remembers_it() -> TestResult {
    let server = MockServer::start(vec![text_reply("It is 4.")]).await?;
    let api = Api::new(&server)?;
    let (status, answer) = api
        .json(
            "/v1/chat/completions",
            Some(KEY),
            Some(json!({
                "model": "cairn",
                "messages": [
                    {"role": "system", "content": "Answer in one short sentence."},
                    {"role": "user", "content": "Hi, I am Ana."},
                    {"role": "assistant", "content": "Hello Ana."},
                    {"role": "user", "content": [{"type": "text", "text": "What is 2 + 2?"}]}
                ],
                "temperature": 0.2,
                "some_future_field": {"ignored": true}
            })),
        )
        .await?;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["object"], "chat.completion");
    assert_eq!(answer["model"], "cairn");
    assert_eq!(
        answer["choices"][0]["message"],
        json!({"role": "assistant", "content": "It is 4."})
    );
    assert_eq!(answer["choices"][0]["finish_reason"], "stop");
    assert!(answer["id"]
        .as_str()
        .unwrap_or_default()
        .starts_with("chatcmpl-"));

    let sent = &server.requests()[0];
    assert_eq!(sent["model"], "m1");
    let messages = sent["messages"].as_array().ok_or("no messages")?;
    let system = messages[0]["content"].as_str().unwrap_or_default();
    assert!(
        system.ends_with("Answer in one short sentence."),
        "{system}"
    );
    assert_eq!(messages[1]["content"], "Hi, I am Ana.");
    assert_eq!(messages[2]["content"], "Hello Ana.");
    assert!(messages[3]["content"]
        .as_str()
        .unwrap_or_default()
        .starts_with("What is 2 + 2?"));
    assert!(
        sent["tools"].as_array().is_none_or(Vec::is_empty),
        "a key is not a shell: no tool is offered unless [api] agent_tools grants it: {}",
        sent["tools"]
    );

    // The exchange is in memory, found by the next search.
    let (status, found) = api
        .json(
            "/api/v1/memory/search",
            Some(TOKEN),
            Some(json!({"query": "what is 2 + 2"})),
        )
        .await?;
    assert_eq!(status, StatusCode::OK);
    assert!(found.to_string().contains("It is 4."), "{found}");
    drop(api.home);
    Ok(())
}

#[tokio::test]
async fn a_callers_tools_pass_through_and_the_stream_ends_with_its_usage() -> TestResult {
    let server = MockServer::start(vec![tool_call_reply(
        "call_1",
        "get_weather",
        json!({"city": "Paris"}),
    )])
    .await?;
    let api = Api::new(&server)?;
    let (status, body) = api
        .send(
            "/v1/chat/completions",
            Some(TOKEN),
            Some(json!({
                "model": "cairn/mock/m2",
                "stream": true,
                "stream_options": {"include_usage": true},
                "messages": [{"role": "user", "content": "Weather in Paris?"}],
                "tool_choice": "required",
                "tools": [{"type": "function", "function": {
                    "name": "get_weather",
                    "description": "The weather in a city.",
                    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
                }}]
            })),
        )
        .await?;
    assert_eq!(status, StatusCode::OK, "{body}");
    let data = sse_data(&body);
    assert_eq!(data.last().map(String::as_str), Some("[DONE]"));
    let chunks: Vec<Value> = data[..data.len() - 1]
        .iter()
        .map(|d| serde_json::from_str(d))
        .collect::<Result<_, _>>()?;
    assert_eq!(
        chunks[0]["choices"][0]["delta"],
        json!({"role": "assistant", "content": ""})
    );
    assert!(chunks
        .iter()
        .all(|c| c["object"] == "chat.completion.chunk" && c["model"] == "cairn/mock/m2"));
    let calls: Vec<&Value> = chunks
        .iter()
        .filter_map(|c| c["choices"][0]["delta"].get("tool_calls"))
        .collect();
    assert_eq!(calls[0][0]["id"], "call_1");
    assert_eq!(calls[0][0]["type"], "function");
    assert_eq!(calls[0][0]["function"]["name"], "get_weather");
    let arguments: String = calls
        .iter()
        .filter_map(|c| c[0]["function"]["arguments"].as_str())
        .collect();
    assert_eq!(
        serde_json::from_str::<Value>(&arguments)?,
        json!({"city": "Paris"})
    );
    let finishing = &chunks[chunks.len() - 2];
    assert_eq!(finishing["choices"][0]["finish_reason"], "tool_calls");
    assert_eq!(finishing["usage"], Value::Null);
    let usage = &chunks[chunks.len() - 1];
    assert_eq!(usage["choices"], json!([]));
    assert!(usage["usage"]["total_tokens"].is_u64(), "{usage}");

    let sent = &server.requests()[0];
    assert_eq!(sent["model"], "m2");
    let offered: Vec<&str> = sent["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    assert_eq!(offered, ["get_weather"], "only the caller's tools");
    assert_eq!(
        sent["tool_choice"], "required",
        "the caller's choice goes on"
    );
    Ok(())
}

#[tokio::test]
async fn errors_are_in_openais_shape_and_credentials_stay_out_of_urls() -> TestResult {
    let server = MockServer::start(vec![]).await?;
    let api = Api::new(&server)?;
    let asked = json!({"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]});

    let (status, error) = api
        .json("/v1/chat/completions", None, Some(asked.clone()))
        .await?;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(error["error"]["code"], "missing_api_key");
    let (status, error) = api
        .json(
            "/v1/chat/completions",
            Some("sk-wrong"),
            Some(asked.clone()),
        )
        .await?;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(error["error"]["code"], "invalid_api_key");
    assert_eq!(error["error"]["type"], "invalid_request_error");

    let (status, error) = api
        .json("/v1/chat/completions", Some(KEY), Some(asked))
        .await?;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(error["error"]["code"], "model_not_found");
    assert!(error["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .contains("GET /v1/models"));

    let (status, error) = api
        .json(
            "/v1/chat/completions",
            Some(KEY),
            Some(json!({"messages": []})),
        )
        .await?;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(error["error"]["type"], "invalid_request_error");

    let (status, error) = api
        .json(
            "/v1/chat/completions",
            Some(KEY),
            Some(json!({"model": "cairn", "messages": [{"role": "assistant", "content": "hi"}]})),
        )
        .await?;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{error}");

    // The config's keys open the OpenAI routes only; the per-run token opens everything.
    let (status, _) = api.json("/api/v1/status", Some(KEY), None).await?;
    assert_eq!(status, StatusCode::UNAUTHORIZED);

    let (status, error) = api
        .json(&format!("/v1/models?api_key={TOKEN}"), Some(TOKEN), None)
        .await?;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(error["code"], "credentials_in_url");
    let (status, _) = api
        .json(&format!("/api/v1/status?token={TOKEN}"), None, None)
        .await?;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    Ok(())
}

#[tokio::test]
async fn a_dead_model_server_is_an_error_not_a_hang() -> TestResult {
    let server = MockServer::start(vec![]).await?;
    let api = Api::new(&server)?;
    // The mock has no reply left: it answers 500, which the agent retries, then reports.
    let (status, body) = api
        .send(
            "/v1/chat/completions",
            Some(TOKEN),
            Some(json!({"model": "cairn", "stream": true, "messages": [{"role": "user", "content": "hi"}]})),
        )
        .await?;
    assert_eq!(status, StatusCode::OK);
    let data = sse_data(&body);
    let last: Value = serde_json::from_str(data.last().ok_or("no data")?)?;
    assert_eq!(last["error"]["type"], "server_error", "{body}");
    Ok(())
}

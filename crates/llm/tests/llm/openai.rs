//! Streaming, tool calls, reasoning, usage, and every error class.

use std::time::Duration;

use cairn_llm::{
    collect, ChatRequest, FinishReason, Message, OpenAiCompatible, Provider, ProviderError, Role,
    StreamEvent, ToolChoice, ToolSpec,
};
use serde_json::json;

use cairn_test_support::{delta, finish, text_reply, MockServer, Reply};

type TestResult = Result<(), Box<dyn std::error::Error>>;

fn request() -> ChatRequest {
    ChatRequest {
        model: "small-model".into(),
        messages: vec![
            Message::new(Role::System, "be brief"),
            Message::new(Role::User, "hello"),
        ],
        tools: vec![ToolSpec {
            name: "read_file".into(),
            description: "Read a file".into(),
            parameters: json!({ "type": "object", "properties": { "path": { "type": "string" } } }),
        }],
        max_tokens: None,
        tool_choice: ToolChoice::Auto,
    }
}

fn provider(server: &MockServer) -> OpenAiCompatible {
    OpenAiCompatible::new(&server.base_url, Some("sk-test".into()))
        .with_retries(2, Duration::from_millis(10))
}

#[tokio::test]
async fn text_streams_in_order_with_usage() -> TestResult {
    let server = MockServer::start(vec![Reply::sse(&[
        delta(json!({ "role": "assistant", "content": "" })),
        delta(json!({ "content": "Hel" })),
        delta(json!({ "content": "lo!" })),
        finish("stop"),
        json!({ "choices": [], "usage": { "prompt_tokens": 12, "completion_tokens": 3 } }),
    ])])
    .await?;
    let mut events = provider(&server).stream(request());
    let mut seen = Vec::new();
    while let Some(event) = events.recv().await {
        seen.push(event?);
    }
    assert_eq!(seen[0], StreamEvent::Text("Hel".into()));
    assert_eq!(seen[1], StreamEvent::Text("lo!".into()));
    assert!(
        matches!(seen[2], StreamEvent::Usage(u) if u.input_tokens == 12 && u.output_tokens == 3)
    );
    assert_eq!(seen[3], StreamEvent::Done(FinishReason::Stop));

    let sent = &server.requests()[0];
    assert_eq!(sent["model"], "small-model");
    assert_eq!(sent["stream"], true);
    assert_eq!(
        sent["messages"][1],
        json!({ "role": "user", "content": "hello" })
    );
    assert_eq!(sent["tools"][0]["function"]["name"], "read_file");
    assert_eq!(sent.get("tool_choice"), None);
    Ok(())
}

#[tokio::test]
async fn tool_calls_assemble_from_pieces_with_reasoning() -> TestResult {
    let server = MockServer::start(vec![Reply::sse(&[
        delta(json!({ "reasoning_content": "The user wants the file." })),
        delta(json!({ "tool_calls": [{ "index": 0, "id": "call_1", "type": "function", "function": { "name": "read_file", "arguments": "" } }] })),
        delta(json!({ "tool_calls": [{ "index": 0, "function": { "arguments": "{\"path\":" } }] })),
        delta(json!({ "tool_calls": [{ "index": 0, "function": { "arguments": "\"a.txt\"}" } }] })),
        delta(json!({ "tool_calls": [{ "index": 1, "id": "call_2", "function": { "name": "read_file", "arguments": "{\"path\":\"b.txt\"}" } }] })),
        finish("tool_calls"),
    ])])
    .await?;
    let completion = collect(provider(&server).stream(request())).await?;
    assert_eq!(completion.reasoning, "The user wants the file.");
    assert_eq!(completion.finish, FinishReason::ToolCalls);
    assert_eq!(completion.tool_calls.len(), 2);
    assert_eq!(completion.tool_calls[0].id, "call_1");
    assert_eq!(completion.tool_calls[0].arguments, "{\"path\":\"a.txt\"}");
    assert_eq!(completion.tool_calls[1].arguments, "{\"path\":\"b.txt\"}");
    Ok(())
}

#[tokio::test]
async fn a_cut_off_reply_reports_length() -> TestResult {
    let server = MockServer::start(vec![Reply::sse(&[
        delta(json!({ "content": "The answer is" })),
        finish("length"),
    ])])
    .await?;
    let completion = collect(provider(&server).stream(request())).await?;
    assert_eq!(completion.finish, FinishReason::Length);
    Ok(())
}

#[tokio::test]
async fn errors_are_classified_by_what_to_do_next() -> TestResult {
    let server = MockServer::start(vec![
        Reply::Status { status: 401, retry_after: None, body: json!({ "error": { "message": "Incorrect API key" } }).to_string() },
        Reply::Status { status: 400, retry_after: None, body: json!({ "error": { "message": "This model's maximum context length is 8192 tokens" } }).to_string() },
        Reply::Status { status: 404, retry_after: None, body: json!({ "error": { "message": "model not found" } }).to_string() },
    ])
    .await?;
    let p = provider(&server);
    assert_eq!(
        collect(p.stream(request())).await,
        Err(ProviderError::Auth("Incorrect API key".into()))
    );
    assert!(
        matches!(collect(p.stream(request())).await, Err(ProviderError::ContextOverflow(m)) if m.contains("8192"))
    );
    assert!(matches!(
        collect(p.stream(request())).await,
        Err(ProviderError::Rejected { status: 404, .. })
    ));
    assert_eq!(server.requests().len(), 3, "none of these is retried");
    Ok(())
}

#[tokio::test]
async fn a_proxy_that_echoes_the_key_does_not_hand_it_on() -> TestResult {
    const KEY: &str = "sk-echoed-secret-0123456789abcdef";
    let echo = |status| Reply::Status {
        status,
        retry_after: None,
        body: json!({ "error": { "message": format!("bad header Authorization: Bearer {KEY}") } })
            .to_string(),
    };
    let server = MockServer::start(vec![echo(401), echo(404)]).await?;
    let p = OpenAiCompatible::new(server.base_url.clone(), Some(KEY.to_owned()));
    for _ in 0..2 {
        let error = collect(p.stream(request())).await.err().ok_or("no error")?;
        assert!(!error.to_string().contains(KEY), "{error}");
        assert!(error.to_string().contains("<redacted>"), "{error}");
    }
    Ok(())
}

#[tokio::test]
async fn rate_limits_and_server_errors_are_retried() -> TestResult {
    let server = MockServer::start(vec![
        Reply::Status {
            status: 429,
            retry_after: Some("0"),
            body: "slow down".into(),
        },
        Reply::Status {
            status: 503,
            retry_after: None,
            body: "overloaded".into(),
        },
        Reply::sse(&[delta(json!({ "content": "ok" })), finish("stop")]),
    ])
    .await?;
    // Each retry is announced before the pause, with its reason; the reply is untouched by it.
    let mut stream = provider(&server).stream(request());
    let mut retries = Vec::new();
    let mut completion = cairn_llm::Completion::default();
    while let Some(event) = stream.recv().await {
        match event? {
            cairn_llm::StreamEvent::Retrying { reason, .. } => retries.push(reason),
            event => {
                completion.apply(event);
            }
        }
    }
    assert_eq!(completion.text, "ok");
    assert_eq!(server.requests().len(), 3);
    assert_eq!(retries.len(), 2, "{retries:?}");
    assert!(retries[0].contains("rate limiting"), "{retries:?}");
    assert!(retries[1].contains("503"), "{retries:?}");
    Ok(())
}

#[tokio::test]
async fn retries_are_bounded() -> TestResult {
    let replies = (0..5)
        .map(|_| Reply::Status {
            status: 500,
            retry_after: None,
            body: "boom".into(),
        })
        .collect();
    let server = MockServer::start(replies).await?;
    let result = collect(provider(&server).stream(request())).await;
    assert!(
        matches!(result, Err(ProviderError::Server { status: 500, .. })),
        "{result:?}"
    );
    assert_eq!(server.requests().len(), 3, "one try and two retries");
    Ok(())
}

#[tokio::test]
async fn a_stalled_stream_is_cut_by_the_watchdog() -> TestResult {
    let server = MockServer::start(vec![Reply::Sse {
        data: vec![
            delta(json!({ "content": "thinking…" })).to_string(),
            delta(json!({ "content": "late" })).to_string(),
        ],
        pause: Duration::from_secs(5),
    }])
    .await?;
    let p = provider(&server).with_stall_timeout(Duration::from_millis(300));
    let started = std::time::Instant::now();
    let result = collect(p.stream(request())).await;
    assert_eq!(
        result,
        Err(ProviderError::Stalled(Duration::from_millis(300)))
    );
    assert!(started.elapsed() < Duration::from_secs(4));
    Ok(())
}

#[tokio::test]
async fn a_stream_that_ends_early_is_an_error() -> TestResult {
    let server = MockServer::start(vec![Reply::Sse {
        data: vec![delta(json!({ "content": "half" })).to_string()],
        pause: Duration::ZERO,
    }])
    .await?;
    let result = collect(provider(&server).stream(request())).await;
    assert!(
        matches!(&result, Err(ProviderError::Network(m)) if m.contains("ended before")),
        "{result:?}"
    );
    Ok(())
}

#[tokio::test]
async fn a_dead_server_is_a_network_error() -> TestResult {
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let p = OpenAiCompatible::new(format!("http://127.0.0.1:{port}/v1"), None)
        .with_retries(1, Duration::from_millis(10));
    assert!(matches!(
        collect(p.stream(request())).await,
        Err(ProviderError::Network(_))
    ));
    Ok(())
}

#[tokio::test]
async fn models_are_listed_for_settings() -> TestResult {
    let server = MockServer::start(vec![]).await?;
    assert_eq!(
        provider(&server).models().await?,
        vec!["small-model", "big-model"]
    );
    Ok(())
}

#[tokio::test]
async fn a_connection_test_proves_address_key_and_model() -> TestResult {
    let server = MockServer::start(vec![
        text_reply("OK"),
        Reply::Status {
            status: 401,
            retry_after: None,
            body: json!({ "error": { "message": "bad key" } }).to_string(),
        },
    ])
    .await?;
    provider(&server).test_connection("small-model").await?;
    let sent = &server.requests()[0];
    assert_eq!(sent["model"], "small-model");
    assert_eq!(sent["max_tokens"], 1);
    assert_eq!(
        provider(&server).test_connection("small-model").await,
        Err(ProviderError::Auth("bad key".into()))
    );
    Ok(())
}

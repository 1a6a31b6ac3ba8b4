//! The Anthropic Messages dialect: request shape, streamed blocks, tool use, errors.

use std::time::Duration;

use cairn_llm::{
    collect, Anthropic, ChatRequest, FinishReason, Message, Provider, ProviderError, Role,
    ToolCall, ToolChoice, ToolSpec,
};
use cairn_test_support::{MockServer, Reply};
use serde_json::json;

type TestResult = Result<(), Box<dyn std::error::Error>>;

fn events(list: &[serde_json::Value]) -> Reply {
    Reply::sse(list)
}

fn provider(server: &MockServer) -> Anthropic {
    Anthropic::new(&server.base_url, Some("sk-ant-test".into()))
        .with_retries(1, Duration::from_millis(10))
}

#[tokio::test]
async fn thinking_text_and_a_tool_call_stream_in() -> TestResult {
    let server = MockServer::start(vec![events(&[
        json!({ "type": "message_start", "message": { "id": "m1", "usage": { "input_tokens": 25, "output_tokens": 1 } } }),
        json!({ "type": "content_block_start", "index": 0, "content_block": { "type": "thinking", "thinking": "" } }),
        json!({ "type": "content_block_delta", "index": 0, "delta": { "type": "thinking_delta", "thinking": "Need the file." } }),
        json!({ "type": "content_block_start", "index": 1, "content_block": { "type": "text", "text": "" } }),
        json!({ "type": "content_block_delta", "index": 1, "delta": { "type": "text_delta", "text": "Reading it." } }),
        json!({ "type": "ping" }),
        json!({ "type": "content_block_start", "index": 2, "content_block": { "type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {} } }),
        json!({ "type": "content_block_delta", "index": 2, "delta": { "type": "input_json_delta", "partial_json": "{\"path\": " } }),
        json!({ "type": "content_block_delta", "index": 2, "delta": { "type": "input_json_delta", "partial_json": "\"a.txt\"}" } }),
        json!({ "type": "message_delta", "delta": { "stop_reason": "tool_use" }, "usage": { "output_tokens": 40 } }),
        json!({ "type": "message_stop" }),
    ])])
    .await?;
    let request = ChatRequest {
        model: "claude-test".into(),
        messages: vec![
            Message::new(Role::System, "be careful"),
            Message::new(Role::User, "read a.txt"),
        ],
        tools: vec![ToolSpec {
            name: "read_file".into(),
            description: "Read".into(),
            parameters: json!({ "type": "object" }),
        }],
        max_tokens: None,
        tool_choice: ToolChoice::Required,
    };
    let completion = collect(provider(&server).stream(request)).await?;
    assert_eq!(completion.reasoning, "Need the file.");
    assert_eq!(completion.text, "Reading it.");
    assert_eq!(completion.finish, FinishReason::ToolCalls);
    assert_eq!(
        completion.tool_calls,
        vec![ToolCall {
            id: "toolu_1".into(),
            name: "read_file".into(),
            arguments: "{\"path\": \"a.txt\"}".into()
        }]
    );
    assert_eq!(
        (
            completion.usage.input_tokens,
            completion.usage.output_tokens
        ),
        (25, 40)
    );

    let sent = &server.requests()[0];
    assert_eq!(sent["system"], "be careful");
    assert_eq!(sent["tool_choice"], json!({ "type": "any" }));
    assert_eq!(sent["max_tokens"], 8192);
    assert_eq!(sent["stream"], true);
    assert_eq!(
        sent["messages"],
        json!([{ "role": "user", "content": [{ "type": "text", "text": "read a.txt" }] }])
    );
    assert_eq!(
        sent["tools"][0]["input_schema"],
        json!({ "type": "object" })
    );
    Ok(())
}

#[tokio::test]
async fn tool_results_go_back_as_blocks_in_one_user_turn() -> TestResult {
    let server = MockServer::start(vec![events(&[
        json!({ "type": "message_start", "message": { "usage": { "input_tokens": 1 } } }),
        json!({ "type": "content_block_delta", "index": 0, "delta": { "type": "text_delta", "text": "Both read." } }),
        json!({ "type": "message_delta", "delta": { "stop_reason": "end_turn" }, "usage": { "output_tokens": 3 } }),
        json!({ "type": "message_stop" }),
    ])])
    .await?;
    let mut assistant = Message::new(Role::Assistant, "");
    assistant.tool_calls = vec![
        ToolCall {
            id: "t1".into(),
            name: "read_file".into(),
            arguments: "{\"path\":\"a\"}".into(),
        },
        ToolCall {
            id: "t2".into(),
            name: "read_file".into(),
            arguments: "{\"path\":\"b\"}".into(),
        },
    ];
    let request = ChatRequest {
        model: "claude-test".into(),
        messages: vec![
            Message::new(Role::User, "read a and b"),
            assistant,
            Message::tool_result("t1", "A"),
            Message::tool_result("t2", "B"),
        ],
        tools: vec![],
        max_tokens: Some(100),
        tool_choice: Default::default(),
    };
    let completion = collect(provider(&server).stream(request)).await?;
    assert_eq!(completion.text, "Both read.");
    assert_eq!(completion.finish, FinishReason::Stop);
    let messages = &server.requests()[0]["messages"];
    assert_eq!(messages.as_array().map(Vec::len), Some(3));
    assert_eq!(
        messages[1]["content"][1],
        json!({ "type": "tool_use", "id": "t2", "name": "read_file", "input": { "path": "b" } })
    );
    assert_eq!(messages[2]["role"], "user");
    assert_eq!(
        messages[2]["content"][0],
        json!({ "type": "tool_result", "tool_use_id": "t1", "content": "A" })
    );
    assert_eq!(messages[2]["content"][1]["tool_use_id"], "t2");
    Ok(())
}

#[tokio::test]
async fn errors_in_the_stream_and_before_it_are_classified() -> TestResult {
    let server = MockServer::start(vec![
        events(&[json!({ "type": "error", "error": { "type": "overloaded_error", "message": "Overloaded" } })]),
        Reply::Status { status: 401, retry_after: None, body: json!({ "type": "error", "error": { "type": "authentication_error", "message": "invalid x-api-key" } }).to_string() },
    ])
    .await?;
    let p = provider(&server);
    let request = || ChatRequest {
        model: "m".into(),
        messages: vec![Message::new(Role::User, "hi")],
        tools: vec![],
        max_tokens: None,
        tool_choice: Default::default(),
    };
    assert_eq!(
        collect(p.stream(request())).await,
        Err(ProviderError::Server {
            status: 529,
            message: "Overloaded".into()
        })
    );
    assert_eq!(
        collect(p.stream(request())).await,
        Err(ProviderError::Auth("invalid x-api-key".into()))
    );
    Ok(())
}

//! The Anthropic Messages dialect: `system` apart, alternating user/assistant turns with content
//! blocks (tool results go back as `tool_result` blocks in a user turn), and a stream of typed
//! events (`content_block_start/delta`, thinking, `input_json_delta`, `message_delta`).

use std::collections::HashMap;

use serde_json::{json, Value};
use tokio::sync::mpsc;

use crate::transport::{spawn_stream, transport_settings, SseData, Transport};
use crate::{
    ChatRequest, FinishReason, Message, Provider, ProviderError, Role, StreamEvent, ToolChoice,
    Usage,
};

/// The API version this dialect speaks.
const API_VERSION: &str = "2023-06-01";
/// Anthropic requires a reply budget; this is used when the request names none.
const DEFAULT_MAX_TOKENS: u32 = 8_192;

/// A server speaking Anthropic's Messages API.
#[derive(Clone)]
pub struct Anthropic {
    base_url: String,
    api_key: Option<String>,
    transport: Transport,
}

impl Anthropic {
    /// `base_url` is the API host, e.g. `https://api.anthropic.com`.
    pub fn new(base_url: impl Into<String>, api_key: Option<String>) -> Self {
        Self {
            base_url: base_url
                .into()
                .trim_end_matches('/')
                .trim_end_matches("/v1")
                .to_owned(),
            transport: Transport {
                secret: api_key.clone(),
                ..Transport::default()
            },
            api_key,
        }
    }

    transport_settings!();

    fn body(request: &ChatRequest) -> Value {
        let system: Vec<&str> = request
            .messages
            .iter()
            .filter(|m| m.role == Role::System)
            .map(|m| m.content.as_str())
            .collect();
        let mut body = json!({
            "model": request.model,
            "max_tokens": request.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
            "messages": wire_messages(&request.messages),
            "stream": true,
        });
        if !system.is_empty() {
            body["system"] = json!(system.join("\n\n"));
        }
        if !request.tools.is_empty() {
            body["tools"] = request
                .tools
                .iter()
                .map(|t| json!({ "name": t.name, "description": t.description, "input_schema": t.parameters }))
                .collect();
            if request.tool_choice == ToolChoice::Required {
                body["tool_choice"] = json!({ "type": "any" });
            }
        }
        body
    }

    async fn run(
        &self,
        request: ChatRequest,
        tx: &mpsc::Sender<Result<StreamEvent, ProviderError>>,
    ) -> Result<(), ProviderError> {
        let body = Self::body(&request);
        let url = format!("{}/v1/messages", self.base_url);
        let response = self
            .transport
            .open(
                || {
                    let mut builder = self
                        .transport
                        .http
                        .post(&url)
                        .header("anthropic-version", API_VERSION)
                        .json(&body);
                    if let Some(key) = &self.api_key {
                        builder = builder.header("x-api-key", key);
                    }
                    builder
                },
                tx,
            )
            .await?;
        let mut sse = SseData::new(response, self.transport.stall_timeout);
        let mut state = StreamState::default();
        while let Some(data) = sse.next().await? {
            let value: Value = serde_json::from_str(&data)
                .map_err(|e| ProviderError::BadResponse(format!("{e} in {data:.200}")))?;
            for event in state.events(&value)? {
                let done = matches!(event, StreamEvent::Done(_));
                if tx.send(Ok(event)).await.is_err() || done {
                    return Ok(());
                }
            }
        }
        Err(ProviderError::Network(
            "the stream ended before the reply was finished".into(),
        ))
    }
}

impl Provider for Anthropic {
    fn stream(&self, request: ChatRequest) -> mpsc::Receiver<Result<StreamEvent, ProviderError>> {
        let this = self.clone();
        spawn_stream(move |tx| async move { this.run(request, &tx).await })
    }
}

/// Our messages as Anthropic turns: roles alternate, so neighbours of one role merge, and tool
/// results ride in a user turn.
fn wire_messages(messages: &[Message]) -> Vec<Value> {
    let mut out: Vec<(String, Vec<Value>)> = Vec::new();
    for m in messages {
        let (role, blocks) = match m.role {
            Role::System => continue,
            Role::User => {
                let mut blocks: Vec<Value> = m
                    .images
                    .iter()
                    .map(|image| match image.base64() {
                        Some(data) => json!({
                            "type": "image",
                            "source": { "type": "base64", "media_type": image.media_type, "data": data }
                        }),
                        None => json!({ "type": "text", "text": image.missing_text() }),
                    })
                    .collect();
                blocks.push(json!({ "type": "text", "text": m.content }));
                ("user", blocks)
            }
            Role::Tool => (
                "user",
                vec![
                    json!({ "type": "tool_result", "tool_use_id": m.tool_call_id, "content": m.content }),
                ],
            ),
            Role::Assistant => {
                let mut blocks = Vec::new();
                if !m.content.is_empty() {
                    blocks.push(json!({ "type": "text", "text": m.content }));
                }
                for call in &m.tool_calls {
                    let input: Value =
                        serde_json::from_str(&call.arguments).unwrap_or_else(|_| json!({}));
                    blocks.push(json!({ "type": "tool_use", "id": call.id, "name": call.name, "input": input }));
                }
                ("assistant", blocks)
            }
        };
        match out.last_mut() {
            Some((last, existing)) if last == role => existing.extend(blocks),
            _ => out.push((role.to_owned(), blocks)),
        }
    }
    out.into_iter()
        .map(|(role, content)| json!({ "role": role, "content": content }))
        .collect()
}

/// What a stream has said so far: which content block is which tool call, the usage counts.
#[derive(Default)]
struct StreamState {
    tools: HashMap<u64, usize>,
    usage: Usage,
    finish: FinishReason,
}

impl StreamState {
    fn events(&mut self, value: &Value) -> Result<Vec<StreamEvent>, ProviderError> {
        let mut out = Vec::new();
        match value["type"].as_str().unwrap_or_default() {
            "message_start" => {
                self.usage.input_tokens = value["message"]["usage"]["input_tokens"]
                    .as_u64()
                    .unwrap_or(0);
            }
            "content_block_start" => {
                let block = &value["content_block"];
                if block["type"] == "tool_use" {
                    let index = self.tools.len();
                    self.tools
                        .insert(value["index"].as_u64().unwrap_or(0), index);
                    out.push(StreamEvent::ToolCall {
                        index,
                        id: block["id"].as_str().map(str::to_owned),
                        name: block["name"].as_str().map(str::to_owned),
                        arguments: String::new(),
                    });
                }
            }
            "content_block_delta" => {
                let delta = &value["delta"];
                match delta["type"].as_str().unwrap_or_default() {
                    "text_delta" => out.push(StreamEvent::Text(
                        delta["text"].as_str().unwrap_or_default().to_owned(),
                    )),
                    "thinking_delta" => out.push(StreamEvent::Reasoning(
                        delta["thinking"].as_str().unwrap_or_default().to_owned(),
                    )),
                    "input_json_delta" => {
                        let block = value["index"].as_u64().unwrap_or(0);
                        if let Some(index) = self.tools.get(&block) {
                            out.push(StreamEvent::ToolCall {
                                index: *index,
                                id: None,
                                name: None,
                                arguments: delta["partial_json"]
                                    .as_str()
                                    .unwrap_or_default()
                                    .to_owned(),
                            });
                        }
                    }
                    _ => {}
                }
            }
            "message_delta" => {
                if let Some(reason) = value["delta"]["stop_reason"].as_str() {
                    self.finish = match reason {
                        "tool_use" => FinishReason::ToolCalls,
                        "max_tokens" => FinishReason::Length,
                        "refusal" => FinishReason::Filtered,
                        _ => FinishReason::Stop,
                    };
                }
                if let Some(output) = value["usage"]["output_tokens"].as_u64() {
                    self.usage.output_tokens = output;
                }
            }
            "message_stop" => {
                out.push(StreamEvent::Usage(self.usage));
                out.push(StreamEvent::Done(self.finish));
            }
            "error" => {
                let kind = value["error"]["type"].as_str().unwrap_or_default();
                let message = value["error"]["message"]
                    .as_str()
                    .unwrap_or("unknown error")
                    .to_owned();
                return Err(match kind {
                    "rate_limit_error" => ProviderError::RateLimited {
                        retry_after: None,
                        message,
                    },
                    "overloaded_error" => ProviderError::Server {
                        status: 529,
                        message,
                    },
                    "authentication_error" | "permission_error" => ProviderError::Auth(message),
                    "invalid_request_error" if message.contains("prompt is too long") => {
                        ProviderError::ContextOverflow(message)
                    }
                    _ => ProviderError::Server {
                        status: 500,
                        message,
                    },
                });
            }
            _ => {}
        }
        Ok(out)
    }
}

#[cfg(test)]
mod image_tests {
    use super::*;
    use crate::Image;

    #[test]
    fn an_attached_image_is_a_base64_block_before_the_text() -> std::io::Result<()> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("a.jpg");
        std::fs::write(&path, b"jpeg")?;
        let mut m = Message::new(Role::User, "Describe it");
        m.images.push(Image {
            media_type: "image/jpeg".into(),
            path,
        });
        let wire = wire_messages(&[m]);
        assert_eq!(wire[0]["content"][0]["source"]["media_type"], "image/jpeg");
        assert_eq!(wire[0]["content"][0]["source"]["data"], "anBlZw==");
        assert_eq!(wire[0]["content"][1]["text"], "Describe it");
        Ok(())
    }
}

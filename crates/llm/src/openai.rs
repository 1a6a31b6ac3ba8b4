//! The OpenAI-compatible chat-completions dialect (OpenAI, DeepSeek, vLLM, llama.cpp, LM Studio,
//! and Ollama's `/v1`): server-sent events with text, `reasoning_content`, tool calls streamed in
//! pieces, and usage in the last chunk.

use std::time::Duration;

use serde_json::{json, Value};
use tokio::sync::mpsc;

use crate::transport::{spawn_stream, transport_settings, SseData, Transport};
use crate::{
    ChatRequest, FinishReason, Message, Provider, ProviderError, Role, StreamEvent, ToolChoice,
    Usage,
};

/// A server speaking OpenAI's chat-completions protocol.
#[derive(Clone)]
pub struct OpenAiCompatible {
    base_url: String,
    api_key: Option<String>,
    transport: Transport,
}

impl OpenAiCompatible {
    /// `base_url` is the API root, e.g. `https://api.openai.com/v1` or `http://127.0.0.1:11434/v1`.
    pub fn new(base_url: impl Into<String>, api_key: Option<String>) -> Self {
        Self {
            base_url: base_url.into().trim_end_matches('/').to_owned(),
            transport: Transport {
                secret: api_key.clone(),
                ..Transport::default()
            },
            api_key,
        }
    }

    transport_settings!();

    fn authorised(&self, request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        match &self.api_key {
            Some(key) => request.bearer_auth(key),
            None => request,
        }
    }

    /// The model ids the server offers (`GET /models`), for the settings screen.
    pub async fn models(&self) -> Result<Vec<String>, ProviderError> {
        let response = self
            .authorised(self.transport.http.get(format!("{}/models", self.base_url)))
            .timeout(Duration::from_secs(15))
            .send()
            .await
            .map_err(|e| ProviderError::Network(e.to_string()))?;
        let status = response.status().as_u16();
        let body = response
            .text()
            .await
            .map_err(|e| ProviderError::Network(e.to_string()))?;
        if !(200..300).contains(&status) {
            return Err(
                ProviderError::from_status(status, None, &body).without(self.api_key.as_deref())
            );
        }
        let value: Value =
            serde_json::from_str(&body).map_err(|e| ProviderError::BadResponse(e.to_string()))?;
        Ok(value["data"]
            .as_array()
            .or_else(|| value["models"].as_array())
            .into_iter()
            .flatten()
            .filter_map(|m| {
                m["id"]
                    .as_str()
                    .or_else(|| m["name"].as_str())
                    .map(str::to_owned)
            })
            .collect())
    }

    /// A one-token request to `model`: proves the address, the key and the model together.
    pub async fn test_connection(&self, model: &str) -> Result<(), ProviderError> {
        let request = ChatRequest {
            model: model.to_owned(),
            messages: vec![Message::new(Role::User, "Reply with OK.")],
            tools: Vec::new(),
            max_tokens: Some(1),
            tool_choice: Default::default(),
        };
        crate::collect(self.stream(request)).await.map(|_| ())
    }

    fn body(request: &ChatRequest) -> Value {
        let messages: Vec<Value> = request.messages.iter().map(wire_message).collect();
        let mut body = json!({
            "model": request.model,
            "messages": messages,
            "stream": true,
            "stream_options": { "include_usage": true },
        });
        if !request.tools.is_empty() {
            body["tools"] = request
                .tools
                .iter()
                .map(|t| json!({ "type": "function", "function": { "name": t.name, "description": t.description, "parameters": t.parameters } }))
                .collect();
            if request.tool_choice == ToolChoice::Required {
                body["tool_choice"] = json!("required");
            }
        }
        if let Some(max) = request.max_tokens {
            body["max_tokens"] = json!(max);
        }
        body
    }

    async fn run(
        &self,
        request: ChatRequest,
        tx: &mpsc::Sender<Result<StreamEvent, ProviderError>>,
    ) -> Result<(), ProviderError> {
        let body = Self::body(&request);
        let url = format!("{}/chat/completions", self.base_url);
        let response = self
            .transport
            .open(
                || self.authorised(self.transport.http.post(&url)).json(&body),
                tx,
            )
            .await?;
        let mut sse = SseData::new(response, self.transport.stall_timeout);
        let mut finish: Option<FinishReason> = None;
        while let Some(data) = sse.next().await? {
            if data == "[DONE]" {
                let _ = tx
                    .send(Ok(StreamEvent::Done(finish.unwrap_or_default())))
                    .await;
                return Ok(());
            }
            let value: Value = serde_json::from_str(&data)
                .map_err(|e| ProviderError::BadResponse(format!("{e} in {data:.200}")))?;
            if let Some(message) = value["error"]["message"].as_str() {
                return Err(ProviderError::Server {
                    status: 200,
                    message: message.to_owned(),
                });
            }
            for event in events(&value, &mut finish) {
                if tx.send(Ok(event)).await.is_err() {
                    return Ok(()); // the caller stopped listening (the turn was cancelled)
                }
            }
        }
        match finish {
            Some(reason) => {
                let _ = tx.send(Ok(StreamEvent::Done(reason))).await;
                Ok(())
            }
            None => Err(ProviderError::Network(
                "the stream ended before the reply was finished".into(),
            )),
        }
    }
}

impl Provider for OpenAiCompatible {
    fn stream(&self, request: ChatRequest) -> mpsc::Receiver<Result<StreamEvent, ProviderError>> {
        let this = self.clone();
        spawn_stream(move |tx| async move { this.run(request, &tx).await })
    }
}

fn wire_message(m: &Message) -> Value {
    let role = match m.role {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
    };
    let mut out = json!({ "role": role, "content": m.content });
    if !m.images.is_empty() {
        // Text first, then each image as a data URL (the OpenAI vision format Ollama also reads).
        let mut parts = vec![json!({ "type": "text", "text": m.content })];
        for image in &m.images {
            parts.push(match image.base64() {
                Some(data) => json!({
                    "type": "image_url",
                    "image_url": { "url": format!("data:{};base64,{data}", image.media_type) }
                }),
                None => json!({ "type": "text", "text": image.missing_text() }),
            });
        }
        out["content"] = Value::Array(parts);
    }
    if !m.tool_calls.is_empty() {
        out["tool_calls"] = m
            .tool_calls
            .iter()
            .map(|c| json!({ "id": c.id, "type": "function", "function": { "name": c.name, "arguments": c.arguments } }))
            .collect();
    }
    if let Some(id) = &m.tool_call_id {
        out["tool_call_id"] = json!(id);
    }
    if let Some(reasoning) = &m.reasoning {
        out["reasoning_content"] = json!(reasoning);
    }
    out
}

/// The events in one SSE chunk; remembers the finish reason, which the `[DONE]` line reports.
fn events(chunk: &Value, finish: &mut Option<FinishReason>) -> Vec<StreamEvent> {
    let mut out = Vec::new();
    if let Some(choice) = chunk["choices"].get(0) {
        let delta = &choice["delta"];
        for key in ["reasoning_content", "reasoning"] {
            if let Some(text) = delta[key].as_str().filter(|t| !t.is_empty()) {
                out.push(StreamEvent::Reasoning(text.to_owned()));
            }
        }
        if let Some(text) = delta["content"].as_str().filter(|t| !t.is_empty()) {
            out.push(StreamEvent::Text(text.to_owned()));
        }
        for (position, call) in delta["tool_calls"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
        {
            out.push(StreamEvent::ToolCall {
                index: call["index"].as_u64().map_or(position, |i| i as usize),
                id: call["id"].as_str().map(str::to_owned),
                name: call["function"]["name"].as_str().map(str::to_owned),
                arguments: call["function"]["arguments"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
            });
        }
        if let Some(reason) = choice["finish_reason"].as_str() {
            *finish = Some(match reason {
                "tool_calls" | "function_call" => FinishReason::ToolCalls,
                "length" => FinishReason::Length,
                "content_filter" => FinishReason::Filtered,
                _ => FinishReason::Stop,
            });
        }
    }
    if chunk["usage"].is_object() {
        out.push(StreamEvent::Usage(Usage {
            input_tokens: chunk["usage"]["prompt_tokens"].as_u64().unwrap_or(0),
            output_tokens: chunk["usage"]["completion_tokens"].as_u64().unwrap_or(0),
        }));
    }
    out
}

#[cfg(test)]
mod image_tests {
    use super::*;
    use crate::Image;

    #[test]
    fn an_attached_image_goes_as_a_data_url_after_the_text() -> std::io::Result<()> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("a.png");
        std::fs::write(&path, b"\x89PNG")?;
        let mut m = Message::new(Role::User, "What is this?");
        m.images.push(Image {
            media_type: "image/png".into(),
            path,
        });
        m.images.push(Image {
            media_type: "image/png".into(),
            path: dir.path().join("gone.png"),
        });
        let wire = wire_message(&m);
        assert_eq!(
            wire["content"][0],
            json!({"type": "text", "text": "What is this?"})
        );
        assert_eq!(
            wire["content"][1]["image_url"]["url"],
            "data:image/png;base64,iVBORw=="
        );
        assert!(wire["content"][2]["text"]
            .as_str()
            .is_some_and(|t| t.starts_with("[an attached image is no longer available")));
        // Without images the content stays a plain string.
        assert_eq!(
            wire_message(&Message::new(Role::User, "hi"))["content"],
            "hi"
        );
        Ok(())
    }
}

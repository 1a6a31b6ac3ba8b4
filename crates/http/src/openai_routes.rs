//! The OpenAI-compatible routes: `GET /v1/models` and `POST /v1/chat/completions`, streamed as
//! server-sent events (with `stream_options.include_usage`'s separate usage chunk) or whole. A
//! bearer key is required (the per-run token, or one of the config's `[api] keys`), and every error
//! is in OpenAI's shape so OpenAI's own clients can read it.

use std::convert::Infallible;
use std::time::{SystemTime, UNIX_EPOCH};

use axum::extract::rejection::JsonRejection;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::middleware::{from_fn_with_state, Next};
use axum::response::sse::{Event as SseEvent, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use cairn_api::compat::CompatStream;
use cairn_api::ErrorKind;
use cairn_llm::{Completion, FinishReason, StreamEvent};
use cairn_protocol::openai::{
    AssistantMessage, ChatCompletion, ChatCompletionChunk, ChatCompletionRequest, ChatToolCall,
    ChatUsage, Choice, ChunkChoice, Delta, DeltaFunction, DeltaToolCall, FunctionCall, ModelEntry,
    ModelList, OpenAiError,
};

use crate::caps::Caller;
use crate::guard::{bearer, openai_error, same_secret};
use crate::AppState;

pub fn routes(state: AppState) -> Router<AppState> {
    Router::new()
        .route("/v1/models", get(models))
        .route(
            "/v1/chat/completions",
            post(completions).layer(from_fn_with_state(
                state.clone(),
                crate::caps::cap_key_completions,
            )),
        )
        .layer(from_fn_with_state(state, require_key))
}

/// `Authorization: Bearer <token or configured key>`, else a 401 in OpenAI's shape.
async fn require_key(State(state): State<AppState>, mut request: Request, next: Next) -> Response {
    let Some(presented) = bearer(request.headers()) else {
        return openai_error(
            StatusCode::UNAUTHORIZED,
            "invalid_request_error",
            "missing_api_key",
            "send Authorization: Bearer <key>: the per-run token from runtime.json in Cairn's home, or a key from [api] keys in its config",
        );
    };
    let configured = state
        .cairn
        .load_config()
        .map(|c| c.api_keys)
        .unwrap_or_default();
    let caller = if state.token.matches(presented) {
        Some(Caller::Owner)
    } else {
        configured
            .iter()
            .any(|key| same_secret(key.expose(), presented))
            .then_some(Caller::Key)
    };
    let Some(caller) = caller else {
        return openai_error(
            StatusCode::UNAUTHORIZED,
            "invalid_request_error",
            "invalid_api_key",
            "the key is wrong",
        );
    };
    request.extensions_mut().insert(caller);
    next.run(request).await
}

async fn models(State(state): State<AppState>) -> Json<ModelList> {
    let compat = state.compat.clone();
    let names = tokio::task::spawn_blocking(move || compat.models())
        .await
        .unwrap_or_default();
    Json(ModelList {
        object: "list".into(),
        data: names
            .into_iter()
            .map(|id| ModelEntry {
                id,
                object: "model".into(),
                created: 0,
                owned_by: "cairn".into(),
            })
            .collect(),
    })
}

async fn completions(
    State(state): State<AppState>,
    body: Result<Json<ChatCompletionRequest>, JsonRejection>,
) -> Response {
    let request = match body {
        Ok(Json(request)) => request,
        Err(e) => {
            return openai_error(
                StatusCode::BAD_REQUEST,
                "invalid_request_error",
                "invalid_request",
                e.body_text(),
            )
        }
    };
    let model = request.model.clone();
    let stream = request.stream;
    let include_usage = request
        .stream_options
        .as_ref()
        .is_some_and(|o| o.include_usage);
    let events = match state.compat.complete(request) {
        Ok(events) => events,
        Err(e) => {
            let (status, code) = match e.kind() {
                ErrorKind::NotFound => (StatusCode::NOT_FOUND, "model_not_found"),
                ErrorKind::BadRequest => (StatusCode::BAD_REQUEST, "invalid_request"),
                _ => (StatusCode::SERVICE_UNAVAILABLE, "unavailable"),
            };
            let kind = if status == StatusCode::SERVICE_UNAVAILABLE {
                "server_error"
            } else {
                "invalid_request_error"
            };
            return openai_error(status, kind, code, e.to_string());
        }
    };
    let answer = Answer::new(model);
    if stream {
        streamed(answer, events, include_usage).into_response()
    } else {
        whole(answer, events).await
    }
}

/// The fields every chunk and answer of one completion share.
struct Answer {
    id: String,
    created: u64,
    model: String,
}

impl Answer {
    fn new(model: String) -> Self {
        let mut bytes = [0u8; 12];
        let _ = getrandom::fill(&mut bytes);
        Self {
            id: format!("chatcmpl-{}", hex::encode(bytes)),
            created: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
            model,
        }
    }

    fn chunk(&self, delta: Delta, finish: Option<String>, usage: bool) -> ChatCompletionChunk {
        ChatCompletionChunk {
            id: self.id.clone(),
            object: "chat.completion.chunk",
            created: self.created,
            model: self.model.clone(),
            choices: vec![ChunkChoice {
                index: 0,
                delta,
                finish_reason: finish,
            }],
            usage: usage.then_some(None),
        }
    }
}

fn finish_reason(reason: FinishReason, called_tools: bool) -> String {
    match reason {
        _ if called_tools => "tool_calls",
        FinishReason::Stop | FinishReason::ToolCalls => "stop",
        FinishReason::Length => "length",
        FinishReason::Filtered => "content_filter",
    }
    .to_owned()
}

fn usage_of(usage: cairn_llm::Usage) -> ChatUsage {
    ChatUsage::new(usage.input_tokens, usage.output_tokens)
}

async fn whole(answer: Answer, mut events: CompatStream) -> Response {
    let mut reply = Completion::default();
    let mut finished = false;
    while let Some(event) = events.recv().await {
        match event {
            Ok(event) => {
                if reply.apply(event) {
                    finished = true;
                    break;
                }
            }
            Err(message) => {
                return openai_error(
                    StatusCode::BAD_GATEWAY,
                    "server_error",
                    "model_failed",
                    message,
                )
            }
        }
    }
    if !finished {
        return openai_error(
            StatusCode::BAD_GATEWAY,
            "server_error",
            "model_failed",
            "the answer ended before it finished",
        );
    }
    let finish = finish_reason(reply.finish, !reply.tool_calls.is_empty());
    let calls: Vec<ChatToolCall> = reply
        .tool_calls
        .into_iter()
        .map(|call| ChatToolCall {
            id: call.id,
            kind: "function".into(),
            function: FunctionCall {
                name: call.name,
                arguments: call.arguments,
            },
        })
        .collect();
    let text = reply.text;
    Json(ChatCompletion {
        id: answer.id,
        object: "chat.completion",
        created: answer.created,
        model: answer.model,
        choices: vec![Choice {
            index: 0,
            message: AssistantMessage {
                role: "assistant",
                content: (calls.is_empty() || !text.is_empty()).then_some(text),
                tool_calls: calls,
            },
            finish_reason: finish,
        }],
        usage: usage_of(reply.usage),
    })
    .into_response()
}

/// What the SSE stream still has to send.
struct Streaming {
    answer: Answer,
    events: CompatStream,
    include_usage: bool,
    started: bool,
    called_tools: bool,
    usage: ChatUsage,
    /// Frames ready to go out, in order.
    queue: std::collections::VecDeque<SseEvent>,
    ended: bool,
}

fn streamed(
    answer: Answer,
    events: CompatStream,
    include_usage: bool,
) -> Sse<impl futures_util::Stream<Item = Result<SseEvent, Infallible>>> {
    let state = Streaming {
        answer,
        events,
        include_usage,
        started: false,
        called_tools: false,
        usage: ChatUsage::default(),
        queue: Default::default(),
        ended: false,
    };
    let frames = futures_util::stream::unfold(state, |mut s| async move {
        loop {
            if let Some(frame) = s.queue.pop_front() {
                return Some((Ok(frame), s));
            }
            if s.ended {
                return None;
            }
            s.next_frames().await;
        }
    });
    Sse::new(frames)
}

impl Streaming {
    fn push(&mut self, value: &impl serde::Serialize) {
        let data = serde_json::to_string(value).unwrap_or_else(|_| "{}".into());
        self.queue.push_back(SseEvent::default().data(data));
    }

    fn push_chunk(&mut self, delta: Delta, finish: Option<String>) {
        if !self.started {
            self.started = true;
            let first = Delta {
                role: Some("assistant"),
                content: Some(String::new()),
                ..Delta::default()
            };
            let chunk = self.answer.chunk(first, None, self.include_usage);
            self.push(&chunk);
        }
        let chunk = self.answer.chunk(delta, finish, self.include_usage);
        self.push(&chunk);
    }

    /// Reads the next event and queues what it becomes.
    async fn next_frames(&mut self) {
        let Some(event) = self.events.recv().await else {
            let error = OpenAiError::new(
                "server_error",
                "model_failed",
                "the answer ended before it finished",
            );
            self.push(&error);
            self.ended = true;
            return;
        };
        match event {
            Ok(StreamEvent::Text(text)) if !text.is_empty() => self.push_chunk(
                Delta {
                    content: Some(text),
                    ..Delta::default()
                },
                None,
            ),
            Ok(StreamEvent::ToolCall {
                index,
                id,
                name,
                arguments,
            }) => {
                self.called_tools = true;
                let first = id.is_some() || name.is_some();
                self.push_chunk(
                    Delta {
                        tool_calls: vec![DeltaToolCall {
                            index,
                            id,
                            kind: first.then_some("function"),
                            function: DeltaFunction { name, arguments },
                        }],
                        ..Delta::default()
                    },
                    None,
                );
            }
            Ok(StreamEvent::Usage(usage)) => self.usage = usage_of(usage),
            Ok(StreamEvent::Done(reason)) => {
                let finish = finish_reason(reason, self.called_tools);
                self.push_chunk(Delta::default(), Some(finish));
                if self.include_usage {
                    let chunk = ChatCompletionChunk {
                        choices: Vec::new(),
                        usage: Some(Some(self.usage)),
                        ..self.answer.chunk(Delta::default(), None, true)
                    };
                    self.push(&chunk);
                }
                self.queue.push_back(SseEvent::default().data("[DONE]"));
                self.ended = true;
            }
            Ok(_) => {}
            Err(message) => {
                let error = OpenAiError::new("server_error", "model_failed", message);
                self.push(&error);
                self.ended = true;
            }
        }
    }
}

//! What one local server holds open at once, bounded: event streams, MCP sessions, tasks running,
//! and answers on `/v1` for the config's keys. Past a cap a request gets a clear 429 while
//! everything else — and the owner's own `/v1` requests, made with the per-run token — is still
//! served.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{Method, StatusCode};
use axum::middleware::Next;
use axum::response::Response;
use futures_util::StreamExt;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use cairn_protocol::ErrorCode;

use crate::guard::{openai_error, refuse};
use crate::AppState;

/// Event streams (`GET /api/v1/events`) open at once.
pub const MAX_EVENT_STREAMS: usize = 32;
/// MCP sessions (`/mcp`) held at once; the SDK closes one after 5 minutes idle.
pub const MAX_MCP_SESSIONS: usize = 32;
/// Tasks running at once before the API starts no more.
pub const MAX_RUNNING_TASKS: usize = 16;
/// `/v1` answers being written at once for the holders of `[api] keys`.
pub const MAX_KEY_COMPLETIONS: usize = 8;

/// The server's caps, shared by its handlers.
#[derive(Clone)]
pub struct Caps {
    streams: Arc<Semaphore>,
    completions: Arc<Semaphore>,
    /// `/mcp`'s sessions, counted before a new one is opened.
    pub mcp_sessions: Arc<cairn_mcp::McpSessions>,
}

impl Default for Caps {
    fn default() -> Self {
        Self {
            streams: Arc::new(Semaphore::new(MAX_EVENT_STREAMS)),
            completions: Arc::new(Semaphore::new(MAX_KEY_COMPLETIONS)),
            mcp_sessions: Arc::default(),
        }
    }
}

/// Who a `/v1` request comes from: the owner (the per-run token) or a holder of a configured key.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Caller {
    Owner,
    Key,
}

fn too_many(what: &str, cap: usize) -> Response {
    refuse(
        StatusCode::TOO_MANY_REQUESTS,
        ErrorCode::TooMany,
        &format!(
            "{cap} {what} are open already, the most this server holds: close one and try again"
        ),
    )
}

/// The response, holding `permit` until its body has been sent (or dropped).
fn holding(permit: OwnedSemaphorePermit, response: Response) -> Response {
    let (parts, body) = response.into_parts();
    let body = body.into_data_stream().map(move |chunk| {
        let _held = &permit;
        chunk
    });
    Response::from_parts(parts, Body::from_stream(body))
}

/// `GET /api/v1/events`: at most [`MAX_EVENT_STREAMS`] open.
pub(crate) async fn cap_event_streams(
    State(state): State<AppState>,
    request: Request,
    next: Next,
) -> Response {
    match state.caps.streams.clone().try_acquire_owned() {
        Ok(permit) => holding(permit, next.run(request).await),
        Err(_) => too_many("event streams", MAX_EVENT_STREAMS),
    }
}

/// `/mcp`: a request opening a session (a POST without `Mcp-Session-Id`) is refused at
/// [`MAX_MCP_SESSIONS`]; the sessions already open go on.
pub(crate) async fn cap_mcp_sessions(
    State(state): State<AppState>,
    request: Request,
    next: Next,
) -> Response {
    let opens =
        request.method() == Method::POST && !request.headers().contains_key("mcp-session-id");
    if opens && cairn_mcp::session_count(&state.caps.mcp_sessions).await >= MAX_MCP_SESSIONS {
        return too_many("MCP sessions", MAX_MCP_SESSIONS);
    }
    next.run(request).await
}

/// Starting a turn over the API: refused while [`MAX_RUNNING_TASKS`] run.
pub(crate) fn tasks_full(state: &AppState) -> Option<Response> {
    (state.chat.running().len() >= MAX_RUNNING_TASKS)
        .then(|| too_many("tasks running", MAX_RUNNING_TASKS))
}

/// A `/v1` answer for a key holder: at most [`MAX_KEY_COMPLETIONS`] at once; the owner's are not
/// counted.
pub(crate) async fn cap_key_completions(
    State(state): State<AppState>,
    request: Request,
    next: Next,
) -> Response {
    if request.extensions().get::<Caller>() != Some(&Caller::Key) {
        return next.run(request).await;
    }
    match state.caps.completions.clone().try_acquire_owned() {
        Ok(permit) => holding(permit, next.run(request).await),
        Err(_) => openai_error(
            StatusCode::TOO_MANY_REQUESTS,
            "rate_limit_error",
            "too_many_requests",
            format!(
                "{MAX_KEY_COMPLETIONS} answers are being written for API keys already: try again when one is done"
            ),
        ),
    }
}

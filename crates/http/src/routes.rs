//! The router: which paths exist, which guards cover them, and the thin handlers that call
//! `cairn-api`.

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::middleware::{from_fn, from_fn_with_state};
use axum::response::Response;
use axum::routing::get;
use axum::{Json, Router};
use cairn_api::chat::Chat;
use cairn_api::compat::CompatChat;
use cairn_api::{Cairn, VERSION};
use cairn_protocol::{ErrorCode, Health, RuntimeInfo, StatusReport};

use crate::guard::{no_credentials_in_url, refuse, require_token, same_machine_only, Token};

/// What the handlers share.
#[derive(Clone)]
pub struct AppState {
    pub cairn: Cairn,
    pub token: Token,
    /// This server's own address and pid, reported by `status`.
    pub serving: Arc<RuntimeInfo>,
    /// The conversations, shared with the workbench when the desktop app serves.
    pub chat: Arc<Chat>,
    /// The OpenAI-compatible chat, its agent runtimes kept warm between requests.
    pub compat: Arc<CompatChat>,
    /// Turns `true` when the server shuts down: the open event streams end then.
    pub closing: Arc<tokio::sync::watch::Sender<bool>>,
    /// What the server holds open at most.
    pub caps: crate::caps::Caps,
}

impl AppState {
    /// The state of a server for `cairn` and its `chat`; the agent's tools start in this
    /// process's directory.
    pub fn new(cairn: Cairn, token: Token, serving: RuntimeInfo, chat: Arc<Chat>) -> Self {
        // The token is a secret like the configured keys: never captured into memory.
        cairn_api::secrets::know_api_token(token.as_str());
        let project_root =
            std::env::current_dir().unwrap_or_else(|_| cairn.home().root().to_path_buf());
        Self {
            compat: Arc::new(CompatChat::new(cairn.clone(), project_root)),
            chat,
            cairn,
            token,
            serving: Arc::new(serving),
            closing: Arc::new(tokio::sync::watch::Sender::new(false)),
            caps: crate::caps::Caps::default(),
        }
    }
}

/// The whole HTTP app. `GET /api/v1/health` is open; every other path needs the token (the `/v1`
/// OpenAI-compatible routes also take the config's keys); every path refuses foreign `Host` and
/// `Origin` headers and a credential in the URL.
pub fn app(state: AppState) -> Router {
    let mcp = Router::new()
        .nest_service(
            "/mcp",
            cairn_mcp::http_service(
                Arc::new(cairn_api::McpMemory(state.cairn.clone())),
                VERSION,
                state.caps.mcp_sessions.clone(),
            ),
        )
        .layer(from_fn_with_state(
            state.clone(),
            crate::caps::cap_mcp_sessions,
        ));
    let protected = Router::new()
        .route("/api/v1/status", get(status))
        .merge(crate::memory_routes::routes())
        .merge(crate::task_routes::routes(state.clone()))
        .merge(mcp)
        .fallback(not_found)
        .layer(from_fn_with_state(state.token.clone(), require_token));
    Router::new()
        .route("/api/v1/health", get(health))
        .merge(crate::openai_routes::routes(state.clone()))
        .merge(protected)
        .layer(from_fn(no_credentials_in_url))
        .layer(from_fn(same_machine_only))
        .with_state(state)
}

async fn health() -> Json<Health> {
    Json(Health {
        status: "ok".to_owned(),
        version: VERSION.to_owned(),
    })
}

async fn status(State(state): State<AppState>) -> Json<StatusReport> {
    Json(state.cairn.status(Some(&state.serving)).await)
}

async fn not_found() -> Response {
    refuse(
        StatusCode::NOT_FOUND,
        ErrorCode::NotFound,
        "no such endpoint",
    )
}

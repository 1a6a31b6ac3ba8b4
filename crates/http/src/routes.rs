//! The router: which paths exist, which guards cover them, and the thin handlers that call
//! `cairn-api`.

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::middleware::{from_fn, from_fn_with_state};
use axum::response::Response;
use axum::routing::get;
use axum::{Json, Router};
use cairn_api::{Cairn, VERSION};
use cairn_protocol::{Health, RuntimeInfo, StatusReport};

use crate::guard::{refuse, require_token, same_machine_only, Token};

/// What the handlers share.
#[derive(Clone)]
pub struct AppState {
    pub cairn: Cairn,
    pub token: Token,
    /// This server's own address and pid, reported by `status`.
    pub serving: Arc<RuntimeInfo>,
}

/// The whole HTTP app. `GET /api/v1/health` is open; every other path needs the token; every path
/// refuses foreign `Host` and `Origin` headers.
pub fn app(state: AppState) -> Router {
    let protected = Router::new()
        .route("/api/v1/status", get(status))
        .merge(crate::memory_routes::routes())
        .fallback(not_found)
        .layer(from_fn_with_state(state.token.clone(), require_token));
    Router::new()
        .route("/api/v1/health", get(health))
        .merge(protected)
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
    refuse(StatusCode::NOT_FOUND, "not_found", "no such endpoint")
}

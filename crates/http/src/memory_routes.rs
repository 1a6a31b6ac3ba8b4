//! The memory API routes: sessions, turn capture, search, explicit writes, reads and deletes, and
//! the memory panel. Each handler runs its `cairn-api` operation off the async threads.

use axum::extract::rejection::{JsonRejection, PathRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use cairn_api::Cairn;
use cairn_api::{TurnCompletion, TurnStart};
use cairn_protocol::memory::{FeedbackRequest, Layer, NewMemory, SearchQuery};
use cairn_protocol::ErrorCode;
use serde::{Deserialize, Serialize};

use crate::guard::{api_error, bad_body, refuse};
use crate::AppState;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/v1/sessions/open", post(open_session))
        .route("/api/v1/sessions/{id}/close", post(close_session))
        .route("/api/v1/turns/start", post(start_turn))
        .route("/api/v1/turns/{id}/complete", post(complete_turn))
        .route("/api/v1/memory/search", post(search))
        .route("/api/v1/memory/add", post(add))
        .route("/api/v1/memory/{id}", get(get_memory).delete(delete_memory))
        .route("/api/v1/memory/{id}/versions", get(memory_versions))
        .route("/api/v1/memory/dream", post(dream))
        .route("/api/v1/memory/dreams", get(dream_log))
        .route("/api/v1/memory/dreams/{id}/restore", post(restore_dream))
        .route("/api/v1/feedback", post(feedback))
        .route("/api/v1/panel/overview", get(overview))
        .route("/api/v1/panel/items", get(items))
        .route("/api/v1/panel/analysis", get(analysis))
        .route("/api/v1/sources", get(list_sources))
        .route("/api/v1/sources/scan", post(scan_sources))
}

/// `POST /api/v1/memory/dream {"dry_run"?: true}`: dreams now; the dream's log entry.
#[derive(Debug, Default, Deserialize)]
struct DreamRequest {
    #[serde(default)]
    dry_run: bool,
}

async fn dream(
    State(state): State<AppState>,
    body: Result<Json<DreamRequest>, JsonRejection>,
) -> Response {
    match body {
        Ok(Json(request)) => run(state, move |c| c.dream(request.dry_run, "api")).await,
        Err(e) => bad_body(&e),
    }
}

/// `GET /api/v1/memory/dreams`: the dreams' log, newest first.
async fn dream_log(State(state): State<AppState>) -> Response {
    run(state, |c| c.dream_log(100)).await
}

/// `POST /api/v1/memory/dreams/{id}/restore`: the memory back as it was before dream `id`.
async fn restore_dream(
    State(state): State<AppState>,
    id: Result<Path<i64>, PathRejection>,
) -> Response {
    match id {
        Ok(Path(id)) => run(state, move |c| c.restore_dream(id)).await,
        Err(e) => bad_path(&e),
    }
}

async fn list_sources(State(state): State<AppState>) -> Response {
    run(state, |c| Ok(c.list_sources())).await
}

/// `POST /api/v1/sources/scan {"source"?: "codex", "full"?: true}`: the per-source counts (the
/// progress goes to `/api/v1/events` as it happens).
#[derive(Debug, Default, Deserialize)]
struct ScanRequest {
    #[serde(default)]
    source: Option<String>,
    #[serde(default)]
    full: bool,
}

async fn scan_sources(
    State(state): State<AppState>,
    body: Result<Json<ScanRequest>, JsonRejection>,
) -> Response {
    let request = match body {
        Ok(Json(r)) => r,
        Err(e) => return bad_body(&e),
    };
    let chat = state.chat.clone();
    // One scan at a time, whichever door started it: a second is refused (409).
    run(state, move |_| {
        chat.scan_sources(request.source.as_deref(), request.full, &mut |_| {})
    })
    .await
}

/// Runs a blocking operation and answers with its JSON or its error.
async fn run<T, F>(state: AppState, op: F) -> Response
where
    T: Serialize + Send + 'static,
    F: FnOnce(&Cairn) -> Result<T, cairn_api::Error> + Send + 'static,
{
    let outcome = tokio::task::spawn_blocking(move || op(&state.cairn)).await;
    match outcome {
        Ok(Ok(value)) => Json(value).into_response(),
        Ok(Err(e)) => api_error(&e),
        Err(e) => refuse(
            StatusCode::INTERNAL_SERVER_ERROR,
            ErrorCode::Internal,
            &format!("the operation stopped: {e}"),
        ),
    }
}

fn bad_path(e: &PathRejection) -> Response {
    refuse(
        StatusCode::BAD_REQUEST,
        ErrorCode::BadRequest,
        &e.body_text(),
    )
}

async fn open_session(
    State(state): State<AppState>,
    body: Result<Json<cairn_api::SessionOpen>, JsonRejection>,
) -> Response {
    match body {
        Ok(Json(open)) => run(state, move |c| c.open_session(open)).await,
        Err(e) => bad_body(&e),
    }
}

#[derive(Serialize)]
struct Closed {
    closed: bool,
}

async fn close_session(
    State(state): State<AppState>,
    id: Result<Path<String>, PathRejection>,
) -> Response {
    match id {
        Ok(Path(id)) => {
            run(state, move |c| {
                c.close_session(&id).map(|closed| Closed { closed })
            })
            .await
        }
        Err(e) => bad_path(&e),
    }
}

async fn start_turn(
    State(state): State<AppState>,
    body: Result<Json<TurnStart>, JsonRejection>,
) -> Response {
    match body {
        Ok(Json(start)) => run(state, move |c| c.start_turn(start)).await,
        Err(e) => bad_body(&e),
    }
}

async fn complete_turn(
    State(state): State<AppState>,
    id: Result<Path<i64>, PathRejection>,
    body: Result<Json<TurnCompletion>, JsonRejection>,
) -> Response {
    match (id, body) {
        (Ok(Path(id)), Ok(Json(done))) => run(state, move |c| c.complete_turn(id, done)).await,
        (Err(e), _) => bad_path(&e),
        (_, Err(e)) => bad_body(&e),
    }
}

async fn search(
    State(state): State<AppState>,
    body: Result<Json<SearchQuery>, JsonRejection>,
) -> Response {
    match body {
        Ok(Json(query)) => run(state, move |c| c.search_memory(query)).await,
        Err(e) => bad_body(&e),
    }
}

async fn add(
    State(state): State<AppState>,
    body: Result<Json<NewMemory>, JsonRejection>,
) -> Response {
    match body {
        Ok(Json(memory)) => run(state, move |c| c.add_memory(memory)).await,
        Err(e) => bad_body(&e),
    }
}

/// `POST /api/v1/feedback {"memory_id" | "turn_id", "rating": "up" | "down", "note"?}`: the
/// episode's reward as it now stands.
async fn feedback(
    State(state): State<AppState>,
    body: Result<Json<FeedbackRequest>, JsonRejection>,
) -> Response {
    match body {
        Ok(Json(request)) => run(state, move |c| c.give_feedback(&request)).await,
        Err(e) => bad_body(&e),
    }
}

async fn get_memory(
    State(state): State<AppState>,
    id: Result<Path<i64>, PathRejection>,
) -> Response {
    match id {
        Ok(Path(id)) => run(state, move |c| c.get_memory(id)).await,
        Err(e) => bad_path(&e),
    }
}

#[derive(Serialize)]
struct Deleted {
    deleted: bool,
}

/// `GET /api/v1/memory/{id}/versions`: the versions of the memory's fact, oldest first.
async fn memory_versions(
    State(state): State<AppState>,
    id: Result<Path<i64>, PathRejection>,
) -> Response {
    match id {
        Ok(Path(id)) => run(state, move |c| c.memory_versions(id)).await,
        Err(e) => bad_path(&e),
    }
}

async fn delete_memory(
    State(state): State<AppState>,
    id: Result<Path<i64>, PathRejection>,
) -> Response {
    match id {
        Ok(Path(id)) => {
            run(state, move |c| {
                c.delete_memory(id).map(|deleted| Deleted { deleted })
            })
            .await
        }
        Err(e) => bad_path(&e),
    }
}

async fn overview(State(state): State<AppState>) -> Response {
    run(state, |c| c.panel_overview()).await
}

#[derive(Deserialize)]
struct ItemsQuery {
    layer: Option<String>,
    #[serde(default)]
    offset: usize,
    #[serde(default = "default_items")]
    limit: usize,
}

fn default_items() -> usize {
    50
}

async fn items(
    State(state): State<AppState>,
    query: Result<Query<ItemsQuery>, QueryRejection>,
) -> Response {
    let Query(q) = match query {
        Ok(q) => q,
        Err(e) => {
            return refuse(
                StatusCode::BAD_REQUEST,
                ErrorCode::BadRequest,
                &e.body_text(),
            )
        }
    };
    let layer = match q.layer.as_deref().map(str::parse::<Layer>).transpose() {
        Ok(layer) => layer,
        Err(e) => {
            return refuse(
                StatusCode::BAD_REQUEST,
                ErrorCode::BadRequest,
                &e.to_string(),
            )
        }
    };
    run(state, move |c| c.panel_items(layer, q.offset, q.limit)).await
}

async fn analysis(State(state): State<AppState>) -> Response {
    run(state, |c| c.panel_analysis()).await
}

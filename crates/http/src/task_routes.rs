//! Tasks over the local API, on the same [`cairn_api::chat::Chat`] as the workbench: create a task
//! with a message, list and read tasks, send a message, answer an approval or a question, stop;
//! `GET /api/v1/events` streams every task's events, and the progress of scans of other agents'
//! history, as server-sent events.

use std::convert::Infallible;

use axum::extract::rejection::JsonRejection;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::middleware::from_fn_with_state;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use cairn_api::chat::Published;
use cairn_protocol::{ErrorCode, TaskSummary, TranscriptMessage};
use serde::{Deserialize, Serialize};
use tokio::sync::broadcast::error::RecvError;

use crate::guard::{api_error, bad_body, refuse};
use crate::AppState;

pub fn routes(state: AppState) -> Router<AppState> {
    Router::new()
        .route("/api/v1/tasks", get(list).post(create))
        .route("/api/v1/tasks/{id}", get(read))
        .route("/api/v1/tasks/{id}/messages", post(send))
        .route("/api/v1/tasks/{id}/stop", post(stop))
        .route("/api/v1/schedules", get(schedules))
        .route("/api/v1/schedules/{id}/run", post(run_schedule))
        .route("/api/v1/approvals/{request}", post(approve))
        .route("/api/v1/questions/{request}", post(answer))
        .route(
            "/api/v1/events",
            get(events).layer(from_fn_with_state(state, crate::caps::cap_event_streams)),
        )
}

#[derive(Deserialize)]
struct MessageBody {
    message: String,
    /// Where the task works from this turn on (a full path to an existing folder); unchanged
    /// when absent.
    #[serde(default)]
    folder: Option<String>,
}

/// Moves `task` to the body's folder, if it names one; the refusal when it cannot.
fn move_to_folder(state: &AppState, task: &str, body: &MessageBody) -> Option<Response> {
    let folder = body.folder.as_deref()?;
    state
        .chat
        .set_task_folder(task, folder)
        .err()
        .map(|e| api_error(&e))
}

#[derive(Serialize)]
struct Created {
    task: String,
}

/// A task as `GET /api/v1/tasks/{id}` shows it.
#[derive(Serialize)]
struct TaskView {
    task: String,
    /// `None` until its first message is stored.
    summary: Option<TaskSummary>,
    running: bool,
    transcript: Vec<TranscriptMessage>,
}

async fn list(State(state): State<AppState>) -> Response {
    let cairn = state.cairn.clone();
    match tokio::task::spawn_blocking(move || cairn.tasks_list()).await {
        Ok(tasks) => Json(tasks).into_response(),
        Err(e) => refuse(
            StatusCode::INTERNAL_SERVER_ERROR,
            ErrorCode::Internal,
            &e.to_string(),
        ),
    }
}

/// `POST /api/v1/tasks {"message": …, "folder"?: …}`: a new task, its first turn started; `201 {"task": id}`.
/// `GET /api/v1/schedules`: every schedule, with its last run.
async fn schedules(State(state): State<AppState>) -> Response {
    match state.cairn.schedules().list() {
        Ok(list) => Json(list).into_response(),
        Err(e) => api_error(&cairn_api::Error::from(e)),
    }
}

/// `POST /api/v1/schedules/{id}/run`: the schedule runs now; the task it started.
async fn run_schedule(State(state): State<AppState>, Path(id): Path<String>) -> Response {
    match state.chat.run_schedule_now(&id) {
        Ok(task) => (StatusCode::CREATED, Json(Created { task })).into_response(),
        Err(e) => api_error(&e),
    }
}

async fn create(
    State(state): State<AppState>,
    body: Result<Json<MessageBody>, JsonRejection>,
) -> Response {
    let body = match body {
        Ok(Json(b)) => b,
        Err(e) => return bad_body(&e),
    };
    if let Some(full) = crate::caps::tasks_full(&state) {
        return full;
    }
    match state.chat.new_task(&body.message, body.folder.as_deref()) {
        Ok(task) => (StatusCode::CREATED, Json(Created { task })).into_response(),
        Err(e) => api_error(&e),
    }
}

async fn read(State(state): State<AppState>, Path(id): Path<String>) -> Response {
    let running = state.chat.running().contains(&id);
    let cairn = state.cairn.clone();
    let task = id.clone();
    let read = tokio::task::spawn_blocking(move || {
        let summary = cairn.task_summary(&task);
        let transcript = cairn.task_transcript(&task);
        (summary, transcript)
    })
    .await;
    match read {
        Ok((summary, Ok(transcript))) => Json(TaskView {
            task: id,
            summary,
            running,
            transcript,
        })
        .into_response(),
        // Just created: nothing stored yet, but it is there.
        Ok((_, Err(_))) if running => Json(TaskView {
            task: id,
            summary: None,
            running,
            transcript: Vec::new(),
        })
        .into_response(),
        Ok((_, Err(e))) => api_error(&e),
        Err(e) => refuse(
            StatusCode::INTERNAL_SERVER_ERROR,
            ErrorCode::Internal,
            &e.to_string(),
        ),
    }
}

/// `POST /api/v1/tasks/{id}/messages {"message": …}`: the next turn (a running one is stopped).
async fn send(
    State(state): State<AppState>,
    Path(id): Path<String>,
    body: Result<Json<MessageBody>, JsonRejection>,
) -> Response {
    let body = match body {
        Ok(Json(b)) => b,
        Err(e) => return bad_body(&e),
    };
    if !state.chat.running().contains(&id) {
        if let Some(full) = crate::caps::tasks_full(&state) {
            return full;
        }
    }
    if let Some(refused) = move_to_folder(&state, &id, &body) {
        return refused;
    }
    match state.chat.start_detached(&id, &body.message) {
        Ok(()) => StatusCode::ACCEPTED.into_response(),
        Err(e) => api_error(&e),
    }
}

async fn stop(State(state): State<AppState>, Path(id): Path<String>) -> Response {
    match state.chat.stop(&id) {
        Ok(()) => StatusCode::NO_CONTENT.into_response(),
        Err(e) => api_error(&e),
    }
}

#[derive(Deserialize)]
struct Decision {
    allow: bool,
}

/// `POST /api/v1/approvals/{request} {"allow": true|false}`.
async fn approve(
    State(state): State<AppState>,
    Path(request): Path<u64>,
    body: Result<Json<Decision>, JsonRejection>,
) -> Response {
    let decision = match body {
        Ok(Json(d)) => d,
        Err(e) => return bad_body(&e),
    };
    match state.chat.approve(request, decision.allow) {
        Ok(()) => StatusCode::NO_CONTENT.into_response(),
        Err(e) => api_error(&e),
    }
}

#[derive(Deserialize)]
struct Answers {
    /// One answer per question; `null` declines.
    answers: Option<Vec<String>>,
}

/// `POST /api/v1/questions/{request} {"answers": [...] | null}`.
async fn answer(
    State(state): State<AppState>,
    Path(request): Path<u64>,
    body: Result<Json<Answers>, JsonRejection>,
) -> Response {
    let answers = match body {
        Ok(Json(a)) => a,
        Err(e) => return bad_body(&e),
    };
    match state.chat.answer(request, answers.answers) {
        Ok(()) => StatusCode::NO_CONTENT.into_response(),
        Err(e) => api_error(&e),
    }
}

/// Every task's events, as `event: <kind>` and `data: {"task": …, "kind": …, …}`; a change to
/// the task list as `event: task_changed` and `data: {"change": "updated", "task": {…},
/// "running": …}` or `{"change": "removed", "session": …}`; a scan's progress as `event: scan`
/// and `data: {"event": "source_started" | "file" | …, …}`.
async fn events(
    State(state): State<AppState>,
) -> Sse<impl futures_util::Stream<Item = Result<SseEvent, Infallible>>> {
    let receiver = state.chat.subscribe();
    let closing = state.closing.subscribe();
    let frames = futures_util::stream::unfold(
        (receiver, closing),
        |(mut receiver, mut closing)| async move {
            let next = tokio::select! {
                next = receiver.recv() => next,
                _ = closing.wait_for(|closed| *closed) => return None,
            };
            let frame = match next {
                Ok(Published::Task { event, .. }) => {
                    let data = serde_json::to_value(&event).unwrap_or_default();
                    let kind = data["kind"].as_str().unwrap_or("event").to_owned();
                    SseEvent::default().event(kind).data(data.to_string())
                }
                Ok(Published::Scan(progress)) => SseEvent::default()
                    .event("scan")
                    .data(serde_json::to_string(&progress).unwrap_or_default()),
                Ok(Published::TaskChanged(change)) => SseEvent::default()
                    .event("task_changed")
                    .data(serde_json::to_string(&change).unwrap_or_default()),
                Err(RecvError::Lagged(missed)) => SseEvent::default()
                    .event("lagged")
                    .data(serde_json::json!({"missed": missed}).to_string()),
                Err(RecvError::Closed) => return None,
            };
            Some((Ok(frame), (receiver, closing)))
        },
    );
    Sse::new(frames).keep_alive(KeepAlive::default())
}

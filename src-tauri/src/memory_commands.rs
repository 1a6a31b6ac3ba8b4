//! The Memory page's commands: the overview, the entries by layer, an explained search, one entry,
//! its edit and delete, and the analytics. Thin adapters over `cairn-api`, run off the async threads.
//!
//! The answers are the memory crate's own types, serialised here into the IPC response, so the
//! page sees exactly what the HTTP panel routes return.

use cairn_api::Cairn;
use cairn_protocol::{ApiError, ErrorCode};
use tauri::ipc::{IpcResponse, Response};
use tauri::State;

use crate::Desktop;

/// How many entries a page of the list holds when the page does not say.
const DEFAULT_PAGE: usize = 20;
/// How many candidates an explained search keeps at most.
const DEFAULT_SEARCH_LIMIT: usize = 10;

/// Runs a memory operation on a blocking thread and answers with its JSON.
async fn run<T, F>(desktop: &Desktop, op: F) -> Result<Response, ApiError>
where
    T: IpcResponse + Send + 'static,
    F: FnOnce(&Cairn) -> Result<T, cairn_api::Error> + Send + 'static,
{
    let cairn = desktop.cairn.clone();
    let value = tauri::async_runtime::spawn_blocking(move || op(&cairn))
        .await
        .map_err(|e| ApiError::new(ErrorCode::Internal, e.to_string()))?
        .map_err(|e| e.to_api_error())?;
    value.body().map(Response::new).map_err(|e| {
        ApiError::new(
            ErrorCode::Internal,
            format!("cannot encode the answer: {e}"),
        )
    })
}

/// A number that moves whenever the memory changes, wherever the change came from.
#[tauri::command]
pub async fn memory_revision(desktop: State<'_, Desktop>) -> Result<Response, ApiError> {
    run(&desktop, |c| c.memory_revision()).await
}

/// Counts by layer and source, sessions, turns and the size on disk.
#[tauri::command]
pub async fn memory_overview(desktop: State<'_, Desktop>) -> Result<Response, ApiError> {
    run(&desktop, |c| c.panel_overview()).await
}

/// Live entries, newest first, of one layer (`L1`, `L2`, `L3`, `skill`) or all.
#[tauri::command]
pub async fn memory_items(
    desktop: State<'_, Desktop>,
    layer: Option<String>,
    offset: Option<usize>,
    limit: Option<usize>,
) -> Result<Response, ApiError> {
    run(&desktop, move |c| {
        c.panel_items_named(
            layer.as_deref(),
            offset.unwrap_or(0),
            limit.unwrap_or(DEFAULT_PAGE),
        )
    })
    .await
}

/// A search with every candidate explained: channels, fused score, kept or dropped and why.
#[tauri::command]
pub async fn memory_search(
    desktop: State<'_, Desktop>,
    query: String,
    layer: Option<String>,
    limit: Option<usize>,
) -> Result<Response, ApiError> {
    run(&desktop, move |c| {
        c.panel_search(
            &query,
            layer.as_deref(),
            limit.unwrap_or(DEFAULT_SEARCH_LIMIT),
        )
    })
    .await
}

/// One live entry.
#[tauri::command]
pub async fn memory_get(desktop: State<'_, Desktop>, id: i64) -> Result<Response, ApiError> {
    run(&desktop, move |c| c.get_memory(id)).await
}

/// A rating of a reply; the episode's reward as it now stands.
#[tauri::command]
pub async fn give_feedback(
    desktop: State<'_, Desktop>,
    request: cairn_protocol::memory::FeedbackRequest,
) -> Result<Response, ApiError> {
    run(&desktop, move |c| c.give_feedback(&request)).await
}

/// The versions of an entry's fact, oldest first.
#[tauri::command]
pub async fn memory_versions(desktop: State<'_, Desktop>, id: i64) -> Result<Response, ApiError> {
    run(&desktop, move |c| c.memory_versions(id)).await
}

/// Replaces an entry's text; answers with the entry as stored.
#[tauri::command]
pub async fn memory_edit(
    desktop: State<'_, Desktop>,
    id: i64,
    text: String,
) -> Result<Response, ApiError> {
    run(&desktop, move |c| c.edit_memory(id, &text)).await
}

/// Deletes an entry (its text leaves the database); false when it was already gone.
#[tauri::command]
pub async fn memory_delete(desktop: State<'_, Desktop>, id: i64) -> Result<Response, ApiError> {
    run(&desktop, move |c| c.delete_memory(id)).await
}

/// Memories per day and source, the recall hit rate, the mean search time and the search log.
#[tauri::command]
pub async fn memory_analysis(desktop: State<'_, Desktop>) -> Result<Response, ApiError> {
    run(&desktop, |c| c.panel_analysis()).await
}

/// `/dream`: the memory consolidates itself now (`dry_run`: says what it would change).
#[tauri::command]
pub async fn memory_dream(
    desktop: State<'_, Desktop>,
    dry_run: bool,
) -> Result<Response, ApiError> {
    run(&desktop, move |c| c.dream(dry_run, "app")).await
}

/// `/dream-log`: the dreams so far, newest first.
#[tauri::command]
pub async fn memory_dream_log(desktop: State<'_, Desktop>) -> Result<Response, ApiError> {
    run(&desktop, |c| c.dream_log(20)).await
}

/// `/dream-restore ID`: the memory back as it was before dream `id`.
#[tauri::command]
pub async fn memory_dream_restore(
    desktop: State<'_, Desktop>,
    id: i64,
) -> Result<Response, ApiError> {
    run(&desktop, move |c| c.restore_dream(id)).await
}

//! The Memory page's calls: overview, entries, search, edits, deletion, feedback and analysis.

use super::bridge::{invoke, invoke_with};
use cairn_protocol::{memory, ApiError};

/// A number that moves whenever a memory is added, edited or deleted, wherever that happened.
pub async fn memory_revision() -> Result<i64, ApiError> {
    invoke("memory_revision").await
}

/// Counts by layer and source, sessions, turns and the size on disk.
pub async fn memory_overview() -> Result<memory::Overview, ApiError> {
    invoke("memory_overview").await
}

/// Live entries, newest first, of one layer (`L1`, `L2`, `L3`, `skill`) or all.
pub async fn memory_items(
    layer: Option<&str>,
    offset: usize,
    limit: usize,
) -> Result<Vec<memory::MemoryRecord>, ApiError> {
    let args = serde_json::json!({ "layer": layer, "offset": offset, "limit": limit });
    invoke_with("memory_items", &args).await
}

/// A search with every candidate explained.
pub async fn memory_search(
    query: &str,
    layer: Option<&str>,
    limit: usize,
) -> Result<memory::SearchResult, ApiError> {
    let args = serde_json::json!({ "query": query, "layer": layer, "limit": limit });
    invoke_with("memory_search", &args).await
}

/// One live entry.
pub async fn memory_get(id: i64) -> Result<memory::MemoryRecord, ApiError> {
    invoke_with("memory_get", &serde_json::json!({ "id": id })).await
}

/// A rating of a finished reply (by its captured turn); the episode's reward as it now stands.
pub async fn give_feedback(
    turn_id: i64,
    rating: memory::Rating,
) -> Result<memory::Reward, ApiError> {
    invoke_with(
        "give_feedback",
        &serde_json::json!({ "request": memory::FeedbackRequest { memory_id: None, turn_id: Some(turn_id), rating, note: None } }),
    )
    .await
}

/// The versions of a memory's fact, oldest first.
pub async fn memory_versions(id: i64) -> Result<Vec<memory::MemoryRecord>, ApiError> {
    invoke_with("memory_versions", &serde_json::json!({ "id": id })).await
}

/// A memory's new text, re-indexed; the entry as it is now.
pub async fn memory_edit(id: i64, text: &str) -> Result<memory::MemoryRecord, ApiError> {
    invoke_with(
        "memory_edit",
        &serde_json::json!({ "id": id, "text": text }),
    )
    .await
}

/// Deletes a memory (its text leaves the database).
pub async fn memory_delete(id: i64) -> Result<bool, ApiError> {
    invoke_with("memory_delete", &serde_json::json!({ "id": id })).await
}

/// Memories per day by source, and the search log's statistics.
pub async fn memory_analysis() -> Result<memory::Analysis, ApiError> {
    invoke("memory_analysis").await
}

/// `/dream`: the memory consolidates itself now; its log entry.
pub async fn memory_dream(dry_run: bool) -> Result<memory::Dream, ApiError> {
    invoke_with("memory_dream", &serde_json::json!({ "dryRun": dry_run })).await
}

/// `/dream-log`: the dreams so far, newest first.
pub async fn memory_dream_log() -> Result<Vec<memory::Dream>, ApiError> {
    invoke("memory_dream_log").await
}

/// `/dream-restore ID`: the memory back as it was before dream `id`.
pub async fn memory_dream_restore(id: i64) -> Result<memory::Restored, ApiError> {
    invoke_with("memory_dream_restore", &serde_json::json!({ "id": id })).await
}

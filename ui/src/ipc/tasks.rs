//! Tasks and their turns: the stored list, transcripts, folders, sending and stopping, the slash
//! commands' own calls, answers to approvals and questions, and a task's jobs and team.

use super::attachments::Attachment;
use super::bridge::{invoke, invoke_streaming, invoke_with};
use cairn_protocol::{ApiError, ChatEvent};

/// The stored tasks.
pub async fn tasks_list() -> Result<Vec<cairn_protocol::TaskSummary>, ApiError> {
    invoke("tasks_list").await
}

/// A stored task's transcript.
pub async fn task_transcript(
    session: &str,
) -> Result<Vec<cairn_protocol::TranscriptMessage>, ApiError> {
    invoke_with("task_transcript", &serde_json::json!({"session": session})).await
}

/// Renames, pins or archives a task (`change`: `{title?, pinned?, archived?}`).
pub async fn task_update(
    session: &str,
    change: &serde_json::Value,
) -> Result<cairn_protocol::TaskSummary, ApiError> {
    invoke_with(
        "task_update",
        &serde_json::json!({"session": session, "change": change}),
    )
    .await
}

/// Where a task works (a new task: where it will work).
pub async fn task_folder(session: &str) -> Result<String, ApiError> {
    invoke_with("task_folder", &serde_json::json!({"session": session})).await
}

/// Moves a task to `folder` from its next turn on; the folder as it will be used.
pub async fn task_folder_set(session: &str, folder: &str) -> Result<String, ApiError> {
    invoke_with(
        "task_folder_set",
        &serde_json::json!({"session": session, "folder": folder}),
    )
    .await
}

/// The subfolders of `folder` (empty: the home folder).
pub async fn folder_listing(
    folder: &str,
) -> Result<cairn_protocol::settings::FolderListing, ApiError> {
    invoke_with("folder_listing", &serde_json::json!({"folder": folder})).await
}

/// Deletes a task for good.
pub async fn task_delete(session: &str) -> Result<bool, ApiError> {
    invoke_with("task_delete", &serde_json::json!({"session": session})).await
}

/// Switches the chat's model (`/model`); the model's name.
pub async fn set_model(model: &str) -> Result<String, ApiError> {
    invoke_with("set_model", &serde_json::json!({"model": model})).await
}

/// Compacts a task's history (`/compact`); the summary's length in characters.
/// Compacts a task's history; answers the summary the model goes on from.
pub async fn compact_task(session: &str) -> Result<String, ApiError> {
    invoke_with("compact_task", &serde_json::json!({"session": session})).await
}

/// Allows or denies a call waiting for permission.
pub async fn approve(request: u64, allow: bool) -> Result<(), ApiError> {
    invoke_with(
        "approve",
        &serde_json::json!({"request": request, "allow": allow}),
    )
    .await
}

/// Answers ask_user (one answer per question), or declines with `None`.
pub async fn answer_question(request: u64, answers: Option<Vec<String>>) -> Result<(), ApiError> {
    invoke_with(
        "answer_question",
        &serde_json::json!({"request": request, "answers": answers}),
    )
    .await
}

/// Stops the turn running in `session`.
pub async fn stop_turn(session: &str) -> Result<(), ApiError> {
    invoke_with("stop_turn", &serde_json::json!({"session": session})).await
}

/// Sends a message in `session`; `on_event` sees the turn's events as they stream in. Returns when
/// the turn has ended.
pub async fn send_message(
    session: &str,
    text: &str,
    attachments: &[Attachment],
    on_event: impl FnMut(ChatEvent) + 'static,
) -> Result<(), ApiError> {
    let attachments: Vec<_> = attachments
        .iter()
        .map(|a| cairn_protocol::AttachmentInput {
            name: a.name.clone(),
            data_url: a.data_url.clone(),
        })
        .collect();
    invoke_streaming(
        "send_message",
        &serde_json::json!({"session": session, "text": text, "attachments": attachments}),
        "onEvent",
        on_event,
    )
    .await
}

/// `/restart`: the task's last message again; streams like [`send_message`].
pub async fn restart_task(
    session: &str,
    on_event: impl FnMut(ChatEvent) + 'static,
) -> Result<(), ApiError> {
    invoke_streaming(
        "restart_task",
        &serde_json::json!({"session": session}),
        "onEvent",
        on_event,
    )
    .await
}

/// `/goal …` on a task.
pub async fn task_goal(session: &str, words: &str) -> Result<String, ApiError> {
    invoke_with(
        "task_goal",
        &serde_json::json!({"session": session, "words": words}),
    )
    .await
}

/// `/resume …`: episodes from memory, or one's context.
pub async fn resume_search(words: &str) -> Result<String, ApiError> {
    invoke_with("resume_search", &serde_json::json!({"words": words})).await
}

/// Task `session`'s background jobs.
pub async fn task_jobs(session: &str) -> Result<Vec<cairn_protocol::TaskJob>, ApiError> {
    invoke_with("task_jobs", &serde_json::json!({ "session": session })).await
}

/// Task `session`'s team (`None`: it has none).
pub async fn task_team(session: &str) -> Result<Option<cairn_protocol::TaskTeam>, ApiError> {
    invoke_with("task_team", &serde_json::json!({ "session": session })).await
}

/// The end of a job's output.
pub async fn job_output(session: &str, id: &str) -> Result<String, ApiError> {
    invoke_with(
        "job_output",
        &serde_json::json!({ "session": session, "id": id }),
    )
    .await
}

/// Stops a job; false when it had already ended.
pub async fn job_stop(session: &str, id: &str) -> Result<bool, ApiError> {
    invoke_with(
        "job_stop",
        &serde_json::json!({ "session": session, "id": id }),
    )
    .await
}

/// The stored tasks whose words match `query`, best first (their session ids).
pub async fn tasks_search(query: &str) -> Result<Vec<String>, ApiError> {
    invoke_with("tasks_search", &serde_json::json!({ "query": query })).await
}

//! The app and its windows: status, showing the workbench or a task, the pet's window, quitting
//! and reloading.

use super::bridge::{invoke, invoke_with};
use cairn_protocol::{ApiError, StatusReport};

pub async fn app_status() -> Result<StatusReport, ApiError> {
    invoke("app_status").await
}

pub async fn show_workbench() -> Result<(), ApiError> {
    invoke("show_workbench").await
}

/// The pet's badge, its list and the task its bubble continues.
pub async fn pet_state() -> Result<cairn_protocol::PetState, ApiError> {
    invoke("pet_state").await
}

/// Grows the pet's window for its bubble or list (`open`), or shrinks it back to the stones.
pub async fn pet_expand(open: bool) -> Result<(), ApiError> {
    invoke_with("pet_expand", &serde_json::json!({"open": open})).await
}

/// Starts moving the pet's window with the pointer (the press that began a drag).
pub async fn drag_pet() -> Result<(), ApiError> {
    invoke_with(
        "plugin:window|start_dragging",
        &serde_json::json!({ "label": "pet" }),
    )
    .await
}

/// Shows task `session` in the workbench, bringing it to the front.
pub async fn open_task(session: &str) -> Result<(), ApiError> {
    invoke_with("open_task", &serde_json::json!({"session": session})).await
}

/// The task the workbench was asked to show, once.
pub async fn take_task_to_open() -> Result<Option<String>, ApiError> {
    invoke("take_task_to_open").await
}

/// Stops the background jobs and quits (the person said yes).
pub async fn quit_app() -> Result<(), ApiError> {
    invoke("quit_app").await
}

/// Loads both windows again (after a change of language).
pub async fn reload_windows() -> Result<(), ApiError> {
    invoke("reload_windows").await
}

/// Shows or hides the pet; whether it shows now.
pub async fn toggle_pet() -> Result<bool, ApiError> {
    invoke("toggle_pet").await
}

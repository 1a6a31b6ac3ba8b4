//! The Schedules page's calls: the schedules with their next runs, add, pause or resume, remove,
//! run now.

use super::bridge::{invoke, invoke_with};
use cairn_protocol::schedule::{Schedule, ScheduleView};
use cairn_protocol::ApiError;
use serde_json::json;

pub async fn schedules_list() -> Result<Vec<ScheduleView>, ApiError> {
    invoke("schedules_list").await
}

pub async fn schedule_add(when: &str, message: &str, name: &str) -> Result<Schedule, ApiError> {
    let name = (!name.trim().is_empty()).then_some(name);
    invoke_with(
        "schedule_add",
        &json!({ "when": when, "message": message, "name": name }),
    )
    .await
}

pub async fn schedule_edit(
    id: &str,
    when: &str,
    message: &str,
    name: &str,
) -> Result<Schedule, ApiError> {
    let name = (!name.trim().is_empty()).then_some(name);
    invoke_with(
        "schedule_edit",
        &json!({ "id": id, "when": when, "message": message, "name": name }),
    )
    .await
}

pub async fn schedule_pause(id: &str, paused: bool) -> Result<Schedule, ApiError> {
    invoke_with("schedule_pause", &json!({ "id": id, "paused": paused })).await
}

pub async fn schedule_remove(id: &str) -> Result<bool, ApiError> {
    invoke_with("schedule_remove", &json!({ "id": id })).await
}

/// Runs it now; the task it started.
pub async fn schedule_run(id: &str) -> Result<String, ApiError> {
    invoke_with("schedule_run", &json!({ "id": id })).await
}

//! The Schedules page's commands: the schedules with their next runs, add, edit, pause or
//! resume, remove, run now. Thin adapters over `cairn-api`, run off the async threads.

use cairn_api::schedule::{now_ms, NewSchedule, ScheduleEdit};
use cairn_protocol::schedule::{Schedule, ScheduleView};
use cairn_protocol::ApiError;
use tauri::State;

use crate::{on_chat, Desktop};

/// Every schedule with its next run and its cron in words.
#[tauri::command]
pub async fn schedules_list(desktop: State<'_, Desktop>) -> Result<Vec<ScheduleView>, ApiError> {
    on_chat(&desktop, |chat| chat.cairn().schedule_views()).await
}

/// Adds a schedule working where new tasks work.
#[tauri::command]
pub async fn schedule_add(
    desktop: State<'_, Desktop>,
    when: String,
    message: String,
    name: Option<String>,
) -> Result<Schedule, ApiError> {
    on_chat(&desktop, move |chat| {
        Ok(chat.cairn().schedules().add(
            NewSchedule {
                when,
                message,
                name,
                folder: None,
                catch_up: true,
            },
            now_ms(),
        )?)
    })
    .await
}

/// Changes a schedule's when, message and name.
#[tauri::command]
pub async fn schedule_edit(
    desktop: State<'_, Desktop>,
    id: String,
    when: String,
    message: String,
    name: Option<String>,
) -> Result<Schedule, ApiError> {
    on_chat(&desktop, move |chat| {
        let edit = ScheduleEdit {
            when: Some(when),
            message: Some(message),
            name,
        };
        Ok(chat.cairn().schedules().edit(&id, edit, now_ms())?)
    })
    .await
}

/// Pauses (`paused`) or resumes a schedule.
#[tauri::command]
pub async fn schedule_pause(
    desktop: State<'_, Desktop>,
    id: String,
    paused: bool,
) -> Result<Schedule, ApiError> {
    on_chat(&desktop, move |chat| {
        Ok(chat.cairn().schedules().pause(&id, paused, now_ms())?)
    })
    .await
}

/// Removes a schedule; whether there was one.
#[tauri::command]
pub async fn schedule_remove(desktop: State<'_, Desktop>, id: String) -> Result<bool, ApiError> {
    on_chat(&desktop, move |chat| {
        Ok(chat.cairn().schedules().remove(&id)?)
    })
    .await
}

/// Runs a schedule now; the task it started.
#[tauri::command]
pub async fn schedule_run(desktop: State<'_, Desktop>, id: String) -> Result<String, ApiError> {
    on_chat(&desktop, move |chat| chat.run_schedule_now(&id)).await
}

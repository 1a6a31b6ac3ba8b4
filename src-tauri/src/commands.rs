//! Typed Tauri commands: thin adapters from the webviews to `cairn-api` and the window helpers.

use cairn_protocol::{ApiError, StatusReport};
use tauri::{AppHandle, State};

use crate::{windows, Desktop};

/// The same report as `cairn status --json` and `GET /api/v1/status`.
#[tauri::command]
pub async fn app_status(desktop: State<'_, Desktop>) -> Result<StatusReport, ApiError> {
    Ok(desktop.cairn.status(desktop.serving.as_ref()).await)
}

#[tauri::command]
pub fn show_workbench(app: AppHandle) -> Result<(), ApiError> {
    windows::show_workbench(&app).map_err(window_error)
}

/// Returns whether the pet is visible afterwards.
#[tauri::command]
pub fn toggle_pet(app: AppHandle) -> Result<bool, ApiError> {
    windows::toggle_pet(&app).map_err(window_error)
}

fn window_error(e: tauri::Error) -> ApiError {
    ApiError::new("window", e.to_string())
}

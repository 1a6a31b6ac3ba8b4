//! Cairn's own language models from the app: which are installed (and loaded), installing one
//! with its progress streamed to the page, removing one. The same code as `cairn models`.

use cairn_protocol::{ApiError, InstallProgress, LocalModelInfo};
use tauri::ipc::Channel;
use tauri::State;

use crate::{blocking, Desktop};

/// Every model Cairn can run on this device, installed or not.
#[tauri::command]
pub async fn models_list(desktop: State<'_, Desktop>) -> Result<Vec<LocalModelInfo>, ApiError> {
    blocking(&desktop, |cairn| Ok(cairn.local_models())).await
}

/// Installs `name` from the package registry (resumable, checksum-verified); progress streams
/// over `on_progress`; the answer is the models as they are afterwards.
#[tauri::command]
pub async fn models_install(
    desktop: State<'_, Desktop>,
    name: String,
    on_progress: Channel<InstallProgress>,
) -> Result<Vec<LocalModelInfo>, ApiError> {
    let cairn = desktop.cairn.clone();
    cairn
        .install_local_model(&name, None, &mut |p| {
            if let Err(e) = on_progress.send(p) {
                tracing::debug!("the install progress was not delivered: {e}");
            }
        })
        .await
        .map_err(|e| e.to_api_error())?;
    blocking(&desktop, |cairn| Ok(cairn.local_models())).await
}

/// Deletes an installed model's file (unloading it first); the models as they are afterwards.
#[tauri::command]
pub async fn models_remove(
    desktop: State<'_, Desktop>,
    name: String,
) -> Result<Vec<LocalModelInfo>, ApiError> {
    desktop
        .chat
        .remove_local_model(&name)
        .await
        .map_err(|e| e.to_api_error())?;
    blocking(&desktop, |cairn| Ok(cairn.local_models())).await
}

//! Settings → Devices' commands: what sync is doing, joining a hub, pairing another device, a
//! round now, revoking a device, leaving, pausing. Thin adapters over `cairn-api`.

use cairn_protocol::sync::SyncView;
use cairn_protocol::ApiError;
use tauri::State;

use crate::Desktop;

/// What sync is doing, with the account's devices as the hub lists them now.
#[tauri::command]
pub async fn sync_status(desktop: State<'_, Desktop>, ask_hub: bool) -> Result<SyncView, ApiError> {
    let cairn = desktop.cairn.clone();
    cairn
        .sync_status(ask_hub)
        .await
        .map_err(|e| e.to_api_error())
}

/// Joins this device to a hub with a code, then syncs once.
#[tauri::command]
pub async fn sync_join(
    desktop: State<'_, Desktop>,
    address: String,
    code: String,
    name: Option<String>,
    recovery: Option<String>,
) -> Result<SyncView, ApiError> {
    let cairn = desktop.cairn.clone();
    let name = name.filter(|n| !n.trim().is_empty());
    let recovery = recovery.filter(|r| !r.trim().is_empty());
    cairn
        .sync_join(&address, &code, name.as_deref(), recovery.as_deref())
        .await
        .map_err(|e| e.to_api_error())?;
    // The first round's failure shows in the status, not as a failed join.
    let _ = cairn.sync_now().await;
    cairn.sync_status(true).await.map_err(|e| e.to_api_error())
}

/// A code that pairs another device with this one's vault.
#[tauri::command]
pub async fn sync_pair(desktop: State<'_, Desktop>) -> Result<String, ApiError> {
    let cairn = desktop.cairn.clone();
    cairn.sync_pair().await.map_err(|e| e.to_api_error())
}

/// One round now.
#[tauri::command]
pub async fn sync_now(desktop: State<'_, Desktop>) -> Result<SyncView, ApiError> {
    let cairn = desktop.cairn.clone();
    cairn.sync_now().await.map_err(|e| e.to_api_error())?;
    cairn.sync_status(true).await.map_err(|e| e.to_api_error())
}

/// Revokes another device of the account.
#[tauri::command]
pub async fn sync_revoke(
    desktop: State<'_, Desktop>,
    device: String,
) -> Result<SyncView, ApiError> {
    let cairn = desktop.cairn.clone();
    cairn
        .sync_revoke(&device)
        .await
        .map_err(|e| e.to_api_error())?;
    cairn.sync_status(true).await.map_err(|e| e.to_api_error())
}

/// Takes this device off its hub.
#[tauri::command]
pub async fn sync_leave(desktop: State<'_, Desktop>) -> Result<SyncView, ApiError> {
    let cairn = desktop.cairn.clone();
    cairn.sync_leave().await.map_err(|e| e.to_api_error())?;
    cairn.sync_status(false).await.map_err(|e| e.to_api_error())
}

/// Pauses sync or lets it run again.
#[tauri::command]
pub async fn sync_pause(desktop: State<'_, Desktop>, paused: bool) -> Result<SyncView, ApiError> {
    let cairn = desktop.cairn.clone();
    cairn.sync_pause(paused).map_err(|e| e.to_api_error())?;
    cairn.sync_status(false).await.map_err(|e| e.to_api_error())
}

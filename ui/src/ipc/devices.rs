//! Settings → Devices' calls: what sync is doing, join a hub, pair another device, sync now,
//! revoke a device, leave, pause.

use super::bridge::invoke_with;
use cairn_protocol::sync::SyncView;
use cairn_protocol::ApiError;
use serde_json::json;

pub async fn sync_status(ask_hub: bool) -> Result<SyncView, ApiError> {
    invoke_with("sync_status", &json!({ "askHub": ask_hub })).await
}

pub async fn sync_join(
    address: &str,
    code: &str,
    name: &str,
    recovery: &str,
) -> Result<SyncView, ApiError> {
    invoke_with(
        "sync_join",
        &json!({ "address": address, "code": code, "name": name, "recovery": recovery }),
    )
    .await
}

pub async fn sync_pair() -> Result<String, ApiError> {
    invoke_with("sync_pair", &json!({})).await
}

pub async fn sync_now() -> Result<SyncView, ApiError> {
    invoke_with("sync_now", &json!({})).await
}

pub async fn sync_revoke(device: &str) -> Result<SyncView, ApiError> {
    invoke_with("sync_revoke", &json!({ "device": device })).await
}

pub async fn sync_leave() -> Result<SyncView, ApiError> {
    invoke_with("sync_leave", &json!({})).await
}

pub async fn sync_pause(paused: bool) -> Result<SyncView, ApiError> {
    invoke_with("sync_pause", &json!({ "paused": paused })).await
}

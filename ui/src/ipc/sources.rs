//! The Sources page's calls: scans of other agents' histories and the live hooks.

use super::bridge::{invoke_streaming, invoke_with};
use cairn_protocol::ApiError;

/// Runs a scan; `on_event` sees its progress. Returns the reports, one per source scanned.
pub async fn scan_sources(
    only: Option<&str>,
    full: bool,
    on_event: impl FnMut(cairn_protocol::ScanProgress) + 'static,
) -> Result<Vec<cairn_protocol::SourceReport>, ApiError> {
    invoke_streaming(
        "sources_scan",
        &serde_json::json!({ "only": only, "full": full }),
        "onProgress",
        on_event,
    )
    .await
}

pub async fn list_sources() -> Result<Vec<cairn_protocol::SourceInfo>, ApiError> {
    invoke_with("sources_list", &serde_json::json!({})).await
}

pub async fn scan_control(action: &str) -> Result<bool, ApiError> {
    invoke_with(
        "sources_scan_control",
        &serde_json::json!({ "action": action }),
    )
    .await
}

pub async fn hooks_status() -> Result<Vec<cairn_protocol::HookStatus>, ApiError> {
    invoke_with("hooks_status", &serde_json::json!({})).await
}

/// Where the `cairn` command the hooks run should be, and whether it is there.
pub async fn hooks_cli() -> Result<(String, bool), ApiError> {
    invoke_with("hooks_cli", &serde_json::json!({})).await
}

pub async fn hook_change(
    agent: &str,
    install: bool,
) -> Result<cairn_protocol::HookStatus, ApiError> {
    let command = if install {
        "hook_install"
    } else {
        "hook_remove"
    };
    invoke_with(command, &serde_json::json!({ "agent": agent })).await
}

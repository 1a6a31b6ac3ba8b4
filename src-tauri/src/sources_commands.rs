//! The Sources page's commands: the agents' history on this machine, scans streamed to the page
//! (with pause, resume and stop), and Cairn's live hooks in Claude Code, Codex and Cursor.

use std::path::PathBuf;

use cairn_api::{HookStatus, SourceInfo};
use cairn_protocol::{ApiError, ErrorCode, ScanAction, ScanProgress, SourceReport};
use tauri::ipc::Channel;
use tauri::State;

use crate::{join_error, on_chat, Desktop};

/// Every known source: detected or not, where, how much, last sync.
#[tauri::command]
pub async fn sources_list(desktop: State<'_, Desktop>) -> Result<Vec<SourceInfo>, ApiError> {
    let cairn = desktop.cairn.clone();
    tauri::async_runtime::spawn_blocking(move || cairn.list_sources())
        .await
        .map_err(join_error)
}

/// Scans every detected, enabled source (or only `only`); `full` rereads every file. One at a
/// time, whichever door started it. Progress streams over `on_progress` (ending with `stopped`
/// when the person stopped it) and to the local API's event stream; the answer is one report
/// per source scanned.
#[tauri::command]
pub async fn sources_scan(
    desktop: State<'_, Desktop>,
    only: Option<String>,
    full: bool,
    on_progress: Channel<ScanProgress>,
) -> Result<Vec<SourceReport>, ApiError> {
    on_chat(&desktop, move |chat| {
        chat.scan_sources(only.as_deref(), full, &mut |p| {
            if let Err(e) = on_progress.send(p) {
                tracing::debug!("the scan progress was not delivered: {e}");
            }
        })
    })
    .await
}

/// Pauses, resumes or stops the running scan; false when none runs.
#[tauri::command]
pub fn sources_scan_control(
    desktop: State<'_, Desktop>,
    action: ScanAction,
) -> Result<bool, ApiError> {
    desktop
        .chat
        .scans()
        .control(action)
        .map_err(|e| e.to_api_error())
}

/// The `cairn` command shipped beside the app: the hooks run it.
fn cli_path() -> Result<PathBuf, ApiError> {
    let exe = std::env::current_exe().map_err(|e| {
        ApiError::new(
            ErrorCode::Internal,
            format!("cannot find the app's folder: {e}"),
        )
    })?;
    Ok(exe.with_file_name(format!("cairn{}", std::env::consts::EXE_SUFFIX)))
}

/// Whether Cairn's hooks are in Claude Code's, Codex's and Cursor's hook files.
#[tauri::command]
pub async fn hooks_status() -> Vec<HookStatus> {
    cairn_api::HOOK_AGENTS
        .iter()
        .map(|agent| cairn_api::hook_status(agent))
        .collect()
}

/// Where the `cairn` command the hooks run should be (beside the app), and whether it is there.
#[tauri::command]
pub fn hooks_cli() -> Result<(String, bool), ApiError> {
    let cli = cli_path()?;
    Ok((cli.display().to_string(), cli.is_file()))
}

/// Adds Cairn's hooks to `agent`'s hook file, pointing at the `cairn` command beside the app
/// (refused, saying so, when that command is missing: a hook to nothing would fail every turn).
#[tauri::command]
pub async fn hook_install(
    desktop: State<'_, Desktop>,
    agent: String,
) -> Result<HookStatus, ApiError> {
    let cli = cli_path()?;
    if !cli.is_file() {
        return Err(ApiError::new(
            ErrorCode::NoCli,
            format!(
                "The cairn command is not at {}, so there is nothing for the hooks to run. Install Cairn's command-line tool beside the app, then try again.",
                cli.display()
            ),
        ));
    }
    let command = cairn_api::CairnCommand::new(cli, desktop.cairn.home().root());
    cairn_api::install_hooks(&agent, &command).map_err(|e| e.to_api_error())?;
    Ok(cairn_api::hook_status(&agent))
}

/// Takes Cairn's hooks out of `agent`'s hook file, leaving other tools' hooks.
#[tauri::command]
pub async fn hook_remove(agent: String) -> Result<HookStatus, ApiError> {
    cairn_api::remove_hooks(&agent).map_err(|e| e.to_api_error())?;
    Ok(cairn_api::hook_status(&agent))
}

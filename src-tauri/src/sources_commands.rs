//! The Sources page's commands: the agents' history on this machine, scans streamed to the page
//! (with pause, resume and stop), and Cairn's live hooks in Claude Code, Codex and Cursor.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use cairn_api::{HookStatus, SourceInfo};
use cairn_importers::{Progress, ScanControl, ScanMode, SourceReport};
use cairn_protocol::ApiError;
use tauri::ipc::Channel;
use tauri::State;

use crate::{join_error, Desktop};

/// The scan in progress, if any (one at a time).
#[derive(Default)]
pub struct Scanning {
    control: Mutex<Option<Arc<ScanControl>>>,
}

impl Scanning {
    fn slot(&self) -> Result<std::sync::MutexGuard<'_, Option<Arc<ScanControl>>>, ApiError> {
        self.control
            .lock()
            .map_err(|_| ApiError::new("internal", "the scan lock was poisoned"))
    }
}

/// Every known source: detected or not, where, how much, last sync.
#[tauri::command]
pub async fn sources_list(desktop: State<'_, Desktop>) -> Result<Vec<SourceInfo>, ApiError> {
    let cairn = desktop.cairn.clone();
    tauri::async_runtime::spawn_blocking(move || cairn.list_sources())
        .await
        .map_err(join_error)
}

/// Scans every detected, enabled source (or only `only`); `full` rereads every file. Progress
/// streams over `on_progress` (ending with `stopped` when the person stopped it) and to the local
/// API's event stream; the answer is
/// one report per source scanned.
#[tauri::command]
pub async fn sources_scan(
    desktop: State<'_, Desktop>,
    scanning: State<'_, Scanning>,
    only: Option<String>,
    full: bool,
    on_progress: Channel<Progress>,
) -> Result<Vec<SourceReport>, ApiError> {
    let control = Arc::new(ScanControl::default());
    {
        let mut slot = scanning.slot()?;
        if slot.is_some() {
            return Err(ApiError::new(
                "busy",
                "a scan is already running: wait for it or stop it",
            ));
        }
        *slot = Some(control.clone());
    }
    let cairn = desktop.cairn.clone();
    let chat = desktop.chat.clone();
    let mode = if full {
        ScanMode::Full
    } else {
        ScanMode::Incremental
    };
    let outcome = tauri::async_runtime::spawn_blocking(move || {
        cairn.scan_sources(only.as_deref(), mode, &control, &mut |p| {
            chat.publish_scan(p.clone());
            if let Err(e) = on_progress.send(p) {
                tracing::debug!("the scan progress was not delivered: {e}");
            }
        })
    })
    .await;
    if let Ok(mut slot) = scanning.control.lock() {
        *slot = None;
    }
    outcome.map_err(join_error)?.map_err(|e| e.to_api_error())
}

/// Pauses (`pause`), resumes (`resume`) or stops (`stop`) the running scan; false when none runs.
#[tauri::command]
pub fn sources_scan_control(
    scanning: State<'_, Scanning>,
    action: String,
) -> Result<bool, ApiError> {
    let slot = scanning.slot()?;
    let Some(control) = slot.as_ref() else {
        return Ok(false);
    };
    match action.as_str() {
        "pause" => control.pause(),
        "resume" => control.resume(),
        "stop" => control.stop(),
        other => {
            return Err(ApiError::new(
                "bad_request",
                format!("no scan action {other:?}: pause, resume or stop"),
            ))
        }
    }
    Ok(true)
}

/// The `cairn` command shipped beside the app: the hooks run it.
fn cli_path() -> Result<PathBuf, ApiError> {
    let exe = std::env::current_exe()
        .map_err(|e| ApiError::new("internal", format!("cannot find the app's folder: {e}")))?;
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
            "no_cli",
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

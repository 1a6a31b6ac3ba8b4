//! The Settings page's commands: the config as the page edits it (never a key's value), changes
//! written back into `config.toml`, a real connection test per provider, and the diagnostic report.
//! Which change resets the chat is `cairn_api::SettingsChange`'s rule.

use cairn_api::{AgentInput, AppearanceInput, ProviderInput, Settings, SettingsChange, VoiceInput};
use cairn_protocol::settings::{McpServerInput, McpStatus};
use cairn_protocol::ConnectionTest;
use cairn_protocol::{ApiError, ErrorCode};
use tauri::State;

use crate::{blocking, join_error, on_chat, Desktop};

/// Writes `change` into the config; the settings as they are afterwards.
async fn change(desktop: &Desktop, change: SettingsChange) -> Result<Settings, ApiError> {
    on_chat(desktop, move |chat| chat.change_settings(change)).await
}

/// Everything the page shows.
#[tauri::command]
pub async fn settings_get(desktop: State<'_, Desktop>) -> Result<Settings, ApiError> {
    blocking(&desktop, |cairn| Ok(cairn.settings())).await
}

/// Adds or edits a provider.
#[tauri::command]
pub async fn settings_save_provider(
    desktop: State<'_, Desktop>,
    provider: ProviderInput,
) -> Result<Settings, ApiError> {
    change(&desktop, SettingsChange::SaveProvider(provider)).await
}

/// Removes a provider.
#[tauri::command]
pub async fn settings_remove_provider(
    desktop: State<'_, Desktop>,
    name: String,
) -> Result<Settings, ApiError> {
    change(&desktop, SettingsChange::RemoveProvider(name)).await
}

/// Makes `provider/model` the default: the chat switches to it.
#[tauri::command]
pub async fn settings_set_default_model(
    desktop: State<'_, Desktop>,
    provider: String,
    model: String,
) -> Result<Settings, ApiError> {
    change(&desktop, SettingsChange::DefaultModel { provider, model }).await
}

/// Sets a background slot's model (`provider/model`), or with none gives it its default back.
#[tauri::command]
pub async fn settings_set_slot_model(
    desktop: State<'_, Desktop>,
    slot: cairn_api::ModelSlot,
    model: Option<String>,
) -> Result<Settings, ApiError> {
    change(&desktop, SettingsChange::SlotModel { slot, model }).await
}

/// Calls the provider and says what it answered.
#[tauri::command]
pub async fn settings_test_provider(
    desktop: State<'_, Desktop>,
    name: String,
) -> Result<ConnectionTest, ApiError> {
    let cairn = desktop.cairn.clone();
    cairn
        .test_provider(&name)
        .await
        .map_err(|e| e.to_api_error())
}

/// Adds or edits an MCP server (the chat's next message uses it).
#[tauri::command]
pub async fn settings_save_mcp(
    desktop: State<'_, Desktop>,
    server: McpServerInput,
) -> Result<Settings, ApiError> {
    change(&desktop, SettingsChange::SaveMcp(server)).await
}

/// Removes an MCP server.
#[tauri::command]
pub async fn settings_remove_mcp(
    desktop: State<'_, Desktop>,
    name: String,
) -> Result<Settings, ApiError> {
    change(&desktop, SettingsChange::RemoveMcp(name)).await
}

/// Turns an MCP server on or off.
#[tauri::command]
pub async fn settings_enable_mcp(
    desktop: State<'_, Desktop>,
    name: String,
    on: bool,
) -> Result<Settings, ApiError> {
    change(&desktop, SettingsChange::EnableMcp { name, on }).await
}

/// Each MCP server's state, tools and last error (those not running are started).
#[tauri::command]
pub async fn mcp_statuses(desktop: State<'_, Desktop>) -> Result<Vec<McpStatus>, ApiError> {
    desktop.cairn.mcp_statuses().map_err(|e| e.to_api_error())
}

/// Stops an MCP server and starts it again.
#[tauri::command]
pub async fn mcp_restart(desktop: State<'_, Desktop>, name: String) -> Result<(), ApiError> {
    desktop
        .cairn
        .mcp_restart(&name)
        .map_err(|e| e.to_api_error())
}

/// Voice: model, language, input.
#[tauri::command]
pub async fn settings_save_voice(
    desktop: State<'_, Desktop>,
    voice: VoiceInput,
) -> Result<Settings, ApiError> {
    change(&desktop, SettingsChange::Voice(voice)).await
}

/// How far the agent goes without asking, and where new tasks work (from the next message on).
#[tauri::command]
pub async fn settings_save_agent(
    desktop: State<'_, Desktop>,
    agent: AgentInput,
) -> Result<Settings, ApiError> {
    change(&desktop, SettingsChange::Agent(agent)).await
}

/// The subfolders of a folder, for choosing where a task works.
#[tauri::command]
pub async fn folder_listing(
    desktop: State<'_, Desktop>,
    folder: String,
) -> Result<cairn_protocol::settings::FolderListing, ApiError> {
    blocking(&desktop, move |cairn| cairn.folder_listing(&folder)).await
}

/// Theme, pet shortcut, log level (the shortcut and the log level apply at the next start).
#[tauri::command]
pub async fn settings_save_appearance(
    desktop: State<'_, Desktop>,
    appearance: AppearanceInput,
) -> Result<Settings, ApiError> {
    change(&desktop, SettingsChange::Appearance(appearance)).await
}

/// Starts Cairn at login (an XDG autostart entry running this program), or stops doing so.
#[tauri::command]
pub async fn settings_start_at_login(
    desktop: State<'_, Desktop>,
    on: bool,
) -> Result<Settings, ApiError> {
    let program = std::env::current_exe().map_err(|e| {
        ApiError::new(
            ErrorCode::Internal,
            format!("cannot tell where Cairn runs from: {e}"),
        )
    })?;
    change(&desktop, SettingsChange::StartAtLogin { on, program }).await
}

/// Writes the redacted diagnostic report; its path.
#[tauri::command]
pub async fn settings_export_diagnostics(desktop: State<'_, Desktop>) -> Result<String, ApiError> {
    let cairn = desktop.cairn.clone();
    let serving = desktop.serving.clone();
    tauri::async_runtime::spawn_blocking(move || {
        tauri::async_runtime::block_on(cairn.export_diagnostics(serving.as_ref()))
    })
    .await
    .map_err(join_error)?
    .map(|path| path.display().to_string())
    .map_err(|e| e.to_api_error())
}

//! The Settings page's commands: the config as the page edits it (never a key's value), changes
//! written back into `config.toml`, a real connection test per provider, and the diagnostic report.
//! A change that affects the chat drops its runtime, so the next message uses the new config.

use cairn_api::{AgentInput, AppearanceInput, ProviderInput, Settings, VoiceInput};
use cairn_protocol::settings::{McpServerInput, McpStatus};
use cairn_protocol::ApiError;
use cairn_protocol::ConnectionTest;
use tauri::State;

use crate::{blocking, join_error, Desktop};

/// Applies a change the chat depends on (providers, the default model): the next message builds
/// its runtime from the new config.
async fn change_chat_config(
    desktop: &Desktop,
    change: impl FnOnce(&cairn_api::Cairn) -> Result<(), cairn_api::Error> + Send + 'static,
) -> Result<Settings, ApiError> {
    let settings = blocking(desktop, move |cairn| {
        change(&cairn)?;
        Ok(cairn.settings())
    })
    .await?;
    desktop.chat.reset();
    Ok(settings)
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
    change_chat_config(&desktop, move |cairn| cairn.save_provider(provider)).await
}

/// Removes a provider.
#[tauri::command]
pub async fn settings_remove_provider(
    desktop: State<'_, Desktop>,
    name: String,
) -> Result<Settings, ApiError> {
    change_chat_config(&desktop, move |cairn| cairn.remove_provider(&name)).await
}

/// Makes `provider/model` the default: the chat switches to it.
#[tauri::command]
pub async fn settings_set_default_model(
    desktop: State<'_, Desktop>,
    provider: String,
    model: String,
) -> Result<Settings, ApiError> {
    change_chat_config(&desktop, move |cairn| {
        cairn.set_default_model(&provider, &model)
    })
    .await
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
    change_chat_config(&desktop, move |cairn| cairn.save_mcp_server(server)).await
}

/// Removes an MCP server.
#[tauri::command]
pub async fn settings_remove_mcp(
    desktop: State<'_, Desktop>,
    name: String,
) -> Result<Settings, ApiError> {
    change_chat_config(&desktop, move |cairn| cairn.remove_mcp_server(&name)).await
}

/// Turns an MCP server on or off.
#[tauri::command]
pub async fn settings_enable_mcp(
    desktop: State<'_, Desktop>,
    name: String,
    on: bool,
) -> Result<Settings, ApiError> {
    change_chat_config(&desktop, move |cairn| cairn.enable_mcp_server(&name, on)).await
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
    blocking(&desktop, move |cairn| {
        cairn.save_voice(voice)?;
        Ok(cairn.settings())
    })
    .await
}

/// How far the agent goes without asking, and where new tasks work (from the next message on).
#[tauri::command]
pub async fn settings_save_agent(
    desktop: State<'_, Desktop>,
    agent: AgentInput,
) -> Result<Settings, ApiError> {
    change_chat_config(&desktop, move |cairn| cairn.save_agent(agent)).await
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
    blocking(&desktop, move |cairn| {
        cairn.save_appearance(appearance)?;
        Ok(cairn.settings())
    })
    .await
}

/// Starts Cairn at login (an XDG autostart entry running this program), or stops doing so.
#[tauri::command]
pub async fn settings_start_at_login(
    desktop: State<'_, Desktop>,
    on: bool,
) -> Result<Settings, ApiError> {
    let program = std::env::current_exe().map_err(|e| {
        ApiError::new(
            "internal",
            format!("cannot tell where Cairn runs from: {e}"),
        )
    })?;
    blocking(&desktop, move |cairn| {
        cairn.set_start_at_login(on, &program)?;
        Ok(cairn.settings())
    })
    .await
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

//! The Settings page's calls (and the first run's): reading and changing settings, testing a
//! provider, MCP servers, Cairn's own models and the diagnostic report.

use super::bridge::{invoke, invoke_streaming, invoke_with};
use cairn_protocol::settings::{AppearanceInput, ProviderInput, Settings, VoiceInput};
use cairn_protocol::ApiError;

/// Everything the Settings page shows.
pub async fn settings_get() -> Result<Settings, ApiError> {
    invoke("settings_get").await
}

/// A change the Settings page (or the first run) makes; each answers the settings as they are
/// afterwards.
#[derive(Debug, Clone)]
pub enum SettingsChange {
    SaveProvider(ProviderInput),
    RemoveProvider(String),
    DefaultModel {
        provider: String,
        model: String,
    },
    /// A background slot's model (`provider/model`), or `None` for its default.
    SlotModel {
        slot: cairn_protocol::settings::ModelSlot,
        model: Option<String>,
    },
    Voice(VoiceInput),
    Appearance(AppearanceInput),
    Agent(cairn_protocol::settings::AgentInput),
    StartAtLogin(bool),
    SaveMcp(cairn_protocol::settings::McpServerInput),
    RemoveMcp(String),
    EnableMcp {
        name: String,
        on: bool,
    },
}

/// Makes `change`, written into the config file by the backend.
pub async fn change_settings(change: SettingsChange) -> Result<Settings, ApiError> {
    use serde_json::json;
    match change {
        SettingsChange::SaveProvider(provider) => {
            invoke_with("settings_save_provider", &json!({ "provider": provider })).await
        }
        SettingsChange::RemoveProvider(name) => {
            invoke_with("settings_remove_provider", &json!({ "name": name })).await
        }
        SettingsChange::DefaultModel { provider, model } => {
            let args = json!({ "provider": provider, "model": model });
            invoke_with("settings_set_default_model", &args).await
        }
        SettingsChange::SlotModel { slot, model } => {
            let args = json!({ "slot": slot, "model": model });
            invoke_with("settings_set_slot_model", &args).await
        }
        SettingsChange::Voice(voice) => {
            invoke_with("settings_save_voice", &json!({ "voice": voice })).await
        }
        SettingsChange::Appearance(appearance) => {
            let args = json!({ "appearance": appearance });
            invoke_with("settings_save_appearance", &args).await
        }
        SettingsChange::Agent(agent) => {
            invoke_with("settings_save_agent", &json!({ "agent": agent })).await
        }
        SettingsChange::StartAtLogin(on) => {
            invoke_with("settings_start_at_login", &json!({ "on": on })).await
        }
        SettingsChange::SaveMcp(server) => {
            invoke_with("settings_save_mcp", &json!({ "server": server })).await
        }
        SettingsChange::RemoveMcp(name) => {
            invoke_with("settings_remove_mcp", &json!({ "name": name })).await
        }
        SettingsChange::EnableMcp { name, on } => {
            invoke_with("settings_enable_mcp", &json!({ "name": name, "on": on })).await
        }
    }
}

/// Calls configured provider `name`: whether it answers and the models it offers.
pub async fn test_provider(name: &str) -> Result<cairn_protocol::ConnectionTest, ApiError> {
    invoke_with("settings_test_provider", &serde_json::json!({"name": name})).await
}

/// Each MCP server's state, tools and last error (those not running are started).
pub async fn mcp_statuses() -> Result<Vec<cairn_protocol::settings::McpStatus>, ApiError> {
    invoke("mcp_statuses").await
}

/// Stops an MCP server and starts it again.
pub async fn mcp_restart(name: &str) -> Result<(), ApiError> {
    invoke_with("mcp_restart", &serde_json::json!({ "name": name })).await
}

/// Writes the redacted diagnostic report; its path.
pub async fn export_diagnostics() -> Result<String, ApiError> {
    invoke("settings_export_diagnostics").await
}

/// Cairn's own models: installed or not, loaded or not.
pub async fn models_list() -> Result<Vec<cairn_protocol::LocalModelInfo>, ApiError> {
    invoke("models_list").await
}

/// Installs one of Cairn's models; `on_progress` sees the download and the check as they go.
pub async fn models_install(
    name: &str,
    on_progress: impl FnMut(cairn_protocol::InstallProgress) + 'static,
) -> Result<Vec<cairn_protocol::LocalModelInfo>, ApiError> {
    invoke_streaming(
        "models_install",
        &serde_json::json!({"name": name}),
        "onProgress",
        on_progress,
    )
    .await
}

/// Deletes an installed model of Cairn's.
pub async fn models_remove(name: &str) -> Result<Vec<cairn_protocol::LocalModelInfo>, ApiError> {
    invoke_with("models_remove", &serde_json::json!({"name": name})).await
}

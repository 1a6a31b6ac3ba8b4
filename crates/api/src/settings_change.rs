//! A change the Settings page (or `/model`) makes to the config, and the one rule of which
//! changes reset the chat: those the agent runtime is built from (providers, the default model,
//! MCP servers, the agent's settings) drop it, so the next message builds it from the new config;
//! the rest (voice, appearance, start at login) apply without touching running tasks.

use std::path::PathBuf;

use cairn_protocol::settings::McpServerInput;

use crate::chat::Chat;
use crate::{AgentInput, AppearanceInput, Error, ProviderInput, Settings, VoiceInput};

/// One change to the config.
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
        slot: crate::ModelSlot,
        model: Option<String>,
    },
    SaveMcp(McpServerInput),
    RemoveMcp(String),
    EnableMcp {
        name: String,
        on: bool,
    },
    Agent(AgentInput),
    Voice(VoiceInput),
    Appearance(AppearanceInput),
    /// `program`: what the login entry runs (this program).
    StartAtLogin {
        on: bool,
        program: PathBuf,
    },
}

impl SettingsChange {
    /// Whether the agent runtime is built from what this changes.
    pub fn resets_chat(&self) -> bool {
        match self {
            Self::SaveProvider(_)
            | Self::RemoveProvider(_)
            | Self::DefaultModel { .. }
            | Self::SaveMcp(_)
            | Self::RemoveMcp(_)
            | Self::EnableMcp { .. }
            | Self::Agent(_) => true,
            Self::SlotModel { .. }
            | Self::Voice(_)
            | Self::Appearance(_)
            | Self::StartAtLogin { .. } => false,
        }
    }
}

impl Chat {
    /// Writes `change` into the config (resetting the chat when the rule says so); the settings
    /// as they are afterwards. Blocking: call it off the async runtime's threads.
    pub fn change_settings(&self, change: SettingsChange) -> Result<Settings, Error> {
        let resets = change.resets_chat();
        let cairn = self.cairn();
        match change {
            SettingsChange::SaveProvider(input) => cairn.save_provider(input),
            SettingsChange::RemoveProvider(name) => cairn.remove_provider(&name),
            SettingsChange::DefaultModel { provider, model } => {
                cairn.set_default_model(&provider, &model)
            }
            SettingsChange::SlotModel { slot, model } => cairn
                .set_slot_model(slot, model.as_deref())
                .map(|()| cairn.apply_memory_settings()),
            SettingsChange::SaveMcp(server) => cairn.save_mcp_server(server),
            SettingsChange::RemoveMcp(name) => cairn.remove_mcp_server(&name),
            SettingsChange::EnableMcp { name, on } => cairn.enable_mcp_server(&name, on),
            SettingsChange::Agent(input) => cairn.save_agent(input),
            SettingsChange::Voice(input) => cairn.save_voice(input),
            SettingsChange::Appearance(input) => cairn.save_appearance(input),
            SettingsChange::StartAtLogin { on, program } => cairn.set_start_at_login(on, &program),
        }?;
        if resets {
            self.reset();
        }
        Ok(cairn.settings())
    }

    /// `/model provider/model`: the chat continues with that model, which becomes the default;
    /// the model as it will be used. Blocking.
    pub fn choose_model(&self, model: &str) -> Result<String, Error> {
        let chosen = self.cairn().choose_model(model)?;
        self.reset();
        Ok(chosen)
    }

    /// Deletes one of Cairn's own models (unloading it first): a runtime built on it is dropped.
    pub async fn remove_local_model(&self, name: &str) -> Result<bool, Error> {
        let removed = self.cairn().remove_local_model(name).await?;
        self.reset();
        Ok(removed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_the_runtime_is_built_from_resets_the_chat_and_nothing_else_does() {
        let resets = SettingsChange::RemoveProvider("ollama".into());
        assert!(resets.resets_chat());
        assert!(SettingsChange::EnableMcp {
            name: "files".into(),
            on: false
        }
        .resets_chat());
        let stays = SettingsChange::StartAtLogin {
            on: true,
            program: PathBuf::from("/usr/bin/cairn-desktop"),
        };
        assert!(!stays.resets_chat());
    }
}

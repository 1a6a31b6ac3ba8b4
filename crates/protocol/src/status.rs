//! What a running Cairn reports about itself: health, the runtime file, `cairn status` and the
//! configured providers.

use serde::{Deserialize, Serialize};

use crate::settings::ProviderKind;

/// The answer of `GET /api/v1/health`, the only route that needs no token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Health {
    /// Always `"ok"` when the server answers at all.
    pub status: String,
    /// The Cairn version serving the request.
    pub version: String,
}

/// What `$CAIRN_HOME/runtime.json` holds while the app or `cairn serve` is running.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuntimeInfo {
    /// Base URL of the local API, e.g. `http://127.0.0.1:41234`.
    pub api_url: String,
    /// The per-run bearer token.
    pub token: String,
    /// Process id of the server.
    pub pid: u32,
}

/// Everything `cairn status --json` prints and `GET /api/v1/status` returns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatusReport {
    pub version: String,
    pub paths: Paths,
    pub config: ConfigStatus,
    pub api: ApiStatus,
    /// The model used when none is chosen, as `provider/model`.
    pub default_model: Option<String>,
    pub providers: Vec<ProviderStatus>,
    /// Sync with the other devices, when this one is joined to a hub.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync: Option<crate::sync::SyncView>,
}

impl StatusReport {
    /// True when a chat could be sent: the config is valid and names a model of a configured provider.
    pub fn can_chat(&self) -> bool {
        (self.config.valid || self.config.kept) && self.default_model.is_some()
    }
}

/// Where Cairn keeps its files.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Paths {
    pub home: String,
    pub config: String,
    pub runtime: String,
    pub logs: String,
    pub models: String,
    pub data: String,
}

/// Whether the config file exists and parses.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConfigStatus {
    pub exists: bool,
    pub valid: bool,
    /// The first error, naming the file line and the key, when `valid` is false.
    pub error: Option<String>,
    /// The file has an error, and the config as it was before that edit is what runs.
    #[serde(default)]
    pub kept: bool,
}

/// Whether a Cairn API (the desktop app or `cairn serve`) is answering.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiStatus {
    pub running: bool,
    pub url: Option<String>,
    pub pid: Option<u32>,
}

/// One configured model provider, without its key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProviderStatus {
    pub name: String,
    pub kind: ProviderKind,
    pub base_url: String,
    pub models: Vec<String>,
    /// Whether an API key is configured (its value is never reported).
    pub api_key_set: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(valid: bool, model: Option<&str>) -> StatusReport {
        StatusReport {
            sync: None,
            version: "0.1.0".into(),
            paths: Paths {
                home: "h".into(),
                config: "c".into(),
                runtime: "r".into(),
                logs: "l".into(),
                models: "m".into(),
                data: "d".into(),
            },
            config: ConfigStatus {
                exists: true,
                valid,
                error: None,
                kept: false,
            },
            api: ApiStatus {
                running: false,
                url: None,
                pid: None,
            },
            default_model: model.map(str::to_owned),
            providers: vec![],
        }
    }

    #[test]
    fn chat_needs_a_valid_config_and_a_model() {
        assert!(report(true, Some("openai/gpt-4o")).can_chat());
        assert!(!report(false, Some("openai/gpt-4o")).can_chat());
        assert!(!report(true, None).can_chat());
    }

    #[test]
    fn runtime_info_uses_the_documented_field_names() {
        let info = RuntimeInfo {
            api_url: "http://127.0.0.1:1".into(),
            token: "t".into(),
            pid: 7,
        };
        let json = serde_json::to_value(&info).unwrap_or_default();
        assert_eq!(json["api_url"], "http://127.0.0.1:1");
        assert_eq!(json["token"], "t");
        assert_eq!(json["pid"], 7);
    }
}

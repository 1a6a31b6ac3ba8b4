//! The secrets this process holds — the config's provider keys, `[api] keys`, MCP servers'
//! header and environment values, the local API's token — told to the memory's redactor, so none
//! reaches memory, an error shown to a caller or a session file, whatever it looks like.

use cairn_config::{Config, McpTransport};

/// Tells the redactor the secrets of `config`, the config of the home at `home` (those of the
/// config it read before are forgotten).
pub(crate) fn know_config_secrets(home: &std::path::Path, config: &Config) {
    let owner = format!("config:{}", home.display());
    cairn_memory::set_known_secrets(&owner, configured_secrets(config));
}

/// Tells the redactor the local API's token of this run.
pub fn know_api_token(token: &str) {
    cairn_memory::set_known_secrets("api-token", [token.to_owned()]);
}

/// Every secret value `config` holds; a header value such as `Bearer abc…` also gives its
/// credential alone.
fn configured_secrets(config: &Config) -> Vec<String> {
    let mut secrets: Vec<String> = config
        .providers
        .values()
        .filter_map(|p| p.api_key.as_ref())
        .chain(&config.api_keys)
        .map(|s| s.expose().to_owned())
        .collect();
    for server in config.mcp_servers.values() {
        let values = match &server.transport {
            McpTransport::Stdio { env, .. } => env,
            McpTransport::StreamableHttp { headers, .. } | McpTransport::Sse { headers, .. } => {
                headers
            }
        };
        for value in values.values().map(|v| v.expose().trim()) {
            secrets.push(value.to_owned());
            if let Some((_scheme, credential)) = value.split_once(char::is_whitespace) {
                secrets.push(credential.trim().to_owned());
            }
        }
    }
    secrets
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn provider_keys_api_keys_and_mcp_header_and_env_values_are_known() -> Result<(), String> {
        let text = r#"
[api]
keys = ["caller-key-0123456789abcdef"]

[providers.p]
kind = "openai"
base_url = "http://127.0.0.1:1/v1"
api_key = "provider-key-9876543210"

[mcp.servers.web]
type = "streamable_http"
url = "https://mcp.example/mcp"
headers = { Authorization = "Bearer header-credential-5555" }

[mcp.servers.local]
command = "server"
env = { SERVICE_TOKEN = "env-secret-value-777" }
"#;
        let config = Config::parse(text, std::path::Path::new("config.toml"), |_| None)
            .map_err(|e| e.to_string())?;
        let secrets = configured_secrets(&config);
        for expected in [
            "caller-key-0123456789abcdef",
            "provider-key-9876543210",
            "Bearer header-credential-5555",
            "header-credential-5555",
            "env-secret-value-777",
        ] {
            assert!(
                secrets.iter().any(|s| s == expected),
                "{expected} in {secrets:?}"
            );
        }
        Ok(())
    }
}

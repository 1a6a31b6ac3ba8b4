//! The MCP servers as Settings edits them (`[mcp.servers.<name>]` written key by key, environment
//! and header values never shown), and the one hub of the servers the config names now: shared by
//! every agent runtime of this process and the Settings page's status, replaced when the servers'
//! config changes (the old one's processes stop when it is dropped).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use cairn_config::{Config, ConfigEdit, EditValue, McpServerConfig};
use cairn_mcp::{McpHub, ServerState};
use cairn_protocol::settings::{
    McpServerInput, McpServerSettings, McpServerState, McpStatus, McpTransportKind,
};

use crate::{Cairn, Error};

/// The hub, and the servers' config it was built from.
pub(crate) type HubSlot = Arc<Mutex<Option<(BTreeMap<String, McpServerConfig>, Arc<McpHub>)>>>;

fn invalid(message: impl Into<String>) -> Error {
    Error::Invalid(message.into())
}

impl Cairn {
    /// The hub of `config`'s MCP servers (`None` when it names none): the one already running when
    /// their config has not changed.
    pub fn mcp_hub(&self, config: &Config) -> Option<Arc<McpHub>> {
        let mut slot = self.mcp.lock().unwrap_or_else(|e| e.into_inner());
        if config.mcp_servers.is_empty() {
            // The last server was removed: its process stops with the hub.
            *slot = None;
            return None;
        }
        if let Some((servers, hub)) = slot.as_ref() {
            if *servers == config.mcp_servers {
                return Some(hub.clone());
            }
        }
        let hub = McpHub::new(&config.mcp_servers);
        *slot = Some((config.mcp_servers.clone(), hub.clone()));
        Some(hub)
    }

    /// Every configured server's state, tools and last error, starting those not running (an
    /// async runtime must be current).
    pub fn mcp_statuses(&self) -> Result<Vec<McpStatus>, Error> {
        let config = self.load_config()?;
        let Some(hub) = self.mcp_hub(&config) else {
            return Ok(Vec::new());
        };
        hub.start();
        Ok(statuses(&hub))
    }

    /// Stops server `name` and starts it again.
    pub fn mcp_restart(&self, name: &str) -> Result<(), Error> {
        let config = self.load_config()?;
        let restarted = self.mcp_hub(&config).is_some_and(|hub| hub.restart(name));
        if restarted {
            Ok(())
        } else {
            Err(Error::NotFound(format!(
                "no enabled MCP server named {name:?}"
            )))
        }
    }

    /// The servers as the config file writes them (`${NAME}` references not expanded).
    pub(crate) fn mcp_server_settings(&self) -> Vec<McpServerSettings> {
        let text = std::fs::read_to_string(self.home().config_file()).unwrap_or_default();
        let Ok(doc) = text.parse::<toml_edit::DocumentMut>() else {
            return Vec::new();
        };
        let Some(servers) = doc
            .get("mcp")
            .and_then(|m| m.get("servers"))
            .and_then(|s| s.as_table_like())
        else {
            return Vec::new();
        };
        servers
            .iter()
            .map(|(name, raw)| {
                let text = |key: &str| {
                    raw.get(key)
                        .and_then(|v| v.as_str())
                        .unwrap_or_default()
                        .to_owned()
                };
                let list = |key: &str| -> Vec<String> {
                    raw.get(key)
                        .and_then(|v| v.as_array())
                        .map(|items| {
                            items
                                .iter()
                                .filter_map(|i| i.as_str().map(str::to_owned))
                                .collect()
                        })
                        .unwrap_or_default()
                };
                let keys = |key: &str| -> Vec<String> {
                    raw.get(key)
                        .and_then(|v| v.as_table_like())
                        .map(|t| t.iter().map(|(k, _)| k.to_owned()).collect())
                        .unwrap_or_default()
                };
                let seconds = |key: &str| {
                    raw.get(key)
                        .and_then(|v| v.as_float().or_else(|| v.as_integer().map(|i| i as f64)))
                };
                let kind = raw
                    .get("type")
                    .and_then(|v| v.as_str())
                    .and_then(|kind| kind.parse().ok())
                    .unwrap_or(McpTransportKind::Stdio);
                let enabled_tools = list("enabled_tools");
                McpServerSettings {
                    name: name.to_owned(),
                    kind,
                    command: text("command"),
                    args: list("args"),
                    cwd: text("cwd"),
                    url: text("url"),
                    env: keys("env"),
                    headers: keys("headers"),
                    enabled: raw.get("enabled").and_then(|v| v.as_bool()).unwrap_or(true),
                    startup_timeout: seconds("startup_timeout"),
                    tool_timeout: seconds("tool_timeout"),
                    enabled_tools: if enabled_tools == ["*"] {
                        Vec::new()
                    } else {
                        enabled_tools
                    },
                    disabled_tools: list("disabled_tools"),
                }
            })
            .collect()
    }

    /// Adds server `input.name`, or replaces what the form edits of the one with that name.
    pub fn save_mcp_server(&self, input: McpServerInput) -> Result<(), Error> {
        let current = self
            .mcp_server_settings()
            .into_iter()
            .find(|s| s.name == input.name.trim());
        let edits = mcp_server_edits(&input, current.as_ref())?;
        self.update_config(&edits)
    }

    /// `Ok` when the config names server `name`.
    fn known_mcp_server(&self, name: &str) -> Result<(), Error> {
        if self.mcp_server_settings().iter().any(|s| s.name == name) {
            Ok(())
        } else {
            Err(Error::NotFound(format!("no MCP server named {name:?}")))
        }
    }

    /// Removes server `name` from the config.
    pub fn remove_mcp_server(&self, name: &str) -> Result<(), Error> {
        self.known_mcp_server(name)?;
        self.update_config(&[ConfigEdit::remove(&["mcp", "servers", name])])
    }

    /// Turns server `name` on or off (off: configured but never started).
    pub fn enable_mcp_server(&self, name: &str, on: bool) -> Result<(), Error> {
        self.known_mcp_server(name)?;
        self.update_config(&[ConfigEdit::set(
            &["mcp", "servers", name, "enabled"],
            EditValue::Bool(on),
        )])
    }
}

/// The config edits that make server `input.name` what the form says, `current` being how the
/// file has it now (for the variables and headers kept by name).
fn mcp_server_edits(
    input: &McpServerInput,
    current: Option<&McpServerSettings>,
) -> Result<Vec<ConfigEdit>, Error> {
    let name = input.name.trim();
    let valid_name = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if !valid_name {
        return Err(invalid(
            "a server's name is letters, digits, - and _ (e.g. github, my-docs)",
        ));
    }
    let key = |k: &str| ConfigEdit {
        path: ["mcp", "servers", name, k].map(str::to_owned).to_vec(),
        value: None,
    };
    let set = |k: &str, value: EditValue| ConfigEdit {
        value: Some(value),
        ..key(k)
    };
    let text = |k: &str, value: &str| {
        let value = value.trim();
        if value.is_empty() {
            key(k)
        } else {
            set(k, EditValue::String(value.to_owned()))
        }
    };
    let list = |k: &str, items: &[String]| {
        let items: Vec<String> = items
            .iter()
            .map(|i| i.trim().to_owned())
            .filter(|i| !i.is_empty())
            .collect();
        if items.is_empty() {
            key(k)
        } else {
            set(k, EditValue::Strings(items))
        }
    };
    let mut edits = vec![
        if input.kind == McpTransportKind::Stdio {
            key("type")
        } else {
            set("type", EditValue::String(input.kind.as_str().to_owned()))
        },
        set("enabled", EditValue::Bool(input.enabled)),
        list("enabled_tools", &input.enabled_tools),
        list("disabled_tools", &input.disabled_tools),
    ];
    for (k, seconds) in [
        ("startup_timeout", input.startup_timeout),
        ("tool_timeout", input.tool_timeout),
    ] {
        edits.push(match seconds {
            Some(s) if !(s > 0.0 && s.is_finite()) => {
                return Err(invalid(format!("{k} must be a positive number of seconds")))
            }
            Some(s) => set(k, EditValue::Number(s)),
            None => key(k),
        });
    }
    let (table, pairs, kept_names, unused) = if input.kind == McpTransportKind::Stdio {
        if input.command.trim().is_empty() {
            return Err(invalid("a stdio server needs the command that starts it"));
        }
        edits.extend([
            text("command", &input.command),
            list("args", &input.args),
            text("cwd", &input.cwd),
        ]);
        let kept = current.map(|c| c.env.clone()).unwrap_or_default();
        ("env", &input.env, kept, ["url", "headers"])
    } else {
        let url = input.url.trim();
        if !(url.starts_with("http://") || url.starts_with("https://") || url.starts_with("${")) {
            return Err(invalid(
                "an HTTP server needs its address, starting with http:// or https://",
            ));
        }
        edits.push(text("url", url));
        edits.extend(["command", "args", "cwd"].map(key));
        let kept = current.map(|c| c.headers.clone()).unwrap_or_default();
        ("headers", &input.headers, kept, ["env", "env"])
    };
    edits.extend(unused.map(key));
    edits.extend(pair_edits(name, table, pairs, &kept_names)?);
    Ok(edits)
}

/// `NAME=value` lines set, `NAME` lines keep a configured value, and every other name configured
/// now is removed.
fn pair_edits(
    server: &str,
    table: &str,
    lines: &[String],
    configured: &[String],
) -> Result<Vec<ConfigEdit>, Error> {
    let path = |k: &str| {
        ["mcp", "servers", server, table, k]
            .map(str::to_owned)
            .to_vec()
    };
    let mut edits = Vec::new();
    let mut named = Vec::new();
    for line in lines.iter().map(|l| l.trim()).filter(|l| !l.is_empty()) {
        let (k, value) = match line.split_once('=') {
            Some((k, v)) => (k.trim(), Some(v.trim())),
            None => (line, None),
        };
        if k.is_empty() || k.chars().any(char::is_whitespace) {
            return Err(invalid(format!("{table}: {line:?} is not NAME=value")));
        }
        match value {
            Some(v) => edits.push(ConfigEdit {
                path: path(k),
                value: Some(EditValue::String(v.to_owned())),
            }),
            None if configured.iter().any(|c| c == k) => {}
            None => {
                return Err(invalid(format!(
                    "{table}: {k} has no value yet; write {k}=value"
                )))
            }
        }
        named.push(k.to_owned());
    }
    edits.extend(
        configured
            .iter()
            .filter(|c| !named.contains(c))
            .map(|c| ConfigEdit {
                path: path(c),
                value: None,
            }),
    );
    Ok(edits)
}

/// The hub's servers as Settings and `cairn mcp status` show them.
pub(crate) fn statuses(hub: &McpHub) -> Vec<McpStatus> {
    hub.statuses()
        .into_iter()
        .map(|s| McpStatus {
            name: s.name,
            state: match s.state {
                ServerState::Disabled => McpServerState::Disabled,
                ServerState::Idle => McpServerState::Idle,
                ServerState::Starting => McpServerState::Starting,
                ServerState::Ready => McpServerState::Ready,
                ServerState::Failed => McpServerState::Failed,
            },
            tools: s.tools,
            error: s.error,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stdio(env: &[&str]) -> McpServerInput {
        McpServerInput {
            name: "docs".into(),
            kind: McpTransportKind::Stdio,
            command: "npx".into(),
            args: vec!["-y".into(), "docs-mcp".into()],
            cwd: String::new(),
            url: String::new(),
            env: env.iter().map(|s| (*s).to_owned()).collect(),
            headers: Vec::new(),
            enabled: true,
            startup_timeout: Some(30.0),
            tool_timeout: None,
            enabled_tools: Vec::new(),
            disabled_tools: vec!["delete".into()],
        }
    }

    fn applied(before: &str, edits: &[ConfigEdit]) -> String {
        cairn_config::edit_config_text(before, edits, std::path::Path::new("config.toml"))
            .unwrap_or_else(|e| panic!("{e}"))
    }

    type TestResult = Result<(), Box<dyn std::error::Error>>;

    #[test]
    fn a_stdio_server_is_written_with_its_variables() -> TestResult {
        let edits = mcp_server_edits(&stdio(&["TOKEN=${DOCS_TOKEN}"]), None)?;
        let text = applied("", &edits);
        let config = Config::parse(&text, std::path::Path::new("config.toml"), |n| {
            (n == "DOCS_TOKEN").then(|| "s3cret".to_owned())
        })
        .unwrap_or_else(|e| panic!("{e}\n{text}"));
        let server = &config.mcp_servers["docs"];
        assert_eq!(server.startup_timeout.as_secs(), 30);
        assert!(!server.offers("delete") && server.offers("search"));
        assert!(text.contains("TOKEN = \"${DOCS_TOKEN}\""), "{text}");
        assert!(text.contains("startup_timeout = 30\n"), "{text}");
        Ok(())
    }

    #[test]
    fn a_variable_named_alone_keeps_its_value_and_one_left_out_goes() -> TestResult {
        let before = "[mcp.servers.docs]\ncommand = \"npx\"\n\n[mcp.servers.docs.env]\nTOKEN = \"s3cret\"\nOLD = \"x\"\n";
        let current = McpServerSettings {
            name: "docs".into(),
            kind: McpTransportKind::Stdio,
            command: "npx".into(),
            args: Vec::new(),
            cwd: String::new(),
            url: String::new(),
            env: vec!["OLD".into(), "TOKEN".into()],
            headers: Vec::new(),
            enabled: true,
            startup_timeout: None,
            tool_timeout: None,
            enabled_tools: Vec::new(),
            disabled_tools: Vec::new(),
        };
        let edits = mcp_server_edits(&stdio(&["TOKEN", "NEW=1"]), Some(&current))?;
        let text = applied(before, &edits);
        assert!(text.contains("TOKEN = \"s3cret\""), "{text}");
        assert!(text.contains("NEW = \"1\""), "{text}");
        assert!(!text.contains("OLD"), "{text}");
        let unknown = mcp_server_edits(&stdio(&["MISSING"]), Some(&current));
        assert!(
            matches!(&unknown, Err(Error::Invalid(m)) if m == "env: MISSING has no value yet; write MISSING=value"),
            "{unknown:?}"
        );
        Ok(())
    }

    #[test]
    fn switching_to_http_drops_the_command_and_checks_the_address() -> TestResult {
        let before = "[mcp.servers.docs]\ncommand = \"npx\"\nargs = [\"x\"]\n\n[mcp.servers.docs.env]\nA = \"1\"\n";
        let mut input = stdio(&[]);
        input.kind = McpTransportKind::StreamableHttp;
        input.url = "ftp://example".into();
        assert!(matches!(
            mcp_server_edits(&input, None),
            Err(Error::Invalid(_))
        ));
        input.url = "http://127.0.0.1:9/mcp".into();
        input.headers = vec!["Authorization=Bearer ${DOCS_TOKEN}".into()];
        let text = applied(before, &mcp_server_edits(&input, None)?);
        assert!(
            !text.contains("command") && !text.contains("args"),
            "{text}"
        );
        assert!(!text.contains("[mcp.servers.docs.env]"), "{text}");
        assert!(text.contains("type = \"streamable_http\""), "{text}");
        assert!(
            text.contains("Authorization = \"Bearer ${DOCS_TOKEN}\""),
            "{text}"
        );
        Ok(())
    }

    #[test]
    fn bad_names_and_timeouts_are_refused() {
        let mut input = stdio(&[]);
        input.name = "my docs".into();
        assert!(mcp_server_edits(&input, None).is_err());
        let mut input = stdio(&[]);
        input.tool_timeout = Some(-1.0);
        assert!(mcp_server_edits(&input, None).is_err());
        let mut input = stdio(&[]);
        input.command = " ".into();
        assert!(mcp_server_edits(&input, None).is_err());
    }
}

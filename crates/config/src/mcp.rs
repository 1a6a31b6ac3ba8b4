//! `[mcp.servers.<name>]`: the MCP servers whose tools the agent uses — how each is reached
//! (a command over stdio, or a URL), its timeouts, and which of its tools are offered.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde::Deserialize;
use toml::Spanned;

use crate::locate::Locator;
use crate::secret::Secret;
use crate::ConfigError;

/// How long a server may take to start by default: long enough for a first `npx -y` or `uvx`
/// run, which downloads the server.
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(120);
/// How long one tool call may take by default.
pub const DEFAULT_TOOL_TIMEOUT: Duration = Duration::from_secs(120);

/// One MCP server as configured.
#[derive(Debug, Clone, PartialEq)]
pub struct McpServerConfig {
    pub transport: McpTransport,
    /// `false`: configured but not started.
    pub enabled: bool,
    pub startup_timeout: Duration,
    pub tool_timeout: Duration,
    /// Tool names offered (`*` for all; the default).
    pub enabled_tools: Vec<String>,
    /// Tool names never offered, even when `enabled_tools` matches them.
    pub disabled_tools: Vec<String>,
}

impl McpServerConfig {
    /// Whether the server's tool `name` is offered to the model.
    pub fn offers(&self, name: &str) -> bool {
        let listed = |list: &[String]| list.iter().any(|t| t == "*" || t == name);
        listed(&self.enabled_tools) && !self.disabled_tools.iter().any(|t| t == name)
    }
}

/// How a server is reached. Values with `${NAME}` are already expanded; header and environment
/// values are kept as secrets (they often hold tokens).
#[derive(Debug, Clone, PartialEq)]
pub enum McpTransport {
    /// A child process speaking JSON-RPC on its stdin and stdout.
    Stdio {
        command: String,
        args: Vec<String>,
        /// Added to the person's own environment.
        env: BTreeMap<String, Secret>,
        cwd: Option<PathBuf>,
    },
    /// The current HTTP transport: one endpoint, POST per message.
    StreamableHttp {
        url: String,
        headers: BTreeMap<String, Secret>,
    },
    /// The older HTTP transport: a GET event stream that names the POST endpoint.
    Sse {
        url: String,
        headers: BTreeMap<String, Secret>,
    },
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawMcp {
    #[serde(default)]
    servers: BTreeMap<String, RawServer>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawServer {
    #[serde(rename = "type")]
    kind: Option<Spanned<String>>,
    command: Option<Spanned<String>>,
    #[serde(default)]
    args: Vec<Spanned<String>>,
    #[serde(default)]
    env: BTreeMap<String, Spanned<String>>,
    cwd: Option<PathBuf>,
    url: Option<Spanned<String>>,
    #[serde(default)]
    headers: BTreeMap<String, Spanned<String>>,
    enabled: Option<bool>,
    /// Seconds.
    startup_timeout: Option<f64>,
    /// Seconds.
    tool_timeout: Option<f64>,
    enabled_tools: Option<Vec<String>>,
    #[serde(default)]
    disabled_tools: Vec<String>,
}

impl RawMcp {
    /// The servers, checked and with `${NAME}` expanded.
    pub(crate) fn resolve(
        self,
        at: &Locator<'_>,
        env: &impl Fn(&str) -> Option<String>,
    ) -> Result<BTreeMap<String, McpServerConfig>, ConfigError> {
        let mut servers = BTreeMap::new();
        for (name, raw) in self.servers {
            let key = format!("mcp.servers.{name}");
            let valid_name = !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
            let expand_map = |map: BTreeMap<String, Spanned<String>>, field: &str| {
                map.into_iter()
                    .map(|(k, v)| {
                        let value = at.expand(&v, &format!("{key}.{field}.{k}"), env)?;
                        Ok((k, Secret::new(value)))
                    })
                    .collect::<Result<BTreeMap<_, _>, ConfigError>>()
            };
            let kind = raw.kind.as_ref().map_or("stdio", |k| k.get_ref().as_str());
            let transport = match kind {
                "stdio" => {
                    let Some(command) = raw.command else {
                        return Err(at.error_at_line(
                            at.line_of_key(&key),
                            format!("`{key}` is a stdio server and needs a `command`"),
                        ));
                    };
                    let command = at.expand(&command, &format!("{key}.command"), env)?;
                    let args = raw
                        .args
                        .iter()
                        .map(|a| at.expand(a, &format!("{key}.args"), env))
                        .collect::<Result<_, _>>()?;
                    McpTransport::Stdio {
                        command,
                        args,
                        env: expand_map(raw.env, "env")?,
                        cwd: raw.cwd,
                    }
                }
                "streamable_http" | "streamableHttp" | "sse" => {
                    let Some(url) = raw.url else {
                        return Err(at.error_at_line(
                            at.line_of_key(&key),
                            format!("`{key}` is a {kind} server and needs a `url`"),
                        ));
                    };
                    let value = at.expand(&url, &format!("{key}.url"), env)?;
                    if !(value.starts_with("http://") || value.starts_with("https://")) {
                        return Err(at.error(
                            url.span(),
                            format!(
                                "`{key}.url` must start with http:// or https://{}",
                                crate::errors::scheme_hint(&value)
                            ),
                        ));
                    }
                    let headers = expand_map(raw.headers, "headers")?;
                    if kind == "sse" {
                        McpTransport::Sse {
                            url: value,
                            headers,
                        }
                    } else {
                        McpTransport::StreamableHttp {
                            url: value,
                            headers,
                        }
                    }
                }
                other => {
                    let span = raw.kind.as_ref().map_or(0..0, Spanned::span);
                    return Err(at.error(
                        span,
                        format!(
                            "`{key}.type` must be stdio, streamable_http or sse, got {other:?}"
                        ),
                    ));
                }
            };
            if !valid_name {
                return Err(at.error_at_line(
                    at.line_of_key(&key),
                    format!("`{key}`: a server's name may use letters, digits, - and _ only"),
                ));
            }
            let seconds = |value: Option<f64>, default: Duration, field: &str| match value {
                None => Ok(default),
                Some(s) if s.is_finite() && s > 0.0 => Ok(Duration::from_secs_f64(s)),
                Some(s) => Err(at.error_at_line(
                    at.line_of_key(&key),
                    format!("`{key}.{field}` must be a positive number of seconds, got {s}"),
                )),
            };
            servers.insert(
                name,
                McpServerConfig {
                    transport,
                    enabled: raw.enabled.unwrap_or(true),
                    startup_timeout: seconds(
                        raw.startup_timeout,
                        DEFAULT_STARTUP_TIMEOUT,
                        "startup_timeout",
                    )?,
                    tool_timeout: seconds(raw.tool_timeout, DEFAULT_TOOL_TIMEOUT, "tool_timeout")?,
                    enabled_tools: raw.enabled_tools.unwrap_or_else(|| vec!["*".to_owned()]),
                    disabled_tools: raw.disabled_tools,
                },
            );
        }
        Ok(servers)
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::Config;

    use super::*;

    fn parse(text: &str, env: &[(&str, &str)]) -> Result<Config, ConfigError> {
        let env: Vec<(String, String)> = env
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        Config::parse(
            text,
            Path::new("/home/ada/.cairn/config.toml"),
            move |name| env.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()),
        )
    }

    #[test]
    fn servers_of_each_transport_with_their_defaults() -> Result<(), ConfigError> {
        let config = parse(
            r#"
[mcp.servers.everything]
command = "npx"
args = ["-y", "@modelcontextprotocol/server-everything"]
env = { TOKEN = "${GH}" }

[mcp.servers.remote]
type = "streamable_http"
url = "http://127.0.0.1:3001/mcp"
headers = { Authorization = "Bearer ${GH}" }
tool_timeout = 5
disabled_tools = ["printEnv"]
"#,
            &[("GH", "ghp_secret")],
        )?;
        let everything = &config.mcp_servers["everything"];
        assert_eq!(everything.startup_timeout, DEFAULT_STARTUP_TIMEOUT);
        assert!(everything.enabled && everything.offers("echo"));
        match &everything.transport {
            McpTransport::Stdio {
                command, args, env, ..
            } => {
                assert_eq!(command, "npx");
                assert_eq!(args.len(), 2);
                assert_eq!(env["TOKEN"].expose(), "ghp_secret");
            }
            other => panic!("not stdio: {other:?}"),
        }
        let remote = &config.mcp_servers["remote"];
        assert_eq!(remote.tool_timeout, Duration::from_secs(5));
        assert!(!remote.offers("printEnv") && remote.offers("echo"));
        assert!(
            matches!(&remote.transport, McpTransport::StreamableHttp { headers, .. } if headers["Authorization"].expose() == "Bearer ghp_secret")
        );
        Ok(())
    }

    #[test]
    fn bad_servers_are_errors_that_name_the_line() {
        let cases = [
            ("[mcp.servers.a]\nargs = [\"x\"]\n", "needs a `command`"),
            ("[mcp.servers.a]\ntype = \"sse\"\n", "needs a `url`"),
            (
                "[mcp.servers.a]\ntype = \"ws\"\nurl = \"ws://x\"\n",
                "must be stdio, streamable_http or sse",
            ),
            (
                "[mcp.servers.a]\ntype = \"sse\"\nurl = \"ftp://x\"\n",
                "must start with http://",
            ),
            (
                "[mcp.servers.\"a b\"]\ncommand = \"x\"\n",
                "letters, digits",
            ),
            (
                "[mcp.servers.a]\ncommand = \"x\"\ntool_timeout = -1\n",
                "positive number of seconds",
            ),
            (
                "[mcp.servers.a]\ncommand = \"x\"\nenv = { T = \"${UNSET}\" }\n",
                "UNSET is not set",
            ),
        ];
        for (text, expected) in cases {
            match parse(text, &[]) {
                Ok(config) => panic!("accepted {text:?}: {config:?}"),
                Err(e) => {
                    let message = e.to_string();
                    assert!(message.contains(expected), "{text:?}: {message}");
                    assert!(message.contains("config.toml:"), "{message}");
                }
            }
        }
    }
}

//! `[lsp]`: the language servers behind the agent's `lsp` tool — each a command speaking LSP on
//! stdio, the file extensions it serves, its environment and initialization options — and how long
//! one request may take. Without an `[lsp.servers]` table Cairn offers the common servers
//! ([`default_lsp_servers`]), each used only when its command is on the PATH.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Deserialize;
use toml::Spanned;

use crate::locate::Locator;
use crate::ConfigError;

/// How long one request to a language server may take by default (an initial index of a large
/// project answers within it; a server that hangs is given up on).
pub const DEFAULT_LSP_TIMEOUT: Duration = Duration::from_secs(30);

/// One language server as configured.
#[derive(Debug, Clone, PartialEq)]
pub struct LspServerConfig {
    pub name: String,
    pub command: String,
    pub args: Vec<String>,
    /// Lowercase, each with its leading dot (`.py`).
    pub extensions: Vec<String>,
    /// Added to the person's own environment.
    pub env: BTreeMap<String, String>,
    /// Sent as `initializationOptions`.
    pub initialization_options: Option<serde_json::Value>,
}

/// `[lsp]` resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct LspConfig {
    /// In the order a file's extension is matched: the configured servers by name, or the
    /// defaults in their order.
    pub servers: Vec<LspServerConfig>,
    /// Whether `servers` was written by the person (a missing command is then worth a warning).
    pub configured: bool,
    pub timeout: Duration,
}

impl Default for LspConfig {
    fn default() -> Self {
        Self {
            servers: default_lsp_servers(),
            configured: false,
            timeout: DEFAULT_LSP_TIMEOUT,
        }
    }
}

/// The servers offered when the config names none, in the order they are preferred.
pub fn default_lsp_servers() -> Vec<LspServerConfig> {
    let server = |name: &str, command: &str, args: &[&str], extensions: &[&str]| LspServerConfig {
        name: name.to_owned(),
        command: command.to_owned(),
        args: args.iter().map(|a| (*a).to_owned()).collect(),
        extensions: extensions.iter().map(|e| (*e).to_owned()).collect(),
        env: BTreeMap::new(),
        initialization_options: None,
    };
    vec![
        server(
            "pyright",
            "pyright-langserver",
            &["--stdio"],
            &[".py", ".pyi"],
        ),
        server("pylsp", "pylsp", &[], &[".py"]),
        server(
            "typescript",
            "typescript-language-server",
            &["--stdio"],
            &[".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts"],
        ),
        server("rust-analyzer", "rust-analyzer", &[], &[".rs"]),
        server("gopls", "gopls", &[], &[".go"]),
        server(
            "clangd",
            "clangd",
            &[],
            &[".c", ".h", ".cc", ".cpp", ".cxx", ".hpp", ".hh", ".hxx"],
        ),
    ]
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawLsp {
    servers: Option<BTreeMap<String, RawServer>>,
    /// Seconds.
    timeout: Option<f64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawServer {
    command: Spanned<String>,
    #[serde(default)]
    args: Vec<Spanned<String>>,
    extensions: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, Spanned<String>>,
    initialization_options: Option<toml::Value>,
}

impl RawLsp {
    pub(crate) fn resolve(
        self,
        at: &Locator<'_>,
        env: &impl Fn(&str) -> Option<String>,
    ) -> Result<LspConfig, ConfigError> {
        let timeout = match self.timeout {
            None => DEFAULT_LSP_TIMEOUT,
            Some(s) if s.is_finite() && s > 0.0 => Duration::from_secs_f64(s),
            Some(s) => {
                return Err(at.error_at_line(
                    at.line_of_key("lsp"),
                    format!("`lsp.timeout` must be a positive number of seconds, got {s}"),
                ))
            }
        };
        let Some(raw_servers) = self.servers else {
            return Ok(LspConfig {
                timeout,
                ..LspConfig::default()
            });
        };
        let mut servers = Vec::new();
        for (name, raw) in raw_servers {
            let key = format!("lsp.servers.{name}");
            let extensions: Vec<String> = raw
                .extensions
                .iter()
                .map(|e| format!(".{}", e.trim().trim_start_matches('.').to_lowercase()))
                .filter(|e| e.len() > 1)
                .collect();
            if extensions.is_empty() {
                return Err(at.error_at_line(
                    at.line_of_key(&key),
                    format!("`{key}.extensions` must name at least one extension, like [\".py\"]"),
                ));
            }
            let initialization_options = match raw.initialization_options {
                None => None,
                Some(value) => Some(serde_json::to_value(value).map_err(|e| {
                    at.error_at_line(
                        at.line_of_key(&key),
                        format!(
                            "`{key}.initialization_options`: {}",
                            crate::errors::without_values(&e.to_string(), true)
                        ),
                    )
                })?),
            };
            servers.push(LspServerConfig {
                command: at.expand(&raw.command, &format!("{key}.command"), env)?,
                args: raw
                    .args
                    .iter()
                    .map(|a| at.expand(a, &format!("{key}.args"), env))
                    .collect::<Result<_, _>>()?,
                extensions,
                env: raw
                    .env
                    .iter()
                    .map(|(k, v)| Ok((k.clone(), at.expand(v, &format!("{key}.env.{k}"), env)?)))
                    .collect::<Result<_, ConfigError>>()?,
                initialization_options,
                name,
            });
        }
        Ok(LspConfig {
            servers,
            configured: true,
            timeout,
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::Config;

    fn parse(text: &str) -> Result<Config, crate::ConfigError> {
        Config::parse(text, std::path::Path::new("config.toml"), |name| {
            (name == "PYPATH").then(|| "/opt/py".to_owned())
        })
    }

    #[test]
    fn servers_are_read_and_replace_the_defaults() -> Result<(), crate::ConfigError> {
        let defaults = parse("")?.lsp;
        assert!(!defaults.configured);
        assert_eq!(defaults.servers[0].command, "pyright-langserver");

        let config = parse(
            "[lsp]\ntimeout = 5\n\n[lsp.servers.pylsp]\ncommand = \"python3\"\nargs = [\"-m\", \"pylsp\"]\n\
             extensions = [\"py\", \".PYI\"]\nenv = { PYTHONPATH = \"${PYPATH}\" }\n\
             initialization_options = { plugins = { pycodestyle = { enabled = false } } }\n",
        )?
        .lsp;
        assert!(config.configured);
        assert_eq!(config.timeout, std::time::Duration::from_secs(5));
        let pylsp = &config.servers[0];
        assert_eq!(pylsp.name, "pylsp");
        assert_eq!(pylsp.args, ["-m", "pylsp"]);
        assert_eq!(pylsp.extensions, [".py", ".pyi"]);
        assert_eq!(pylsp.env["PYTHONPATH"], "/opt/py");
        assert_eq!(
            pylsp.initialization_options,
            Some(serde_json::json!({"plugins": {"pycodestyle": {"enabled": false}}}))
        );

        let none = parse("[lsp.servers.x]\ncommand = \"x\"\nextensions = []\n");
        assert!(
            matches!(&none, Err(e) if e.to_string().contains("`lsp.servers.x.extensions` must name at least one extension")),
            "{none:?}"
        );
        Ok(())
    }
}

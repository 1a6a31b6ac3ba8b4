//! The language servers of one Cairn process: which configured ones can run (their command is on
//! the PATH), each started on first use per project root, kept, started again when it died, and
//! stopped together at exit.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use cairn_config::{LspConfig, LspServerConfig};

use crate::server::Server;
use crate::LspError;

pub struct LspHub {
    /// The servers that can run, in the order an extension is matched.
    available: Vec<LspServerConfig>,
    warnings: Vec<String>,
    timeout: Duration,
    /// One slot per server and project root: starting one server never holds up another.
    running: std::sync::Mutex<HashMap<(String, PathBuf), Slot>>,
    /// Project roots where servers may start without asking: a server runs the project's code
    /// (rust-analyzer its `build.rs`, gopls `go list`), so in an untrusted checkout the first
    /// start is the person's call.
    trusted: std::sync::Mutex<HashSet<PathBuf>>,
}

type Slot = Arc<tokio::sync::Mutex<Option<Arc<Server>>>>;

impl LspHub {
    /// The servers of `config` whose command is found now; a configured one that is not is
    /// skipped with a warning (a default one silently: nobody asked for it).
    pub fn new(config: &LspConfig) -> Self {
        let mut available = Vec::new();
        let mut warnings = Vec::new();
        for server in &config.servers {
            if on_path(&server.command) {
                available.push(server.clone());
            } else if config.configured {
                warnings.push(format!(
                    "[warning: lsp server {} ({}) not found on the PATH — skipped]",
                    server.name, server.command
                ));
            }
        }
        Self {
            available,
            warnings,
            timeout: config.timeout,
            running: std::sync::Mutex::default(),
            trusted: std::sync::Mutex::default(),
        }
    }

    /// Whether servers may start in `root` without asking: a call there already ran (approved,
    /// or with nothing to approve).
    pub fn is_trusted(&self, root: &Path) -> bool {
        self.trusted
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains(root)
    }

    /// Records that servers may start in `root` from now on.
    pub fn trust(&self, root: &Path) {
        self.trusted
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(root.to_path_buf());
    }

    /// Whether no server can run (the tool is then not declared).
    pub fn is_empty(&self) -> bool {
        self.available.is_empty()
    }

    /// What start-up says about the servers: one warning per configured server not found, and a
    /// line when none can run.
    pub fn warnings(&self) -> Vec<String> {
        let mut warnings = self.warnings.clone();
        if self.is_empty() && !warnings.is_empty() {
            warnings
                .push("[lsp: no language server found on the PATH — the lsp tool is off]".into());
        }
        warnings
    }

    /// `pyright (.py, .pyi), typescript (.ts, …)`: each server with the extensions it serves (an
    /// extension an earlier server took is not repeated).
    pub fn servers_line(&self) -> String {
        self.available
            .iter()
            .filter_map(|server| {
                let own: Vec<&str> = server
                    .extensions
                    .iter()
                    .filter(|e| {
                        self.server_for_extension(e)
                            .is_some_and(|s| s.name == server.name)
                    })
                    .map(String::as_str)
                    .collect();
                (!own.is_empty()).then(|| format!("{} ({})", server.name, own.join(", ")))
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The server for a file, by its extension.
    pub(crate) fn server_for(&self, path: &Path) -> Option<&LspServerConfig> {
        let extension = format!(".{}", path.extension()?.to_str()?.to_lowercase());
        self.server_for_extension(&extension)
    }

    fn server_for_extension(&self, extension: &str) -> Option<&LspServerConfig> {
        self.available
            .iter()
            .find(|s| s.extensions.iter().any(|e| e == extension))
    }

    /// The running server `config` for `root`, started (again) when it is not running.
    pub(crate) async fn server(
        &self,
        config: &LspServerConfig,
        root: &Path,
    ) -> Result<Arc<Server>, LspError> {
        let key = (config.name.clone(), root.to_path_buf());
        let slot = self
            .running
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(key)
            .or_default()
            .clone();
        let mut slot = slot.lock().await;
        if let Some(server) = slot.as_ref() {
            match server.exited() {
                None => return Ok(server.clone()),
                Some(reason) => {
                    tracing::info!("lsp {}: exited{reason}; starting it again", config.name);
                }
            }
        }
        let server = Arc::new(Server::start(config, root, self.timeout).await?);
        *slot = Some(server.clone());
        Ok(server)
    }

    /// Stops every running server (`shutdown`, `exit`, then the process).
    pub async fn shutdown(&self) {
        let slots: Vec<Slot> = self
            .running
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .drain()
            .map(|(_, slot)| slot)
            .collect();
        for slot in slots {
            if let Some(server) = slot.lock().await.take() {
                server.stop().await;
            }
        }
    }
}

/// Whether `command` can be run: a path to a file, or a name found in a PATH directory.
fn on_path(command: &str) -> bool {
    let runnable = |path: &Path| {
        use std::os::unix::fs::PermissionsExt;
        path.metadata()
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if command.contains('/') {
        return runnable(Path::new(command));
    }
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| runnable(&dir.join(command))))
}

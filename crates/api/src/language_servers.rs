//! The language servers of the `lsp` tool: one hub per process, shared by every runtime, replaced
//! when `[lsp]` changes, and stopped when a front end exits.

use std::sync::{Arc, Mutex};

use cairn_config::{Config, LspConfig};
use cairn_lsp::LspHub;

use crate::Cairn;

pub(crate) type LspSlot = Arc<Mutex<Option<(LspConfig, Arc<LspHub>)>>>;

impl Cairn {
    /// The hub of `config`'s language servers: the one already running when `[lsp]` has not
    /// changed.
    pub fn lsp_hub(&self, config: &Config) -> Arc<LspHub> {
        let mut slot = self.lsp.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((servers, hub)) = slot.as_ref() {
            if *servers == config.lsp {
                return hub.clone();
            }
        }
        let hub = Arc::new(LspHub::new(&config.lsp));
        if let Some((_, old)) = slot.replace((config.lsp.clone(), hub.clone())) {
            stop_in_background(old);
        }
        hub
    }

    /// What start-up says about the language servers: a configured one not on the PATH, or none
    /// at all (the `lsp` tool is then not offered).
    pub fn lsp_warnings(&self) -> Vec<String> {
        match self.load_config() {
            Ok(config) => self.lsp_hub(&config).warnings(),
            Err(_) => Vec::new(),
        }
    }

    /// Stops every language server this process started (`shutdown`, `exit`, then the process).
    pub async fn shutdown_language_servers(&self) {
        let hub = self
            .lsp
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .map(|(_, hub)| hub.clone());
        if let Some(hub) = hub {
            hub.shutdown().await;
        }
    }
}

/// A replaced hub's servers stop politely when a runtime can run it; dropped, they are killed.
fn stop_in_background(hub: Arc<LspHub>) {
    if let Ok(runtime) = tokio::runtime::Handle::try_current() {
        runtime.spawn(async move { hub.shutdown().await });
    }
}

//! One started language server: its initialization, the documents it has open (synced from
//! disk before every request), and its diagnostics, pushed or pulled.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use cairn_config::LspServerConfig;
use serde_json::{json, Value};
use tokio::time::Instant;

use crate::rpc::Connection;
use crate::text::uri_of;
use crate::LspError;

/// How long diagnostics are waited for after a file changed.
pub(crate) const DIAGNOSTICS_WAIT: Duration = Duration::from_secs(3);
/// Quiet after a publication before it is taken as the last one (servers publish in bursts:
/// syntax first, then semantics).
const DIAGNOSTICS_SETTLE: Duration = Duration::from_millis(300);
/// The longest a request waits for the server's work in progress to end.
const SETTLE_MAX: Duration = Duration::from_secs(15);
/// How often a wait for pushed diagnostics checks whether the server now offers them pulled.
const REGISTRATION_CHECK: Duration = Duration::from_millis(100);

/// A pull's `resultId` and items.
type Pulled = (Option<String>, Vec<lsp_types::Diagnostic>);

/// A document as the server last saw it.
struct Document {
    version: i32,
    text: String,
}

pub(crate) struct Server {
    connection: Connection,
    capabilities: Value,
    documents: tokio::sync::Mutex<HashMap<PathBuf, Document>>,
    /// Whether a request was made yet (the first waits for the work its document starts).
    asked: std::sync::atomic::AtomicBool,
    /// Pull results by URI (`resultId` and items), for `unchanged` answers.
    pulled: tokio::sync::Mutex<HashMap<String, Pulled>>,
}

/// Diagnostics for one file, and how fresh they are.
pub(crate) enum Diagnostics {
    /// What the server said about the file's current content.
    Fresh(Vec<lsp_types::Diagnostic>),
    /// The file did not change since the server last spoke about it.
    AsLastPublished(Vec<lsp_types::Diagnostic>),
    /// Nothing came within the wait.
    Nothing,
}

impl Server {
    /// Starts the server in `root` and initializes it.
    pub(crate) async fn start(
        config: &LspServerConfig,
        root: &Path,
        timeout: Duration,
    ) -> Result<Self, LspError> {
        let root_uri = uri_of(root)?;
        let connection = Connection::spawn(config, root.to_path_buf(), root_uri.clone(), timeout)?;
        let params = json!({
            "processId": std::process::id(),
            "clientInfo": {"name": "cairn", "version": env!("CARGO_PKG_VERSION")},
            "rootUri": root_uri,
            "rootPath": root,
            "workspaceFolders": [{"uri": root_uri, "name": "project"}],
            "initializationOptions": config.initialization_options,
            "capabilities": {
                "general": {"positionEncodings": ["utf-16"]},
                "window": {"workDoneProgress": true},
                "workspace": {
                    "configuration": true,
                    "workspaceFolders": true,
                    "workspaceEdit": {"documentChanges": true},
                },
                "textDocument": {
                    "synchronization": {"didSave": false, "dynamicRegistration": false},
                    "definition": {"linkSupport": true},
                    "references": {},
                    "hover": {"contentFormat": ["markdown", "plaintext"]},
                    "documentSymbol": {"hierarchicalDocumentSymbolSupport": true},
                    "rename": {"prepareSupport": false},
                    "publishDiagnostics": {"versionSupport": true},
                    "diagnostic": {"dynamicRegistration": true},
                },
            },
        });
        // A first start may index the project: it gets twice the usual time.
        let answer = connection
            .request_within("initialize", params, timeout * 2)
            .await;
        let answer = match answer {
            Ok(answer) => answer,
            Err(e) => {
                connection.stop().await;
                return Err(e);
            }
        };
        connection.notify("initialized", json!({})).await?;
        Ok(Self {
            connection,
            capabilities: answer.get("capabilities").cloned().unwrap_or_default(),
            documents: tokio::sync::Mutex::default(),
            asked: std::sync::atomic::AtomicBool::new(false),
            pulled: tokio::sync::Mutex::default(),
        })
    }

    pub(crate) fn exited(&self) -> Option<String> {
        self.connection.exited()
    }

    pub(crate) async fn stop(&self) {
        self.connection.stop().await;
    }

    /// Sends a request once the server reports no work in progress (a project still loading
    /// answers references with part of it).
    pub(crate) async fn request(&self, method: &str, params: Value) -> Result<Value, LspError> {
        let first = !self.asked.swap(true, std::sync::atomic::Ordering::Relaxed);
        self.connection.settle(first, SETTLE_MAX).await;
        self.connection.request(method, params).await
    }

    /// Tells the server `path`'s content: `didOpen` the first time, a whole-document `didChange`
    /// when it moved. Whether anything was sent.
    pub(crate) async fn sync(&self, path: &Path, text: &str) -> Result<bool, LspError> {
        let uri = uri_of(path)?;
        let mut documents = self.documents.lock().await;
        match documents.get_mut(path) {
            Some(document) if document.text == text => Ok(false),
            Some(document) => {
                let version = document.version + 1;
                self.connection
                    .notify(
                        "textDocument/didChange",
                        json!({
                            "textDocument": {"uri": uri, "version": version},
                            "contentChanges": [{"text": text}],
                        }),
                    )
                    .await?;
                document.version = version;
                document.text = text.to_owned();
                Ok(true)
            }
            None => {
                self.connection
                    .notify(
                        "textDocument/didOpen",
                        json!({"textDocument": {
                            "uri": uri,
                            "languageId": language_id(path),
                            "version": 1,
                            "text": text,
                        }}),
                    )
                    .await?;
                documents.insert(
                    path.to_path_buf(),
                    Document {
                        version: 1,
                        text: text.to_owned(),
                    },
                );
                Ok(true)
            }
        }
    }

    /// Syncs every other document the server has open from disk (an edit since the server saw
    /// it — edit_file, a rename — would otherwise make its answers point at old lines).
    pub(crate) async fn sync_open(&self, except: &Path) -> Result<(), LspError> {
        let open: Vec<PathBuf> = self
            .documents
            .lock()
            .await
            .keys()
            .filter(|p| p.as_path() != except)
            .cloned()
            .collect();
        for path in open {
            if let Ok(bytes) = tokio::fs::read(&path).await {
                self.sync(&path, &String::from_utf8_lossy(&bytes)).await?;
            }
        }
        Ok(())
    }

    /// The file's diagnostics once it is synced (`changed`: whether the sync sent anything):
    /// pulled when the server offers it, else the publication that follows the sync.
    pub(crate) async fn diagnostics(
        &self,
        path: &Path,
        changed: bool,
        since: u64,
    ) -> Result<Diagnostics, LspError> {
        let uri = uri_of(path)?;
        if self.pulls_diagnostics() {
            return self.pull(&uri).await;
        }
        let last = self.connection.publication(path);
        if !changed {
            if let Some(last) = last {
                return Ok(Diagnostics::AsLastPublished(last.diagnostics));
            }
        }
        let mut publications = self.connection.publications();
        let deadline = Instant::now() + DIAGNOSTICS_WAIT;
        let fresh = || self.connection.publication(path).filter(|p| p.seq > since);
        // Once something came, a short quiet ends the wait.
        let mut settled_at = fresh().map(|_| Instant::now() + DIAGNOSTICS_SETTLE);
        loop {
            let wake = settled_at.map_or(deadline, |at| at.min(deadline));
            tokio::select! {
                alive = publications.changed() => {
                    if alive.is_err() {
                        return Err(LspError::Exited(self.exited().unwrap_or_default()));
                    }
                    if fresh().is_some() {
                        settled_at = Some(Instant::now() + DIAGNOSTICS_SETTLE);
                    }
                }
                // A server may register pulled diagnostics just after starting.
                _ = tokio::time::sleep(REGISTRATION_CHECK) => {
                    if self.pulls_diagnostics() {
                        return self.pull(&uri).await;
                    }
                }
                _ = tokio::time::sleep_until(wake) => {
                    return match (fresh(), self.exited()) {
                        (Some(p), _) => Ok(Diagnostics::Fresh(p.diagnostics)),
                        (None, Some(reason)) => Err(LspError::Exited(reason)),
                        (None, None) => Ok(Diagnostics::Nothing),
                    };
                }
            }
        }
    }

    /// The publication counter now, taken before a sync so the wait knows what is new.
    pub(crate) fn publications_so_far(&self) -> u64 {
        *self.connection.publications().borrow()
    }

    fn pulls_diagnostics(&self) -> bool {
        self.capabilities
            .get("diagnosticProvider")
            .is_some_and(|p| !p.is_null())
            || self.connection.registered("textDocument/diagnostic")
    }

    async fn pull(&self, uri: &str) -> Result<Diagnostics, LspError> {
        let mut pulled = self.pulled.lock().await;
        let previous = pulled.get(uri).cloned();
        let mut params = json!({"textDocument": {"uri": uri}});
        if let Some((Some(id), _)) = &previous {
            params["previousResultId"] = json!(id);
        }
        // Asked at once: the diagnostics' own wait is the spec's 3 s, not a project's load.
        let answer = self
            .connection
            .request("textDocument/diagnostic", params)
            .await?;
        let report: lsp_types::DocumentDiagnosticReport =
            serde_json::from_value(answer).map_err(|e| LspError::BadAnswer(e.to_string()))?;
        let (result_id, items) = match report {
            lsp_types::DocumentDiagnosticReport::Full(full) => (
                full.full_document_diagnostic_report.result_id,
                full.full_document_diagnostic_report.items,
            ),
            lsp_types::DocumentDiagnosticReport::Unchanged(same) => (
                Some(same.unchanged_document_diagnostic_report.result_id),
                previous.map(|(_, items)| items).unwrap_or_default(),
            ),
        };
        pulled.insert(uri.to_owned(), (result_id, items.clone()));
        // Asked for now: always about the current content.
        Ok(Diagnostics::Fresh(items))
    }
}

/// The LSP language id of a file, by extension.
fn language_id(path: &Path) -> String {
    let extension = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_lowercase();
    match extension.as_str() {
        "py" | "pyi" => "python",
        "ts" | "mts" | "cts" => "typescript",
        "tsx" => "typescriptreact",
        "js" | "mjs" | "cjs" => "javascript",
        "jsx" => "javascriptreact",
        "rs" => "rust",
        "go" => "go",
        "c" | "h" => "c",
        "cc" | "cpp" | "cxx" | "hpp" | "hh" | "hxx" => "cpp",
        other => other,
    }
    .to_owned()
}

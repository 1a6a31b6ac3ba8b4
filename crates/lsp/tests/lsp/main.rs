//! The lsp tool against real language servers installed by setup (pyright, python-lsp-server,
//! typescript-language-server) on fixture projects, and against a fake server that crashes or
//! never answers. Texts are compared whole.

mod failures;
mod pylsp;
mod pyright;
mod typescript;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use cairn_config::{LspConfig, LspServerConfig};
use cairn_lsp::{Lsp, LspHub};
use cairn_tools::{Tool, ToolContext, ToolOutput};
use serde_json::Value;

pub type TestResult<T = ()> = Result<T, Box<dyn std::error::Error>>;

/// A copy of a fixture project with a hub over `servers`.
pub struct Project {
    _dir: tempfile::TempDir,
    pub root: PathBuf,
    pub hub: Arc<LspHub>,
    tool: Lsp,
}

impl Project {
    pub fn new(
        fixture: &str,
        servers: Vec<LspServerConfig>,
        timeout: Duration,
    ) -> TestResult<Self> {
        let dir = tempfile::tempdir()?;
        let root = dir.path().canonicalize()?;
        let from = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/lsp/fixtures")
            .join(fixture);
        for entry in std::fs::read_dir(&from)? {
            let entry = entry?;
            std::fs::copy(entry.path(), root.join(entry.file_name()))?;
        }
        let hub = Arc::new(LspHub::new(&LspConfig {
            servers,
            configured: true,
            timeout,
        }));
        let tool = Lsp::new(hub.clone()).ok_or("no server on the PATH")?;
        Ok(Self {
            _dir: dir,
            root,
            hub,
            tool,
        })
    }

    pub async fn call(&self, input: Value) -> ToolOutput {
        let ctx = ToolContext::new(self.root.clone());
        self.tool.run(input, &ctx).await
    }

    /// `diagnostics` of `path` once the server has published: a loaded machine can take longer
    /// than the spec's 3 s wait, and the answer then says to ask again, as a model would.
    pub async fn published_diagnostics(&self, path: &str) -> ToolOutput {
        let input = serde_json::json!({"action": "diagnostics", "path": path});
        let mut output = self.call(input.clone()).await;
        for _ in 0..5 {
            if !output.text.starts_with("no diagnostics received") {
                break;
            }
            output = self.call(input.clone()).await;
        }
        // A loaded machine: a server may publish an empty syntactic set first and its semantic
        // findings seconds later; ask again before taking "clean" for the answer.
        for _ in 0..2 {
            if !output.text.starts_with("no diagnostics:") {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_secs(2)).await;
            output = self.call(input.clone()).await;
        }
        output
    }

    pub fn read(&self, file: &str) -> std::io::Result<String> {
        std::fs::read_to_string(self.root.join(file))
    }

    pub fn tool(&self) -> &Lsp {
        &self.tool
    }
}

pub fn server(name: &str, command: &Path, args: &[&str], extensions: &[&str]) -> LspServerConfig {
    LspServerConfig {
        name: name.into(),
        command: command.display().to_string(),
        args: args.iter().map(|a| (*a).to_owned()).collect(),
        extensions: extensions.iter().map(|e| (*e).to_owned()).collect(),
        env: Default::default(),
        initialization_options: None,
    }
}

pub fn servers() -> TestResult<cairn_test_support::LanguageServers> {
    Ok(cairn_test_support::language_servers()?)
}

/// The text of a successful call.
#[track_caller]
pub fn ok(output: &ToolOutput) -> &str {
    assert!(!output.failed, "the call failed: {}", output.text);
    &output.text
}

/// The text of a failed call.
#[track_caller]
pub fn failed(output: &ToolOutput) -> &str {
    assert!(output.failed, "the call succeeded: {}", output.text);
    &output.text
}

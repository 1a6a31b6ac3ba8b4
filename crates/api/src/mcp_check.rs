//! MCP as the command line meets it: the configured servers waited for before a one-shot turn
//! and reported by `cairn mcp status`, any server probed by its address (`cairn mcp connect`),
//! and Cairn's own memory served on stdio (`cairn mcp`).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use cairn_config::{McpServerConfig, McpTransport, Secret};
use cairn_mcp::{McpHub, MCP_WAIT};
use cairn_protocol::settings::{McpServerState, McpStatus};

use crate::mcp_settings::statuses;
use crate::{Cairn, Error, McpMemory, VERSION};

/// What probing a server found: its tools, or one call's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McpProbe {
    Tools(Vec<String>),
    /// The call's result as text; `failed`: the tool reported an error.
    Answer {
        text: String,
        failed: bool,
    },
}

/// The servers of `hub` still starting.
fn still_starting(hub: &McpHub) -> Vec<String> {
    statuses(hub)
        .into_iter()
        .filter(|s| s.state == McpServerState::Starting)
        .map(|s| s.name)
        .collect()
}

impl Cairn {
    /// Before a one-shot turn: the configured servers get the usual short wait, and those still
    /// starting (an `npx` server's first run takes ~20 s) up to their longest `startup_timeout`,
    /// `on_waiting` told which and how long first. The names of those still not ready (the turn
    /// begins without their tools; they join later steps if they come up in time).
    pub async fn wait_for_mcp_servers(
        &self,
        on_waiting: impl FnOnce(&[String], Duration),
    ) -> Vec<String> {
        let Ok(config) = self.load_config() else {
            return Vec::new();
        };
        let Some(hub) = self.mcp_hub(&config) else {
            return Vec::new();
        };
        hub.wait_started(MCP_WAIT).await;
        let waiting = still_starting(&hub);
        let Some(longest) = config
            .mcp_servers
            .iter()
            .filter(|(name, _)| waiting.contains(name))
            .map(|(_, server)| server.startup_timeout)
            .max()
        else {
            return Vec::new();
        };
        on_waiting(&waiting, longest);
        hub.wait_started(longest.saturating_sub(MCP_WAIT)).await;
        still_starting(&hub)
    }

    /// Every configured server started (each waited for up to the longest `startup_timeout`),
    /// then its state, tools and error.
    pub async fn mcp_statuses_started(&self) -> Result<Vec<McpStatus>, Error> {
        let config = self.load_config()?;
        let Some(hub) = self.mcp_hub(&config) else {
            return Ok(Vec::new());
        };
        let longest = config
            .mcp_servers
            .values()
            .map(|s| s.startup_timeout)
            .max()
            .unwrap_or_default();
        hub.wait_started(longest).await;
        Ok(statuses(&hub))
    }

    /// Serves this memory to the MCP client on stdin/stdout until it hangs up.
    pub async fn serve_mcp_stdio(self) -> Result<(), Error> {
        Ok(cairn_mcp::serve_stdio(Arc::new(McpMemory(self)), VERSION).await?)
    }
}

/// Connects to the MCP server at `url` (Streamable HTTP, or the older SSE transport when `sse`)
/// with `headers`, and lists its tools, or calls `call`'s tool with its arguments (waiting up to
/// the usual tool timeout).
pub async fn probe_mcp(
    url: &str,
    headers: BTreeMap<String, Secret>,
    sse: bool,
    call: Option<(&str, serde_json::Value)>,
) -> Result<McpProbe, Error> {
    let url = url.to_owned();
    let transport = if sse {
        McpTransport::Sse { url, headers }
    } else {
        McpTransport::StreamableHttp { url, headers }
    };
    let config = McpServerConfig {
        transport,
        enabled: true,
        startup_timeout: cairn_config::DEFAULT_STARTUP_TIMEOUT,
        tool_timeout: cairn_config::DEFAULT_TOOL_TIMEOUT,
        enabled_tools: vec!["*".into()],
        disabled_tools: Vec::new(),
    };
    let connection = cairn_mcp::connect("server", &config).await?;
    let Some((tool, arguments)) = call else {
        return Ok(McpProbe::Tools(
            connection.tools().iter().map(|t| t.name.clone()).collect(),
        ));
    };
    let result = tokio::time::timeout(config.tool_timeout, connection.call(tool, arguments))
        .await
        .map_err(|_| {
            Error::Mcp(cairn_mcp::Error::Call(format!(
                "{tool} did not answer within {} s",
                config.tool_timeout.as_secs()
            )))
        })??;
    let (text, failed) = cairn_mcp::render_result(&result);
    Ok(McpProbe::Answer { text, failed })
}

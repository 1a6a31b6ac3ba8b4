//! The configured MCP servers and their state: started when a turn first offers tools (the turn
//! waits at most [`MCP_WAIT`] for them), their tools offered while they run, a failed one tried
//! again after [`RETRY_AFTER`] or when one of its tools is called, and all of them stopped when
//! the hub is dropped (their processes are killed with it).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use cairn_config::McpServerConfig;
use cairn_tools::{BoxFuture, Tool, ToolSource};
use tokio::sync::watch;

use crate::remote::{lock, Connector, Server, State};
use crate::tool::McpTool;
use crate::{exposed_names, RemoteTool};

/// `mcp_wait_ms`: how long a turn waits for servers still starting before its first step.
pub const MCP_WAIT: Duration = Duration::from_millis(3000);
/// How long a server that failed to start rests before a turn tries it again.
pub const RETRY_AFTER: Duration = Duration::from_secs(60);

/// How a server is doing, for Settings and `cairn mcp`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerState {
    Disabled,
    /// Not needed yet.
    Idle,
    Starting,
    Ready,
    Failed,
}

/// One server's state, its tools as the model sees them, and its last error.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerStatus {
    pub name: String,
    pub state: ServerState,
    pub tools: Vec<String>,
    pub error: Option<String>,
}

/// Every configured server.
pub struct McpHub {
    servers: Vec<Arc<Server>>,
    changes: Arc<watch::Sender<u64>>,
    /// The tools as last built, and the change they were built at.
    tools: Mutex<(u64, Vec<Offered>)>,
}

/// A tool offered to the model, with the name of its server.
type Offered = (String, Arc<dyn Tool>);

impl McpHub {
    /// The hub of `servers` (none started yet).
    pub fn new(servers: &BTreeMap<String, McpServerConfig>) -> Arc<Self> {
        Self::with_connector(
            servers,
            Arc::new(|name, config| {
                Box::pin(async move { crate::rmcp_client::connect(&name, &config).await })
            }),
        )
    }

    pub(crate) fn with_connector(
        servers: &BTreeMap<String, McpServerConfig>,
        connector: Connector,
    ) -> Arc<Self> {
        let changes = Arc::new(watch::Sender::new(0));
        let servers = servers
            .iter()
            .map(|(name, config)| {
                Arc::new(Server::new(
                    name.clone(),
                    config.clone(),
                    changes.clone(),
                    connector.clone(),
                ))
            })
            .collect();
        Arc::new(Self {
            servers,
            changes,
            tools: Mutex::new((u64::MAX, Vec::new())),
        })
    }

    pub fn is_empty(&self) -> bool {
        self.servers.is_empty()
    }

    /// Starts every enabled server that is not running (a failed one only after
    /// [`RETRY_AFTER`]), without waiting.
    pub fn start(&self) {
        for server in &self.servers {
            let due = match &*lock(&server.state) {
                State::Idle => true,
                State::Failed { at, .. } => at.elapsed() >= RETRY_AFTER,
                State::Ready(connection) => connection.is_closed(),
                State::Disabled | State::Starting { .. } => false,
            };
            if due {
                server.spawn_start();
            }
        }
    }

    /// Starts what is due, then waits until no server that started less than [`MCP_WAIT`] ago
    /// is still starting.
    pub async fn settle(&self) {
        self.start();
        let mut changes = self.changes.subscribe();
        loop {
            let deadline = self
                .servers
                .iter()
                .filter_map(|s| match &*lock(&s.state) {
                    State::Starting { since } => Some(*since + MCP_WAIT),
                    _ => None,
                })
                .filter(|deadline| *deadline > Instant::now())
                .max();
            let Some(deadline) = deadline else { return };
            let waited = tokio::time::timeout_at(deadline.into(), changes.changed()).await;
            if !matches!(waited, Ok(Ok(()))) {
                return;
            }
        }
    }

    /// Starts what is due, then waits until every enabled server has started or failed, or
    /// `within` has passed (`cairn mcp status`, tests).
    pub async fn wait_started(&self, within: Duration) {
        self.start();
        let deadline = tokio::time::Instant::now() + within;
        let mut changes = self.changes.subscribe();
        while self
            .servers
            .iter()
            .any(|s| matches!(*lock(&s.state), State::Idle | State::Starting { .. }))
        {
            if !matches!(
                tokio::time::timeout_at(deadline, changes.changed()).await,
                Ok(Ok(()))
            ) {
                return;
            }
        }
    }

    /// Stops server `name` (when it runs) and starts it again, without waiting; false when no
    /// enabled server has that name.
    pub fn restart(&self, name: &str) -> bool {
        let Some(server) = self.servers.iter().find(|s| s.name == name) else {
            return false;
        };
        match &*lock(&server.state) {
            State::Disabled => return false,
            State::Starting { .. } => return true,
            _ => {}
        }
        // Dropping the connection stops the process.
        server.set(State::Idle);
        server.spawn_start();
        true
    }

    /// The instructions of every running server that gave some, as `(server, text)`.
    pub fn instructions(&self) -> Vec<(String, String)> {
        self.servers
            .iter()
            .filter_map(|server| match &*lock(&server.state) {
                State::Ready(c) => c
                    .instructions()
                    .map(|text| (server.name.clone(), text.to_owned())),
                _ => None,
            })
            .collect()
    }

    /// Every server's state, tools and last error, in name order.
    pub fn statuses(&self) -> Vec<ServerStatus> {
        let tools = self.offered();
        self.servers
            .iter()
            .map(|server| {
                let (state, error) = match &*lock(&server.state) {
                    State::Disabled => (ServerState::Disabled, None),
                    State::Idle => (ServerState::Idle, None),
                    State::Starting { .. } => (ServerState::Starting, None),
                    State::Ready(c) if c.is_closed() => (
                        ServerState::Failed,
                        Some(format!("it stopped; {}", c.stderr_tail())),
                    ),
                    State::Ready(_) => (ServerState::Ready, None),
                    State::Failed { error, .. } => (ServerState::Failed, Some(error.clone())),
                };
                ServerStatus {
                    name: server.name.clone(),
                    state,
                    tools: tools
                        .iter()
                        .filter(|(of, _)| *of == server.name)
                        .map(|(_, tool)| tool.name().to_owned())
                        .collect(),
                    error,
                }
            })
            .collect()
    }

    /// The tools offered now: those of every server that has started once.
    fn current_tools(&self) -> Vec<Arc<dyn Tool>> {
        self.offered().into_iter().map(|(_, tool)| tool).collect()
    }

    /// The tools offered now with their servers' names, built again only after a change.
    fn offered(&self) -> Vec<Offered> {
        let generation = *self.changes.borrow();
        let mut cached = lock(&self.tools);
        if cached.0 == generation {
            return cached.1.clone();
        }
        let mut offered: Vec<(Arc<Server>, RemoteTool)> = Vec::new();
        for server in &self.servers {
            if matches!(*lock(&server.state), State::Disabled) {
                continue;
            }
            for tool in lock(&server.known).iter() {
                if server.config.offers(&tool.name) {
                    offered.push((server.clone(), tool.clone()));
                }
            }
        }
        let pairs: Vec<(&str, &str)> = offered
            .iter()
            .map(|(s, t)| (s.name.as_str(), t.name.as_str()))
            .collect();
        let names = exposed_names(&pairs);
        let tools: Vec<Offered> = offered
            .into_iter()
            .zip(names)
            .map(|((server, remote), exposed)| {
                let name = server.name.clone();
                (
                    name,
                    Arc::new(McpTool::new(server, remote, exposed)) as Arc<dyn Tool>,
                )
            })
            .collect();
        *cached = (generation, tools.clone());
        tools
    }
}

/// The hub as a source of tools for the agent's toolbox.
pub struct HubTools(pub Arc<McpHub>);

impl ToolSource for HubTools {
    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        self.0.current_tools()
    }

    fn settle(&self) -> BoxFuture<'_, ()> {
        Box::pin(self.0.settle())
    }

    fn instructions(&self) -> Vec<(String, String)> {
        self.0.instructions()
    }
}

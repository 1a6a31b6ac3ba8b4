//! The configured MCP servers and their state: started when a turn first offers tools (the turn
//! waits at most [`MCP_WAIT`] for them), their tools offered while they run, a failed one tried
//! again after [`RETRY_AFTER`] or when one of its tools is called, and all of them stopped when
//! the hub is dropped (their processes are killed with it).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use cairn_config::{McpServerConfig, McpTransport};
use cairn_tools::{BoxFuture, Tool, ToolSource};
use tokio::sync::watch;

use crate::tool::McpTool;
use crate::{exposed_names, Connection, Error, RemoteTool};

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

enum State {
    Disabled,
    Idle,
    Starting { since: Instant },
    Ready(Arc<dyn Connection>),
    Failed { error: String, at: Instant },
}

/// One configured server: its config, its state, the tools it last listed, and whether the person
/// has let one of its calls run (shared by all its tools for the hub's life).
pub(crate) struct Server {
    pub(crate) name: String,
    pub(crate) config: McpServerConfig,
    state: Mutex<State>,
    /// The tools of its last successful start (kept while it is down, so that calling one
    /// restarts it).
    known: Mutex<Vec<RemoteTool>>,
    /// A call of this server has run (the runtime runs one only once the person approved it, or
    /// under yolo): from then on its `readOnlyHint` tools run without asking. Kept across
    /// restarts, for the hub's life.
    trusted: AtomicBool,
    /// Bumped on every change of state.
    changes: Arc<watch::Sender<u64>>,
    connector: Connector,
}

/// Connects a server; the real one is `rmcp_client::connect`.
pub(crate) type Connector = Arc<
    dyn Fn(String, McpServerConfig) -> BoxFuture<'static, Result<Arc<dyn Connection>, Error>>
        + Send
        + Sync,
>;

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
                Arc::new(Server {
                    name: name.clone(),
                    config: config.clone(),
                    state: Mutex::new(if config.enabled {
                        State::Idle
                    } else {
                        State::Disabled
                    }),
                    known: Mutex::default(),
                    trusted: AtomicBool::new(false),
                    changes: changes.clone(),
                    connector: connector.clone(),
                })
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

impl Server {
    fn set(&self, state: State) {
        *lock(&self.state) = state;
        self.changes.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// Whether a call of this server has run, so that its read-only tools need not ask.
    pub(crate) fn trusted(&self) -> bool {
        self.trusted.load(Ordering::Acquire)
    }

    /// A call of this server is running: the person let it (or yolo is on).
    pub(crate) fn trust(&self) {
        self.trusted.store(true, Ordering::Release);
    }

    /// `connection` died (a call found it closed): the next call starts the server again.
    pub(crate) fn stopped(&self, connection: &Arc<dyn Connection>, why: &str) {
        let current = matches!(&*lock(&self.state), State::Ready(c) if Arc::ptr_eq(c, connection));
        if current {
            self.set(State::Failed {
                error: format!("it stopped: {why}"),
                at: Instant::now(),
            });
        }
    }

    fn spawn_start(self: &Arc<Self>) {
        self.set(State::Starting {
            since: Instant::now(),
        });
        let server = self.clone();
        tokio::spawn(async move {
            let started = (server.connector)(server.name.clone(), server.config.clone()).await;
            match started {
                Ok(connection) => {
                    *lock(&server.known) = connection.tools().to_vec();
                    server.set(State::Ready(connection));
                }
                Err(e) => {
                    let error = scrub(&e.to_string(), &server.config);
                    tracing::warn!(server = %server.name, "MCP server failed: {error}");
                    server.set(State::Failed {
                        error,
                        at: Instant::now(),
                    });
                }
            }
        });
    }

    /// The server's connection, restarting it first when it has stopped or failed (waiting at
    /// most its `startup_timeout`).
    pub(crate) async fn connection(self: &Arc<Self>) -> Result<Arc<dyn Connection>, String> {
        let server = self;
        let mut changes = self.changes.subscribe();
        let deadline = Instant::now() + server.config.startup_timeout;
        loop {
            let restart = match &*lock(&server.state) {
                State::Ready(c) if !c.is_closed() => return Ok(c.clone()),
                State::Ready(_) | State::Failed { .. } | State::Idle => true,
                State::Starting { .. } => false,
                State::Disabled => return Err("it is disabled in the config".to_owned()),
            };
            if restart {
                server.spawn_start();
            }
            let waited = tokio::time::timeout_at(deadline.into(), changes.changed()).await;
            if !matches!(waited, Ok(Ok(()))) {
                return Err(match &*lock(&server.state) {
                    State::Failed { error, .. } => error.clone(),
                    _ => format!(
                        "it did not start within {} s",
                        server.config.startup_timeout.as_secs()
                    ),
                });
            }
            if let State::Failed { error, .. } = &*lock(&server.state) {
                return Err(error.clone());
            }
        }
    }
}

/// `error` without the server's secrets, for Settings and logs: its header and variable values,
/// and its address's query and credentials (an HTTP client's errors name the address).
fn scrub(error: &str, config: &McpServerConfig) -> String {
    let mut text = error.to_owned();
    let (secrets, url) = match &config.transport {
        McpTransport::Stdio { env, .. } => (env, None),
        McpTransport::StreamableHttp { url, headers } | McpTransport::Sse { url, headers } => {
            (headers, Some(url))
        }
    };
    if let Some(url) = url.filter(|u| u.contains('?') || u.contains('@')) {
        let (scheme, rest) = url.split_once("://").unwrap_or(("", url.as_str()));
        let rest = rest.split('?').next().unwrap_or_default();
        let rest = rest.rsplit_once('@').map_or(rest, |(_, host)| host);
        text = text.replace(url.as_str(), &format!("{scheme}://{rest}"));
    }
    for secret in secrets
        .values()
        .map(|s| s.expose())
        .filter(|s| s.len() >= 4)
    {
        text = text.replace(secret, "<redacted>");
    }
    text
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

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;
    use cairn_config::Secret;

    fn http(url: &str, header: &str) -> McpServerConfig {
        McpServerConfig {
            transport: McpTransport::StreamableHttp {
                url: url.to_owned(),
                headers: BTreeMap::from([(
                    "Authorization".to_owned(),
                    Secret::new(header.to_owned()),
                )]),
            },
            enabled: true,
            startup_timeout: Duration::from_secs(1),
            tool_timeout: Duration::from_secs(1),
            enabled_tools: vec!["*".into()],
            disabled_tools: Vec::new(),
        }
    }

    #[test]
    fn errors_lose_the_servers_secrets() {
        let config = http(
            "https://ada:pw@docs.example/mcp?key=s3cret",
            "Bearer tok-1234",
        );
        let error = "error sending request for url (https://ada:pw@docs.example/mcp?key=s3cret): \
                     401 with Bearer tok-1234";
        assert_eq!(
            scrub(error, &config),
            "error sending request for url (https://docs.example/mcp): 401 with <redacted>"
        );
        let plain = http("http://127.0.0.1:9/mcp", "x");
        assert_eq!(scrub("refused", &plain), "refused");
    }
}

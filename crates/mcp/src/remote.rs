//! One configured MCP server as the hub holds it: its state, the tools it last listed, whether
//! the person has let one of its calls run, starting it (again) on demand, and its errors without
//! its secrets. The hub and each of its tools share one.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use cairn_config::{McpServerConfig, McpTransport};
use cairn_tools::BoxFuture;
use tokio::sync::watch;

use crate::{Connection, Error, RemoteTool};

/// Where a server is in its life; the hub reads it for its statuses and its tools.
pub(crate) enum State {
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
    pub(crate) state: Mutex<State>,
    /// The tools of its last successful start (kept while it is down, so that calling one
    /// restarts it).
    pub(crate) known: Mutex<Vec<RemoteTool>>,
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

impl Server {
    /// Server `name` of the hub whose changes are counted by `changes`, not started yet.
    pub(crate) fn new(
        name: String,
        config: McpServerConfig,
        changes: Arc<watch::Sender<u64>>,
        connector: Connector,
    ) -> Self {
        Self {
            name,
            state: Mutex::new(if config.enabled {
                State::Idle
            } else {
                State::Disabled
            }),
            config,
            known: Mutex::default(),
            trusted: AtomicBool::new(false),
            changes,
            connector,
        }
    }

    /// Moves to `state` and wakes whoever waits on the hub's changes.
    pub(crate) fn set(&self, state: State) {
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

    pub(crate) fn spawn_start(self: &Arc<Self>) {
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

pub(crate) fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::time::Duration;

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

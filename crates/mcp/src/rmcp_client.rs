//! [`Connection`] over the official SDK: a child process on stdio, a streamable HTTP endpoint, or
//! the older SSE transport (`sse`).
//! The child starts with the person's own environment (PATH, HOME…) plus the configured `env`,
//! in its own process group so that it and whatever it spawned (`npx` → `node`) go together; its
//! stderr is kept as a tail for error reports.

use std::collections::{HashMap, VecDeque};
use std::process::Stdio;
use std::sync::{Arc, Mutex};

use cairn_config::{McpServerConfig, McpTransport};
use cairn_tools::BoxFuture;
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation, ProtocolVersion,
};
use rmcp::service::RunningService;
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{RoleClient, ServiceExt};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::sse::SseTransport;
use crate::{Connection, Error, RemoteTool};

/// The longest message a stdio server may send (a tool result of 50 MB passes, and is cut for
/// the model later); a longer one is dropped by the transport.
const MAX_MESSAGE: usize = 64 * 1024 * 1024;

/// Lines of a server's stderr kept for reports.
const STDERR_LINES: usize = 20;

struct RmcpConnection {
    service: RunningService<RoleClient, ClientConfig>,
    tools: Vec<RemoteTool>,
    instructions: Option<String>,
    stderr: Arc<Mutex<VecDeque<String>>>,
    /// The server's process group, killed with the connection.
    _child: Option<ChildGroup>,
}

/// A stdio server's process; dropping it kills its whole group (`npx` and the `node` it ran).
struct ChildGroup(tokio::process::Child);

impl Drop for ChildGroup {
    fn drop(&mut self) {
        #[cfg(unix)]
        if let Some(pid) = self
            .0
            .id()
            .and_then(|id| i32::try_from(id).ok())
            .and_then(rustix::process::Pid::from_raw)
        {
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        }
    }
}

/// How Cairn introduces itself: by name, with the newest protocol version that still opens with
/// `initialize` (the handshake every transport here uses, and the one servers in the field speak).
fn client_config() -> ClientConfig {
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("cairn", env!("CARGO_PKG_VERSION")),
    )
    .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
}

/// Starts the server `name` and completes the handshake and the tool listing within its
/// `startup_timeout`.
pub async fn connect(name: &str, config: &McpServerConfig) -> Result<Arc<dyn Connection>, Error> {
    let stderr = Arc::new(Mutex::new(VecDeque::new()));
    let mut child = None;
    let started = tokio::time::timeout(config.startup_timeout, async {
        let service = match &config.transport {
            McpTransport::Stdio {
                command,
                args,
                env,
                cwd,
            } => {
                let program = command;
                let mut command = tokio::process::Command::new(program);
                command
                    .args(args)
                    .envs(env.iter().map(|(k, v)| (k, v.expose())))
                    .stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .kill_on_drop(true);
                if let Some(cwd) = cwd {
                    command.current_dir(cwd);
                }
                #[cfg(unix)]
                command.process_group(0);
                let mut spawned = command.spawn().map_err(|e| {
                    Error::Start(format!("cannot run the server's command {program}: {e}"))
                })?;
                let (Some(stdout), Some(stdin)) = (spawned.stdout.take(), spawned.stdin.take())
                else {
                    return Err(Error::Start(
                        "the server's pipes could not be opened".to_owned(),
                    ));
                };
                if let Some(child_stderr) = spawned.stderr.take() {
                    keep_tail(child_stderr, stderr.clone());
                }
                child = Some(ChildGroup(spawned));
                let transport = AsyncRwTransport::<RoleClient, _, _>::new_client(stdout, stdin)
                    .with_max_line_length(MAX_MESSAGE);
                client_config()
                    .serve(transport)
                    .await
                    .map_err(|e| Error::Start(format!("the handshake failed: {e}")))?
            }
            McpTransport::StreamableHttp { url, headers } => {
                // reqwest is built without a default TLS provider; ring is the one linked in.
                let _ = rustls::crypto::ring::default_provider().install_default();
                let mut transport = StreamableHttpClientTransportConfig::with_uri(url.as_str());
                transport.custom_headers = header_map(headers)?;
                client_config()
                    .serve(StreamableHttpClientTransport::from_config(transport))
                    .await
                    .map_err(|e| Error::Start(format!("the handshake failed: {e}")))?
            }
            McpTransport::Sse { url, headers } => {
                let transport =
                    SseTransport::connect(url, header_map(headers)?.into_iter().collect()).await?;
                client_config()
                    .serve(transport)
                    .await
                    .map_err(|e| Error::Start(format!("the handshake failed: {e}")))?
            }
        };
        let listed = service
            .list_all_tools()
            .await
            .map_err(|e| Error::Start(format!("listing its tools failed: {e}")))?;
        Ok::<_, Error>((service, listed))
    })
    .await;
    let tail = || tail_text(&stderr);
    let (service, listed) = match started {
        Ok(Ok(started)) => started,
        Ok(Err(e)) => return Err(with_tail(e, &last_words(&stderr).await)),
        Err(_) => {
            return Err(with_tail(
                Error::Start(format!(
                    "it did not start within {} s",
                    config.startup_timeout.as_secs()
                )),
                &tail(),
            ))
        }
    };
    let tools = listed
        .into_iter()
        .map(|tool| {
            let read_only = tool
                .annotations
                .as_ref()
                .and_then(|a| a.read_only_hint)
                .unwrap_or(false);
            RemoteTool {
                name: tool.name.to_string(),
                description: tool.description.map(|d| d.to_string()).unwrap_or_default(),
                input_schema: Value::Object((*tool.input_schema).clone()),
                read_only,
            }
        })
        .collect();
    let instructions = service
        .peer_info()
        .and_then(|info| info.instructions.clone())
        .filter(|text| !text.trim().is_empty());
    tracing::info!(server = name, "MCP server started");
    Ok(Arc::new(RmcpConnection {
        service,
        tools,
        instructions,
        stderr,
        _child: child,
    }))
}

impl Connection for RmcpConnection {
    fn tools(&self) -> &[RemoteTool] {
        &self.tools
    }

    fn instructions(&self) -> Option<&str> {
        self.instructions.as_deref()
    }

    fn call(&self, tool: &str, arguments: Value) -> BoxFuture<'_, Result<Value, Error>> {
        let mut params = CallToolRequestParams::new(tool.to_owned());
        params.arguments = match arguments {
            Value::Object(map) => Some(map),
            Value::Null => None,
            other => {
                return Box::pin(async move {
                    Err(Error::Call(format!(
                        "the arguments must be a JSON object, got {other}"
                    )))
                })
            }
        };
        Box::pin(async move {
            match self.service.call_tool(params).await {
                Ok(result) => serde_json::to_value(&result)
                    .map_err(|e| Error::Call(format!("an unreadable result: {e}"))),
                Err(rmcp::ServiceError::McpError(e)) => Err(Error::Call(e.message.to_string())),
                Err(
                    e
                    @ (rmcp::ServiceError::TransportClosed | rmcp::ServiceError::TransportSend(_)),
                ) => {
                    let tail = last_words(&self.stderr).await;
                    Err(Error::Closed(if tail.trim().is_empty() {
                        e.to_string()
                    } else {
                        format!("its stderr ended with:\n{tail}")
                    }))
                }
                Err(e) if self.service.is_closed() => Err(Error::Closed(e.to_string())),
                Err(e) => Err(Error::Call(e.to_string())),
            }
        })
    }

    fn is_closed(&self) -> bool {
        self.service.is_closed()
    }

    fn stderr_tail(&self) -> String {
        tail_text(&self.stderr)
    }
}

fn header_map(
    headers: &std::collections::BTreeMap<String, cairn_config::Secret>,
) -> Result<HashMap<http::HeaderName, http::HeaderValue>, Error> {
    headers
        .iter()
        .map(|(name, value)| {
            let header = http::HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| Error::Start(format!("{name:?} is not a valid header name")))?;
            let value = http::HeaderValue::from_str(value.expose())
                .map_err(|_| Error::Start(format!("the value of header {name} is not valid")))?;
            Ok((header, value))
        })
        .collect()
}

/// Reads the child's stderr line by line into `tail` (the last [`STDERR_LINES`]).
fn keep_tail(stderr: tokio::process::ChildStderr, tail: Arc<Mutex<VecDeque<String>>>) {
    tokio::spawn(async move {
        let mut lines = BufReader::new(stderr).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            if let Ok(mut tail) = tail.lock() {
                if tail.len() == STDERR_LINES {
                    tail.pop_front();
                }
                tail.push_back(line.chars().take(500).collect());
            }
        }
    });
}

/// The stderr tail of a server that has just gone: its last words are still on their way
/// through the pipe, so they get a moment to arrive.
async fn last_words(tail: &Mutex<VecDeque<String>>) -> String {
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    tail_text(tail)
}

fn tail_text(tail: &Mutex<VecDeque<String>>) -> String {
    tail.lock()
        .map(|t| t.iter().cloned().collect::<Vec<_>>().join("\n"))
        .unwrap_or_default()
}

/// `error` with the server's last stderr lines added.
fn with_tail(error: Error, tail: &str) -> Error {
    if tail.trim().is_empty() {
        return error;
    }
    let add = |text: String| format!("{text}; its stderr ended with:\n{tail}");
    match error {
        Error::Start(t) => Error::Start(add(t)),
        other => other,
    }
}

//! JSON-RPC over a child's stdio, framed with `Content-Length` headers: requests matched to their
//! answers by id, the server's own requests answered (configuration, registrations, workspace
//! folders), and its `publishDiagnostics` kept for the tool to read.

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::{oneshot, watch};

use crate::LspError;

/// Lines of the server's stderr kept to explain an exit.
const STDERR_TAIL: usize = 5;
/// How long a just-started server is given to report the work its first document starts.
const GRACE: Duration = Duration::from_millis(500);

/// Diagnostics the server published for one document.
#[derive(Debug, Clone)]
pub(crate) struct Publication {
    pub diagnostics: Vec<lsp_types::Diagnostic>,
    /// Which publication this was, counting all of the server's.
    pub seq: u64,
}

type Pending = HashMap<i64, oneshot::Sender<Result<Value, LspError>>>;

/// What the reader task and the callers share.
#[derive(Default)]
struct Shared {
    pending: Mutex<Pending>,
    /// Set when the server's output ended: why, for every later request.
    exited: Mutex<Option<String>>,
    stderr: Mutex<VecDeque<String>>,
    /// By document URI.
    diagnostics: Mutex<HashMap<String, Publication>>,
    /// Methods the server registered dynamically (`textDocument/diagnostic`).
    registered: Mutex<Vec<String>>,
    /// Tokens of the work the server reports in progress (loading a project, analysing).
    working: Mutex<std::collections::HashSet<String>>,
}

/// A running server process and the conversation with it.
pub(crate) struct Connection {
    /// Whole messages for the writer task: a call stopped mid-send never leaves half of one.
    outbox: Outbox,
    shared: Arc<Shared>,
    child: tokio::sync::Mutex<Child>,
    next_id: AtomicI64,
    /// Counts publications; changes wake whoever waits for diagnostics.
    published: watch::Receiver<u64>,
    /// How many pieces of work the server reports in progress.
    working: watch::Receiver<usize>,
    timeout: Duration,
}

impl Connection {
    /// Starts `command` in `root`; `root_uri` answers `workspace/workspaceFolders`.
    pub(crate) fn spawn(
        config: &cairn_config::LspServerConfig,
        root: PathBuf,
        root_uri: String,
        timeout: Duration,
    ) -> Result<Self, LspError> {
        let mut child = Command::new(&config.command)
            .args(&config.args)
            .envs(&config.env)
            .current_dir(&root)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| LspError::Spawn {
                command: config.command.clone(),
                message: e.to_string(),
            })?;
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(LspError::Spawn {
                command: config.command.clone(),
                message: "no stdio".into(),
            });
        };
        let outbox = spawn_writer(stdin);
        let shared = Arc::new(Shared::default());
        let (published_tx, published) = watch::channel(0);
        let (working_tx, working) = watch::channel(0);
        tokio::spawn(read_stderr(stderr, shared.clone(), config.name.clone()));
        tokio::spawn(read_messages(
            stdout,
            Reader {
                shared: shared.clone(),
                outbox: outbox.clone(),
                published: published_tx,
                working: working_tx,
                root_uri,
            },
        ));
        Ok(Self {
            outbox,
            shared,
            child: tokio::sync::Mutex::new(child),
            next_id: AtomicI64::new(1),
            published,
            working,
            timeout,
        })
    }

    /// Why the server is gone, when it is.
    pub(crate) fn exited(&self) -> Option<String> {
        self.shared.exited.lock().ok().and_then(|e| e.clone())
    }

    /// Sends a request and waits (up to the timeout) for its answer.
    pub(crate) async fn request(&self, method: &str, params: Value) -> Result<Value, LspError> {
        self.request_within(method, params, self.timeout).await
    }

    pub(crate) async fn request_within(
        &self,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<Value, LspError> {
        if let Some(reason) = self.exited() {
            return Err(LspError::Exited(reason));
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        if let Ok(mut pending) = self.shared.pending.lock() {
            pending.insert(id, tx);
        }
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        // Forgotten however the wait ends (a failed send, a timeout, a stopped call).
        let _forget = Forget(&self.shared, id);
        self.send(&message).await?;
        match tokio::time::timeout(timeout, rx).await {
            Ok(Ok(answer)) => answer,
            Ok(Err(_)) => Err(LspError::Exited(self.exited().unwrap_or_default())),
            Err(_) => {
                let _ = self.notify("$/cancelRequest", json!({"id": id})).await;
                Err(LspError::Timeout(timeout))
            }
        }
    }

    pub(crate) async fn notify(&self, method: &str, params: Value) -> Result<(), LspError> {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}))
            .await
    }

    async fn send(&self, message: &Value) -> Result<(), LspError> {
        post(&self.outbox, message)
    }

    /// The last publication for the document at `path`.
    pub(crate) fn publication(&self, path: &std::path::Path) -> Option<Publication> {
        let key = path.display().to_string();
        self.shared
            .diagnostics
            .lock()
            .ok()
            .and_then(|d| d.get(&key).cloned())
    }

    /// A receiver that changes with every publication.
    pub(crate) fn publications(&self) -> watch::Receiver<u64> {
        self.published.clone()
    }

    /// Waits until the server reports no work in progress (a project loading makes answers
    /// partial), at most `max`; with `grace`, first gives work that is about to begin (after the
    /// first document opened) a moment to be reported.
    pub(crate) async fn settle(&self, grace: bool, max: Duration) {
        let mut working = self.working.clone();
        let until = tokio::time::Instant::now() + max;
        if grace {
            let _ = tokio::time::timeout(GRACE, working.wait_for(|n| *n > 0)).await;
        }
        let _ = tokio::time::timeout_at(until, working.wait_for(|n| *n == 0)).await;
    }

    /// Whether the server registered `method` dynamically.
    pub(crate) fn registered(&self, method: &str) -> bool {
        self.shared
            .registered
            .lock()
            .is_ok_and(|r| r.iter().any(|m| m == method))
    }

    /// Ends the process: `shutdown` and `exit` when it still listens, then a kill.
    pub(crate) async fn stop(&self) {
        if self.exited().is_none() {
            let quick = Duration::from_secs(2);
            if self
                .request_within("shutdown", Value::Null, quick)
                .await
                .is_ok()
            {
                let _ = self.notify("exit", Value::Null).await;
            }
        }
        let mut child = self.child.lock().await;
        if tokio::time::timeout(Duration::from_secs(1), child.wait())
            .await
            .is_err()
        {
            let _ = child.kill().await;
        }
    }
}

type Outbox = tokio::sync::mpsc::UnboundedSender<Vec<u8>>;

/// The task that writes framed messages to the server, whole, in order, until it is gone.
fn spawn_writer(mut stdin: ChildStdin) -> Outbox {
    let (outbox, mut messages) = tokio::sync::mpsc::unbounded_channel::<Vec<u8>>();
    tokio::spawn(async move {
        while let Some(message) = messages.recv().await {
            if stdin.write_all(&message).await.is_err() || stdin.flush().await.is_err() {
                break;
            }
        }
    });
    outbox
}

/// Queues `message` for the server.
fn post(outbox: &Outbox, message: &Value) -> Result<(), LspError> {
    let body = message.to_string();
    let framed = format!("Content-Length: {}\r\n\r\n{body}", body.len());
    outbox
        .send(framed.into_bytes())
        .map_err(|_| LspError::Io("the server's input is closed".into()))
}

struct Reader {
    shared: Arc<Shared>,
    outbox: Outbox,
    published: watch::Sender<u64>,
    working: watch::Sender<usize>,
    root_uri: String,
}

/// Reads messages until the output ends, then fails every request still waiting.
async fn read_messages(stdout: impl AsyncRead + Unpin, reader: Reader) {
    let mut stdout = BufReader::new(stdout);
    let reason = loop {
        match read_message(&mut stdout).await {
            Ok(Some(message)) => reader.handle(message).await,
            Ok(None) => break String::new(),
            Err(e) => break format!(" ({e})"),
        }
    };
    // Give stderr a moment to deliver the server's last words.
    tokio::time::sleep(Duration::from_millis(50)).await;
    let tail = reader
        .shared
        .stderr
        .lock()
        .map(|t| t.iter().cloned().collect::<Vec<_>>().join(" · "))
        .unwrap_or_default();
    let reason = if tail.is_empty() || !reason.is_empty() {
        reason
    } else {
        format!(": {tail}")
    };
    if let Ok(mut exited) = reader.shared.exited.lock() {
        *exited = Some(reason.clone());
    }
    let pending: Vec<_> = reader
        .shared
        .pending
        .lock()
        .map(|mut p| p.drain().collect())
        .unwrap_or_default();
    for (_, tx) in pending {
        let _ = tx.send(Err(LspError::Exited(reason.clone())));
    }
}

/// One framed message; `None` at the end of the stream.
async fn read_message(
    stdout: &mut BufReader<impl AsyncRead + Unpin>,
) -> Result<Option<Value>, String> {
    let mut length = None;
    loop {
        let mut line = String::new();
        if stdout
            .read_line(&mut line)
            .await
            .map_err(|e| e.to_string())?
            == 0
        {
            return Ok(None);
        }
        let line = line.trim_end();
        if line.is_empty() {
            if length.is_some() {
                break;
            }
            continue;
        }
        if let Some((name, value)) = line.split_once(':') {
            if name.trim().eq_ignore_ascii_case("content-length") {
                length = value.trim().parse::<usize>().ok();
            }
        }
    }
    let length = length.unwrap_or(0);
    let mut body = vec![0; length];
    stdout
        .read_exact(&mut body)
        .await
        .map_err(|e| e.to_string())?;
    serde_json::from_slice(&body)
        .map(Some)
        .map_err(|e| format!("unreadable message: {e}"))
}

impl Reader {
    async fn handle(&self, message: Value) {
        let method = message.get("method").and_then(Value::as_str);
        let id = message.get("id").cloned();
        match (method, id) {
            (None, Some(id)) => self.answered(&id, &message),
            (Some(method), Some(id)) => {
                let reply = self.answer(method, message.get("params"));
                let message = match reply {
                    Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
                    Err(code) => json!({"jsonrpc": "2.0", "id": id, "error": {
                        "code": code, "message": format!("{method} is not supported by Cairn")}}),
                };
                if let Err(e) = post(&self.outbox, &message) {
                    tracing::debug!("lsp: cannot answer {method}: {e}");
                }
            }
            (Some("$/progress"), None) => self.progress(message.get("params")),
            (Some("textDocument/publishDiagnostics"), None) => {
                self.published(message.get("params").cloned().unwrap_or_default());
            }
            _ => {}
        }
    }

    fn answered(&self, id: &Value, message: &Value) {
        let Some(id) = id.as_i64() else { return };
        let Some(tx) = self
            .shared
            .pending
            .lock()
            .ok()
            .and_then(|mut p| p.remove(&id))
        else {
            return;
        };
        let answer = match message.get("error") {
            Some(error) => Err(LspError::Rpc {
                code: error.get("code").and_then(Value::as_i64).unwrap_or(0),
                message: error
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("no message")
                    .to_owned(),
            }),
            None => Ok(message.get("result").cloned().unwrap_or(Value::Null)),
        };
        let _ = tx.send(answer);
    }

    /// The answer to a request from the server, or the JSON-RPC error code.
    fn answer(&self, method: &str, params: Option<&Value>) -> Result<Value, i64> {
        match method {
            "workspace/configuration" => {
                let items = params
                    .and_then(|p| p.get("items"))
                    .and_then(Value::as_array)
                    .map_or(0, Vec::len);
                // Nothing configured: each server uses its defaults.
                Ok(Value::Array(vec![Value::Null; items]))
            }
            "client/registerCapability" => {
                let methods = params
                    .and_then(|p| p.get("registrations"))
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|r| r.get("method").and_then(Value::as_str));
                if let Ok(mut registered) = self.shared.registered.lock() {
                    registered.extend(methods.map(str::to_owned));
                }
                Ok(Value::Null)
            }
            "workspace/workspaceFolders" => Ok(json!([{"uri": self.root_uri, "name": "project"}])),
            "client/unregisterCapability"
            | "window/workDoneProgress/create"
            | "window/showMessageRequest"
            | "workspace/semanticTokens/refresh"
            | "workspace/inlayHint/refresh"
            | "workspace/codeLens/refresh"
            | "workspace/diagnostic/refresh" => Ok(Value::Null),
            "workspace/applyEdit" => Ok(json!({"applied": false})),
            _ => Err(-32601),
        }
    }

    /// `$/progress`: work begun or ended.
    fn progress(&self, params: Option<&Value>) {
        let Some(params) = params else { return };
        let token = match params.get("token") {
            Some(Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
            None => return,
        };
        let kind = params.pointer("/value/kind").and_then(Value::as_str);
        let Ok(mut working) = self.shared.working.lock() else {
            return;
        };
        match kind {
            Some("begin") => {
                working.insert(token);
            }
            Some("end") => {
                working.remove(&token);
            }
            _ => return,
        }
        self.working.send_replace(working.len());
    }

    fn published(&self, params: Value) {
        let Ok(params) = serde_json::from_value::<lsp_types::PublishDiagnosticsParams>(params)
        else {
            return;
        };
        let seq = *self.published.borrow() + 1;
        // By path: servers spell URIs differently (which characters they escape).
        let key = crate::text::path_of(params.uri.as_str()).map_or_else(
            || params.uri.as_str().to_owned(),
            |p| p.display().to_string(),
        );
        if let Ok(mut all) = self.shared.diagnostics.lock() {
            all.insert(
                key,
                Publication {
                    diagnostics: params.diagnostics,
                    seq,
                },
            );
        }
        self.published.send_replace(seq);
    }
}

async fn read_stderr(stderr: impl AsyncRead + Unpin, shared: Arc<Shared>, name: String) {
    let mut lines = BufReader::new(stderr).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        tracing::debug!("lsp {name}: {line}");
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        if let Ok(mut tail) = shared.stderr.lock() {
            if tail.len() == STDERR_TAIL {
                tail.pop_front();
            }
            tail.push_back(line.chars().take(300).collect());
        }
    }
}

/// Removes a request's waiting slot when dropped.
struct Forget<'a>(&'a Shared, i64);

impl Drop for Forget<'_> {
    fn drop(&mut self) {
        if let Ok(mut pending) = self.0.pending.lock() {
            pending.remove(&self.1);
        }
    }
}

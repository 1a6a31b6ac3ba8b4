//! Cairn's own models, run by the model host (`cairn-model-host`, from the cairn-local crate) in a
//! child process that this module starts on first use and talks to in JSON lines. The host owns
//! llama.cpp, so a model that crashes it cannot take the app down (the next request starts a new
//! host), an unloaded model gives all its memory back, and llama.cpp's copy of ggml never meets
//! the one whisper links into the app. One host per process serves every request, one at a time.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;

use crate::{ChatRequest, Provider, ProviderError, StreamEvent};

/// The model host's file name, looked for beside the running program (or at `$CAIRN_MODEL_HOST`).
pub const HOST_PROGRAM: &str = "cairn-model-host";
/// Where the host program comes from, for the messages that say it is missing.
const HOST_INSTALLED: &str =
    "it is installed with Cairn, beside cairn-desktop and cairn, or on the PATH (./run app builds it)";

/// How the host runs a model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LocalOptions {
    /// The context window in tokens (capped at what the model was trained with).
    pub context: u32,
    /// Threads; 0 for one per core.
    pub threads: i32,
    /// 0 for greedy decoding (the default: the same question gets the same answer).
    pub temperature: f32,
    pub seed: u32,
    /// The model is unloaded (and a host process ends) after this long without a request.
    pub idle: Duration,
    /// Keep the evaluated prefix between requests (off only to measure what it saves).
    pub reuse_prefix: bool,
    /// Where the evaluated system prompt and tools are kept between processes, so a new host
    /// (a CLI turn, the first request after idle) does not read them again; `None` for nowhere.
    #[serde(default)]
    pub prefix_cache: Option<PathBuf>,
    /// Hold a tool call to the offered tools' schemas while it is written (llama.cpp grammars),
    /// for models whose template writes calls in tags; off only to measure what it brings.
    #[serde(default = "constrained")]
    pub constrain_calls: bool,
}

fn constrained() -> bool {
    true
}

impl Default for LocalOptions {
    fn default() -> Self {
        Self {
            context: 8192,
            threads: 0,
            temperature: 0.0,
            seed: 42,
            idle: Duration::from_secs(300),
            reuse_prefix: true,
            prefix_cache: None,
            constrain_calls: true,
        }
    }
}

/// What one request cost.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct StepStats {
    /// Time to load the model for this request (zero when it was loaded already).
    pub load: Duration,
    pub prompt_tokens: usize,
    /// Prompt tokens whose evaluation was kept from the previous request.
    pub reused_tokens: usize,
    pub prompt_time: Duration,
    pub generated_tokens: usize,
    /// From the end of the prompt to the first generated token.
    pub first_token: Duration,
    pub generation_time: Duration,
}

/// A line to the host.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HostRequest {
    Run {
        id: u64,
        model: PathBuf,
        request: ChatRequest,
        options: LocalOptions,
    },
    Cancel {
        id: u64,
    },
}

/// A line from the host.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HostReply {
    Event {
        id: u64,
        event: StreamEvent,
    },
    Error {
        id: u64,
        message: String,
        overflow: bool,
        /// The model cannot run at all (it did not load, its runtime did not start), as opposed
        /// to this request failing. Absent from an older host's replies.
        #[serde(default)]
        unavailable: bool,
    },
    /// The model now in memory, if any.
    Loaded {
        model: Option<PathBuf>,
    },
}

/// A GGUF model run by the model host.
#[derive(Debug, Clone)]
pub struct LocalModel {
    model: PathBuf,
    options: LocalOptions,
}

impl LocalModel {
    pub fn new(model: impl Into<PathBuf>, options: LocalOptions) -> Self {
        Self {
            model: model.into(),
            options,
        }
    }
}

impl Provider for LocalModel {
    fn stream(&self, request: ChatRequest) -> mpsc::Receiver<Result<StreamEvent, ProviderError>> {
        // Room for a whole reply's pieces, so a slow reader never loses one.
        let (tx, rx) = mpsc::channel(8192);
        static NEXT: AtomicU64 = AtomicU64::new(1);
        let id = NEXT.fetch_add(1, Ordering::Relaxed);
        let line = HostRequest::Run {
            id,
            model: self.model.clone(),
            request,
            options: self.options.clone(),
        };
        // Stop the host's work when nobody reads the reply any more.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let watched = tx.clone();
            runtime.spawn(async move {
                watched.closed().await;
                host().cancel(id);
            });
        }
        host().run(id, line, tx);
        rx
    }

    fn on_device(&self) -> bool {
        true
    }
}

/// The model the host holds in memory now, if any.
pub fn loaded_model() -> Option<PathBuf> {
    host().state.lock().ok()?.loaded.clone()
}

/// Ends the host process, giving back the model's memory (it starts again on the next request);
/// returns whether a model was loaded.
pub fn unload_model() -> bool {
    host().stop()
}

type Reply = mpsc::Sender<Result<StreamEvent, ProviderError>>;

struct Running {
    child: Child,
    stdin: ChildStdin,
}

#[derive(Default)]
struct HostState {
    running: Option<Running>,
    pending: HashMap<u64, Reply>,
    loaded: Option<PathBuf>,
}

struct Host {
    state: Arc<Mutex<HostState>>,
}

fn host() -> &'static Host {
    static HOST: OnceLock<Host> = OnceLock::new();
    HOST.get_or_init(|| Host {
        state: Arc::default(),
    })
}

/// Why Cairn's own models cannot run here, when the host program is nowhere to be found: what
/// the first request would otherwise fail with, told before anyone chats.
pub fn host_problem() -> Option<String> {
    let program = host_program();
    let path = std::env::var_os("PATH");
    (!findable(&program, path.as_deref())).then(|| {
        format!(
            "its host program {} is not there; {HOST_INSTALLED}",
            program.display()
        )
    })
}

/// Whether `program` can be started: a path that is a file, or a bare name found in `path` (the
/// PATH's value).
fn findable(program: &Path, path: Option<&std::ffi::OsStr>) -> bool {
    if program.components().count() > 1 {
        return program.is_file();
    }
    path.is_some_and(|dirs| std::env::split_paths(dirs).any(|dir| dir.join(program).is_file()))
}

/// Where the host program is: `$CAIRN_MODEL_HOST`, beside this program, or on the PATH.
pub fn host_program() -> PathBuf {
    if let Some(path) = std::env::var_os("CAIRN_MODEL_HOST").filter(|p| !p.is_empty()) {
        return PathBuf::from(path);
    }
    if let Ok(exe) = std::env::current_exe() {
        for dir in exe.ancestors().skip(1).take(2) {
            let beside = dir.join(HOST_PROGRAM);
            if beside.is_file() {
                return beside;
            }
        }
    }
    PathBuf::from(HOST_PROGRAM)
}

impl Host {
    fn run(&self, id: u64, line: HostRequest, tx: Reply) {
        let Ok(mut state) = self.state.lock() else {
            return;
        };
        let text = match serde_json::to_string(&line) {
            Ok(text) => text,
            Err(e) => {
                let _ = tx.try_send(Err(ProviderError::BadResponse(e.to_string())));
                return;
            }
        };
        // A host that ended (idle, or crashed) is started again.
        let alive = state
            .running
            .as_mut()
            .is_some_and(|r| matches!(r.child.try_wait(), Ok(None)));
        if !alive {
            state.running = None;
            match self.spawn() {
                Ok(running) => state.running = Some(running),
                Err(message) => {
                    let _ = tx.try_send(Err(ProviderError::Unavailable(message)));
                    return;
                }
            }
        }
        state.pending.insert(id, tx);
        let written = state
            .running
            .as_mut()
            .map(|r| writeln!(r.stdin, "{text}").and_then(|()| r.stdin.flush()));
        if let Some(Err(e)) = written {
            if let Some(tx) = state.pending.remove(&id) {
                let _ = tx.try_send(Err(ProviderError::BadResponse(format!(
                    "the local model host did not take the request: {e}"
                ))));
            }
        }
    }

    fn cancel(&self, id: u64) {
        let Ok(mut state) = self.state.lock() else {
            return;
        };
        if state.pending.remove(&id).is_none() {
            return;
        }
        if let Some(running) = state.running.as_mut() {
            if let Ok(text) = serde_json::to_string(&HostRequest::Cancel { id }) {
                let _ = writeln!(running.stdin, "{text}").and_then(|()| running.stdin.flush());
            }
        }
    }

    fn stop(&self) -> bool {
        let Ok(mut state) = self.state.lock() else {
            return false;
        };
        let was_loaded = state.loaded.take().is_some();
        if let Some(mut running) = state.running.take() {
            let _ = running.child.kill();
            let _ = running.child.wait();
        }
        was_loaded
    }

    /// Starts the host and a thread that hands its replies to the requests waiting for them.
    fn spawn(&self) -> Result<Running, String> {
        let program = host_program();
        let mut child = Command::new(&program)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| {
                format!(
                    "its host program {} cannot be started ({e}); {HOST_INSTALLED}",
                    program.display()
                )
            })?;
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err("the model host's pipes are missing".into());
        };
        let stderr_tail = Arc::new(Mutex::new(String::new()));
        let tail = stderr_tail.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                tracing::debug!(target: "cairn_model_host", "{line}");
                if let Ok(mut tail) = tail.lock() {
                    tail.push_str(&line);
                    tail.push('\n');
                    if tail.len() > 2000 {
                        let cut = tail.len() - 2000;
                        let cut = (cut..tail.len())
                            .find(|&i| tail.is_char_boundary(i))
                            .unwrap_or(0);
                        tail.drain(..cut);
                    }
                }
            }
        });
        let state = self.state.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                match serde_json::from_str::<HostReply>(&line) {
                    Ok(reply) => deliver(&state, reply),
                    Err(e) => tracing::warn!("the model host wrote a line Cairn cannot read: {e}"),
                }
            }
            // The host ended: whatever was waiting gets the reason.
            let tail = stderr_tail
                .lock()
                .map(|t| t.trim().to_owned())
                .unwrap_or_default();
            let Ok(mut state) = state.lock() else {
                return;
            };
            state.loaded = None;
            let message = if tail.is_empty() {
                "Cairn's model host stopped; it starts again with the next request".to_owned()
            } else {
                format!(
                    "Cairn's model host stopped ({tail}); it starts again with the next request"
                )
            };
            for (_, tx) in state.pending.drain() {
                let _ = tx.try_send(Err(ProviderError::BadResponse(message.clone())));
            }
        });
        Ok(Running { child, stdin })
    }
}

fn deliver(state: &Mutex<HostState>, reply: HostReply) {
    let Ok(mut state) = state.lock() else {
        return;
    };
    match reply {
        HostReply::Loaded { model } => state.loaded = model,
        HostReply::Event { id, event } => {
            let done = matches!(event, StreamEvent::Done(_));
            let Some(tx) = state.pending.get(&id) else {
                return;
            };
            // The channel holds a whole reply's worth of pieces; a full one means nobody reads.
            if tx.try_send(Ok(event)).is_err() || done {
                state.pending.remove(&id);
            }
        }
        HostReply::Error {
            id,
            message,
            overflow,
            unavailable,
        } => {
            if let Some(tx) = state.pending.remove(&id) {
                let error = if overflow {
                    ProviderError::ContextOverflow(message)
                } else if unavailable {
                    ProviderError::Unavailable(message)
                } else {
                    ProviderError::Rejected {
                        status: 500,
                        message,
                    }
                };
                let _ = tx.try_send(Err(error));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_host_program_is_findable_by_its_path_or_on_the_path() -> Result<(), std::io::Error> {
        let dir = tempfile::tempdir()?;
        let program = dir.path().join(HOST_PROGRAM);
        assert!(!findable(&program, None));
        std::fs::write(&program, b"")?;
        assert!(findable(&program, None));
        let bare = Path::new(HOST_PROGRAM);
        assert!(findable(bare, Some(dir.path().as_os_str())));
        let elsewhere = std::env::join_paths([dir.path().join("bin"), dir.path().into()])
            .map_err(std::io::Error::other)?;
        assert!(findable(bare, Some(&elsewhere)));
        assert!(!findable(bare, Some(dir.path().join("bin").as_os_str())));
        assert!(!findable(bare, None));
        Ok(())
    }
}

//! Cairn's own language model runtime: GGUF files run on the CPU through llama.cpp, prompts
//! rendered with the model's own chat template, tool calls read back from the model's own syntax,
//! and the evaluated prefix kept between requests. The `cairn-model-host` program serves it to
//! Cairn over JSON lines (see `cairn_llm::local`); [`InProcessModel`] runs it in this process
//! (the host itself, the benchmark and the tests).

pub mod bench;
mod engine;
mod grammar;
mod host;
mod prefix_cache;
mod template;

pub use cairn_llm::local::{LocalOptions, StepStats};
pub use engine::Loaded;
pub use host::serve_stdio;
pub use template::ChatTemplate;

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex, OnceLock};

use cairn_llm::{ChatRequest, Provider, ProviderError, StreamEvent};
use tokio::sync::mpsc;

use engine::{Command, Job, Shared};

/// A GGUF model file run in this process, by the process's one engine thread.
#[derive(Debug, Clone)]
pub struct InProcessModel {
    path: PathBuf,
    options: LocalOptions,
}

impl InProcessModel {
    pub fn new(path: impl Into<PathBuf>, options: LocalOptions) -> Self {
        Self {
            path: path.into(),
            options,
        }
    }
}

impl Provider for InProcessModel {
    fn stream(&self, request: ChatRequest) -> mpsc::Receiver<Result<StreamEvent, ProviderError>> {
        let (tx, rx) = mpsc::channel(8192);
        engine().submit(Job {
            path: self.path.clone(),
            request,
            options: self.options.clone(),
            tx,
            cancelled: Arc::new(AtomicBool::new(false)),
        });
        rx
    }
}

/// The engine thread, started when first needed and again if it ever ends.
pub(crate) struct Engine {
    commands: Mutex<Option<Sender<Command>>>,
    shared: Arc<Shared>,
}

impl Engine {
    pub(crate) fn new(shared: Shared) -> Self {
        Self {
            commands: Mutex::new(None),
            shared: Arc::new(shared),
        }
    }

    pub(crate) fn submit(&self, job: Job) {
        self.send(Command::Run(Box::new(job)));
    }

    fn send(&self, command: Command) {
        let Ok(mut commands) = self.commands.lock() else {
            return;
        };
        let command = match commands.as_ref() {
            Some(tx) => match tx.send(command) {
                Ok(()) => return,
                Err(std::sync::mpsc::SendError(command)) => command,
            },
            None => command,
        };
        let (tx, rx) = std::sync::mpsc::channel();
        let shared = self.shared.clone();
        let spawned = std::thread::Builder::new()
            .name("cairn-local-model".into())
            .spawn(move || engine::run(rx, shared));
        if let Err(e) = spawned {
            tracing::error!("cannot start the local model's thread: {e}");
            if let Command::Run(job) = command {
                let _ = job.tx.try_send(Err(ProviderError::Unavailable(format!(
                    "cannot start the local model's thread: {e}"
                ))));
            }
            return;
        }
        let _ = tx.send(command);
        *commands = Some(tx);
    }

    pub(crate) fn last_stats(&self) -> StepStats {
        self.shared.last.lock().map(|s| *s).unwrap_or_default()
    }

    pub(crate) fn loaded(&self) -> Option<Loaded> {
        self.shared.loaded.lock().ok()?.clone()
    }

    /// Unloads the model now; waits for a reply that is running to finish first.
    pub(crate) fn unload(&self) -> bool {
        if self.loaded().is_none() {
            return false;
        }
        let (tx, rx) = std::sync::mpsc::channel();
        self.send(Command::Unload(tx));
        rx.recv().unwrap_or(false)
    }
}

fn engine() -> &'static Engine {
    static ENGINE: OnceLock<Engine> = OnceLock::new();
    ENGINE.get_or_init(|| Engine::new(Shared::default()))
}

/// The model loaded in this process, if any.
pub fn loaded() -> Option<Loaded> {
    engine().loaded()
}

/// What the last request to the in-process model cost.
pub fn last_stats() -> StepStats {
    engine().last_stats()
}

/// Unloads the in-process model (it loads again on the next request); returns whether one was
/// loaded.
pub async fn unload() -> bool {
    tokio::task::spawn_blocking(|| engine().unload())
        .await
        .unwrap_or(false)
}

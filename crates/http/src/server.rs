//! Running the API: bind 127.0.0.1, draw the token, publish `runtime.json`, serve until shut down,
//! then remove `runtime.json`.

use std::net::SocketAddr;

use std::sync::Arc;

use cairn_api::chat::Chat;
use cairn_api::Cairn;
use cairn_config::{remove_runtime_if_ours, write_runtime, ConfigError};
use cairn_protocol::RuntimeInfo;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::{app, AppState, Token};

/// Why the API could not start.
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    #[error("cannot listen on 127.0.0.1:{port}: {source}")]
    Bind {
        port: u16,
        #[source]
        source: std::io::Error,
    },
    #[error("no random source for the API token: {0}")]
    Random(String),
    #[error(transparent)]
    Runtime(#[from] ConfigError),
}

/// How long a shutdown waits for running requests (a streamed completion, say).
pub const SHUTDOWN_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

/// A started API. Dropping it without [`RunningApi::shutdown`] leaves the server running until the
/// process exits.
pub struct RunningApi {
    info: RuntimeInfo,
    addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    /// Ends the open event streams, which would otherwise hold the shutdown forever.
    closing: Arc<tokio::sync::watch::Sender<bool>>,
    task: JoinHandle<()>,
    runtime_file: std::path::PathBuf,
}

impl RunningApi {
    /// The address, token and pid published in `runtime.json`.
    pub fn info(&self) -> &RuntimeInfo {
        &self.info
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops accepting requests, ends the event streams, gives running requests
    /// [`SHUTDOWN_GRACE`] to finish (then drops them), and removes `runtime.json`.
    pub async fn shutdown(mut self) -> Result<(), ConfigError> {
        self.closing.send_replace(true);
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if tokio::time::timeout(SHUTDOWN_GRACE, &mut self.task)
            .await
            .is_err()
        {
            tracing::warn!("requests still running after {SHUTDOWN_GRACE:?}: dropped");
            self.task.abort();
        }
        remove_runtime_if_ours(&self.runtime_file, self.info.pid)
    }
}

/// Starts the API on 127.0.0.1:`port` (0 or `None`: a free port) with a fresh token, and writes
/// `runtime.json` in the data home. Its tasks are `chat`'s (the workbench's, in the desktop app).
pub async fn serve(
    cairn: Cairn,
    port: Option<u16>,
    chat: Arc<Chat>,
) -> Result<RunningApi, HttpError> {
    let port = port.unwrap_or(0);
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
        .await
        .map_err(|source| HttpError::Bind { port, source })?;
    let addr = listener
        .local_addr()
        .map_err(|source| HttpError::Bind { port, source })?;
    let token = Token::generate()?;
    let info = RuntimeInfo {
        api_url: format!("http://{addr}"),
        token: token.as_str().to_owned(),
        pid: std::process::id(),
    };
    let runtime_file = cairn.home().runtime_file();
    cairn.home().ensure_dirs()?;
    write_runtime(&runtime_file, &info)?;

    let state = AppState::new(cairn, token, info.clone(), chat);
    let closing = state.closing.clone();
    let router = app(state);
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        let result = axum::serve(listener, router)
            .with_graceful_shutdown(async {
                let _ = stopped.await;
            })
            .await;
        if let Err(e) = result {
            tracing::error!("the API server stopped: {e}");
        }
    });
    tracing::info!("API listening on http://{addr}");
    Ok(RunningApi {
        info,
        addr,
        stop: Some(stop),
        closing,
        task,
        runtime_file,
    })
}

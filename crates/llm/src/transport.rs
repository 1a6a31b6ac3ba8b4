//! What every dialect shares: sending with bounded retries before the first byte, and reading
//! server-sent events under a stall watchdog.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use futures_util::{Stream, StreamExt};

use tokio::sync::mpsc;

use crate::{ProviderError, StreamEvent};

/// Retry and watchdog settings with the HTTP client.
#[derive(Clone)]
pub(crate) struct Transport {
    pub http: reqwest::Client,
    pub stall_timeout: Duration,
    pub max_retries: u32,
    pub backoff: Duration,
    /// The provider's key, taken out of every error before anyone sees it.
    pub secret: Option<String>,
}

impl Default for Transport {
    fn default() -> Self {
        Self {
            http: reqwest::Client::builder()
                .connect_timeout(Duration::from_secs(10))
                .build()
                .unwrap_or_default(),
            stall_timeout: Duration::from_secs(90),
            max_retries: 3,
            backoff: Duration::from_millis(500),
            secret: None,
        }
    }
}

impl Transport {
    /// Sends the request `build` makes, retrying retryable failures (rate limits, server errors,
    /// broken connections) with doubling pauses; a server's Retry-After wins. Each retry is
    /// announced on `tx` first, so the person knows why nothing comes yet.
    pub async fn open(
        &self,
        build: impl Fn() -> reqwest::RequestBuilder,
        tx: &mpsc::Sender<Result<StreamEvent, ProviderError>>,
    ) -> Result<reqwest::Response, ProviderError> {
        let mut attempt = 0;
        loop {
            let error = match build().send().await {
                Ok(response) if response.status().is_success() => return Ok(response),
                Ok(response) => {
                    let status = response.status().as_u16();
                    let retry_after = response
                        .headers()
                        .get("retry-after")
                        .and_then(|v| v.to_str().ok())
                        .and_then(|v| v.trim().parse::<f64>().ok())
                        .map(Duration::from_secs_f64);
                    let text = response.text().await.unwrap_or_default();
                    ProviderError::from_status(status, retry_after, &text)
                }
                Err(e) => ProviderError::Network(e.to_string()),
            }
            .without(self.secret.as_deref());
            let Some(at_least) = error.retry_after().filter(|_| attempt < self.max_retries) else {
                return Err(error);
            };
            let pause = match &error {
                ProviderError::RateLimited {
                    retry_after: Some(wait),
                    ..
                } => *wait,
                _ => (self.backoff * 2u32.pow(attempt)).max(at_least.min(self.backoff)),
            };
            tracing::warn!("model request failed ({error}); retrying in {pause:?}");
            let _ = tx
                .send(Ok(StreamEvent::Retrying {
                    reason: error.to_string(),
                    after_ms: pause.as_millis() as u64,
                }))
                .await;
            tokio::time::sleep(pause).await;
            attempt += 1;
        }
    }
}

/// Runs a dialect's streaming future on the runtime, passing its events on; an error ends the
/// stream as its last item.
pub(crate) fn spawn_stream<F, Fut>(run: F) -> mpsc::Receiver<Result<StreamEvent, ProviderError>>
where
    F: FnOnce(mpsc::Sender<Result<StreamEvent, ProviderError>>) -> Fut,
    Fut: Future<Output = Result<(), ProviderError>> + Send + 'static,
{
    let (tx, rx) = mpsc::channel(256);
    let work = run(tx.clone());
    tokio::spawn(async move {
        if let Err(e) = work.await {
            let _ = tx.send(Err(e)).await;
        }
    });
    rx
}

/// The builder methods every dialect offers over its `transport` field.
macro_rules! transport_settings {
    () => {
        /// How long the stream may stay silent before the watchdog cuts it.
        pub fn with_stall_timeout(mut self, timeout: std::time::Duration) -> Self {
            self.transport.stall_timeout = timeout;
            self
        }

        /// Retries for retryable failures before the first byte, and the first pause between
        /// them (doubling each time; a server's Retry-After wins when longer).
        pub fn with_retries(mut self, max_retries: u32, backoff: std::time::Duration) -> Self {
            self.transport.max_retries = max_retries;
            self.transport.backoff = backoff;
            self
        }
    };
}
pub(crate) use transport_settings;

type Bytes = Pin<Box<dyn Stream<Item = reqwest::Result<bytes::Bytes>> + Send>>;

/// The `data:` payloads of a server-sent-event stream, one at a time.
pub(crate) struct SseData {
    bytes: Bytes,
    buffer: Vec<u8>,
    stall_timeout: Duration,
}

impl SseData {
    pub fn new(response: reqwest::Response, stall_timeout: Duration) -> Self {
        Self {
            bytes: Box::pin(response.bytes_stream()),
            buffer: Vec::new(),
            stall_timeout,
        }
    }

    /// The next `data:` payload; `None` when the server closed the stream.
    pub async fn next(&mut self) -> Result<Option<String>, ProviderError> {
        loop {
            while let Some(end) = self.buffer.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = self.buffer.drain(..=end).collect();
                let line = String::from_utf8_lossy(&line);
                if let Some(data) = line.trim().strip_prefix("data:") {
                    return Ok(Some(data.trim().to_owned()));
                }
            }
            let next = tokio::time::timeout(self.stall_timeout, self.bytes.next())
                .await
                .map_err(|_| ProviderError::Stalled(self.stall_timeout))?;
            match next {
                Some(Ok(chunk)) => self.buffer.extend_from_slice(&chunk),
                Some(Err(e)) => {
                    return Err(ProviderError::Network(format!("the stream broke: {e}")))
                }
                None => return Ok(None),
            }
        }
    }
}

//! The older HTTP transport (MCP 2024-11-05, `type = "sse"`), which the SDK no longer ships: a GET
//! opens an event stream whose first `endpoint` event names the URL to POST messages to; the
//! server's messages arrive as `message` events on the stream.
//!
//! The configured headers (which may carry secrets) go only to the stream's own origin: an
//! endpoint on another scheme, host or port is refused, and so is a redirect elsewhere. What the
//! stream sends is read within bounds: at most [`MAX_PREAMBLE`] before the endpoint, and events of
//! at most [`MAX_EVENT`] after it.

use std::time::Duration;

use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::RoleClient;
use tokio::sync::mpsc;

use crate::Error;

/// The most the stream may send before naming its endpoint; a server that goes on longer without
/// one is cut off (the endpoint event comes first, and is short).
const MAX_PREAMBLE: usize = 64 * 1024;

/// The longest event the stream may send once started (a 50 MB tool result passes, as over
/// stdio); a server that sends a longer one is cut off, which closes the session.
const MAX_EVENT: usize = 64 * 1024 * 1024;

/// The most redirects the stream's GET or a message's POST follows (all on the stream's origin).
const MAX_REDIRECTS: usize = 10;

/// Why a message could not be sent.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct SendError(String);

/// One session over the older transport: owns the HTTP client, the endpoint messages are posted
/// to, the configured headers sent with each request, and the task reading the event stream.
pub(crate) struct SseTransport {
    client: reqwest::Client,
    endpoint: reqwest::Url,
    headers: reqwest::header::HeaderMap,
    incoming: mpsc::Receiver<RxJsonRpcMessage<RoleClient>>,
    reader: tokio::task::JoinHandle<()>,
}

/// One server-sent event.
struct Frame {
    event: String,
    data: String,
}

/// The stream's bytes not yet read as whole events, with line endings already made `\n` (the
/// stream may end lines with CRLF, LF or CR, and split them across chunks).
#[derive(Default)]
struct Events {
    buffer: Vec<u8>,
    /// The last byte pushed was a CR: an LF right after it belongs to the same line ending.
    after_cr: bool,
    /// How much of `buffer` is known to hold no blank line (so each byte is searched once).
    scanned: usize,
}

impl Events {
    /// Adds a chunk of the stream.
    fn push(&mut self, chunk: &[u8]) {
        self.buffer.reserve(chunk.len());
        for &byte in chunk {
            let after_cr = std::mem::replace(&mut self.after_cr, byte == b'\r');
            match byte {
                b'\n' if after_cr => {}
                b'\r' => self.buffer.push(b'\n'),
                _ => self.buffer.push(byte),
            }
        }
    }

    /// The bytes waiting for the end of their event.
    fn pending(&self) -> usize {
        self.buffer.len()
    }

    /// Takes out the events completed so far (those without data are dropped).
    fn frames(&mut self) -> Vec<Frame> {
        let mut out = Vec::new();
        loop {
            let from = self.scanned.saturating_sub(1);
            let Some(end) = self
                .buffer
                .get(from..)
                .and_then(|rest| rest.windows(2).position(|w| w == b"\n\n"))
                .map(|at| from + at)
            else {
                self.scanned = self.buffer.len();
                return out;
            };
            let raw: Vec<u8> = self.buffer.drain(..end + 2).collect();
            self.scanned = 0;
            if let Some(frame) = parse(&String::from_utf8_lossy(&raw)) {
                out.push(frame);
            }
        }
    }
}

/// The event in the lines of `raw`, if it carries data.
fn parse(raw: &str) -> Option<Frame> {
    let mut frame = Frame {
        event: "message".to_owned(),
        data: String::new(),
    };
    let mut has_data = false;
    for line in raw.lines() {
        let (field, value) = line.split_once(':').unwrap_or((line, ""));
        let value = value.strip_prefix(' ').unwrap_or(value);
        match field {
            "event" => value.trim().clone_into(&mut frame.event),
            "data" => {
                if has_data {
                    frame.data.push('\n');
                }
                frame.data.push_str(value);
                has_data = true;
            }
            _ => {}
        }
    }
    (!frame.data.is_empty()).then_some(frame)
}

/// The URL the `endpoint` event names, resolved against the stream's `base`; refused when it is
/// on another origin than the stream, since every message carries the configured headers.
fn endpoint_url(base: &reqwest::Url, named: &str) -> Result<reqwest::Url, Error> {
    let endpoint = base
        .join(named.trim())
        .map_err(|e| Error::Start(format!("the endpoint {named:?} is not a URL: {e}")))?;
    if endpoint.origin() != base.origin() {
        return Err(Error::Start(format!(
            "the server named its message endpoint on {}, another origin than its event \
             stream's {}; Cairn sends the configured headers only to the stream's origin",
            endpoint.origin().ascii_serialization(),
            base.origin().ascii_serialization()
        )));
    }
    Ok(endpoint)
}

/// Follows redirects only within the origin they start from, so the configured headers never
/// leave it (reqwest drops only the well-known credential headers on a cross-origin redirect).
fn same_origin_redirects() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let from = attempt.previous().last().map(reqwest::Url::origin);
        let to = attempt.url().origin();
        if from.as_ref() != Some(&to) {
            let from = from.map_or_else(String::new, |o| o.ascii_serialization());
            attempt.error(format!(
                "the server redirected from {from} to {}, another origin",
                to.ascii_serialization()
            ))
        } else if attempt.previous().len() > MAX_REDIRECTS {
            attempt.error(format!("more than {MAX_REDIRECTS} redirects"))
        } else {
            attempt.follow()
        }
    })
}

/// `error` with its causes (reqwest's own text leaves out why, e.g. a refused redirect).
fn causes(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let more = cause.to_string();
        if !text.contains(&more) {
            text = format!("{text}: {more}");
        }
        source = cause.source();
    }
    text
}

impl SseTransport {
    /// Opens the stream at `url` and waits for the server to name its endpoint, which must be on
    /// the stream's origin and come within the first [`MAX_PREAMBLE`] bytes.
    pub(crate) async fn connect(
        url: &str,
        headers: reqwest::header::HeaderMap,
    ) -> Result<Self, Error> {
        let client = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(30))
            .redirect(same_origin_redirects())
            .build()
            .map_err(|e| Error::Start(e.to_string()))?;
        let base = reqwest::Url::parse(url).map_err(|e| Error::Start(format!("{url}: {e}")))?;
        let mut response = client
            .get(base.clone())
            .headers(headers.clone())
            .header(reqwest::header::ACCEPT, "text/event-stream")
            .send()
            .await
            .and_then(reqwest::Response::error_for_status)
            .map_err(|e| Error::Start(format!("cannot open the event stream: {}", causes(&e))))?;
        let mut events = Events::default();
        let mut read = 0usize;
        let (endpoint, early) = loop {
            let chunk = response
                .chunk()
                .await
                .map_err(|e| Error::Start(format!("the event stream broke: {e}")))?
                .ok_or_else(|| {
                    Error::Start("the event stream ended before naming its endpoint".to_owned())
                })?;
            read = read.saturating_add(chunk.len());
            events.push(&chunk);
            let mut frames = events.frames().into_iter();
            if let Some(frame) = frames.by_ref().find(|f| f.event == "endpoint") {
                break (
                    endpoint_url(&base, &frame.data)?,
                    frames.collect::<Vec<_>>(),
                );
            }
            if read > MAX_PREAMBLE {
                return Err(Error::Start(format!(
                    "the event stream sent more than {} KiB without naming its endpoint",
                    MAX_PREAMBLE / 1024
                )));
            }
        };
        let (sender, incoming) = mpsc::channel(64);
        let reader = tokio::spawn(async move {
            let mut ready = early;
            loop {
                for frame in ready {
                    if frame.event != "message" {
                        continue;
                    }
                    match serde_json::from_str::<RxJsonRpcMessage<RoleClient>>(&frame.data) {
                        Ok(message) => {
                            if sender.send(message).await.is_err() {
                                return;
                            }
                        }
                        Err(e) => tracing::warn!("an MCP server sent an unreadable message: {e}"),
                    }
                }
                match response.chunk().await {
                    Ok(Some(chunk)) => events.push(&chunk),
                    // The stream ended: dropping the sender closes the session.
                    _ => return,
                }
                ready = events.frames();
                if events.pending() > MAX_EVENT {
                    tracing::warn!(
                        "an MCP server sent an event longer than {} MiB: its session is closed",
                        MAX_EVENT / (1024 * 1024)
                    );
                    return;
                }
            }
        });
        Ok(Self {
            client,
            endpoint,
            headers,
            incoming,
            reader,
        })
    }
}

impl Transport<RoleClient> for SseTransport {
    type Error = SendError;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl std::future::Future<Output = Result<(), SendError>> + Send + 'static {
        let request = self
            .client
            .post(self.endpoint.clone())
            .headers(self.headers.clone())
            .json(&item);
        async move {
            request
                .send()
                .await
                .and_then(reqwest::Response::error_for_status)
                .map(drop)
                .map_err(|e| SendError(e.to_string()))
        }
    }

    fn receive(
        &mut self,
    ) -> impl std::future::Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send {
        self.incoming.recv()
    }

    async fn close(&mut self) -> Result<(), SendError> {
        self.reader.abort();
        Ok(())
    }
}

impl Drop for SseTransport {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(frames: &[Frame]) -> Vec<(&str, &str)> {
        frames
            .iter()
            .map(|f| (f.event.as_str(), f.data.as_str()))
            .collect()
    }

    #[test]
    fn events_are_read_across_chunks_and_line_endings() {
        let mut events = Events::default();
        events.push(b"event: endpoint\r\ndata: /message?sessionId=1\r");
        assert!(events.frames().is_empty());
        events.push(b"\n\r\nevent: mess");
        assert_eq!(
            pairs(&events.frames()),
            [("endpoint", "/message?sessionId=1")]
        );
        events.push(b"age\ndata: {\"a\":\ndata: 1}\n\n: keep-alive\n\n");
        events.push(b"data: caf\xc3");
        assert_eq!(pairs(&events.frames()), [("message", "{\"a\":\n1}")]);
        events.push(b"\xa9\r\rdata:x\n");
        assert_eq!(pairs(&events.frames()), [("message", "café")]);
        assert_eq!(events.pending(), "data:x\n".len());
    }

    #[test]
    fn the_endpoint_stays_on_the_streams_origin() -> Result<(), Error> {
        let base = reqwest::Url::parse("http://127.0.0.1:8000/sse?key=1")
            .map_err(|e| Error::Start(e.to_string()))?;
        for same in [
            "/message?sessionId=1",
            "message",
            "http://127.0.0.1:8000/message",
            "HTTP://127.0.0.1:8000/m",
        ] {
            assert_eq!(endpoint_url(&base, same)?.origin(), base.origin(), "{same}");
        }
        assert_eq!(
            endpoint_url(&base, " /message?sessionId=1 ")?.as_str(),
            "http://127.0.0.1:8000/message?sessionId=1"
        );
        for other in [
            "http://localhost:8000/message",
            "http://127.0.0.1:8001/message",
            "https://127.0.0.1:8000/message",
            "//evil.example/message",
            "data:text/plain,x",
        ] {
            let Err(Error::Start(why)) = endpoint_url(&base, other) else {
                panic!("{other} was accepted");
            };
            assert!(why.contains("http://127.0.0.1:8000"), "{why}");
        }
        let default_port = reqwest::Url::parse("https://mcp.example/sse")
            .map_err(|e| Error::Start(e.to_string()))?;
        assert!(endpoint_url(&default_port, "https://mcp.example:443/m").is_ok());
        Ok(())
    }
}

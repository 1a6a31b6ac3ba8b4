//! The older HTTP transport (MCP 2024-11-05, `type = "sse"`), which the SDK no longer ships: a GET
//! opens an event stream whose first `endpoint` event names the URL to POST messages to; the
//! server's messages arrive as `message` events on the stream.

use std::time::Duration;

use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::RoleClient;
use tokio::sync::mpsc;

use crate::Error;

/// Why a message could not be sent.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct SendError(String);

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

/// Reads whole events out of `buffer` as they complete.
fn frames(buffer: &mut String) -> Vec<Frame> {
    let mut out = Vec::new();
    loop {
        let normalized = buffer.replace("\r\n", "\n");
        if normalized.len() != buffer.len() {
            *buffer = normalized;
        }
        let Some(end) = buffer.find("\n\n") else {
            return out;
        };
        let raw: String = buffer.drain(..end + 2).collect();
        let mut frame = Frame {
            event: "message".to_owned(),
            data: String::new(),
        };
        for line in raw.lines() {
            if let Some(event) = line.strip_prefix("event:") {
                frame.event = event.trim().to_owned();
            } else if let Some(data) = line.strip_prefix("data:") {
                if !frame.data.is_empty() {
                    frame.data.push('\n');
                }
                frame.data.push_str(data.strip_prefix(' ').unwrap_or(data));
            }
        }
        if !frame.data.is_empty() {
            out.push(frame);
        }
    }
}

impl SseTransport {
    /// Opens the stream at `url` and waits for the server to name its endpoint.
    pub(crate) async fn connect(
        url: &str,
        headers: reqwest::header::HeaderMap,
    ) -> Result<Self, Error> {
        let client = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(30))
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
            .map_err(|e| Error::Start(format!("cannot open the event stream: {e}")))?;
        let mut buffer = String::new();
        let endpoint = loop {
            let chunk = response
                .chunk()
                .await
                .map_err(|e| Error::Start(format!("the event stream broke: {e}")))?
                .ok_or_else(|| {
                    Error::Start("the event stream ended before naming its endpoint".to_owned())
                })?;
            buffer.push_str(&String::from_utf8_lossy(&chunk));
            if let Some(frame) = frames(&mut buffer)
                .into_iter()
                .find(|f| f.event == "endpoint")
            {
                break base.join(frame.data.trim()).map_err(|e| {
                    Error::Start(format!("the endpoint {:?} is not a URL: {e}", frame.data))
                })?;
            }
        };
        let (sender, incoming) = mpsc::channel(64);
        let reader = tokio::spawn(async move {
            loop {
                for frame in frames(&mut buffer) {
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
                    Ok(Some(chunk)) => buffer.push_str(&String::from_utf8_lossy(&chunk)),
                    // The stream ended: dropping the sender closes the session.
                    _ => return,
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

    #[test]
    fn events_are_read_across_chunks_and_line_endings() {
        let mut buffer =
            String::from("event: endpoint\r\ndata: /message?sessionId=1\r\n\r\nevent: mess");
        let first = frames(&mut buffer);
        assert_eq!(first.len(), 1);
        assert_eq!(
            (first[0].event.as_str(), first[0].data.as_str()),
            ("endpoint", "/message?sessionId=1")
        );
        buffer.push_str("age\ndata: {\"a\":\ndata: 1}\n\n: keep-alive\n\n");
        let next = frames(&mut buffer);
        assert_eq!(next.len(), 1);
        assert_eq!(
            (next[0].event.as_str(), next[0].data.as_str()),
            ("message", "{\"a\":\n1}")
        );
        assert!(buffer.is_empty());
    }
}

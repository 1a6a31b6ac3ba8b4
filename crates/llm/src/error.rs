//! Provider errors, classified by what the agent loop does next.

use std::time::Duration;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ProviderError {
    /// The key is missing or refused: tell the person; retrying will not help.
    #[error("the model server refused the credentials: {0}")]
    Auth(String),
    /// Too many requests: wait (as long as the server asked, when it said) and retry.
    #[error("the model server is rate limiting: {message}")]
    RateLimited {
        retry_after: Option<Duration>,
        message: String,
    },
    /// The prompt does not fit the model's context: compact, then retry.
    #[error("the prompt is longer than the model's context: {0}")]
    ContextOverflow(String),
    /// The server failed (5xx): retry with backoff.
    #[error("the model server failed ({status}): {message}")]
    Server { status: u16, message: String },
    /// No connection, or it broke: retry with backoff.
    #[error("cannot reach the model server: {0}")]
    Network(String),
    /// The stream stopped sending for longer than the watchdog allows.
    #[error("the model stopped sending for {0:?}")]
    Stalled(Duration),
    /// The request was wrong (unknown model, bad parameters): tell the person.
    #[error("the model server rejected the request ({status}): {message}")]
    Rejected { status: u16, message: String },
    /// The server answered something that is not the protocol.
    #[error("unexpected answer from the model server: {0}")]
    BadResponse(String),
    /// Cairn's own model cannot run on this machine (its host program is missing, the model
    /// file does not load, memory ran out): tell the person; the same request will fail again.
    #[error("Cairn's own model cannot run here: {0}")]
    Unavailable(String),
}

impl ProviderError {
    /// Whether trying the same request again may succeed, and after how long at least.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            Self::RateLimited { retry_after, .. } => {
                Some(retry_after.unwrap_or(Duration::from_secs(1)))
            }
            Self::Server { .. } | Self::Network(_) | Self::Stalled(_) => {
                Some(Duration::from_millis(500))
            }
            _ => None,
        }
    }

    /// Classifies an HTTP error answer.
    pub(crate) fn from_status(status: u16, retry_after: Option<Duration>, body: &str) -> Self {
        let message = error_message(body);
        let lower = message.to_lowercase();
        match status {
            401 | 403 => Self::Auth(message),
            429 => Self::RateLimited {
                retry_after,
                message,
            },
            400 | 413
                if lower.contains("context length")
                    || lower.contains("context_length")
                    || lower.contains("maximum context")
                    || lower.contains("too many tokens")
                    || lower.contains("prompt is too long") =>
            {
                Self::ContextOverflow(message)
            }
            500..=599 => Self::Server { status, message },
            _ => Self::Rejected { status, message },
        }
    }
}

impl ProviderError {
    /// The same error with `secret` (the provider's own key) taken out of every text: a proxy
    /// that echoes the request would otherwise hand the key to whoever reads the error.
    pub fn without(self, secret: Option<&str>) -> Self {
        let Some(secret) = secret.map(str::trim).filter(|s| s.len() >= 4) else {
            return self;
        };
        let clean = |text: String| text.replace(secret, "<redacted>");
        match self {
            Self::Auth(m) => Self::Auth(clean(m)),
            Self::RateLimited {
                retry_after,
                message,
            } => Self::RateLimited {
                retry_after,
                message: clean(message),
            },
            Self::ContextOverflow(m) => Self::ContextOverflow(clean(m)),
            Self::Server { status, message } => Self::Server {
                status,
                message: clean(message),
            },
            Self::Network(m) => Self::Network(clean(m)),
            Self::Stalled(d) => Self::Stalled(d),
            Self::Rejected { status, message } => Self::Rejected {
                status,
                message: clean(message),
            },
            Self::BadResponse(m) => Self::BadResponse(clean(m)),
            Self::Unavailable(m) => Self::Unavailable(clean(m)),
        }
    }
}

/// The `error.message` of an OpenAI-style error body, else the body itself (shortened).
fn error_message(body: &str) -> String {
    serde_json::from_str::<serde_json::Value>(body)
        .ok()
        .and_then(|v| {
            v["error"]["message"]
                .as_str()
                .or_else(|| v["error"].as_str())
                .or_else(|| v["message"].as_str())
                .map(str::to_owned)
        })
        .unwrap_or_else(|| body.chars().take(300).collect())
}

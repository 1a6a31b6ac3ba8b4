//! The hub's errors, each answered with the status a device acts on: 401 (join again), 404 (no
//! such space for you: the same whether it exists or not), 403 (you may read but not write),
//! 409 (your log and the hub's disagree: resend from the tail, or start a new log), 413 (send
//! less), 400 (a bug or a forged request), 503 (the database: retry later).

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use cairn_protocol::sync::HubError as WireError;

#[derive(Debug, thiserror::Error)]
pub enum HubError {
    #[error("the device token is missing, unknown or revoked")]
    Unauthorized,
    #[error("not found")]
    NotFound,
    #[error("{0}")]
    Forbidden(String),
    /// The device's log on the hub ends at `tail`; what was sent does not follow it.
    #[error("{message}")]
    Conflict { message: String, tail: i64 },
    #[error("{0}")]
    TooLarge(String),
    #[error("{0}")]
    Invalid(String),
    #[error("the database: {0}")]
    Database(#[from] tokio_postgres::Error),
    #[error("the database pool: {0}")]
    Pool(#[from] deadpool_postgres::PoolError),
}

impl HubError {
    pub fn status(&self) -> StatusCode {
        match self {
            Self::Unauthorized => StatusCode::UNAUTHORIZED,
            Self::NotFound => StatusCode::NOT_FOUND,
            Self::Forbidden(_) => StatusCode::FORBIDDEN,
            Self::Conflict { .. } => StatusCode::CONFLICT,
            Self::TooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            Self::Invalid(_) => StatusCode::BAD_REQUEST,
            Self::Database(_) | Self::Pool(_) => StatusCode::SERVICE_UNAVAILABLE,
        }
    }
}

impl IntoResponse for HubError {
    fn into_response(self) -> Response {
        let status = self.status();
        let error = match &self {
            // The database's own words stay in the hub's log.
            Self::Database(_) | Self::Pool(_) => {
                tracing::warn!("{self}");
                "the hub's database is not answering; try again later".to_owned()
            }
            Self::Conflict { message, tail } => format!("{message} (tail {tail})"),
            other => other.to_string(),
        };
        (status, Json(WireError { error })).into_response()
    }
}

//! Why a turn failed, classified by what the person can do next: the front ends offer Retry,
//! point at Settings, or suggest rewording, from [`TurnError::kind`].

use cairn_llm::ProviderError;
pub use cairn_protocol::FailureKind;

/// A turn (or a compaction) that could not finish.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TurnError {
    /// The model server failed or refused, as the provider classified it.
    #[error(transparent)]
    Provider(#[from] ProviderError),
    /// The model's reply could not be used: cut off, empty, a runaway call, a loop the detector
    /// stopped, a stream that ended without finishing.
    #[error("{0}")]
    Generation(String),
    /// What was asked cannot be done (nothing to re-run).
    #[error("{0}")]
    Request(String),
}

impl TurnError {
    /// What kind of failure this is, for the person.
    pub fn kind(&self) -> FailureKind {
        match self {
            Self::Provider(e) => match e {
                ProviderError::Auth(_) => FailureKind::Auth,
                ProviderError::RateLimited { .. } => FailureKind::RateLimited,
                ProviderError::ContextOverflow(_) => FailureKind::Context,
                ProviderError::Server { .. }
                | ProviderError::Network(_)
                | ProviderError::Stalled(_)
                | ProviderError::BadResponse(_) => FailureKind::Connection,
                ProviderError::Rejected { .. } => FailureKind::Rejected,
                ProviderError::Unavailable(_) => FailureKind::LocalModel,
            },
            Self::Generation(_) => FailureKind::Generation,
            Self::Request(_) => FailureKind::Other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn provider_failures_keep_their_class_and_their_words() {
        let refused = TurnError::from(ProviderError::Auth("bad key".into()));
        assert_eq!(refused.kind(), FailureKind::Auth);
        assert_eq!(
            refused.to_string(),
            "the model server refused the credentials: bad key"
        );
        let down = TurnError::from(ProviderError::Network("connection refused".into()));
        assert_eq!(down.kind(), FailureKind::Connection);
        assert_eq!(
            TurnError::Generation("cut off".into()).kind(),
            FailureKind::Generation
        );
        let cannot_run = TurnError::from(ProviderError::Unavailable("no host".into()));
        assert_eq!(cannot_run.kind(), FailureKind::LocalModel);
        assert!(cannot_run.kind().points_to_settings());
        assert_eq!(
            cannot_run.to_string(),
            "Cairn's own model cannot run here: no host"
        );
    }
}

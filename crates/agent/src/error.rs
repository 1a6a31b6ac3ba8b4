//! What failed in the agent — a turn, a compaction, a session file, a sub-agent's start —
//! classified by what the person can do next: the front ends offer Retry, point at Settings, or
//! suggest rewording, from [`AgentError::kind`].

use cairn_llm::ProviderError;
pub use cairn_protocol::FailureKind;

/// A turn (or a compaction) that could not finish, a session file that could not be written, a
/// sub-agent that could not start.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AgentError {
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
    /// The id cannot name a session file.
    #[error("{0:?} is not a valid session id")]
    SessionId(String),
    /// A session file could not be written or removed: why (the file named where it helps).
    #[error("{0}")]
    SessionFile(String),
    /// A sub-agent (a subagent, a team member, an agent asked by name) could not start: why.
    #[error("{0}")]
    Start(String),
}

impl AgentError {
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
            Self::SessionFile(_) => FailureKind::Storage,
            Self::Request(_) | Self::SessionId(_) | Self::Start(_) => FailureKind::Other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn provider_failures_keep_their_class_and_their_words() {
        let refused = AgentError::from(ProviderError::Auth("bad key".into()));
        assert_eq!(refused.kind(), FailureKind::Auth);
        assert_eq!(
            refused.to_string(),
            "the model server refused the credentials: bad key"
        );
        let down = AgentError::from(ProviderError::Network("connection refused".into()));
        assert_eq!(down.kind(), FailureKind::Connection);
        assert_eq!(
            AgentError::Generation("cut off".into()).kind(),
            FailureKind::Generation
        );
        let cannot_run = AgentError::from(ProviderError::Unavailable("no host".into()));
        assert_eq!(cannot_run.kind(), FailureKind::LocalModel);
        assert!(cannot_run.kind().points_to_settings());
        assert_eq!(
            cannot_run.to_string(),
            "Cairn's own model cannot run here: no host"
        );
    }

    #[test]
    fn session_and_start_failures_keep_their_words() {
        let bad_id = AgentError::SessionId("../x".into());
        assert_eq!(bad_id.to_string(), "\"../x\" is not a valid session id");
        assert_eq!(bad_id.kind(), FailureKind::Other);
        let no_agent = AgentError::Start("no agent named \"x\"".into());
        assert_eq!(no_agent.to_string(), "no agent named \"x\"");
        assert_eq!(no_agent.kind(), FailureKind::Other);
    }
}

//! The api crate's one error type, and how each failure is shown to a client.

use cairn_config::ConfigError;
use cairn_memory::MemoryError;
use cairn_protocol::{ApiError, ErrorCode};

/// What an operation failed with.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Memory(#[from] MemoryError),
    /// No model to talk to: the message says how to configure one.
    #[error("{0}")]
    NoModel(String),
    /// A declared tool in the config cannot be used: the message names it and why.
    #[error("{0}")]
    DeclaredTool(String),
    #[error(transparent)]
    Import(#[from] cairn_importers::ImportError),
    #[error(transparent)]
    Voice(#[from] cairn_voice::VoiceError),
    /// Installing, removing or checking one of Cairn's own models failed: the message says how
    /// to repair it.
    #[error(transparent)]
    Models(#[from] cairn_models::ModelsError),
    /// No such task, or another thing asked for by name that is not there.
    #[error("{0}")]
    NotFound(String),
    /// The session files could not be written.
    #[error("{0}")]
    Sessions(String),
    /// The agent failed: a session file not written or removed, a sub-agent not started.
    #[error(transparent)]
    Agent(#[from] cairn_agent::AgentError),
    /// An MCP server could not be reached, or a call to it failed.
    #[error(transparent)]
    Mcp(#[from] cairn_mcp::Error),
    /// A schedule could not be read, written or found: the message says which.
    #[error(transparent)]
    Schedule(#[from] cairn_schedule::ScheduleError),
    /// Sync with the hub failed: the message says what sync does next, or what to do.
    #[error(transparent)]
    Sync(#[from] cairn_sync::SyncError),
    /// The sync hub (`cairn hub`) failed: its database, or what it was asked.
    #[error(transparent)]
    Hub(#[from] cairn_hub::HubError),
    /// No such history source: the message lists the known ones.
    #[error("{0}")]
    UnknownSource(String),
    /// The file system cannot be watched for new history.
    #[error("cannot watch the file system: {0}")]
    Watch(String),
    /// An agent's hook file could not be read or written: the message names it and why.
    #[error("{0}")]
    Hooks(String),
    /// A live hook could not recall for a prompt or capture a turn: the message says why.
    #[error("{0}")]
    LiveHook(String),
    /// An attachment cannot go with a message: the message names the file and why.
    #[error("{0}")]
    Attachment(String),
    /// A request that cannot be carried out as asked (a `/goal` without a task, `/resume` without
    /// words): the message says what to ask instead.
    #[error("{0}")]
    Invalid(String),
    /// The model could not summarise the conversation: the history stays as it was.
    #[error("{0}")]
    Compact(String),
    /// Another one is already running (a scan): the message says to wait or stop it.
    #[error("{0}")]
    Busy(String),
    /// Something inside the app broke (a poisoned lock): not the caller's fault.
    #[error("{0}")]
    Internal(String),
}

/// The class of failure, which front ends map to their own signals (HTTP status, exit code).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The request is wrong: fix it and send again.
    BadRequest,
    NotFound,
    /// Something of the kind already runs: wait for it, or stop it.
    Busy,
    /// Something on this machine failed (disk, database): not the caller's fault.
    Internal,
}

impl Error {
    pub fn kind(&self) -> ErrorKind {
        match self {
            Self::Memory(MemoryError::Invalid(_))
            | Self::Config(ConfigError::Invalid { .. })
            | Self::NoModel(_)
            | Self::DeclaredTool(_)
            | Self::UnknownSource(_)
            | Self::Attachment(_)
            | Self::Invalid(_)
            | Self::Schedule(cairn_schedule::ScheduleError::When(_))
            | Self::Sync(
                cairn_sync::SyncError::Invalid(_)
                | cairn_sync::SyncError::Key(_)
                | cairn_sync::SyncError::NotJoined,
            )
            | Self::Hub(cairn_hub::HubError::Invalid(_)) => ErrorKind::BadRequest,
            Self::Models(cairn_models::ModelsError::Unknown { .. }) => ErrorKind::BadRequest,
            Self::Memory(MemoryError::NotFound(_))
            | Self::NotFound(_)
            | Self::Schedule(cairn_schedule::ScheduleError::NotFound(_)) => ErrorKind::NotFound,
            Self::Busy(_) | Self::Memory(MemoryError::Busy(_)) => ErrorKind::Busy,
            _ => ErrorKind::Internal,
        }
    }

    /// The wire form: a stable code and a sentence.
    pub fn to_api_error(&self) -> ApiError {
        let code = match self.kind() {
            ErrorKind::BadRequest => ErrorCode::BadRequest,
            ErrorKind::NotFound => ErrorCode::NotFound,
            ErrorKind::Busy => ErrorCode::Busy,
            ErrorKind::Internal => ErrorCode::Internal,
        };
        ApiError::new(code, self.to_string())
    }
}

//! The schedule crate's one error type, by what the caller does next.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum ScheduleError {
    /// The "when" could not be read: say it another way.
    #[error("{0}")]
    When(String),
    /// The schedules file is not what Cairn writes: it is left as it is, for the person to mend
    /// or remove.
    #[error("{}: not a schedules file ({message}); mend or remove it", path.display())]
    Corrupt { path: PathBuf, message: String },
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("no schedule {0}: `cairn schedule list` shows them")]
    NotFound(String),
    #[error(transparent)]
    Write(#[from] cairn_config::ConfigError),
}

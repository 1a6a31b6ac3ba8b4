//! The memory crate's one error type, by what the caller does next.

/// What went wrong in the memory store.
#[derive(Debug, thiserror::Error)]
pub enum MemoryError {
    /// The database failed (disk full, corrupt file, locked too long). Retrying may help; the
    /// caller's data was not half-written (every write is one transaction).
    #[error("memory database error: {0}")]
    Database(#[from] rusqlite::Error),
    /// Reading or writing a file beside the database (backups) failed.
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    /// The request itself is wrong (unknown layer, empty text, turn not started): fix the input.
    #[error("{0}")]
    Invalid(String),
    /// The thing asked for does not exist.
    #[error("{0} not found")]
    NotFound(String),
    /// The database was written by a newer Cairn.
    #[error("the memory database has schema version {found}, newer than this Cairn ({supported}); upgrade Cairn")]
    TooNew { found: i64, supported: i64 },
}

impl From<serde_json::Error> for MemoryError {
    fn from(e: serde_json::Error) -> Self {
        Self::Invalid(format!("bad JSON: {e}"))
    }
}

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
    /// Something of the kind already runs on this memory (a dream, a restore): wait for it.
    #[error("{0}")]
    Busy(String),
    /// The thing asked for does not exist.
    #[error("{0} not found")]
    NotFound(String),
    /// A model the app lends the memory (the embedder, the background writer) could not be loaded
    /// or reached (its files missing or damaged, its server down): every request fails until that
    /// is mended.
    #[error("{0}")]
    ModelUnavailable(String),
    /// A lent model was there and failed on this request; the background queue tries again.
    #[error("{0}")]
    ModelFailed(String),
    /// The database was written by a newer Cairn.
    #[error("the memory database has schema version {found}, newer than this Cairn ({supported}); upgrade Cairn")]
    TooNew { found: i64, supported: i64 },
}

impl MemoryError {
    /// The same error with `doing` (what was being done) before its message; a lent model's
    /// failure stays of its kind, anything else becomes `Invalid`.
    pub(crate) fn doing(self, doing: &str) -> Self {
        match self {
            Self::ModelUnavailable(m) => Self::ModelUnavailable(format!("{doing}: {m}")),
            Self::ModelFailed(m) => Self::ModelFailed(format!("{doing}: {m}")),
            other => Self::Invalid(format!("{doing}: {other}")),
        }
    }
}

impl From<serde_json::Error> for MemoryError {
    fn from(e: serde_json::Error) -> Self {
        Self::Invalid(format!("bad JSON: {e}"))
    }
}

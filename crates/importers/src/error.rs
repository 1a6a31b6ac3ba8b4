//! The importers' one error type. A bad line or record is never an error (it is skipped and
//! counted); an error is a file that cannot be read at all, or memory that cannot be written.

use std::path::Path;

#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// The file cannot be read: the scan goes on with the others, and the watermark waits.
    #[error("{path}: {message}")]
    Unreadable { path: String, message: String },
    /// Memory refused the write: the scan stops.
    #[error(transparent)]
    Memory(#[from] cairn_memory::MemoryError),
}

impl ImportError {
    pub fn io(path: &Path, e: impl std::fmt::Display) -> Self {
        Self::Unreadable {
            path: path.display().to_string(),
            message: e.to_string(),
        }
    }
}

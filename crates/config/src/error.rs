//! The config crate's one error type.

use std::path::PathBuf;

/// What went wrong reading Cairn's home, config or runtime files.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The config file is not valid: a syntax error, an unknown key or a bad value. `line` is 1-based.
    #[error("{}:{line}: {message}", file.display())]
    Invalid {
        file: PathBuf,
        line: usize,
        message: String,
    },
    /// Neither `CAIRN_HOME` nor `HOME` is set, so there is nowhere to keep data.
    #[error("cannot find a home directory: set CAIRN_HOME or HOME")]
    NoHome,
    /// A file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// `runtime.json` exists but is not what Cairn writes.
    #[error("{}: not a Cairn runtime file: {message}", path.display())]
    BadRuntimeFile { path: PathBuf, message: String },
}

impl ConfigError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Io {
            path: path.into(),
            source,
        }
    }
}

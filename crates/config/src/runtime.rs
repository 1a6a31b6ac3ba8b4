//! `runtime.json`: written by the process serving the API so the CLI and hooks can find it, private
//! to the user, removed on clean exit.

use std::path::Path;

use cairn_protocol::RuntimeInfo;

use crate::{write_private_atomically, ConfigError};

/// Writes `info` to `path` atomically with mode 0600.
pub fn write_runtime(path: &Path, info: &RuntimeInfo) -> Result<(), ConfigError> {
    let json = serde_json::to_vec_pretty(info).map_err(|e| ConfigError::BadRuntimeFile {
        path: path.to_owned(),
        message: e.to_string(),
    })?;
    write_private_atomically(path, &json)
}

/// Reads the runtime file; `Ok(None)` when no server has written one.
pub fn read_runtime(path: &Path) -> Result<Option<RuntimeInfo>, ConfigError> {
    match std::fs::read(path) {
        Ok(bytes) => {
            serde_json::from_slice(&bytes)
                .map(Some)
                .map_err(|e| ConfigError::BadRuntimeFile {
                    path: path.to_owned(),
                    // The file holds the API token: serde's message would quote a misplaced one.
                    message: crate::errors::without_values(&e.to_string(), true),
                })
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(ConfigError::io(path, e)),
    }
}

/// Removes the runtime file if it still describes the process `pid` (another instance may have
/// replaced it since).
pub fn remove_runtime_if_ours(path: &Path, pid: u32) -> Result<(), ConfigError> {
    match read_runtime(path) {
        Ok(Some(info)) if info.pid == pid => {
            std::fs::remove_file(path).map_err(|e| ConfigError::io(path, e))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_removes_only_its_own_file() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("runtime.json");
        assert_eq!(read_runtime(&path)?, None);
        let info = RuntimeInfo {
            api_url: "http://127.0.0.1:4000".into(),
            token: "ab".repeat(32),
            pid: 42,
        };
        write_runtime(&path, &info)?;
        assert_eq!(read_runtime(&path)?, Some(info));
        remove_runtime_if_ours(&path, 43)?;
        assert!(path.exists(), "another pid's file stays");
        remove_runtime_if_ours(&path, 42)?;
        assert!(!path.exists());
        Ok(())
    }

    #[test]
    fn a_corrupt_file_is_a_clear_error() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("runtime.json");
        std::fs::write(&path, "{\"api_url\": ")?;
        let err = read_runtime(&path)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains("not a Cairn runtime file"), "{err}");

        std::fs::write(
            &path,
            "{\"api_url\": \"http://127.0.0.1:1\", \"token\": \"t\", \"pid\": \"tok-runtime-7788\"}",
        )?;
        let err = read_runtime(&path)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(!err.contains("tok-runtime-7788"), "{err}");
        assert!(
            err.contains("invalid type: a string, expected u32"),
            "{err}"
        );
        Ok(())
    }
}

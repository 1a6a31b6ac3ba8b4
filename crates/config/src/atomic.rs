//! Crash-safe file writes: write a sibling temp file, flush it to disk, then rename over the target.

use std::io::Write;
use std::path::Path;

use crate::ConfigError;

/// Writes `bytes` to `path` so that a reader sees either the old file or the whole new one, never a
/// torn write. The file is readable by its owner only (mode 0600 on Unix).
pub fn write_private_atomically(path: &Path, bytes: &[u8]) -> Result<(), ConfigError> {
    let dir = path.parent().unwrap_or_else(|| Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| ConfigError::io(dir, e))?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".cairn-")
        .tempfile_in(dir)
        .map_err(|e| ConfigError::io(dir, e))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        tmp.as_file()
            .set_permissions(std::fs::Permissions::from_mode(0o600))
            .map_err(|e| ConfigError::io(tmp.path(), e))?;
    }
    tmp.write_all(bytes)
        .and_then(|()| tmp.as_file().sync_all())
        .map_err(|e| ConfigError::io(path, e))?;
    tmp.persist(path)
        .map_err(|e| ConfigError::io(path, e.error))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_the_whole_file_and_keeps_it_private() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("nested").join("f.json");
        write_private_atomically(&path, b"first version, longer")?;
        write_private_atomically(&path, b"second")?;
        assert_eq!(std::fs::read_to_string(&path)?, "second");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path)?.permissions().mode() & 0o777;
            assert_eq!(mode, 0o600);
        }
        let leftovers = std::fs::read_dir(path.parent().unwrap_or(dir.path()))?.count();
        assert_eq!(leftovers, 1, "no temp file is left behind");
        Ok(())
    }
}

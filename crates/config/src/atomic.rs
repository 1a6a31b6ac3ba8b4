//! Crash-safe file writes, the workspace's one way to replace a file: write a sibling temp file,
//! flush it to disk, then rename it over the target.

use std::io::Write;
use std::path::Path;

use crate::ConfigError;

/// Who may read the file once written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Its owner only (mode 0600 on Unix): Cairn's own data and config.
    Private,
    /// What the replaced file allowed, or the usual mode for a new file (0666 less the umask): the
    /// person's files and other programs' configs.
    AsBefore,
}

/// Writes `bytes` to `path` so that a reader sees either the old file or the whole new one, never a
/// torn write, even after a crash. Missing folders are created.
pub fn write_atomically(path: &Path, bytes: &[u8], access: Access) -> Result<(), ConfigError> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(dir).map_err(|e| ConfigError::io(dir, e))?;
    let mut builder = tempfile::Builder::new();
    builder.prefix(".cairn-");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = match access {
            Access::Private => 0o600,
            // Given at creation, so the umask applies as for any new file.
            Access::AsBefore => 0o666,
        };
        builder.permissions(std::fs::Permissions::from_mode(mode));
    }
    let mut tmp = builder
        .tempfile_in(dir)
        .map_err(|e| ConfigError::io(dir, e))?;
    if access == Access::AsBefore {
        if let Ok(before) = std::fs::metadata(path) {
            tmp.as_file()
                .set_permissions(before.permissions())
                .map_err(|e| ConfigError::io(tmp.path(), e))?;
        }
    }
    tmp.write_all(bytes)
        .and_then(|()| tmp.as_file().sync_all())
        .map_err(|e| ConfigError::io(path, e))?;
    tmp.persist(path)
        .map_err(|e| ConfigError::io(path, e.error))?;
    // The rename itself survives a crash once the folder is on disk too.
    if let Ok(folder) = std::fs::File::open(dir) {
        let _ = folder.sync_all();
    }
    Ok(())
}

/// [`write_atomically`], readable by its owner only.
pub fn write_private_atomically(path: &Path, bytes: &[u8]) -> Result<(), ConfigError> {
    write_atomically(path, bytes, Access::Private)
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

    #[cfg(unix)]
    #[test]
    fn a_replaced_file_keeps_its_mode_and_a_new_one_is_not_private(
    ) -> Result<(), Box<dyn std::error::Error>> {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir()?;
        let script = dir.path().join("run.sh");
        std::fs::write(&script, "#!/bin/sh\n")?;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755))?;
        write_atomically(&script, b"#!/bin/sh\necho hi\n", Access::AsBefore)?;
        assert_eq!(std::fs::read_to_string(&script)?, "#!/bin/sh\necho hi\n");
        assert_eq!(
            std::fs::metadata(&script)?.permissions().mode() & 0o777,
            0o755
        );
        let new = dir.path().join("notes.txt");
        write_atomically(&new, b"hello", Access::AsBefore)?;
        let mode = std::fs::metadata(&new)?.permissions().mode() & 0o777;
        let umask = std::fs::read_to_string("/proc/self/status")?
            .lines()
            .find_map(|l| l.strip_prefix("Umask:"))
            .and_then(|v| u32::from_str_radix(v.trim(), 8).ok())
            .ok_or("no umask in /proc/self/status")?;
        assert_eq!(mode, 0o666 & !umask, "mode {mode:o}, umask {umask:o}");
        Ok(())
    }
}

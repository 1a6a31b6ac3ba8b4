//! Whether a model on disk is whole: each file present, of its pinned size, a GGUF file for a
//! language model, and (once per change of the file) of its pinned SHA-256. A verified file gets a small stamp beside it, so the
//! checksum is read again only when the file changes.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use sha2::{Digest, Sha256};

use crate::catalog::{CatalogModel, Kind, ModelFile};
use crate::ModelsError;

/// Checks every file of `model` under `models_dir`, answering with its main file; the error names
/// the file and the command that reinstalls it.
pub fn check(models_dir: &Path, model: &CatalogModel) -> Result<PathBuf, ModelsError> {
    let dir = models_dir.join(model.folder);
    for file in model.files {
        check_file(&dir.join(file.name), model, file)?;
    }
    Ok(model.main_path(models_dir))
}

fn check_file(path: &Path, model: &CatalogModel, file: &ModelFile) -> Result<(), ModelsError> {
    let damaged = |problem: String| ModelsError::Damaged {
        path: path.to_path_buf(),
        name: model.name.to_owned(),
        problem,
    };
    let meta = match std::fs::metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(damaged("is not installed".into()))
        }
        Err(e) => return Err(ModelsError::io(path, e)),
    };
    if meta.len() != file.bytes {
        return Err(damaged(format!(
            "is {} bytes long instead of {} (truncated or replaced)",
            meta.len(),
            file.bytes
        )));
    }
    if model.kind == Kind::Language {
        check_header(path).map_err(damaged)?;
    }
    if std::fs::read_to_string(stamp_path(path)).ok() == Some(stamp(&meta, file.sha256)) {
        return Ok(());
    }
    let actual = sha256_file(path)?;
    if actual != file.sha256 {
        return Err(damaged(
            "is damaged (its SHA-256 does not match the pinned one)".into(),
        ));
    }
    write_stamp(path, file.sha256);
    Ok(())
}

/// The first bytes of a GGUF file: the magic and a version Cairn's runtime reads (2 or 3).
pub fn check_header(path: &Path) -> Result<(), String> {
    let mut head = [0u8; 8];
    let mut file = std::fs::File::open(path).map_err(|e| format!("cannot be opened ({e})"))?;
    file.read_exact(&mut head)
        .map_err(|_| "is too short to be a model".to_owned())?;
    if &head[..4] != b"GGUF" {
        return Err("is not a GGUF model file (its header is wrong)".into());
    }
    let version = u32::from_le_bytes([head[4], head[5], head[6], head[7]]);
    if !(2..=3).contains(&version) {
        return Err(format!(
            "is GGUF version {version}, which Cairn cannot read"
        ));
    }
    Ok(())
}

/// The hex SHA-256 of a file, read in 1 MiB blocks.
pub(crate) fn sha256_file(path: &Path) -> Result<String, ModelsError> {
    let mut file = std::fs::File::open(path).map_err(|e| ModelsError::io(path, e))?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buf).map_err(|e| ModelsError::io(path, e))?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hex::encode(hasher.finalize()))
}

fn stamp_path(path: &Path) -> PathBuf {
    with_suffix(path, ".verified")
}

/// `path` with `suffix` added to its file name (`model.gguf` → `model.gguf.partial`).
pub(crate) fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(suffix);
    path.with_file_name(name)
}

/// What a verified file looked like: its size, its modification time and the checksum it matched.
fn stamp(meta: &std::fs::Metadata, sha256: &str) -> String {
    let modified = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    format!("{} {modified} {sha256}\n", meta.len())
}

/// Records that the file at `path` matched `sha256` as it is now.
pub(crate) fn write_stamp(path: &Path, sha256: &str) {
    if let Ok(meta) = std::fs::metadata(path) {
        if let Err(e) = std::fs::write(stamp_path(path), stamp(&meta, sha256)) {
            tracing::warn!("cannot record that {} was verified: {e}", path.display());
        }
    }
}

/// Removes the stamp of a file that is going away.
pub(crate) fn remove_stamp(path: &Path) {
    let _ = std::fs::remove_file(stamp_path(path));
}

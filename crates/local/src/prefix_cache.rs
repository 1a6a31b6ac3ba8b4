//! The evaluated start of a prompt (system message and tools) kept on disk between processes:
//! a new model host — every CLI turn, the first request after the model was unloaded — loads
//! it instead of reading several hundred tokens again. One file per model, context size and
//! prefix, named by their hash, written whole or not at all; the least recently used go first.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::token::LlamaToken;
use sha2::{Digest, Sha256};

/// Saved prefixes kept per cache folder.
const KEEP: usize = 8;

/// Where the evaluation of `prefix` by `model` with a context of `n_ctx` is kept in `dir`.
pub(crate) fn file_for(dir: &Path, model: &Path, n_ctx: u32, prefix: &[LlamaToken]) -> PathBuf {
    let mut hash = Sha256::new();
    hash.update(model.as_os_str().as_encoded_bytes());
    if let Ok(meta) = std::fs::metadata(model) {
        hash.update(meta.len().to_le_bytes());
        let modified = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos());
        hash.update(modified.to_le_bytes());
    }
    hash.update(n_ctx.to_le_bytes());
    for token in prefix {
        hash.update(token.0.to_le_bytes());
    }
    let name: String = hash
        .finalize()
        .iter()
        .take(16)
        .map(|b| format!("{b:02x}"))
        .collect();
    dir.join(format!("{name}.kv"))
}

/// Loads `file` into sequence 0 of `context`; true when it held exactly `prefix`. On false the
/// sequence is empty and a file that could not be read is gone.
pub(crate) fn restore(context: &mut LlamaContext, file: &Path, prefix: &[LlamaToken]) -> bool {
    if !file.is_file() {
        return false;
    }
    let _ = context.clear_kv_cache_seq(Some(0), None, None);
    match context.state_seq_load_file(file, 0, prefix.len()) {
        Ok((tokens, _)) if tokens == prefix => {
            // Recently used: kept the longest.
            if let Ok(f) = std::fs::File::options().append(true).open(file) {
                let _ = f.set_modified(SystemTime::now());
            }
            true
        }
        outcome => {
            tracing::debug!(
                "the saved prompt {} is not usable: {outcome:?}",
                file.display()
            );
            let _ = context.clear_kv_cache_seq(Some(0), None, None);
            let _ = std::fs::remove_file(file);
            false
        }
    }
}

/// Saves sequence 0 of `context`, which holds exactly `prefix`, as `file` (through a temporary
/// file, so a crash leaves no half file), then trims the folder to the most recent few.
pub(crate) fn store(context: &LlamaContext, file: &Path, prefix: &[LlamaToken]) {
    let Some(dir) = file.parent() else {
        return;
    };
    if let Err(e) = std::fs::create_dir_all(dir) {
        tracing::debug!("no prompt cache at {}: {e}", dir.display());
        return;
    }
    let partial = file.with_extension(format!("kv.{}.partial", std::process::id()));
    let saved = context
        .state_seq_save_file(&partial, 0, prefix)
        .map_err(|e| e.to_string())
        .and_then(|_| std::fs::rename(&partial, file).map_err(|e| e.to_string()));
    if let Err(e) = saved {
        tracing::debug!("the prompt was not saved to {}: {e}", file.display());
        let _ = std::fs::remove_file(&partial);
        return;
    }
    trim(dir);
}

/// Removes all but the `KEEP` most recently used saved prefixes, and what a save that crashed
/// left behind.
fn trim(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let abandoned = SystemTime::now() - std::time::Duration::from_secs(600);
    let mut saved: Vec<(SystemTime, PathBuf)> = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        let Some(modified) = entry.metadata().and_then(|m| m.modified()).ok() else {
            continue;
        };
        match path.extension().and_then(|e| e.to_str()) {
            Some("kv") => saved.push((modified, path)),
            Some("partial") if modified < abandoned => {
                let _ = std::fs::remove_file(path);
            }
            _ => {}
        }
    }
    saved.sort_by_key(|s| std::cmp::Reverse(s.0));
    for (_, old) in saved.into_iter().skip(KEEP) {
        let _ = std::fs::remove_file(old);
    }
}

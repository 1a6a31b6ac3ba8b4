//! Cairn's operations, written once and called alike by the desktop app's Tauri commands, the HTTP
//! routes and the `cairn` CLI. Each operation is a method on [`Cairn`], which holds the data home and
//! an injected environment.

mod agent;
mod attachments;
mod background;
pub mod chat;
mod chat_tasks;
pub mod compat;
mod config_watch;
mod dreams;
mod error;
mod folders;
mod hooks;
mod language_servers;
mod learned_skills;
pub mod line_answers;
mod live_hooks;
mod mcp_check;
mod mcp_memory;
mod mcp_register;
mod mcp_settings;
mod memory;
mod models;
mod pet;
mod resume;
mod scans;
mod schedule_tool;
mod schedules;
pub mod secrets;
mod settings;
mod settings_change;
mod sources;
mod status;
mod sync;
mod tasks;
pub mod voice;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use cairn_config::{Config, ConfigError, Home};
use cairn_memory::MemoryStore;

pub use agent::ModelChoice;
pub use attachments::{
    split_documents, AttachmentInput, PreparedMessage, MAX_ATTACHMENTS, MAX_ATTACHMENT_BYTES,
};
pub use background::Background;
/// Whether an id can name a task or session (it becomes a file name): what is wrong with it.
pub use cairn_agent::session_id_problem;
pub use cairn_importers::{ScanControl, ScanMode};
pub use cairn_memory::{TurnCompletion, TurnStart};
pub use chat_tasks::mint_task_id;
pub use error::{Error, ErrorKind};
pub use hooks::{hook_status, install_hooks, remove_hooks, CairnCommand, HookStatus, HOOK_AGENTS};
pub use live_hooks::RESUME_HINT;
pub use mcp_check::{probe_mcp, McpProbe};
pub use mcp_memory::McpMemory;
pub use mcp_register::{register_mcp, unregister_mcp};
pub use memory::{MemoryHealth, SearchAnswer, SessionOpen, SessionOpened, TurnStarted};
pub use models::{model_host, DEFAULT_MODEL, MODEL_INDEX_ENV};
pub use scans::Scans;
pub use settings::{
    AgentInput, AppearanceInput, ModelSlot, ProviderInput, ProviderSettings, Settings, SlotSetting,
    VoiceInput, VoiceModelInfo,
};
pub use settings_change::SettingsChange;

/// Scheduled tasks, as front ends read and change them (with the time now, which changes take).
pub mod schedule {
    pub use cairn_memory::now_ms;
    pub use cairn_schedule::{
        describe, due, local_time, next_run, Due, Local, NewSchedule, ScheduleEdit, ScheduleError,
        Schedules,
    };
}
/// One memory on every device: this device's side (joining, pairing, a round) and the hub.
pub mod devices {
    pub use crate::sync::this_device_name;
    pub use cairn_sync::{check_hub_address, Joined, SyncError, SyncReport};
}

/// The sync hub (`cairn hub`): a service in front of PostgreSQL.
pub mod hub {
    pub use cairn_hub::{add_account, migrate, new_join_code, pool, serve, HubError, DEPLOYMENT};
}
pub use sources::{FollowEvent, SourceInfo};
pub use status::VERSION;
pub use tasks::TaskChange;
pub use voice::{VoiceCapture, VoiceSession};

/// How to look up an environment variable (injected so tests control `${ENV}` expansion).
pub type EnvLookup = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// The core handle every front end holds.
#[derive(Clone)]
pub struct Cairn {
    home: Home,
    env: EnvLookup,
    http: reqwest::Client,
    memory: Arc<OnceLock<Arc<MemoryStore>>>,
    /// The whisper model, once loaded.
    voice: voice::WarmModel,
    /// The MCP servers' hub, shared by every runtime of this process.
    mcp: mcp_settings::HubSlot,
    /// The language servers' hub, shared the same way.
    lsp: language_servers::LspSlot,
    /// The tasks' teams, by the lead's session.
    teams: Arc<cairn_agent::Teams>,
    /// Each model's slots for subagents and team members, by `provider/model`.
    capacities: Arc<std::sync::Mutex<std::collections::HashMap<String, cairn_agent::Capacity>>>,
    /// multilingual-e5-small would not load (missing, damaged, or a CPU without AVX2): not tried
    /// again, and warned about again, for every memory added, until an embedding model is
    /// installed.
    multilingual_refused: Arc<AtomicBool>,
    /// The last config read without an error, and the error of the file since, once logged.
    config_kept: Arc<std::sync::Mutex<ConfigKept>>,
}

/// See [`Cairn::load_config`].
#[derive(Default)]
struct ConfigKept {
    good: Option<Config>,
    said: Option<String>,
}

impl Cairn {
    /// A core over `home` reading variables from this process's environment.
    pub fn new(home: Home) -> Self {
        Self::with_env(home, Arc::new(|name: &str| std::env::var(name).ok()))
    }

    /// A core with an injected environment lookup.
    pub fn with_env(home: Home, env: EnvLookup) -> Self {
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(2))
            .no_proxy()
            .build()
            .unwrap_or_default();
        Self {
            home,
            env,
            http,
            memory: Arc::new(OnceLock::new()),
            voice: Arc::default(),
            mcp: Arc::default(),
            lsp: Arc::default(),
            teams: Arc::default(),
            capacities: Arc::default(),
            multilingual_refused: Arc::default(),
            config_kept: Arc::default(),
        }
    }

    /// The tasks' teams (a deleted task's team stops with [`cairn_agent::Teams::end`]).
    pub fn teams(&self) -> &Arc<cairn_agent::Teams> {
        &self.teams
    }

    /// The memory store, opened (and migrated) on first use.
    pub fn memory(&self) -> Result<Arc<MemoryStore>, Error> {
        if let Some(store) = self.memory.get() {
            return Ok(store.clone());
        }
        let store = Arc::new(MemoryStore::open(&self.memory_path())?);
        let embedder = self.embedder_for(Some(&store));
        if let Some(embedder) = embedder {
            store.set_embedder(embedder);
        }
        store.set_writers(self.memory_writers());
        store.set_evolution(
            self.load_config()
                .map_or(true, |config| config.memory_evolution),
        );
        // Embeddings, summaries and the reading of facts that change all run in the background.
        store.spawn_background_queue();
        Ok(self.memory.get_or_init(|| store).clone())
    }

    /// Gives an open memory store the embedder the config now picks (the app's language changed,
    /// or the memories came to be written in Chinese, say): its memories are embedded again in
    /// the background, by model.
    pub fn follow_embedder(&self) {
        let Some(store) = self.memory.get() else {
            return;
        };
        let multilingual = !self.multilingual_refused.load(Ordering::Relaxed)
            && self.wants_multilingual_memory(Some(store));
        // Only a change of model family loads anything: a store without any embedding model
        // installed is not looked for again (and logged again) on every memory added.
        if multilingual == (store.embedder_model().as_deref() == Some(cairn_e5::MODEL_NAME)) {
            return;
        }
        if let Some(embedder) = self.embedder(multilingual) {
            if store.embedder_model().as_deref() != Some(embedder.model()) {
                tracing::info!("memories are now embedded by {}", embedder.model());
                store.set_embedder(embedder);
            }
        }
    }

    /// Whether the config asks for the multilingual embedder (`[memory] embedder`, or by default
    /// Chinese in the UI or in `store`'s memories); an unreadable config keeps the English one.
    fn wants_multilingual_memory(&self, store: Option<&MemoryStore>) -> bool {
        self.load_config()
            .is_ok_and(|c| c.multilingual_memory(|| store.is_some_and(written_in_cjk)))
    }

    /// Where the local embedding model is installed (by `./run setup`).
    pub fn embedding_model_dir(&self) -> std::path::PathBuf {
        self.home.models_dir().join(cairn_embed::MODEL_NAME)
    }

    /// The local embedding model, when installed (loaded on first use); without it recall runs on
    /// its lexical channels. multilingual-e5-small when `[memory] embedder` asks for it (or, by
    /// default, when the app speaks Chinese) and it is installed; all-MiniLM-L6-v2 otherwise.
    pub fn load_embedder(&self) -> Option<Arc<dyn cairn_memory::Embedder>> {
        self.embedder_for(self.memory.get().map(|store| &**store))
    }

    /// The embedder for `store`'s memories (see [`Cairn::load_embedder`]).
    fn embedder_for(&self, store: Option<&MemoryStore>) -> Option<Arc<dyn cairn_memory::Embedder>> {
        self.embedder(self.wants_multilingual_memory(store))
    }

    /// multilingual-e5-small when `multilingual` and it loads, all-MiniLM-L6-v2 otherwise (when
    /// installed).
    fn embedder(&self, multilingual: bool) -> Option<Arc<dyn cairn_memory::Embedder>> {
        if multilingual && !self.multilingual_refused.load(Ordering::Relaxed) {
            // Refused unless its file is whole by the catalogue and the CPU runs its engine.
            match cairn_e5::MultilingualE5::load(&self.home.models_dir()) {
                Ok(model) => return Some(Arc::new(model)),
                Err(e) => {
                    tracing::warn!("{e}: memories are embedded by all-MiniLM-L6-v2");
                    self.multilingual_refused.store(true, Ordering::Relaxed);
                }
            }
        }
        let dir = self.embedding_model_dir();
        if !dir.join("model.safetensors").exists() {
            tracing::info!(
                "no embedding model at {}: recall is lexical only",
                dir.display()
            );
            return None;
        }
        // Loaded at the first embedding and dropped after five idle minutes: an idle app does not
        // hold the weights.
        Some(Arc::new(cairn_embed::IdleMiniLm::new(
            dir,
            Duration::from_secs(300),
        )))
    }

    /// Where the memory database lives.
    pub fn memory_path(&self) -> std::path::PathBuf {
        self.home.data_dir().join("memory.sqlite")
    }

    pub fn home(&self) -> &Home {
        &self.home
    }

    /// The config to run on: the file as it is (a missing file is the default config), or,
    /// once the file has been read without an error, the last config read so when an edit breaks
    /// it (see [`Cairn::config_now`]).
    pub fn load_config(&self) -> Result<Config, ConfigError> {
        self.config_now().map(|(config, _)| config)
    }

    /// The config to run on and the file's error, read once: a file without an error is the
    /// config (and the last good one from now on); with an error, the last good config runs, the
    /// error (naming the file, the line and the key) is logged once and given with it. `Err` when
    /// the file has an error and no good config was read before.
    pub(crate) fn config_now(&self) -> Result<(Config, Option<ConfigError>), ConfigError> {
        let mut kept = self.config_kept.lock().unwrap_or_else(|e| e.into_inner());
        match self.read_config() {
            Ok(config) => {
                if kept.said.take().is_some() {
                    tracing::info!("the config file is valid again and in use");
                }
                kept.good = Some(config.clone());
                Ok((config, None))
            }
            Err(e) => {
                let Some(good) = kept.good.clone() else {
                    return Err(e);
                };
                let message = e.to_string();
                if kept.said.as_deref() != Some(message.as_str()) {
                    tracing::error!(
                        "{message}: Cairn keeps running on the config as it was before this edit"
                    );
                    kept.said = Some(message);
                }
                Ok((good, Some(e)))
            }
        }
    }

    /// The config file as it is now, an error if it has one.
    fn read_config(&self) -> Result<Config, ConfigError> {
        let env = self.env.clone();
        let config =
            Config::load(self.home.config_file(), move |name| env(name))?.unwrap_or_default();
        secrets::know_config_secrets(self.home.root(), &config);
        Ok(config)
    }
}

/// The newest memories read to tell which script they are written in.
const SCRIPT_SAMPLE: usize = 200;

/// Whether `store`'s memories are written in Chinese (or Japanese, Korean) script: a quarter
/// of the newest, five at least, to take the multilingual embedder on; once it embeds them, a
/// tenth keeps it, so a memory near the line is not embedded again and again.
fn written_in_cjk(store: &MemoryStore) -> bool {
    let Ok((cjk, read)) = store.cjk_written(SCRIPT_SAMPLE) else {
        return false;
    };
    if store.embedder_model().as_deref() == Some(cairn_e5::MODEL_NAME) {
        cjk > 0 && cjk * 10 >= read
    } else {
        cjk >= 5 && cjk * 4 >= read
    }
}

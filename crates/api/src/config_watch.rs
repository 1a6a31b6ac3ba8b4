//! The config file followed while Cairn runs (the app, `cairn serve`): an edit, by hand or from
//! Settings, applies without a restart. The next message builds its runtime from it (providers,
//! models, the agent's settings, MCP and language servers, which start or stop as their config
//! says), the `/v1` keys are read per request, and the memory takes its settings at once (the
//! background model, learning, the embedder). An edit with an error keeps the config before it
//! running, and says where the error is (see [`Cairn::load_config`]).

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use crate::background::{self, Background};
use crate::chat::Chat;
use crate::Cairn;

/// How often the file is looked at.
const LOOK_EVERY: Duration = Duration::from_secs(1);

/// What tells an edit: the file's modification time and length (`None`: no file).
fn stamp(path: &Path) -> Option<(SystemTime, u64)> {
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.modified().ok()?, meta.len()))
}

impl Chat {
    /// Follows the config file until the handle is dropped.
    pub fn follow_config(self: &Arc<Self>) -> Background {
        let chat = self.clone();
        let path = self.cairn().home().config_file().to_path_buf();
        let mut seen = stamp(&path);
        background::every(LOOK_EVERY, move || {
            let now = stamp(&path);
            if now != seen {
                seen = now;
                chat.config_edited();
            }
        })
    }

    /// The file changed: applied when it reads, else the config before it stays (its error is
    /// logged once, with the file, the line and the key).
    pub fn config_edited(&self) {
        let cairn = self.cairn();
        if let Ok((_, None)) = cairn.config_now() {
            self.reset();
            cairn.apply_memory_settings();
            tracing::info!("the config file changed: its settings apply from now on");
        }
    }
}

impl Cairn {
    /// Gives an open memory the config's memory settings: the background model and what it
    /// writes, whether it learns from rated tasks, and its embedder.
    pub(crate) fn apply_memory_settings(&self) {
        let Some(store) = self.memory.get() else {
            return;
        };
        if let Ok(config) = self.load_config() {
            store.set_evolution(config.memory_evolution);
        }
        store.set_writers(self.memory_writers());
        self.follow_embedder();
    }
}

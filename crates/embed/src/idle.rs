//! The model as the app holds it: loaded when a text first needs embedding, dropped again after a
//! while unused, so an idle app does not keep ~90 MB of weights resident. The next embedding
//! loads it again (a fraction of a second).

use std::path::PathBuf;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use crate::{EmbedError, MiniLm, MODEL_NAME};

/// The dimension all-MiniLM-L6-v2 embeds into.
pub const DIMENSIONS: usize = 384;

/// [`MiniLm`] loaded on demand and unloaded after `idle` without use.
pub struct IdleMiniLm {
    inner: Arc<Inner>,
}

struct Inner {
    dir: PathBuf,
    idle: Duration,
    slot: Mutex<Slot>,
}

#[derive(Default)]
struct Slot {
    model: Option<Arc<MiniLm>>,
    last_used: Option<Instant>,
    /// A thread is watching for the model to go unused.
    watching: bool,
}

impl IdleMiniLm {
    /// Nothing is read until the first embedding.
    pub fn new(dir: impl Into<PathBuf>, idle: Duration) -> Self {
        Self {
            inner: Arc::new(Inner {
                dir: dir.into(),
                idle,
                slot: Mutex::default(),
            }),
        }
    }

    /// Whether the weights are in memory now.
    pub fn is_loaded(&self) -> bool {
        self.inner
            .slot
            .lock()
            .map(|s| s.model.is_some())
            .unwrap_or(false)
    }

    /// The model, loading it if needed.
    pub fn model(&self) -> Result<Arc<MiniLm>, EmbedError> {
        let mut slot = self.inner.slot.lock().map_err(|_| EmbedError::BadModel {
            path: self.inner.dir.clone(),
            message: "a thread panicked while holding the model".into(),
        })?;
        slot.last_used = Some(Instant::now());
        if let Some(model) = &slot.model {
            return Ok(model.clone());
        }
        let started = Instant::now();
        let model = Arc::new(MiniLm::load(&self.inner.dir)?);
        tracing::info!("embedding model loaded in {:?}", started.elapsed());
        slot.model = Some(model.clone());
        slot.last_used = Some(Instant::now());
        if !slot.watching {
            slot.watching = true;
            let weak = Arc::downgrade(&self.inner);
            std::thread::Builder::new()
                .name("embedder-idle".into())
                .spawn(move || watch(weak))
                .map_err(|source| EmbedError::Io {
                    path: self.inner.dir.clone(),
                    source,
                })?;
        }
        Ok(model)
    }
}

/// Drops the model once it has gone unused for `idle`; ends with it (or with the embedder).
fn watch(inner: Weak<Inner>) {
    loop {
        let Some(pause) = inner
            .upgrade()
            .map(|i| (i.idle / 4).max(Duration::from_millis(10)))
        else {
            return;
        };
        std::thread::sleep(pause);
        let Some(inner) = inner.upgrade() else {
            return;
        };
        let Ok(mut slot) = inner.slot.lock() else {
            return;
        };
        if slot.last_used.is_some_and(|t| t.elapsed() >= inner.idle) {
            slot.model = None;
            slot.watching = false;
            tracing::info!("embedding model unloaded after {:?} unused", inner.idle);
            return;
        }
    }
}

impl cairn_memory::Embedder for IdleMiniLm {
    fn model(&self) -> &str {
        MODEL_NAME
    }

    fn dim(&self) -> usize {
        DIMENSIONS
    }

    fn embed(&self, text: &str) -> Result<Vec<f32>, cairn_memory::MemoryError> {
        let model = IdleMiniLm::model(self)
            .map_err(|e| cairn_memory::MemoryError::ModelUnavailable(e.to_string()))?;
        let vector = model.embed(text);
        // Used until now, not only since it was fetched.
        if let Ok(mut slot) = self.inner.slot.lock() {
            slot.last_used = Some(Instant::now());
        }
        Ok(vector)
    }
}

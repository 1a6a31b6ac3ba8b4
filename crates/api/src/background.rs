//! Work a running Cairn does on its own, on a thread, every so often (the daily dream, following
//! the config file), until the handle is dropped.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// While it lives, its work runs; dropping it stops the thread at its next look.
#[must_use = "the work stops when this is dropped"]
pub struct Background(Arc<AtomicBool>);

impl Drop for Background {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// Runs `work` every `period` (the first time after one period) on a thread of its own.
pub(crate) fn every(period: Duration, mut work: impl FnMut() + Send + 'static) -> Background {
    let stop = Arc::new(AtomicBool::new(false));
    let stopped = stop.clone();
    std::thread::spawn(move || loop {
        let started = Instant::now();
        while started.elapsed() < period {
            if stopped.load(Ordering::SeqCst) {
                return;
            }
            std::thread::sleep(period.min(Duration::from_millis(250)));
        }
        work();
    });
    Background(stop)
}

/// The right to do some background work in one process per data home (the app and `cairn
/// serve` may both run): a lock file, held by whoever takes it first until it quits; another
/// process takes it over then.
pub(crate) struct OneRunner {
    path: std::path::PathBuf,
    held: Option<std::fs::File>,
}

impl OneRunner {
    pub(crate) fn new(path: std::path::PathBuf) -> Self {
        Self { path, held: None }
    }

    /// Whether this process runs the work (taking the lock if it is free).
    pub(crate) fn here(&mut self) -> bool {
        if self.held.is_none() {
            self.held = std::fs::File::create(&self.path)
                .ok()
                .filter(|file| file.try_lock().is_ok());
        }
        self.held.is_some()
    }
}

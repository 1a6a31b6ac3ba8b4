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

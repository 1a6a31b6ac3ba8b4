//! The background queue: one thread that embeds new memories, rewrites summaries, reads new
//! memories for facts that change, induces policies and has the model reword them, with a
//! growing pause after a failure; and the same work done now, within a budget, for a short-lived
//! process.

use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use cairn_protocol::memory::CaughtUp;

use crate::{MemoryError, MemoryStore};

/// One batch of a kind of background work: how many items it did.
type Batch = fn(&MemoryStore) -> Result<usize, MemoryError>;
/// Where a dream's catch-up counts a kind of work.
type Counted = fn(&mut CaughtUp) -> &mut i64;

/// The background queue's work, in the order a pass does it: what each kind is called, one batch
/// of it, and where a dream's catch-up counts it.
pub(crate) const QUEUE: [(&str, Batch, Counted); 5] = [
    ("embedding", |s| s.embed_pending(32), |c| &mut c.embedded),
    (
        "rewriting summaries",
        |s| s.summarize_pending(4),
        |c| &mut c.rewritten,
    ),
    (
        "reading for facts",
        |s| s.relate_pending(64),
        |c| &mut c.read,
    ),
    (
        "learning from rated tasks",
        |s| s.induce_pending(8),
        |c| &mut c.learned,
    ),
    (
        "rewording policies",
        |s| s.reword_policies_pending(2),
        |c| &mut c.rewritten,
    ),
];

impl MemoryStore {
    /// The background queue's embedding and reading for facts done now, for at most `budget`:
    /// a short-lived process (a command that writes memories, or is about to recall them) ends
    /// before the queue would. More than `most` memories to embed (an import's backlog) are left
    /// to the queue of a process that stays (the app, `cairn serve`): a command would spend its
    /// budget on them and still not be done. Returns how many memories still wait to be embedded.
    pub fn catch_up(&self, budget: Duration, most: i64) -> Result<i64, MemoryError> {
        let waiting = || self.pending_embeddings(&*self.lock()?);
        if waiting()? > most {
            return waiting();
        }
        let started = Instant::now();
        while started.elapsed() < budget && self.embed_pending(32)? + self.relate_pending(64)? > 0 {
        }
        waiting()
    }

    /// Starts the background queue that embeds new memories, rewrites summaries when a summary
    /// model is set, reads new memories for facts that change, induces policies from rewarded
    /// episodes and has the model reword them when it is lent for that; it stops when the store
    /// is dropped.
    /// Failures are retried with a growing pause (1 s up to a minute); capture never waits on it.
    /// `None` when the queue already runs.
    pub fn spawn_background_queue(self: &Arc<Self>) -> Option<std::thread::JoinHandle<()>> {
        if self.worker.swap(true, std::sync::atomic::Ordering::SeqCst) {
            return None;
        }
        let weak: Weak<Self> = Arc::downgrade(self);
        Some(std::thread::spawn(move || {
            let mut backoff = Duration::from_secs(1);
            // The change log's revision when a pass last found nothing to do: until it moves (a
            // write by another process; this one's writes wake the queue), there is nothing new,
            // and an idle queue does not read the whole store every two seconds.
            let mut idle_at: Option<i64> = None;
            loop {
                let Some(store) = weak.upgrade() else { return };
                let revision = store.revision().ok();
                let unchanged = idle_at.is_some() && revision == idle_at;
                let work = if unchanged {
                    Ok(0)
                } else {
                    QUEUE.iter().try_fold(0, |done, (_, batch, _)| {
                        Ok::<_, MemoryError>(done + batch(&store)?)
                    })
                };
                match work {
                    Ok(0) => {
                        idle_at = revision;
                        let (lock, signal) = &*store.pending;
                        if let Ok(mut pending) = lock.lock() {
                            if !*pending {
                                pending = signal
                                    .wait_timeout(pending, Duration::from_secs(2))
                                    .map(|(guard, _)| guard)
                                    .unwrap_or_else(|e| e.into_inner().0);
                            }
                            if *pending {
                                idle_at = None;
                            }
                            *pending = false;
                        }
                        backoff = Duration::from_secs(1);
                    }
                    Ok(_) => backoff = Duration::from_secs(1),
                    Err(e) => {
                        tracing::warn!("embedding failed, retrying in {backoff:?}: {e}");
                        drop(store);
                        std::thread::sleep(backoff);
                        backoff = (backoff * 2).min(Duration::from_secs(60));
                    }
                }
            }
        }))
    }
}

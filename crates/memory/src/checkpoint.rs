//! The write-ahead log copied back into the database beside a long write (an import), by a
//! thread with its own connection, instead of by the writer's commits.

use std::sync::{Arc, Condvar, Mutex};

use rusqlite::Connection;

use crate::schema::WAL_AUTOCHECKPOINT;
use crate::{MemoryError, MemoryStore};

/// While it lives, the write-ahead log is copied back into the database by a thread of its own
/// with its own connection, not by the commits of the store's connection: a long import's writer
/// does not stop for it, and the copying runs on the other core. Dropping it stops the thread and
/// gives the commits their automatic checkpoints back.
pub struct CheckpointBeside<'s> {
    store: &'s MemoryStore,
    stop: Arc<(Mutex<bool>, Condvar)>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// How often the checkpoint thread copies the log back.
const CHECKPOINT_BESIDE_EVERY: std::time::Duration = std::time::Duration::from_millis(200);

impl MemoryStore {
    /// Checkpoints beside the writes until the guard is dropped; `None` for a store in memory.
    pub fn checkpoint_beside(&self) -> Result<Option<CheckpointBeside<'_>>, MemoryError> {
        let Some(path) = &self.path else {
            return Ok(None);
        };
        let conn = Connection::open(path)?;
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        self.lock()?.pragma_update(None, "wal_autocheckpoint", 0)?;
        let stop = Arc::new((Mutex::new(false), Condvar::new()));
        let stopping = stop.clone();
        let thread = std::thread::spawn(move || {
            let (lock, signal) = &*stopping;
            loop {
                if let Err(e) = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(())) {
                    tracing::debug!("a checkpoint beside the import failed: {e}");
                }
                let Ok(stopped) = lock.lock() else { return };
                let Ok((stopped, _)) =
                    signal.wait_timeout_while(stopped, CHECKPOINT_BESIDE_EVERY, |stop| !*stop)
                else {
                    return;
                };
                if *stopped {
                    return;
                }
            }
        });
        Ok(Some(CheckpointBeside {
            store: self,
            stop,
            thread: Some(thread),
        }))
    }
}

impl Drop for CheckpointBeside<'_> {
    fn drop(&mut self) {
        let (lock, signal) = &*self.stop;
        if let Ok(mut stopped) = lock.lock() {
            *stopped = true;
            signal.notify_all();
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        if let Ok(conn) = self.store.lock() {
            if let Err(e) = conn.pragma_update(None, "wal_autocheckpoint", WAL_AUTOCHECKPOINT) {
                tracing::warn!("cannot restore automatic checkpoints: {e}");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::NewMemory;

    fn autocheckpoint(store: &MemoryStore) -> Result<i64, MemoryError> {
        Ok(store
            .lock()?
            .pragma_query_value(None, "wal_autocheckpoint", |row| row.get(0))?)
    }

    #[test]
    fn the_log_is_copied_back_beside_the_writes_and_commits_checkpoint_again_after(
    ) -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("memory.sqlite");
        let store = MemoryStore::open(&path)?;
        assert_eq!(autocheckpoint(&store)?, WAL_AUTOCHECKPOINT);
        {
            let _beside = store
                .checkpoint_beside()?
                .ok_or("a file store checkpoints")?;
            assert_eq!(autocheckpoint(&store)?, 0, "commits leave the log alone");
            let before = std::fs::metadata(&path)?.len();
            for i in 0..50 {
                store.add(NewMemory {
                    text: format!("memory {i} of a long import: {}", "words ".repeat(300)),
                    ..NewMemory::default()
                })?;
            }
            // Only the thread copies the log back: the database file grows within its period.
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
            while std::fs::metadata(&path)?.len() <= before {
                assert!(
                    std::time::Instant::now() < deadline,
                    "nothing was copied back"
                );
                std::thread::sleep(CHECKPOINT_BESIDE_EVERY / 4);
            }
        }
        assert_eq!(autocheckpoint(&store)?, WAL_AUTOCHECKPOINT);
        assert!(MemoryStore::open_in_memory()?
            .checkpoint_beside()?
            .is_none());
        Ok(())
    }
}

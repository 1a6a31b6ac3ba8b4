//! `cairn bench dream`'s measurement: a synthetic memory of conversations (a twentieth of its
//! memories restated in other words, as imports and people repeat themselves), dreamt over
//! without a summary model, then restored: the time of each, the restore point's size and the
//! resident memory the dream added.

use std::path::Path;
use std::time::{Duration, Instant};

use cairn_memory::{DreamOptions, MemoryError, MemoryStore, NewMemory};
use cairn_protocol::memory::DreamChangeKind;

use crate::recall_bench::{database_bytes, mb, resident_bytes, vocabulary, Rng};

/// What one run measured.
#[derive(Debug, Clone, serde::Serialize)]
pub struct DreamBench {
    pub memories: usize,
    /// Restatements planted, and memories the dream merged.
    pub restated: usize,
    pub merged: usize,
    /// Memories caught up first (read for facts).
    pub caught_up: i64,
    pub dream_s: f64,
    pub restore_s: f64,
    pub restore_point_mb: f64,
    pub database_mb: f64,
    /// Resident memory the dream added to the process, MB.
    pub dream_rss_mb: Option<f64>,
}

/// Builds `memories` memories in conversations of five under `dir`, dreams over them and restores.
pub fn measure(dir: &Path, memories: usize) -> Result<DreamBench, MemoryError> {
    let memories = memories.max(10);
    let path = dir.join("bench.sqlite");
    let words = vocabulary(20_000);
    let mut rng = Rng(11);
    let restated = memories / 20;
    let start = 1_700_000_000_000i64;
    {
        let store = MemoryStore::open(&path)?;
        let mut made = 0;
        let mut said: Vec<String> = Vec::new();
        while made < memories {
            let batch: Vec<NewMemory> = (made..(made + 1_000).min(memories))
                .map(|i| {
                    // Every twentieth memory says an earlier one's words in another order.
                    let text = if i % 20 == 19 && !said.is_empty() {
                        let mut restating: Vec<&str> =
                            said[rng.next() as usize % said.len()].split(' ').collect();
                        restating.reverse();
                        restating.join(" ")
                    } else {
                        let len = 12 + (rng.next() % 40) as usize;
                        let text = rng.words(&words, len);
                        said.push(text.clone());
                        text
                    };
                    NewMemory {
                        text,
                        source: Some("bench".into()),
                        session: Some(format!("session-{}", i / 5)),
                        created_at: Some(start + i as i64 * 60_000),
                        ..NewMemory::default()
                    }
                })
                .collect();
            made += batch.len();
            store.add_batch(batch)?;
        }
    }
    let store = MemoryStore::open(&path)?;
    let dreams = dir.join("dreams");
    let before = resident_bytes();
    let started = Instant::now();
    let dream = store.dream(DreamOptions {
        dir: dreams.clone(),
        dry_run: false,
        budget: Duration::from_secs(3_600),
        writer: None,
        trigger: "bench".into(),
    })?;
    let dream_s = started.elapsed().as_secs_f64();
    let after = resident_bytes();
    let database_bytes = database_bytes(dir);
    let started = Instant::now();
    store.restore_dream(&dreams, dream.id)?;
    let restore_s = started.elapsed().as_secs_f64();
    Ok(DreamBench {
        memories,
        restated,
        merged: dream
            .changes
            .iter()
            .filter(|c| c.kind == DreamChangeKind::Merged)
            .count(),
        caught_up: dream.caught_up.read,
        dream_s,
        restore_s,
        restore_point_mb: mb(dream.restore_point_bytes),
        database_mb: mb(database_bytes),
        dream_rss_mb: before.zip(after).map(|(b, a)| mb(a.saturating_sub(b))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_small_memory_is_dreamt_over_and_restored() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let bench = measure(dir.path(), 400)?;
        assert_eq!(bench.restated, 20);
        // Restatements of a memory already restated merge too; short ones never.
        assert!(bench.merged >= 15 && bench.merged <= 20, "{bench:?}");
        assert!(bench.restore_point_mb > 0.0 && bench.dream_s > 0.0);
        Ok(())
    }
}

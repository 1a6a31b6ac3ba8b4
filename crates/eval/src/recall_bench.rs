//! `cairn bench recall`'s measurement: a synthetic corpus of L1 traces in a fresh store, its
//! ingest rate, and the latency of searches over it (p50/p95/p99, where the time goes), with the
//! process's and the database's size.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use cairn_memory::{Embedder, MemoryError, MemoryStore, NewMemory, SearchQuery};
use cairn_protocol::memory::{add_phase, Phase};

/// From how many vectors a search compares their signs first (what the printed figures mean).
pub use cairn_memory::BINARY_FIRST_FROM;

/// What one run measured.
#[derive(Debug, Clone)]
pub struct RecallBench {
    pub memories: usize,
    pub queries: usize,
    pub ingest_s: f64,
    pub ingest_per_s: f64,
    /// Search latency percentiles, ms.
    pub p50: f64,
    pub p95: f64,
    pub p99: f64,
    /// The mean time of a search's phases, ms.
    pub phases: Vec<Phase>,
    /// The model that embedded the queries; `None` when the vector channel was off.
    pub vectors: Option<String>,
    /// The vector index's size, the process's resident memory and the database on disk, MB.
    pub index_mb: Option<f64>,
    pub process_mb: Option<f64>,
    pub database_mb: f64,
}

/// A small deterministic generator (SplitMix64), so every run builds the same corpus.
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Zipf-like pick from 0..n: small indexes are much more common, as words are.
    fn zipf(&mut self, n: usize) -> usize {
        let u = (self.next() >> 11) as f64 / (1u64 << 53) as f64;
        ((n as f64).powf(u) as usize).saturating_sub(1).min(n - 1)
    }

    /// `len` words of `words`, Zipf-distributed, joined by spaces.
    pub(crate) fn words(&mut self, words: &[String], len: usize) -> String {
        (0..len)
            .map(|_| words[self.zipf(words.len())].as_str())
            .collect::<Vec<_>>()
            .join(" ")
    }
}

pub(crate) fn vocabulary(size: usize) -> Vec<String> {
    const SYLLABLES: &[&str] = &[
        "ka", "lo", "mi", "ren", "to", "sa", "vel", "dor", "pi", "nu", "ex", "qua", "tor", "bri",
        "len", "mo", "sta", "gri", "fen", "ul",
    ];
    let mut rng = Rng(7);
    (0..size)
        .map(|_| {
            let parts = 2 + (rng.next() % 3) as usize;
            (0..parts)
                .map(|_| SYLLABLES[(rng.next() % SYLLABLES.len() as u64) as usize])
                .collect()
        })
        .collect()
}

/// The benchmark's embedder: while the corpus is built it gives each memory a cheap pseudo-random
/// unit vector (embedding 100,000 texts with the real model would take minutes and measure nothing
/// about search); queries go through the real model, so search latency includes query embedding
/// and an exhaustive scan of every vector.
struct BenchEmbedder {
    real: Arc<dyn Embedder>,
    building: AtomicBool,
}

impl Embedder for BenchEmbedder {
    fn model(&self) -> &str {
        self.real.model()
    }

    fn dim(&self) -> usize {
        self.real.dim()
    }

    fn embed(&self, text: &str) -> Result<Vec<f32>, MemoryError> {
        if !self.building.load(Ordering::Relaxed) {
            return self.real.embed(text);
        }
        let mut rng = Rng(text.bytes().fold(1469598103934665603u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(1099511628211)
        }));
        let v: Vec<f32> = (0..self.real.dim())
            .map(|_| (rng.next() >> 40) as f32 / (1u64 << 24) as f32 - 0.5)
            .collect();
        let norm = v
            .iter()
            .map(|x| x * x)
            .sum::<f32>()
            .sqrt()
            .max(f32::MIN_POSITIVE);
        Ok(v.into_iter().map(|x| x / norm).collect())
    }

    fn embed_query(&self, query: &str) -> Result<Vec<f32>, MemoryError> {
        self.real.embed_query(query)
    }

    fn unrelated_similarity(&self) -> f32 {
        self.real.unrelated_similarity()
    }
}

/// Builds a synthetic corpus of `memories` L1 traces in a fresh store under `dir` (the vectors
/// from `embedder` when one is given) and times `queries` searches over it.
pub fn measure(
    dir: &Path,
    embedder: Option<Arc<dyn Embedder>>,
    memories: usize,
    queries: usize,
) -> Result<RecallBench, MemoryError> {
    let (memories, queries) = (memories.max(1), queries.max(1));
    let store = MemoryStore::open(&dir.join("bench.sqlite"))?;
    let embedder = embedder.map(|real| {
        Arc::new(BenchEmbedder {
            real,
            building: AtomicBool::new(true),
        })
    });
    let words = vocabulary(20_000);
    let mut rng = Rng(42);
    let started = Instant::now();
    let mut made = 0;
    while made < memories {
        let batch: Vec<NewMemory> = (made..(made + 1_000).min(memories))
            .map(|i| {
                let len = 12 + (rng.next() % 40) as usize;
                NewMemory {
                    text: format!("User: {}", rng.words(&words, len)),
                    source: Some(["cairn", "claude-code", "codex", "cursor"][i % 4].into()),
                    session: Some(format!("session-{}", i / 40)),
                    created_at: Some(1_700_000_000_000 + i as i64 * 60_000),
                    ..NewMemory::default()
                }
            })
            .collect();
        made += batch.len();
        store.add_batch(batch)?;
    }
    let ingest_s = started.elapsed().as_secs_f64();
    if let Some(embedder) = &embedder {
        store.set_embedder(embedder.clone());
        store.embed_all_pending()?;
        embedder.building.store(false, Ordering::Relaxed);
    }

    let mut times = Vec::with_capacity(queries);
    let mut phases: Vec<Phase> = Vec::new();
    for _ in 0..queries {
        let len = 3 + (rng.next() % 6) as usize;
        let query = rng.words(&words, len);
        let t = Instant::now();
        let result = store.search(&SearchQuery::new(query))?;
        times.push(t.elapsed().as_secs_f64() * 1000.0);
        for phase in result.phases {
            add_phase(&mut phases, &phase.phase, phase.ms / queries as f64);
        }
    }
    times.sort_by(f64::total_cmp);
    let pct = |p: f64| times[((times.len() as f64 * p).ceil() as usize).clamp(1, times.len()) - 1];
    Ok(RecallBench {
        memories,
        queries,
        ingest_s,
        ingest_per_s: memories as f64 / ingest_s,
        p50: pct(0.50),
        p95: pct(0.95),
        p99: pct(0.99),
        phases,
        vectors: embedder.as_ref().map(|e| e.model().to_owned()),
        index_mb: store.vector_index_size().map(|(_, bytes)| mb(bytes as u64)),
        process_mb: resident_bytes().map(mb),
        database_mb: mb(database_bytes(dir)),
    })
}

/// `bytes` in megabytes, to a tenth.
pub(crate) fn mb(bytes: u64) -> f64 {
    (bytes as f64 / 1e6 * 10.0).round() / 10.0
}

/// The size of a benchmark's database in `dir` (`bench.sqlite`), its write-ahead log with it.
pub(crate) fn database_bytes(dir: &Path) -> u64 {
    ["bench.sqlite", "bench.sqlite-wal"]
        .iter()
        .filter_map(|f| std::fs::metadata(dir.join(f)).ok())
        .map(|m| m.len())
        .sum()
}

/// This process's resident memory (`VmRSS`), where the system reports it.
pub(crate) fn resident_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let kb = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse::<u64>()
        .ok()?;
    Some(kb * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_small_corpus_is_ingested_and_searched() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let bench = measure(dir.path(), None, 1_500, 20)?;
        assert_eq!((bench.memories, bench.queries), (1_500, 20));
        assert!(bench.p50 <= bench.p95 && bench.p95 <= bench.p99);
        assert!(bench.database_mb > 0.0 && bench.vectors.is_none());
        assert!(
            !bench.phases.is_empty(),
            "a search reports where its time goes"
        );
        Ok(())
    }

    #[test]
    fn the_corpus_is_the_same_every_run() {
        assert_eq!(vocabulary(50), vocabulary(50));
        let words = vocabulary(100);
        assert_eq!(Rng(3).words(&words, 8), Rng(3).words(&words, 8));
    }
}

//! Semantic recall: the `Embedder` trait, vectors stored int8-quantised beside each memory, an
//! in-memory index over all of them (searched exhaustively, not just the newest rows), and the
//! background queue that embeds new memories without holding up capture.

use std::collections::HashMap;
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use rusqlite::params;

use crate::{MemoryError, MemoryStore};

/// Turns text into a unit-length vector. Implemented by local models (see `cairn-embed`).
pub trait Embedder: Send + Sync {
    /// Recorded with every vector, so vectors of another model are never compared.
    fn model(&self) -> &str;
    fn dim(&self) -> usize;
    fn embed(&self, text: &str) -> Result<Vec<f32>, String>;
    /// A question's embedding, for models trained to embed questions and passages differently.
    fn embed_query(&self, query: &str) -> Result<Vec<f32>, String> {
        self.embed(query)
    }
    /// The cosine similarity of unrelated texts under this model (near 0 for most; e5's sit near
    /// 0.8). Similarities are rescaled from it to 0, so recall's and the fact reader's
    /// thresholds mean the same under every model.
    fn unrelated_similarity(&self) -> f32 {
        0.0
    }
}

/// `similarity` rescaled so that `unrelated` maps to 0 and 1 stays 1.
fn rescaled(similarity: f32, unrelated: f32) -> f32 {
    (similarity - unrelated) / (1.0 - unrelated).max(f32::EPSILON)
}

/// Every live memory's vector, int8 with one scale per vector (a quarter of the f32 size), and
/// its signs as bits (a thirty-second) for a first pass over large indexes.
#[derive(Default)]
pub(crate) struct VectorIndex {
    /// The model whose vectors these are: an embedder switched while a search ran must not keep
    /// an index of the other model's vectors (both may have 384 dimensions).
    model: String,
    dim: usize,
    ids: Vec<i64>,
    codes: Vec<i8>,
    scales: Vec<f32>,
    /// `words` u64 per vector: bit i set when component i is positive.
    signs: Vec<u64>,
    words: usize,
    position: HashMap<i64, usize>,
}

/// How many recent queries keep their vectors (a question asked again, a retried turn).
const RECENT_QUERY_VECTORS: usize = 64;

/// From this many vectors on, a search ranks every vector by the Hamming distance of its signs
/// first and computes the int8 similarity of the best few thousand only (binary quantisation with
/// rescoring); below it, every vector's int8 similarity is computed.
pub const BINARY_FIRST_FROM: usize = 20_000;

/// How many of the first pass's best a binary search rescores: at least this many, and at least
/// `RESCORE_FACTOR` times what was asked.
const RESCORE_MIN: usize = 2_000;
const RESCORE_FACTOR: usize = 20;

/// The signs of a vector's components as bits.
fn sign_bits(codes: &[i8], words: usize) -> Vec<u64> {
    let mut bits = vec![0u64; words];
    for (i, c) in codes.iter().enumerate() {
        if *c > 0 {
            bits[i / 64] |= 1 << (i % 64);
        }
    }
    bits
}

/// Quantises a vector to int8: `v ≈ code × scale / 127`.
pub(crate) fn quantize(v: &[f32]) -> (f32, Vec<i8>) {
    let scale = v
        .iter()
        .fold(0.0f32, |m, x| m.max(x.abs()))
        .max(f32::MIN_POSITIVE);
    let codes = v
        .iter()
        .map(|x| (x / scale * 127.0).round().clamp(-127.0, 127.0) as i8)
        .collect();
    (scale, codes)
}

impl VectorIndex {
    pub(crate) fn new(dim: usize) -> Self {
        Self {
            dim,
            words: dim.div_ceil(64),
            ..Self::default()
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.ids.len()
    }

    /// The bytes the index holds in memory: int8 codes, sign bits, scales, ids and the id map.
    fn bytes(&self) -> usize {
        let per_entry = std::mem::size_of::<(i64, usize)>() + std::mem::size_of::<u64>();
        self.codes.capacity()
            + self.signs.capacity() * std::mem::size_of::<u64>()
            + self.scales.capacity() * std::mem::size_of::<f32>()
            + self.ids.capacity() * std::mem::size_of::<i64>()
            + self.position.capacity() * per_entry
    }

    pub(crate) fn insert(&mut self, id: i64, scale: f32, codes: &[i8]) {
        if codes.len() != self.dim {
            return;
        }
        let signs = sign_bits(codes, self.words);
        if let Some(&at) = self.position.get(&id) {
            self.scales[at] = scale;
            self.codes[at * self.dim..(at + 1) * self.dim].copy_from_slice(codes);
            self.signs[at * self.words..(at + 1) * self.words].copy_from_slice(&signs);
            return;
        }
        self.position.insert(id, self.ids.len());
        self.ids.push(id);
        self.scales.push(scale);
        self.codes.extend_from_slice(codes);
        self.signs.extend_from_slice(&signs);
    }

    pub(crate) fn remove(&mut self, id: i64) {
        let Some(at) = self.position.remove(&id) else {
            return;
        };
        let last = self.ids.len() - 1;
        if at != last {
            let moved = self.ids[last];
            self.ids.swap(at, last);
            self.scales.swap(at, last);
            let (head, tail) = self.codes.split_at_mut(last * self.dim);
            head[at * self.dim..(at + 1) * self.dim].copy_from_slice(&tail[..self.dim]);
            let (head, tail) = self.signs.split_at_mut(last * self.words);
            head[at * self.words..(at + 1) * self.words].copy_from_slice(&tail[..self.words]);
            self.position.insert(moved, at);
        }
        self.ids.pop();
        self.scales.pop();
        self.codes.truncate(last * self.dim);
        self.signs.truncate(last * self.words);
    }

    /// The `k` most similar (cosine) memories at or above `min_similarity`, best first.
    pub(crate) fn top(&self, query: &[f32], k: usize, min_similarity: f32) -> Vec<(i64, f32)> {
        if query.len() != self.dim || self.ids.is_empty() {
            return Vec::new();
        }
        // The query is quantised too, so the scan is integer multiply-adds the compiler vectorises.
        let (query_scale, query_codes) = quantize(query);
        let unit = query_scale / (127.0 * 127.0);
        let rescored = RESCORE_MIN.max(k.saturating_mul(RESCORE_FACTOR));
        let positions: Vec<usize> =
            if self.ids.len() >= BINARY_FIRST_FROM && rescored < self.ids.len() {
                self.nearest_signs(&sign_bits(&query_codes, self.words), rescored)
            } else {
                (0..self.ids.len()).collect()
            };
        let dots = pulp::Arch::new().dispatch(Dots {
            index: self,
            query: &query_codes,
            positions: &positions,
        });
        let mut scored: Vec<(i64, f32)> = positions
            .into_iter()
            .zip(dots)
            .map(|(at, dot)| (self.ids[at], dot as f32 * self.scales[at] * unit))
            .filter(|(_, s)| *s >= min_similarity)
            .collect();
        let k = k.min(scored.len());
        if k == 0 {
            return Vec::new();
        }
        scored.select_nth_unstable_by(k - 1, |a, b| b.1.total_cmp(&a.1));
        scored.truncate(k);
        scored.sort_by(|a, b| b.1.total_cmp(&a.1));
        scored
    }
}

impl VectorIndex {
    /// Positions of the `n` vectors whose signs differ least from `query`'s.
    fn nearest_signs(&self, query: &[u64], n: usize) -> Vec<usize> {
        let mut distances = pulp::Arch::new().dispatch(SignDistances { index: self, query });
        let n = n.min(distances.len());
        if n == 0 {
            return Vec::new();
        }
        distances.select_nth_unstable(n - 1);
        distances[..n].iter().map(|(_, at)| *at as usize).collect()
    }
}

/// Integer dot product of two int8 vectors.
#[inline(always)]
fn dot_i8(a: &[i8], b: &[i8]) -> i32 {
    let mut sum = 0;
    for (x, y) in a.iter().zip(b) {
        sum += i32::from(*x) * i32::from(*y);
    }
    sum
}

/// The scans below as `pulp` dispatches them: compiled again for the CPU's instruction set at run
/// time, so counting differing signs is one `popcnt` per word (the x86-64 baseline has none, and
/// counted bits with a dozen instructions) and the int8 products use its wide registers.
struct SignDistances<'a> {
    index: &'a VectorIndex,
    query: &'a [u64],
}

impl pulp::WithSimd for SignDistances<'_> {
    /// (signs that differ, position) for every vector.
    type Output = Vec<(u32, u32)>;

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) -> Self::Output {
        // Plain loops: an iterator's `collect` is a function of its own, compiled without the
        // instruction set this one is compiled for.
        let mut out = Vec::with_capacity(self.index.ids.len());
        for (at, bits) in self.index.signs.chunks_exact(self.index.words).enumerate() {
            let mut differ = 0;
            for (a, b) in bits.iter().zip(self.query) {
                differ += (a ^ b).count_ones();
            }
            out.push((differ, at as u32));
        }
        out
    }
}

/// The int8 dot products of the query with the vectors at `positions`.
struct Dots<'a> {
    index: &'a VectorIndex,
    query: &'a [i8],
    positions: &'a [usize],
}

impl pulp::WithSimd for Dots<'_> {
    type Output = Vec<i32>;

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) -> Self::Output {
        let dim = self.index.dim;
        let mut out = Vec::with_capacity(self.positions.len());
        for at in self.positions {
            out.push(dot_i8(
                &self.index.codes[at * dim..(at + 1) * dim],
                self.query,
            ));
        }
        out
    }
}

impl MemoryStore {
    /// Uses `embedder` for the vector channel from now on.
    pub fn set_embedder(&self, embedder: Arc<dyn Embedder>) {
        if let Ok(mut slot) = self.embedder.write() {
            *slot = Some(embedder);
        }
        if let Ok(mut index) = self.vectors.lock() {
            *index = None;
        }
        self.wake_embedding();
    }

    /// The model memories are embedded by, if any.
    pub fn embedder_model(&self) -> Option<String> {
        self.embedder().map(|e| e.model().to_owned())
    }

    pub(crate) fn embedder(&self) -> Option<Arc<dyn Embedder>> {
        self.embedder.read().ok().and_then(|e| e.clone())
    }

    pub(crate) fn wake_embedding(&self) {
        let (lock, signal) = &*self.pending;
        if let Ok(mut pending) = lock.lock() {
            *pending = true;
            signal.notify_all();
        }
    }

    /// Embeds up to `max` live memories that have no vector yet; returns how many it embedded.
    pub fn embed_pending(&self, max: usize) -> Result<usize, MemoryError> {
        let Some(embedder) = self.embedder() else {
            return Ok(0);
        };
        let rows: Vec<(i64, String)> = crate::store::resume(
            &self.embed_after,
            |row: &(i64, String)| row.0,
            |after| {
                let conn = self.lock()?;
                let mut stmt = conn.prepare_cached(
                    "SELECT m.id, m.text FROM memories m
                     LEFT JOIN memory_vectors v ON v.memory_id = m.id AND v.model = ?1
                     WHERE m.id > ?3 AND v.memory_id IS NULL AND m.status != 'deleted'
                     ORDER BY m.id LIMIT ?2",
                )?;
                let rows = stmt.query_map(
                    params![embedder.model(), max as i64, after.unwrap_or(i64::MIN)],
                    |row| Ok((row.get(0)?, row.get(1)?)),
                )?;
                Ok(rows.collect::<Result<_, _>>()?)
            },
        )?;
        let mut done = Vec::with_capacity(rows.len());
        for (id, text) in rows {
            let vector = embedder
                .embed(&text)
                .map_err(|e| MemoryError::Invalid(format!("embedding failed: {e}")))?;
            done.push((id, quantize(&vector)));
        }
        let mut conn = self.lock()?;
        let tx = conn.transaction()?;
        for (id, (scale, codes)) in &done {
            let bytes: Vec<u8> = codes.iter().map(|c| *c as u8).collect();
            tx.execute(
                "INSERT INTO memory_vectors (memory_id, model, scale, vec) VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT(memory_id) DO UPDATE SET model = excluded.model, scale = excluded.scale, vec = excluded.vec",
                params![id, embedder.model(), f64::from(*scale), bytes],
            )?;
        }
        tx.commit()?;
        drop(conn);
        if let Ok(mut index) = self.vectors.lock() {
            if let Some(index) = index.as_mut().filter(|i| i.model == embedder.model()) {
                for (id, (scale, codes)) in &done {
                    index.insert(*id, *scale, codes);
                }
            }
        }
        Ok(done.len())
    }

    /// Embeds everything still pending, now (evaluation, tests, `cairn memory reindex`).
    pub fn embed_all_pending(&self) -> Result<usize, MemoryError> {
        crate::store::drain(|| self.embed_pending(64))
    }

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
                    store
                        .embed_pending(32)
                        .and_then(|embedded| Ok(embedded + store.summarize_pending(4)?))
                        .and_then(|done| Ok(done + store.relate_pending(64)?))
                        .and_then(|done| Ok(done + store.induce_pending(8)?))
                        .and_then(|done| Ok(done + store.reword_policies_pending(2)?))
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

    /// The vector of a query, or `None` when there is no embedder or nothing to compare it with.
    pub(crate) fn embed_query(&self, query: &str) -> Result<Option<Vec<f32>>, MemoryError> {
        let Some(embedder) = self.embedder() else {
            return Ok(None);
        };
        if !self.with_index(&*embedder, |index| index.len() > 0)? {
            return Ok(None);
        }
        let model = embedder.model();
        if let Ok(recent) = self.query_vectors.lock() {
            if let Some((_, _, vector)) = recent.iter().find(|(m, q, _)| m == model && q == query) {
                return Ok(Some(vector.clone()));
            }
        }
        let vector = embedder
            .embed_query(query)
            .map_err(|e| MemoryError::Invalid(format!("embedding failed: {e}")))?;
        if let Ok(mut recent) = self.query_vectors.lock() {
            if recent.len() >= RECENT_QUERY_VECTORS {
                recent.pop_front();
            }
            recent.push_back((model.to_owned(), query.to_owned(), vector.clone()));
        }
        Ok(Some(vector))
    }

    /// Nearest memories to a query's vector at or above `min_similarity`.
    pub(crate) fn vector_candidates(
        &self,
        vector: &[f32],
        k: usize,
        min_similarity: f32,
    ) -> Result<Vec<(i64, f32)>, MemoryError> {
        let Some(embedder) = self.embedder() else {
            return Ok(Vec::new());
        };
        let unrelated = embedder.unrelated_similarity();
        let raw_min = unrelated + min_similarity * (1.0 - unrelated);
        self.with_index(&*embedder, |index| {
            let mut top = index.top(vector, k, raw_min);
            top.iter_mut().for_each(|t| t.1 = rescaled(t.1, unrelated));
            top
        })
    }

    /// The `k` memories nearest to a vector (another memory's), any similarity.
    pub(crate) fn nearest(&self, vector: &[f32], k: usize) -> Result<Vec<(i64, f32)>, MemoryError> {
        self.vector_candidates(vector, k, f32::MIN)
    }

    /// The vectors held in memory for search and their size in bytes, once the index is loaded.
    pub fn vector_index_size(&self) -> Option<(usize, usize)> {
        let index = self.vectors.lock().ok()?;
        index.as_ref().map(|index| (index.len(), index.bytes()))
    }

    /// Runs `f` on the vector index of `embedder`'s model, loading it on first use.
    fn with_index<T>(
        &self,
        embedder: &dyn Embedder,
        f: impl FnOnce(&VectorIndex) -> T,
    ) -> Result<T, MemoryError> {
        let mut index = self
            .vectors
            .lock()
            .map_err(|_| MemoryError::Invalid("the vector index was poisoned by a panic".into()))?;
        if index.as_ref().is_some_and(|i| i.model != embedder.model()) {
            *index = None;
        }
        if index.is_none() {
            let mut loaded = VectorIndex::new(embedder.dim());
            loaded.model = embedder.model().to_owned();
            let conn = self.lock()?;
            let mut stmt = conn.prepare(
                "SELECT v.memory_id, v.scale, v.vec FROM memory_vectors v JOIN memories m ON m.id = v.memory_id
                 WHERE v.model = ?1 AND m.status != 'deleted'",
            )?;
            let rows = stmt.query_map([embedder.model()], |row| {
                Ok((
                    row.get::<_, i64>(0)?,
                    row.get::<_, f64>(1)?,
                    row.get::<_, Vec<u8>>(2)?,
                ))
            })?;
            for row in rows {
                let (id, scale, bytes) = row?;
                let codes: Vec<i8> = bytes.iter().map(|b| *b as i8).collect();
                loaded.insert(id, scale as f32, &codes);
            }
            *index = Some(loaded);
        }
        Ok(match index.as_ref() {
            Some(index) => f(index),
            None => f(&VectorIndex::default()),
        })
    }

    pub(crate) fn forget_vector(&self, id: i64) {
        if let Ok(mut index) = self.vectors.lock() {
            if let Some(index) = index.as_mut() {
                index.remove(id);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantised_vectors_keep_their_ranking() {
        let mut index = VectorIndex::new(3);
        for (id, v) in [
            (1, [1.0, 0.0, 0.0]),
            (2, [0.6, 0.8, 0.0]),
            (3, [0.0, 0.0, 1.0]),
        ] {
            let (scale, codes) = quantize(&v);
            index.insert(id, scale, &codes);
        }
        let top = index.top(&[0.8, 0.6, 0.0], 2, 0.1);
        assert_eq!(top.iter().map(|t| t.0).collect::<Vec<_>>(), vec![2, 1]);
        assert!((top[0].1 - 0.96).abs() < 0.02, "{top:?}");
        index.remove(2);
        assert_eq!(
            index.top(&[0.8, 0.6, 0.0], 2, 0.1).first().map(|t| t.0),
            Some(1)
        );
        assert!(index.top(&[0.0, 0.0, 1.0], 5, 0.5).iter().all(|t| t.0 == 3));
    }

    /// A deterministic unit vector: one of `topics` directions plus noise.
    fn clustered(seed: u64, topics: u64, dim: usize) -> Vec<f32> {
        let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 40) as f32 / (1u64 << 24) as f32 - 0.5
        };
        let topic = seed % topics;
        let v: Vec<f32> = (0..dim)
            .map(|i| {
                let centre = ((topic * 31 + i as u64 * 17) % 13) as f32 / 13.0 - 0.5;
                centre + 0.6 * next()
            })
            .collect();
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.into_iter().map(|x| x / norm).collect()
    }

    #[test]
    fn a_large_index_ranks_by_signs_first_and_finds_what_the_exact_scan_finds() {
        let dim = 384;
        let count = BINARY_FIRST_FROM + 5_000;
        let mut exact = VectorIndex::new(dim);
        let vectors: Vec<Vec<f32>> = (0..count as u64).map(|i| clustered(i, 50, dim)).collect();
        for (id, v) in vectors.iter().enumerate() {
            let (scale, codes) = quantize(v);
            exact.insert(id as i64, scale, &codes);
        }
        let mut found = 0;
        let mut asked = 0;
        for q in 0..20u64 {
            let query = clustered(1_000_000 + q, 50, dim);
            let fast = exact.top(&query, 10, f32::MIN);
            // The exhaustive answer, from every vector's int8 similarity.
            let (query_scale, query_codes) = quantize(&query);
            let mut all: Vec<(i64, f32)> = exact
                .ids
                .iter()
                .enumerate()
                .map(|(at, id)| {
                    let codes = &exact.codes[at * dim..(at + 1) * dim];
                    let s = dot_i8(codes, &query_codes) as f32 * exact.scales[at];
                    (*id, s * query_scale)
                })
                .collect();
            all.sort_by(|a, b| b.1.total_cmp(&a.1));
            asked += 10;
            found += all[..10]
                .iter()
                .filter(|(id, _)| fast.iter().any(|f| f.0 == *id))
                .count();
        }
        assert!(found * 100 >= asked * 95, "{found} of {asked} found");
        // Removing a vector removes its signs with it.
        let query = vectors[7].clone();
        assert_eq!(exact.top(&query, 1, f32::MIN).first().map(|t| t.0), Some(7));
        exact.remove(7);
        assert_ne!(exact.top(&query, 1, f32::MIN).first().map(|t| t.0), Some(7));
        assert_eq!(exact.signs.len(), exact.ids.len() * exact.words);
    }
}

//! The in-memory vector index: every live memory's vector int8-quantised (one scale per
//! vector) with its signs as bits, searched exhaustively — by the signs first, then rescored,
//! once it is large — with SIMD scans.

use std::collections::HashMap;

/// Every live memory's vector, int8 with one scale per vector (a quarter of the f32 size), and
/// its signs as bits (a thirty-second) for a first pass over large indexes.
#[derive(Default)]
pub(crate) struct VectorIndex {
    /// The model whose vectors these are: an embedder switched while a search ran must not keep
    /// an index of the other model's vectors (both may have 384 dimensions).
    pub(crate) model: String,
    dim: usize,
    ids: Vec<i64>,
    codes: Vec<i8>,
    scales: Vec<f32>,
    /// `words` u64 per vector: bit i set when component i is positive.
    signs: Vec<u64>,
    words: usize,
    position: HashMap<i64, usize>,
}

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
    pub(crate) fn bytes(&self) -> usize {
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

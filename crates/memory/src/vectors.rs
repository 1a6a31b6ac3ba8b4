//! Semantic recall: the embedder in use, vectors stored int8-quantised beside each memory (the
//! embedding pass of the background queue), the query's vector (recent ones cached) and the
//! nearest memories to a vector from the in-memory index, loaded on first use.

use std::sync::Arc;

use rusqlite::{params, Connection};

use crate::lent_models::Embedder;
use crate::vector_index::{quantize, VectorIndex};
use crate::{MemoryError, MemoryStore};

/// `similarity` rescaled so that `unrelated` maps to 0 and 1 stays 1.
fn rescaled(similarity: f32, unrelated: f32) -> f32 {
    (similarity - unrelated) / (1.0 - unrelated).max(f32::EPSILON)
}

/// How many recent queries keep their vectors (a question asked again, a retried turn).
const RECENT_QUERY_VECTORS: usize = 64;

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
                .map_err(|e| e.doing("embedding failed"))?;
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

    /// Live memories without a vector of the embedder's model (none without an embedder).
    pub(crate) fn pending_embeddings(&self, conn: &Connection) -> Result<i64, MemoryError> {
        let Some(embedder) = self.embedder() else {
            return Ok(0);
        };
        Ok(conn.query_row(
            "SELECT count(*) FROM memories m
             LEFT JOIN memory_vectors v ON v.memory_id = m.id AND v.model = ?1
             WHERE v.memory_id IS NULL AND m.status != 'deleted'",
            [embedder.model()],
            |row| row.get(0),
        )?)
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
            .map_err(|e| e.doing("embedding failed"))?;
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

//! Deleting a memory: the cascade that takes it out of its fact's chain (`versions`), deletes
//! what was merged into it (`duplicates`), empties its text and indexes, and drops its vector.

use rusqlite::{params, Transaction};

use crate::model::Status;
use crate::store::{cached, get, log_change};
use crate::{MemoryError, MemoryStore};

impl MemoryStore {
    /// Deletes a memory: its text leaves the database and the indexes; the change log keeps the
    /// fact. Returns false when there was no such live memory.
    pub fn delete(&self, id: i64) -> Result<bool, MemoryError> {
        let mut conn = self.lock()?;
        let tx = conn.transaction()?;
        let mut gone = vec![id];
        let changed = self.delete_in(&tx, id, &mut gone)?;
        tx.commit()?;
        for id in gone {
            self.forget_vector(id);
        }
        Ok(changed)
    }

    /// Deletes `id` and what was merged into it, adding their ids to `gone`.
    pub(crate) fn delete_in(
        &self,
        tx: &Transaction<'_>,
        id: i64,
        gone: &mut Vec<i64>,
    ) -> Result<bool, MemoryError> {
        let mut merged = Vec::new();
        if let Some(memory) = get(tx, id)?.filter(|m| m.status != Status::Deleted) {
            crate::versions::unlink(tx, &memory)?;
            merged = crate::duplicates::on_delete(tx, &memory)?;
        }
        let changed = cached(
            tx,
            "UPDATE memories SET status = 'deleted', text = '', context = '', metadata = '{}',
                                 updated_at = ?2
             WHERE id = ?1 AND status != 'deleted'",
            params![id, self.now()],
        )?;
        if changed > 0 {
            cached(tx, "DELETE FROM memory_terms WHERE rowid = ?1", [id])?;
            cached(tx, "DELETE FROM memory_idents WHERE rowid = ?1", [id])?;
            cached(tx, "DELETE FROM memory_vectors WHERE memory_id = ?1", [id])?;
            log_change(tx, self.now(), "delete", Some(id), &serde_json::json!({}))?;
        }
        for other in merged {
            if !gone.contains(&other) {
                gone.push(other);
                self.delete_in(tx, other, gone)?;
            }
        }
        Ok(changed > 0)
    }
}

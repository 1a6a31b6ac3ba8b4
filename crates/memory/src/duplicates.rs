//! Exact and near duplicates. When the background pass reads a memory (see `facts`), it also
//! reads what the memory says, word for word with case, punctuation and spacing set aside; a
//! memory that says what a live, current memory already says (the same conversation imported from
//! two places, a person repeating a fact that still holds) is merged into it: the newer one is
//! archived with `duplicate_of`, the older lists it in `duplicates`, and both rows stay, each with
//! its own source and external id, so what pointed at either still finds the fact. A restatement
//! of a fact that has since changed is not a duplicate (it says the old value again). Deleting the
//! memory kept deletes what was merged into it.

use rusqlite::{params, Transaction};
use serde_json::Value;

use crate::statements::words;
use crate::store::{change_status, get, log_change, metadata_ids, update_metadata};
use crate::{MemoryError, SearchHit, Status};

/// Fewer words than this are not merged: "thanks, see you!" twice is two moments, not one fact.
const MIN_WORDS: usize = 6;

/// What `text` says, for comparing: its words, lower-cased; `None` when too short to merge.
pub(crate) fn said(text: &str) -> Option<String> {
    let words = words(text);
    (words.len() >= MIN_WORDS).then(|| words.join(" "))
}

/// The digest of what a memory says (64-bit FNV-1a, as hex): stable across builds, so it can be
/// stored and looked up; a match is confirmed on the words themselves.
pub(crate) fn digest(said: &str) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in said.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{hash:016x}")
}

/// The live, current memory other than `id` that says `said` (digest `digest`), the oldest.
pub(crate) fn twin(
    tx: &Transaction<'_>,
    id: i64,
    said_now: &str,
    digest: &str,
) -> Result<Option<i64>, MemoryError> {
    let mut stmt = tx.prepare_cached(
        "SELECT m.id, m.text FROM fact_checks f JOIN memories m ON m.id = f.memory_id
         WHERE f.digest = ?1 AND m.id != ?2 AND m.layer = 'L1'
           AND m.status IN ('activated', 'resolving')
           AND json_extract(m.metadata, '$.superseded_by') IS NULL
         ORDER BY m.created_at, m.id",
    )?;
    let rows = stmt.query_map(params![digest, id], |row| {
        Ok((row.get::<_, i64>(0)?, row.get::<_, String>(1)?))
    })?;
    for row in rows {
        let (other, text) = row?;
        if said(&text).as_deref() == Some(said_now) {
            return Ok(Some(other));
        }
    }
    Ok(None)
}

/// Merges memory `id` into `kept`, which says the same.
pub(crate) fn merge(tx: &Transaction<'_>, id: i64, kept: i64, now: i64) -> Result<(), MemoryError> {
    update_metadata(tx, id, |map| {
        map.insert("duplicate_of".into(), Value::from(kept));
    })?;
    change_status(tx, id, Status::Archived, now)?;
    update_metadata(tx, kept, |map| {
        let mut ids = metadata_ids(&Value::Object(map.clone()), "duplicates");
        if !ids.contains(&id) {
            ids.push(id);
        }
        map.insert("duplicates".into(), Value::from(ids));
    })?;
    log_change(
        tx,
        now,
        "merge",
        Some(id),
        &serde_json::json!({ "into": kept }),
    )?;
    Ok(())
}

/// What a memory about to be deleted leaves: the memories merged into it are deleted with it;
/// one that was merged leaves the list of the memory it was merged into.
pub(crate) fn on_delete(
    tx: &Transaction<'_>,
    memory: &crate::MemoryRecord,
) -> Result<Vec<i64>, MemoryError> {
    if let Some(kept) = memory.metadata.get("duplicate_of").and_then(Value::as_i64) {
        update_metadata(tx, kept, |map| {
            let ids: Vec<i64> = metadata_ids(&Value::Object(map.clone()), "duplicates")
                .into_iter()
                .filter(|d| *d != memory.id)
                .collect();
            map.insert("duplicates".into(), Value::from(ids));
        })?;
    }
    Ok(merged_ids(memory)
        .into_iter()
        .filter(|d| get(tx, *d).ok().flatten().is_some())
        .collect())
}

/// The memories merged into `memory` as its duplicates (a memory found counts for them too).
pub fn merged_ids(memory: &crate::MemoryRecord) -> Vec<i64> {
    metadata_ids(&memory.metadata, "duplicates")
}

/// Says of each hit that absorbed duplicates how many times it was said.
pub(crate) fn explain_duplicates(hits: &mut [SearchHit]) {
    for hit in hits.iter_mut() {
        let merged = merged_ids(&hit.memory);
        if !merged.is_empty() {
            hit.reason.push_str(&format!(
                "; said {} times (merged: {})",
                merged.len() + 1,
                merged
                    .iter()
                    .map(|id| format!("#{id}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_memory_says_sets_case_punctuation_and_spacing_aside() {
        assert_eq!(
            said("Staging is at 10.0.3.7 — use it."),
            said("staging  is at 10.0.3.7, use it")
        );
        assert_ne!(
            said("Staging is at 10.0.3.7 now, use it."),
            said("Staging is at 10.0.3.9 now, use it.")
        );
        assert_eq!(said("Thanks, see you!"), None);
        assert_eq!(digest("a b"), digest("a b"));
        assert_ne!(digest("a b"), digest("a c"));
        assert_eq!(digest(""), "cbf29ce484222325");
    }
}

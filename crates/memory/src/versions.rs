//! The versions of a fact. A memory that supersedes another is its successor; the chain of
//! them is a fact's history. Recall reads the chains: the current version ranks above the older
//! ones it replaced, a question about the past ranks the version before a change above it, and a
//! statement announcing a change moves above the older one it may update. A deleted memory is
//! taken out of its chain.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use crate::index::{fetch, FULL_RELEVANCE};
use crate::model::{SearchHit, Status, Trace};
use crate::statements::{statement, Asked, Stance, Statement};
use crate::store::{get, update_metadata};
use crate::{MemoryError, MemoryRecord, MemoryStore};

/// How relevant (relative to the older statement) a change must be to move above it.
const RELEVANT_TO_MOVE: f64 = 0.3;
/// The bonus of a statement announcing a change when the question asks what holds now: a tenth
/// of full relevance.
pub(crate) const CHANGE_PRIOR: f64 = FULL_RELEVANCE / 10.0;
/// How far above a version its replacement (or, asked about the past, its predecessor) is placed.
const VERSION_STEP: f64 = 0.001;
/// A chain longer than this is followed no further (a guard against a cycle in a damaged file).
pub(crate) const MAX_CHAIN: usize = 32;

/// A memory's successor, when a later memory superseded it.
pub(crate) fn successor(memory: &MemoryRecord) -> Option<i64> {
    memory.metadata.get("superseded_by").and_then(Value::as_i64)
}

/// The memories a memory superseded.
pub(crate) fn predecessors(memory: &MemoryRecord) -> Vec<i64> {
    crate::store::metadata_ids(&memory.metadata, "supersedes")
}

pub(crate) fn live(memory: &MemoryRecord) -> bool {
    matches!(memory.status, Status::Activated | Status::Resolving)
}

impl MemoryStore {
    /// Asked what holds now, statements announcing a change (as the background pass read them)
    /// get [`CHANGE_PRIOR`].
    pub(crate) fn prefer_changes_now(
        &self,
        asked: Asked,
        scored: &mut [(f64, MemoryRecord, Vec<Trace>)],
    ) -> Result<(), MemoryError> {
        if asked != Asked::Now || scored.is_empty() {
            return Ok(());
        }
        let mut changes: HashSet<i64> = HashSet::new();
        {
            let conn = self.lock()?;
            for chunk in scored.chunks(500) {
                let sql = format!(
                    "SELECT memory_id FROM fact_checks WHERE stance = 'change' AND memory_id IN ({})",
                    vec!["?"; chunk.len()].join(",")
                );
                let mut stmt = conn.prepare(&sql)?;
                let rows = stmt.query_map(
                    rusqlite::params_from_iter(chunk.iter().map(|s| s.1.id)),
                    |row| row.get::<_, i64>(0),
                )?;
                for id in rows {
                    changes.insert(id?);
                }
            }
        }
        for (score, memory, channels) in scored.iter_mut() {
            if changes.contains(&memory.id) {
                *score += CHANGE_PRIOR;
                channels.push(Trace {
                    channel: "announces_change".to_owned(),
                    rank: 0,
                    score: CHANGE_PRIOR,
                });
            }
        }
        Ok(())
    }

    /// Reorders recall candidates by the versions of their facts: for a question about the
    /// present, the current version of a superseded candidate is placed just above it (fetched if
    /// it was not a candidate); for a question about the past, the versions a candidate superseded
    /// are placed just above it.
    pub(crate) fn follow_versions(
        &self,
        asked: Asked,
        scored: &mut Vec<(f64, MemoryRecord, Vec<Trace>)>,
        filter_sql: &str,
        filter_values: &[rusqlite::types::Value],
    ) -> Result<HashMap<i64, (i64, Asked)>, MemoryError> {
        let mut raises: Vec<(i64, f64, i64)> = Vec::new();
        {
            let conn = self.lock()?;
            for (score, memory, _) in scored.iter() {
                match asked {
                    Asked::Current | Asked::Now => {
                        let mut head = memory.id;
                        let mut cursor = successor(memory);
                        for _ in 0..MAX_CHAIN {
                            let Some(next) = cursor else { break };
                            match get(&conn, next)? {
                                Some(n) if live(&n) => {
                                    head = n.id;
                                    cursor = successor(&n);
                                }
                                _ => break,
                            }
                        }
                        if head != memory.id {
                            raises.push((head, score + VERSION_STEP, memory.id));
                        }
                    }
                    Asked::Earlier => {
                        for before in predecessors(memory) {
                            raises.push((before, score + VERSION_STEP, memory.id));
                        }
                    }
                    Asked::Unordered => {}
                }
            }
            let missing: Vec<i64> = raises
                .iter()
                .map(|r| r.0)
                .filter(|id| !scored.iter().any(|s| s.1.id == *id))
                .collect::<HashSet<_>>()
                .into_iter()
                .collect();
            for memory in fetch(&conn, &missing, filter_sql, filter_values)? {
                scored.push((0.0, memory, Vec::new()));
            }
        }
        let channel = match asked {
            Asked::Current | Asked::Now => "current_version",
            Asked::Earlier | Asked::Unordered => "earlier_version",
        };
        let mut placed: HashMap<i64, (f64, i64)> = HashMap::new();
        for (target, score, from) in raises {
            if let Some(entry) = scored.iter_mut().find(|s| s.1.id == target) {
                entry.0 = entry.0.max(score);
                let best = placed.entry(target).or_insert((score, from));
                if score > best.0 {
                    *best = (score, from);
                }
            }
        }
        for entry in scored.iter_mut() {
            if let Some((score, _)) = placed.get(&entry.1.id) {
                entry.2.push(Trace {
                    channel: channel.to_owned(),
                    rank: 0,
                    score: *score,
                });
            }
        }
        Ok(placed
            .into_iter()
            .map(|(k, (_, from))| (k, (from, asked)))
            .collect())
    }

    /// Orders recalled hits by time where the question asks about the present: a statement
    /// announcing a change moves above an older statement of the same owner that it may update
    /// (when it is nearly as relevant). Only the order of the hits changes, never which are
    /// recalled.
    pub(crate) fn order_by_time(asked: Asked, hits: &mut Vec<SearchHit>) {
        let statements: Vec<Statement> = hits.iter().map(|h| statement(&h.memory.text)).collect();
        let mut order: Vec<usize> = (0..hits.len()).collect();
        let mut moved = vec![false; hits.len()];
        for j in 0..hits.len() {
            let (newer, newer_said) = (&hits[j], &statements[j]);
            let Some(pos_j) = order.iter().position(|&k| k == j) else {
                continue;
            };
            let target = order[..pos_j].iter().position(|&i| {
                let (older, older_said) = (&hits[i], &statements[i]);
                let pair = older_said.owner == newer_said.owner
                    && older.memory.created_at < newer.memory.created_at
                    && older_said.asserts();
                match asked {
                    Asked::Current | Asked::Now => {
                        pair && newer_said.stance == Stance::Change
                            && newer.score >= RELEVANT_TO_MOVE * older.score
                    }
                    Asked::Earlier | Asked::Unordered => false,
                }
            });
            if let Some(at) = target {
                order.remove(pos_j);
                order.insert(at, j);
                moved[j] = true;
            }
        }
        let mut taken: Vec<Option<SearchHit>> = hits.drain(..).map(Some).collect();
        for k in order {
            if let Some(mut hit) = taken[k].take() {
                if moved[k] {
                    hit.reason.push_str(
                        "; moved above an older statement of the same person: it announces a change",
                    );
                }
                hits.push(hit);
            }
        }
    }

    /// Says in each hit's reason where the versions of its fact placed it.
    pub(crate) fn explain_versions(hits: &mut [SearchHit], placed: &HashMap<i64, (i64, Asked)>) {
        for hit in hits {
            if let Some((from, asked)) = placed.get(&hit.memory.id) {
                let which = match asked {
                    Asked::Current | Asked::Now => "the current version of",
                    Asked::Earlier | Asked::Unordered => "an earlier version of",
                };
                hit.reason.push_str(&format!(
                    "; placed above memory {from}: it is {which} that fact"
                ));
            }
            if let Some(by) = successor(&hit.memory) {
                let on = hit
                    .memory
                    .metadata
                    .get("superseded_on")
                    .and_then(Value::as_i64)
                    .map(crate::date)
                    .unwrap_or_default();
                hit.reason
                    .push_str(&format!("; superseded on {on} by memory {by}"));
            }
        }
    }

    /// The versions of `id`'s fact, oldest first: the chain of memories it superseded and that
    /// superseded it (for the memory panel's history).
    pub fn versions(&self, id: i64) -> Result<Vec<MemoryRecord>, MemoryError> {
        let conn = self.lock()?;
        let Some(memory) = get(&conn, id)? else {
            return Err(MemoryError::NotFound(format!("memory {id}")));
        };
        let mut earlier = Vec::new();
        let mut seen = HashSet::from([id]);
        let mut cursor = memory.clone();
        for _ in 0..MAX_CHAIN {
            let Some(previous) = predecessors(&cursor)
                .into_iter()
                .filter(|p| !seen.contains(p))
                .filter_map(|p| get(&conn, p).ok().flatten())
                .max_by_key(|m| m.created_at)
            else {
                break;
            };
            seen.insert(previous.id);
            earlier.push(previous.clone());
            cursor = previous;
        }
        earlier.reverse();
        earlier.push(memory.clone());
        let mut cursor = memory;
        for _ in 0..MAX_CHAIN {
            let Some(next) = successor(&cursor).filter(|n| seen.insert(*n)) else {
                break;
            };
            let Some(next) = get(&conn, next)? else { break };
            earlier.push(next.clone());
            cursor = next;
        }
        Ok(earlier)
    }
}

/// Takes a memory about to be deleted out of its fact's chain: what it superseded is superseded by
/// its own successor instead, or, without one, holds again.
pub(crate) fn unlink(
    conn: &rusqlite::Connection,
    memory: &MemoryRecord,
) -> Result<(), MemoryError> {
    let next = successor(memory);
    let before = predecessors(memory);
    for id in &before {
        update_metadata(conn, *id, |map| match next {
            Some(next) => {
                map.insert("superseded_by".into(), Value::from(next));
            }
            None => {
                map.remove("superseded_by");
                map.remove("superseded_on");
            }
        })?;
    }
    if let Some(newer) = next.map(|n| get(conn, n)).transpose()?.flatten() {
        let mut ids: Vec<i64> = predecessors(&newer)
            .into_iter()
            .filter(|p| *p != memory.id)
            .collect();
        for b in &before {
            if !ids.contains(b) {
                ids.push(*b);
            }
        }
        update_metadata(conn, newer.id, |map| {
            map.insert("supersedes".into(), Value::from(ids));
        })?;
    }
    Ok(())
}

//! The store's side of sync between devices: the person's own changes become records of this
//! device's log (`seal`), and records of other devices' logs are applied (`apply`), each page
//! with its cursor in one transaction.
//!
//! What syncs are the traces (L1) a person wrote, captured or imported, and their ratings. What
//! the background works out from them — versions of a fact, merged duplicates, rewards, summaries,
//! learned policies, world models, skills, dream notes — is worked out again on each device from
//! the same traces, so nothing derived travels.
//!
//! A memory gets a global id (`uid`) when it is first sealed: random, or derived from its source
//! and external id when that id means the same on every device (an imported turn's key), so the
//! same conversation imported on two machines is one memory. Its content and its status carry a
//! version each (`{wall ms}-{device}`); a device keeps the highest of each, a deletion beats
//! both, and a version sealed after another was applied is always higher than it, so every
//! device reaches the same state whatever order the records arrive in.

use std::collections::HashMap;

use cairn_protocol::sync::{
    version_at, version_wall, FeedbackEvent, MemoryContent, MemorySnapshot, Record, StatusChange,
    Version,
};
use rusqlite::{params, Connection, OptionalExtension, Transaction};

use crate::dream::DREAM_SOURCE;
use crate::model::{Layer, NewMemory, Status};
use crate::overview::revision_of;
use crate::store::{cached, log_change, stored_id};
use crate::write::Unindexed;
use crate::{MemoryError, MemoryStore};

/// The change-log operations that are a person's own changes of a memory.
const AUTHORED: &str = "'add', 'capture', 'edit', 'delete', 'status'";

/// Metadata each device writes for itself: left out of a record, and kept as it is on apply.
const DERIVED_KEYS: &[&str] = &[
    "value",
    "reward",
    "superseded_by",
    "superseded_on",
    "supersedes",
    "duplicate_of",
    "duplicates",
    "model_pending",
    "model_refused",
    "rollup_of",
];

/// Namespace of the uids derived from a memory's source and external id.
const UID_NAMESPACE: uuid::Uuid = uuid::Uuid::from_u128(0x6361_6972_6e2d_4d65_6d6f_7279_2d55_4944);

/// A record of this device's log.
#[derive(Debug, Clone, PartialEq)]
pub struct Outgoing {
    pub idx: i64,
    /// The newest version the record carries.
    pub version: Version,
    pub record: Record,
    /// Its sealed bytes once sealed: sent again after a crash, they are the same bytes.
    pub sealed: Option<Vec<u8>>,
}

/// What applying a page did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Applied {
    /// Memories added, changed or deleted here.
    pub changed: usize,
    /// Records that changed nothing (already here, or older than what is here).
    pub unchanged: usize,
    /// Ratings of memories not here yet, kept until they arrive.
    pub parked: usize,
}

fn new_uid(source: &str, key: Option<&str>) -> String {
    match key {
        Some(key) => {
            uuid::Uuid::new_v5(&UID_NAMESPACE, format!("{source}\n{key}").as_bytes()).to_string()
        }
        None => uuid::Uuid::now_v7().to_string(),
    }
}

/// The key a memory has on every device that holds it, if any: a captured or imported turn's
/// idempotency key (its `turn:{id}` names a row of this device only), or the external id its
/// writer gave it.
fn global_key(conn: &Connection, held: &Held) -> Result<Option<String>, MemoryError> {
    let Some(external) = &held.external_id else {
        return Ok(None);
    };
    match external.strip_prefix("turn:").map(str::parse::<i64>) {
        Some(Ok(turn)) => Ok(conn
            .prepare_cached("SELECT idempotency_key FROM turns WHERE id = ?1")?
            .query_row([turn], |row| row.get::<_, Option<String>>(0))
            .optional()?
            .flatten()),
        _ => Ok(Some(external.clone())),
    }
}

/// The version this device writes for a change at `at`, after `previous`.
fn next_version(previous: &str, at: i64, device: &str) -> Version {
    let after = if previous.is_empty() {
        0
    } else {
        version_wall(previous) + 1
    };
    version_at(at.max(after), device)
}

/// The metadata a record carries: what the author wrote.
fn authored(metadata: &serde_json::Value) -> serde_json::Value {
    let mut map = match metadata {
        serde_json::Value::Object(map) => map.clone(),
        _ => serde_json::Map::new(),
    };
    map.retain(|key, _| !DERIVED_KEYS.contains(&key.as_str()));
    serde_json::Value::Object(map)
}

fn meta(conn: &Connection, key: &str) -> Result<Option<String>, MemoryError> {
    Ok(conn
        .prepare_cached("SELECT value FROM sync_meta WHERE key = ?1")?
        .query_row([key], |row| row.get(0))
        .optional()?)
}

fn set_meta(conn: &Connection, key: &str, value: &str) -> Result<(), MemoryError> {
    cached(
        conn,
        "INSERT INTO sync_meta (key, value) VALUES (?1, ?2)
         ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        params![key, value],
    )?;
    Ok(())
}

/// A memory as this device holds it, for sealing or applying.
struct Held {
    id: i64,
    layer: String,
    status: String,
    text: String,
    source: String,
    external_id: Option<String>,
    session: Option<String>,
    created_at: i64,
    metadata: String,
    uid: Option<String>,
    content_version: String,
    status_version: String,
}

const HELD: &str =
    "id, layer, status, text, source, external_id, session_key, created_at, metadata,
                    uid, content_version, status_version";

fn held(row: &rusqlite::Row<'_>) -> rusqlite::Result<Held> {
    Ok(Held {
        id: row.get(0)?,
        layer: row.get(1)?,
        status: row.get(2)?,
        text: row.get(3)?,
        source: row.get(4)?,
        external_id: row.get(5)?,
        session: row.get(6)?,
        created_at: row.get(7)?,
        metadata: row.get(8)?,
        uid: row.get(9)?,
        content_version: row.get(10)?,
        status_version: row.get(11)?,
    })
}

impl Held {
    fn synced(&self) -> bool {
        self.layer == Layer::Trace.as_str() && self.source != DREAM_SOURCE
    }

    fn snapshot(&self, uid: &str, key: Option<String>) -> MemorySnapshot {
        let metadata = serde_json::from_str(&self.metadata).unwrap_or(serde_json::Value::Null);
        MemorySnapshot {
            uid: uid.to_owned(),
            content: Some(MemoryContent {
                version: self.content_version.clone(),
                layer: Layer::Trace,
                text: self.text.clone(),
                source: self.source.clone(),
                external_id: key,
                session: self.session.clone(),
                created_at: self.created_at,
                metadata: authored(&metadata),
            }),
            status: (!self.status_version.is_empty()).then(|| StatusChange {
                version: self.status_version.clone(),
                status: Status::parse(&self.status).unwrap_or(Status::Activated),
            }),
            deleted: None,
        }
    }
}

fn held_by(
    conn: &Connection,
    clause: &str,
    key: &dyn rusqlite::ToSql,
) -> Result<Option<Held>, MemoryError> {
    Ok(conn
        .prepare_cached(&format!("SELECT {HELD} FROM memories WHERE {clause}"))?
        .query_row([key], held)
        .optional()?)
}

/// A rating not sealed yet: its row id, time, value, origin, note and its memory's uid.
type Unsealed = (i64, i64, f64, String, Option<String>, Option<String>);

/// What the person did to one memory since the last seal: when, per part.
#[derive(Default)]
struct Touched {
    content: Option<i64>,
    status: Option<i64>,
    deleted: Option<i64>,
}

fn append(tx: &Transaction<'_>, record: &Record, version: &str) -> Result<i64, MemoryError> {
    let idx: i64 = tx.query_row(
        "SELECT coalesce(max(idx), 0) + 1 FROM sync_outbox",
        [],
        |row| row.get(0),
    )?;
    cached(
        tx,
        "INSERT INTO sync_outbox (idx, version, body) VALUES (?1, ?2, ?3)",
        params![idx, version, serde_json::to_string(record)?],
    )?;
    Ok(idx)
}

impl MemoryStore {
    /// Writes the person's changes since the last seal into this device's (`device`) log, one
    /// record per memory or rating; returns how many records it wrote.
    pub fn sync_seal(&self, device: &str) -> Result<usize, MemoryError> {
        let mut conn = self.lock()?;
        let tx = conn.transaction()?;
        let sealed = self.seal_in(&tx, device)?;
        tx.commit()?;
        Ok(sealed)
    }

    /// Records of this device's log from index `from` on, at most `limit`.
    pub fn sync_outbox(&self, from: i64, limit: usize) -> Result<Vec<Outgoing>, MemoryError> {
        let conn = self.lock()?;
        let mut stmt = conn.prepare_cached(
            "SELECT idx, version, body, sealed FROM sync_outbox WHERE idx >= ?1 ORDER BY idx LIMIT ?2",
        )?;
        let rows = stmt.query_map(params![from, limit as i64], |row| {
            Ok((
                row.get::<_, i64>(0)?,
                row.get::<_, String>(1)?,
                row.get::<_, String>(2)?,
                row.get::<_, Option<Vec<u8>>>(3)?,
            ))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (idx, version, body, sealed) = row?;
            out.push(Outgoing {
                idx,
                version,
                record: serde_json::from_str(&body)?,
                sealed,
            });
        }
        Ok(out)
    }

    /// Keeps the sealed bytes of records (by index), in one transaction: whatever happens, each is
    /// sent as these bytes. A record sealed already (by another process) keeps its first bytes.
    pub fn sync_keep_sealed(&self, sealed: &[(i64, Vec<u8>)]) -> Result<(), MemoryError> {
        let mut conn = self.lock()?;
        let tx = conn.transaction()?;
        for (idx, bytes) in sealed {
            cached(
                &tx,
                "UPDATE sync_outbox SET sealed = ?2 WHERE idx = ?1 AND sealed IS NULL",
                params![idx, bytes],
            )?;
        }
        tx.commit()?;
        Ok(())
    }

    /// The last index of this device's log (0 when empty).
    pub fn sync_log_end(&self) -> Result<i64, MemoryError> {
        let conn = self.lock()?;
        Ok(
            conn.query_row("SELECT coalesce(max(idx), 0) FROM sync_outbox", [], |row| {
                row.get(0)
            })?,
        )
    }

    /// Starts this device's log afresh for a new place on a hub (`device`, once joined again):
    /// the log holds every synced memory and rating as they are now, versions unchanged, and
    /// nothing of it has been sent. Does nothing when the log is already `device`'s.
    pub fn sync_restart_log(&self, device: &str) -> Result<bool, MemoryError> {
        let mut conn = self.lock()?;
        let tx = conn.transaction()?;
        if meta(&tx, "log_device")?.as_deref() == Some(device) {
            return Ok(false);
        }
        let fresh = meta(&tx, "log_device")?.is_none()
            && tx.query_row("SELECT count(*) FROM sync_outbox", [], |row| {
                row.get::<_, i64>(0)
            })? == 0;
        set_meta(&tx, "log_device", device)?;
        cached(&tx, "DELETE FROM sync_meta WHERE key = 'pushed'", [])?;
        if !fresh {
            cached(&tx, "DELETE FROM sync_outbox", [])?;
            let held: Vec<Held> = {
                let mut stmt = tx.prepare(&format!(
                    "SELECT {HELD} FROM memories WHERE uid IS NOT NULL ORDER BY id"
                ))?;
                let rows = stmt.query_map([], held)?;
                rows.collect::<Result<_, _>>()?
            };
            for memory in held {
                let uid = memory.uid.clone().unwrap_or_default();
                let newest = memory
                    .content_version
                    .clone()
                    .max(memory.status_version.clone());
                let record = if memory.status == Status::Deleted.as_str() {
                    Record::Memory(MemorySnapshot {
                        uid,
                        content: None,
                        status: None,
                        deleted: Some(newest.clone()),
                    })
                } else {
                    Record::Memory(memory.snapshot(&uid, global_key(&tx, &memory)?))
                };
                append(&tx, &record, &newest)?;
            }
            let ratings: Vec<FeedbackEvent> = {
                let mut stmt = tx.prepare(
                    "SELECT f.uid, m.uid, f.at, f.value, f.origin, f.note FROM feedback f
                     JOIN memories m ON m.id = f.memory_id
                     WHERE m.uid IS NOT NULL AND f.uid IS NOT NULL AND f.uid NOT LIKE 'local-%'
                     ORDER BY f.id",
                )?;
                let rows = stmt.query_map([], |row| {
                    Ok(FeedbackEvent {
                        uid: row.get(0)?,
                        memory: row.get(1)?,
                        at: row.get(2)?,
                        value: row.get(3)?,
                        origin: row.get(4)?,
                        note: row.get(5)?,
                    })
                })?;
                rows.collect::<Result<_, _>>()?
            };
            for rating in ratings {
                let version = version_at(rating.at, device);
                append(&tx, &Record::Feedback(rating), &version)?;
            }
        }
        tx.commit()?;
        Ok(true)
    }

    /// A value the sync client keeps beside the memory (what the hub acknowledged…).
    pub fn sync_meta(&self, key: &str) -> Result<Option<String>, MemoryError> {
        meta(&*self.lock()?, key)
    }

    pub fn sync_set_meta(&self, key: &str, value: &str) -> Result<(), MemoryError> {
        set_meta(&*self.lock()?, key, value)
    }

    /// How far another device's log has been applied here.
    pub fn sync_cursor(&self, device: &str) -> Result<i64, MemoryError> {
        let conn = self.lock()?;
        let idx = conn
            .prepare_cached("SELECT idx FROM sync_cursors WHERE device = ?1")?
            .query_row([device], |row| row.get(0))
            .optional()?;
        Ok(idx.unwrap_or(0))
    }

    /// Applies records `from_device`'s log holds at the given indexes, in order, and moves that
    /// log's cursor to the last of them, in one transaction: a page lands once or not at all.
    /// This device's own unsealed changes are sealed first (as `device`), so that what applying
    /// writes is never taken for the person's own.
    pub fn sync_apply(
        &self,
        device: &str,
        from_device: &str,
        records: &[(i64, Record)],
    ) -> Result<Applied, MemoryError> {
        let Some(last) = records.last().map(|(idx, _)| *idx) else {
            return Ok(Applied::default());
        };
        let mut conn = self.lock()?;
        let tx = conn.transaction()?;
        self.seal_in(&tx, device)?;
        let mut applied = Applied::default();
        let mut gone = Vec::new();
        for (_, record) in records {
            let changed = match record {
                Record::Memory(snapshot) => self.apply_memory(&tx, snapshot, &mut gone)?,
                Record::Feedback(event) => match apply_feedback(&tx, event)? {
                    Some(changed) => changed,
                    None => {
                        applied.parked += 1;
                        false
                    }
                },
            };
            if changed {
                applied.changed += 1;
            } else {
                applied.unchanged += 1;
            }
        }
        applied.parked -= unpark(&tx)?.min(applied.parked);
        cached(
            &tx,
            "INSERT INTO sync_cursors (device, idx) VALUES (?1, ?2)
             ON CONFLICT(device) DO UPDATE SET idx = excluded.idx",
            params![from_device, last],
        )?;
        let end = revision_of(&tx)?;
        set_meta(&tx, "sealed_seq", &end.to_string())?;
        tx.commit()?;
        drop(conn);
        for id in gone {
            self.forget_vector(id);
        }
        self.wake_embedding();
        Ok(applied)
    }

    fn apply_memory(
        &self,
        tx: &Transaction<'_>,
        snapshot: &MemorySnapshot,
        gone: &mut Vec<i64>,
    ) -> Result<bool, MemoryError> {
        let mut local = held_by(tx, "uid = ?1", &snapshot.uid)?;
        if local.is_none() {
            // The same memory written on two devices before either synced (an imported turn):
            // its uid follows from its source and external id, so it is this one.
            if let Some(content) = &snapshot.content {
                if let Some(external) = &content.external_id {
                    if let Some(id) = stored_id(tx, &content.source, external)? {
                        cached(
                            tx,
                            "UPDATE memories SET uid = ?2 WHERE id = ?1 AND uid IS NULL",
                            params![id, snapshot.uid],
                        )?;
                        local = held_by(tx, "id = ?1", &id)?;
                    }
                }
            }
        }
        if snapshot.deleted.is_some() {
            return match local {
                Some(held) if held.status == Status::Deleted.as_str() => Ok(false),
                Some(held) => {
                    gone.push(held.id);
                    self.delete_in(tx, held.id, gone)
                }
                None => {
                    // A tombstone, so the memory never comes back from an older record.
                    cached(
                        tx,
                        "INSERT INTO memories (layer, status, text, source, created_at, updated_at, uid)
                         VALUES ('L1', 'deleted', '', '', 0, ?1, ?2)",
                        params![self.now(), snapshot.uid],
                    )?;
                    Ok(true)
                }
            };
        }
        let Some(content) = &snapshot.content else {
            return Ok(false);
        };
        let mut changed = false;
        let id = match local {
            Some(held) if held.status == Status::Deleted.as_str() => return Ok(false),
            Some(held) => {
                if content.version > held.content_version {
                    if content.text != held.text {
                        self.rewrite(tx, held.id, &content.text, "pull")?;
                        gone.push(held.id);
                    }
                    let mut metadata: serde_json::Map<String, serde_json::Value> =
                        match serde_json::from_str(&held.metadata) {
                            Ok(serde_json::Value::Object(map)) => map,
                            _ => serde_json::Map::new(),
                        };
                    metadata.retain(|key, _| DERIVED_KEYS.contains(&key.as_str()));
                    if let serde_json::Value::Object(theirs) = authored(&content.metadata) {
                        metadata.extend(theirs);
                    }
                    cached(
                        tx,
                        "UPDATE memories SET content_version = ?2, metadata = ?3, session_key = ?4,
                                             created_at = ?5
                         WHERE id = ?1",
                        params![
                            held.id,
                            content.version,
                            serde_json::Value::Object(metadata).to_string(),
                            content.session,
                            content.created_at
                        ],
                    )?;
                    changed = true;
                }
                held.id
            }
            None => {
                let memory = NewMemory {
                    text: content.text.clone(),
                    layer: Some(content.layer),
                    source: Some(content.source.clone()),
                    external_id: content.external_id.clone(),
                    session: content.session.clone(),
                    created_at: Some(content.created_at),
                    metadata: Some(authored(&content.metadata)),
                };
                let analysed = self.analyse(&memory.text, memory.metadata.clone());
                let mut unindexed = Unindexed::default();
                let id = self.insert_analysed(tx, memory, analysed, None, None, &mut unindexed)?;
                self.index_marked(tx, unindexed)?;
                cached(
                    tx,
                    "UPDATE memories SET uid = ?2, content_version = ?3 WHERE id = ?1",
                    params![id, snapshot.uid, content.version],
                )?;
                changed = true;
                id
            }
        };
        if let Some(status) = &snapshot.status {
            let current: String = tx.query_row(
                "SELECT status_version FROM memories WHERE id = ?1",
                [id],
                |row| row.get(0),
            )?;
            if status.version > current && status.status != Status::Deleted {
                cached(
                    tx,
                    "UPDATE memories SET status = ?2, status_version = ?3 WHERE id = ?1",
                    params![id, status.status.as_str(), status.version],
                )?;
                changed = true;
            }
        }
        if changed {
            log_change(tx, self.now(), "pull", Some(id), &serde_json::json!({}))?;
        }
        Ok(changed)
    }

    /// Every synced memory and rating, as every device must hold them: sorted by uid, with only
    /// what travels (what each device works out itself is left out). Two devices that have
    /// applied each other's logs hold the same.
    pub fn sync_dump(&self) -> Result<serde_json::Value, MemoryError> {
        let conn = self.lock()?;
        let mut memories = Vec::new();
        let mut stmt = conn.prepare(&format!(
            "SELECT {HELD} FROM memories WHERE uid IS NOT NULL ORDER BY uid"
        ))?;
        for row in stmt.query_map([], held)? {
            let row = row?;
            let uid = row.uid.clone().unwrap_or_default();
            if row.status == Status::Deleted.as_str() {
                memories.push(serde_json::json!({ "uid": uid, "deleted": true }));
            } else {
                let snapshot = row.snapshot(&uid, global_key(&conn, &row)?);
                memories.push(serde_json::json!({
                    "uid": uid,
                    "status": row.status,
                    "content": snapshot.content,
                }));
            }
        }
        let mut ratings = Vec::new();
        let mut stmt = conn.prepare(
            "SELECT f.uid, m.uid, f.at, f.value, f.origin, f.note FROM feedback f
             JOIN memories m ON m.id = f.memory_id
             WHERE m.uid IS NOT NULL AND m.status != 'deleted' AND f.uid NOT LIKE 'local-%'
             ORDER BY f.uid",
        )?;
        let rows = stmt.query_map([], |row| {
            Ok(serde_json::json!({
                "uid": row.get::<_, Option<String>>(0)?,
                "memory": row.get::<_, String>(1)?,
                "at": row.get::<_, i64>(2)?,
                "value": row.get::<_, f64>(3)?,
                "origin": row.get::<_, String>(4)?,
                "note": row.get::<_, Option<String>>(5)?,
            }))
        })?;
        for row in rows {
            ratings.push(row?);
        }
        Ok(serde_json::json!({ "memories": memories, "ratings": ratings }))
    }
}

impl MemoryStore {
    /// Seals the person's changes since the last seal (see [`MemoryStore::sync_seal`]).
    fn seal_in(&self, tx: &Transaction<'_>, device: &str) -> Result<usize, MemoryError> {
        let after: i64 = meta(tx, "sealed_seq")?
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        let mut order = Vec::new();
        let mut touched: HashMap<i64, Touched> = HashMap::new();
        let mut end = after;
        {
            let mut stmt = tx.prepare_cached(&format!(
                "SELECT seq, op, memory_id, at, detail FROM changes
             WHERE seq > ?1 AND memory_id IS NOT NULL AND op IN ({AUTHORED}) ORDER BY seq"
            ))?;
            let rows = stmt.query_map([after], |row| {
                Ok((
                    row.get::<_, i64>(0)?,
                    row.get::<_, String>(1)?,
                    row.get::<_, i64>(2)?,
                    row.get::<_, i64>(3)?,
                    row.get::<_, String>(4)?,
                ))
            })?;
            for row in rows {
                let (seq, op, id, at, detail) = row?;
                end = end.max(seq);
                if op == "status" && !detail.contains("\"by\":\"person\"") {
                    continue; // the background's (a merge, a learned policy), worked out on each device
                }
                let entry = touched.entry(id).or_insert_with(|| {
                    order.push(id);
                    Touched::default()
                });
                let part = match op.as_str() {
                    "delete" => &mut entry.deleted,
                    "status" => &mut entry.status,
                    _ => &mut entry.content,
                };
                *part = Some(part.map_or(at, |t: i64| t.max(at)));
            }
        }
        let newest = revision_of(tx)?;
        let mut sealed = 0;
        for id in order {
            let Some(held) = held_by(tx, "id = ?1", &id)? else {
                continue;
            };
            if !held.synced() {
                continue;
            }
            let Some(touch) = touched.get(&id) else {
                continue;
            };
            let key = global_key(tx, &held)?;
            let uid = match &held.uid {
                Some(uid) => uid.clone(),
                None => {
                    let uid = new_uid(&held.source, key.as_deref());
                    if held_by(tx, "uid = ?1", &uid)?.is_some() {
                        // Imported here after the same turn arrived from another device: one copy
                        // is enough, and that one is already everywhere.
                        let mut gone = vec![id];
                        self.delete_in(tx, id, &mut gone)?;
                        continue;
                    }
                    uid
                }
            };
            let (record, version) = if let Some(at) = touch.deleted {
                if held.uid.is_none() {
                    continue; // deleted before it was ever sealed: no other device has it
                }
                let newest = held
                    .content_version
                    .clone()
                    .max(held.status_version.clone());
                let version = next_version(&newest, at, device);
                let record = Record::Memory(MemorySnapshot {
                    uid: uid.clone(),
                    content: None,
                    status: None,
                    deleted: Some(version.clone()),
                });
                (record, version)
            } else {
                let mut held = held;
                if let Some(at) = touch.content {
                    held.content_version = next_version(&held.content_version, at, device);
                }
                if let Some(at) = touch.status {
                    held.status_version = next_version(&held.status_version, at, device);
                }
                cached(
                tx,
                "UPDATE memories SET uid = ?2, content_version = ?3, status_version = ?4 WHERE id = ?1",
                params![id, uid, held.content_version, held.status_version],
            )?;
                let version = held
                    .content_version
                    .clone()
                    .max(held.status_version.clone());
                (Record::Memory(held.snapshot(&uid, key)), version)
            };
            append(tx, &record, &version)?;
            sealed += 1;
        }
        // Ratings: each once, in the order given.
        let ratings: Vec<Unsealed> = {
            let mut stmt = tx.prepare_cached(
                "SELECT f.id, f.at, f.value, f.origin, f.note, m.uid FROM feedback f
             JOIN memories m ON m.id = f.memory_id WHERE f.uid IS NULL ORDER BY f.id",
            )?;
            let rows = stmt.query_map([], |row| {
                Ok((
                    row.get(0)?,
                    row.get(1)?,
                    row.get(2)?,
                    row.get(3)?,
                    row.get(4)?,
                    row.get(5)?,
                ))
            })?;
            rows.collect::<Result<_, _>>()?
        };
        for (id, at, value, origin, note, memory) in ratings {
            let Some(memory) = memory else {
                // A rating of a memory that does not travel (a learned one).
                cached(
                    tx,
                    "UPDATE feedback SET uid = ?2 WHERE id = ?1",
                    params![id, format!("local-{id}")],
                )?;
                continue;
            };
            let uid = uuid::Uuid::now_v7().to_string();
            cached(
                tx,
                "UPDATE feedback SET uid = ?2 WHERE id = ?1",
                params![id, uid],
            )?;
            let record = Record::Feedback(FeedbackEvent {
                uid,
                memory,
                at,
                value,
                origin,
                note,
            });
            append(tx, &record, &version_at(at, device))?;
            sealed += 1;
        }
        set_meta(tx, "sealed_seq", &newest.max(end).to_string())?;
        Ok(sealed)
    }
}

/// Applies one rating; `None` when its memory is not here yet (it is parked until it arrives).
fn apply_feedback(
    tx: &Transaction<'_>,
    event: &FeedbackEvent,
) -> Result<Option<bool>, MemoryError> {
    let known: Option<i64> = tx
        .prepare_cached("SELECT 1 FROM feedback WHERE uid = ?1")?
        .query_row([&event.uid], |row| row.get(0))
        .optional()?;
    if known.is_some() {
        return Ok(Some(false));
    }
    let memory: Option<(i64, String)> = tx
        .prepare_cached("SELECT id, status FROM memories WHERE uid = ?1")?
        .query_row([&event.memory], |row| Ok((row.get(0)?, row.get(1)?)))
        .optional()?;
    match memory {
        None => {
            cached(
                tx,
                "INSERT OR IGNORE INTO sync_parked (uid, memory, body) VALUES (?1, ?2, ?3)",
                params![event.uid, event.memory, serde_json::to_string(event)?],
            )?;
            Ok(None)
        }
        Some((_, status)) if status == Status::Deleted.as_str() => Ok(Some(false)),
        Some((id, _)) => {
            crate::feedback::rate(
                tx,
                event.at,
                id,
                event.value,
                &event.origin,
                event.note.as_deref(),
            )?;
            cached(
                tx,
                "UPDATE feedback SET uid = ?2
                 WHERE id = (SELECT max(id) FROM feedback WHERE memory_id = ?1 AND uid IS NULL)",
                params![id, event.uid],
            )?;
            Ok(Some(true))
        }
    }
}

/// Applies the parked ratings whose memories have arrived; returns how many left the park.
fn unpark(tx: &Transaction<'_>) -> Result<usize, MemoryError> {
    let parked: Vec<(String, String)> = {
        let mut stmt = tx.prepare_cached(
            "SELECT p.uid, p.body FROM sync_parked p JOIN memories m ON m.uid = p.memory",
        )?;
        let rows = stmt.query_map([], |row| Ok((row.get(0)?, row.get(1)?)))?;
        rows.collect::<Result<_, _>>()?
    };
    for (uid, body) in &parked {
        let event: FeedbackEvent = serde_json::from_str(body)?;
        apply_feedback(tx, &event)?;
        cached(tx, "DELETE FROM sync_parked WHERE uid = ?1", [uid])?;
    }
    Ok(parked.len())
}

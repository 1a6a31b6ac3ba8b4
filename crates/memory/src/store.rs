//! The store: the database handle (opening, migrating, the read-only second connection, the
//! clock), reading memories, changing their status and metadata, and the change log. Writing
//! memories is `write`, deleting them `delete`, the memory panel's counts `overview`.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, RwLock};

use rusqlite::{params, Connection, OptionalExtension, Transaction};

use crate::clock::now_ms;
use crate::index::{record, TermStats, COLUMNS};
use crate::lent_models::{Embedder, Writer, WriterUses};
use crate::model::{Layer, MemoryRecord, Status};
use crate::text::Analyzer;
use crate::vector_index::VectorIndex;
use crate::{schema, MemoryError};

/// The memory database. All methods take `&self`; writes are serialised on one connection.
pub struct MemoryStore {
    conn: Mutex<Connection>,
    pub(crate) path: Option<PathBuf>,
    pub(crate) analyzer: Analyzer,
    clock: Box<dyn Fn() -> i64 + Send + Sync>,
    pub(crate) embedder: RwLock<Option<Arc<dyn Embedder>>>,
    /// The background models, each with what it is lent for.
    pub(crate) writer: RwLock<Vec<(Arc<dyn Writer>, WriterUses)>>,
    /// Loaded on the first vector search; `None` until then.
    pub(crate) vectors: Mutex<Option<VectorIndex>>,
    /// Set when new memories wait for the embedding queue.
    pub(crate) pending: Arc<(Mutex<bool>, Condvar)>,
    /// Whether the background queue runs (it is started once).
    pub(crate) worker: std::sync::atomic::AtomicBool,
    /// Whether induction learns from rated episodes (on unless turned off; see `set_evolution`).
    pub(crate) evolution: std::sync::atomic::AtomicBool,
    /// Document frequencies for planning queries.
    pub(crate) term_stats: Mutex<TermStats>,
    /// The vectors of recent queries, newest last: (model, query, vector).
    pub(crate) query_vectors: Mutex<std::collections::VecDeque<(String, String, Vec<f32>)>>,
    /// A second, read-only connection to the file, for reads beside a long write (an import
    /// asks what it already holds while the conversation before is written); opened on first use.
    read_only: Mutex<Option<Connection>>,
    /// Where the embedding queue resumes: the id of the last memory it took.
    pub(crate) embed_after: Mutex<Option<i64>>,
    /// Where the reading of facts resumes: (created_at, id) of the last memory it took.
    pub(crate) relate_after: Mutex<Option<(i64, i64)>>,
}

/// Takes the next batch of a background queue from where its last batch ended (`after`), so a
/// backlog is read once rather than its finished rows skipped again for every batch. When
/// nothing is left past that point the queue looks once more from the start, for what a later
/// write left behind it (an edited text, an older conversation imported).
pub(crate) fn resume<K: Copy, R>(
    after: &Mutex<Option<K>>,
    key: impl Fn(&R) -> K,
    mut batch: impl FnMut(Option<K>) -> Result<Vec<R>, MemoryError>,
) -> Result<Vec<R>, MemoryError> {
    let from = after.lock().ok().and_then(|a| *a);
    let mut rows = batch(from)?;
    if rows.is_empty() && from.is_some() {
        rows = batch(None)?;
    }
    if let Ok(mut after) = after.lock() {
        *after = rows.last().map(&key);
    }
    Ok(rows)
}

/// Runs one statement through the connection's prepared-statement cache: the write path runs the
/// same few statements for every memory, and parsing them each time cost more than running them.
pub(crate) fn cached(
    conn: &rusqlite::Connection,
    sql: &str,
    params: impl rusqlite::Params,
) -> rusqlite::Result<usize> {
    conn.prepare_cached(sql)?.execute(params)
}

/// Runs a batch of background work until a batch finds nothing left; how many items it did.
pub(crate) fn drain(
    mut batch: impl FnMut() -> Result<usize, MemoryError>,
) -> Result<usize, MemoryError> {
    let mut total = 0;
    loop {
        let n = batch()?;
        total += n;
        if n == 0 {
            return Ok(total);
        }
    }
}

impl MemoryStore {
    /// Opens (creating if needed) the database at `path`, migrating it after a backup.
    pub fn open(path: &Path) -> Result<Self, MemoryError> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|source| MemoryError::Io {
                path: dir.display().to_string(),
                source,
            })?;
        }
        // One connection at a time sets the file up (journal mode, migrations), in this process
        // or another: connections racing on a brand-new file could each read it as unmigrated
        // while they switched it to WAL, and migrate it twice. The lock is held until the set-up
        // is done (the file beside the database stays, empty).
        let lock_path = PathBuf::from(format!("{}.lock", path.display()));
        let _set_up = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .and_then(|file| file.lock().map(|()| file))
            .map_err(|source| MemoryError::Io {
                path: lock_path.display().to_string(),
                source,
            })?;
        // Connections racing to set up a new file can see its rollback journal vanish under them
        // (an I/O error): each step is transactional, so a fresh connection simply tries again.
        let mut attempts = 0;
        loop {
            let mut conn = Connection::open(path)?;
            match schema::prepare(&mut conn, Some(path)) {
                Ok(()) => return Ok(Self::from_connection(conn, Some(path.to_owned()))),
                Err(MemoryError::Database(rusqlite::Error::SqliteFailure(e, _)))
                    if e.code == rusqlite::ErrorCode::SystemIoFailure && attempts < 20 =>
                {
                    attempts += 1;
                    drop(conn);
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// A private database in memory (tests, evaluation).
    pub fn open_in_memory() -> Result<Self, MemoryError> {
        let mut conn = Connection::open_in_memory()?;
        schema::prepare(&mut conn, None)?;
        Ok(Self::from_connection(conn, None))
    }

    fn from_connection(conn: Connection, path: Option<PathBuf>) -> Self {
        Self {
            conn: Mutex::new(conn),
            path,
            analyzer: Analyzer::default(),
            clock: Box::new(now_ms),
            embedder: RwLock::new(None),
            writer: RwLock::new(Vec::new()),
            vectors: Mutex::new(None),
            pending: Arc::new((Mutex::new(false), Condvar::new())),
            worker: std::sync::atomic::AtomicBool::new(false),
            evolution: std::sync::atomic::AtomicBool::new(true),
            term_stats: Mutex::new(TermStats::default()),
            query_vectors: Mutex::new(std::collections::VecDeque::new()),
            read_only: Mutex::new(None),
            embed_after: Mutex::new(None),
            relate_after: Mutex::new(None),
        }
    }

    /// Replaces the clock (unix milliseconds), for tests.
    pub fn with_clock(mut self, clock: impl Fn() -> i64 + Send + Sync + 'static) -> Self {
        self.clock = Box::new(clock);
        self
    }

    pub(crate) fn now(&self) -> i64 {
        (self.clock)()
    }

    /// Runs `read` on the read-only connection, which does not wait for a write in progress (a
    /// store in memory has only its one connection).
    pub(crate) fn read<T>(
        &self,
        read: impl FnOnce(&Connection) -> Result<T, MemoryError>,
    ) -> Result<T, MemoryError> {
        let Some(path) = &self.path else {
            return read(&*self.lock()?);
        };
        let mut reader = self
            .read_only
            .lock()
            .map_err(|_| MemoryError::Invalid("the memory store was poisoned by a panic".into()))?;
        let conn = match reader.take() {
            Some(conn) => conn,
            None => {
                let conn = Connection::open_with_flags(
                    path,
                    rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY
                        | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
                )?;
                conn.busy_timeout(std::time::Duration::from_secs(5))?;
                conn
            }
        };
        let result = read(&conn);
        *reader = Some(conn);
        result
    }

    pub(crate) fn lock(&self) -> Result<MutexGuard<'_, Connection>, MemoryError> {
        self.conn
            .lock()
            .map_err(|_| MemoryError::Invalid("the memory store was poisoned by a panic".into()))
    }

    /// Wakes the background queue: there is new work (memories to embed, a model lent).
    pub(crate) fn wake_embedding(&self) {
        let (lock, signal) = &*self.pending;
        if let Ok(mut pending) = lock.lock() {
            *pending = true;
            signal.notify_all();
        }
    }

    /// One memory by id (deleted ones included, with their text gone).
    pub fn get(&self, id: i64) -> Result<Option<MemoryRecord>, MemoryError> {
        get(&*self.lock()?, id)
    }

    /// Moves a live memory to another status (archive, restore…).
    pub fn set_status(&self, id: i64, status: Status) -> Result<bool, MemoryError> {
        if status == Status::Deleted {
            return self.delete(id);
        }
        let mut conn = self.lock()?;
        let tx = conn.transaction()?;
        let changed = change_status_by(&tx, id, status, self.now(), Some("person"))?;
        tx.commit()?;
        Ok(changed)
    }

    /// Live memories, newest first, optionally of one layer.
    pub fn list(
        &self,
        layer: Option<Layer>,
        offset: usize,
        limit: usize,
    ) -> Result<Vec<MemoryRecord>, MemoryError> {
        let conn = self.lock()?;
        let mut stmt = conn.prepare(&format!(
            "SELECT {COLUMNS} FROM memories WHERE status != 'deleted' AND (?1 IS NULL OR layer = ?1)
             ORDER BY created_at DESC, id DESC LIMIT ?2 OFFSET ?3"
        ))?;
        let rows = stmt.query_map(
            params![layer.map(Layer::as_str), limit as i64, offset as i64],
            record,
        )?;
        Ok(rows.collect::<Result<Vec<_>, _>>()?)
    }

    /// The live memories of an episode, oldest first (a resumed episode's context).
    pub fn episode_memories(&self, episode_id: i64) -> Result<Vec<MemoryRecord>, MemoryError> {
        let conn = self.lock()?;
        let mut stmt = conn.prepare(&format!(
            "SELECT {COLUMNS} FROM memories WHERE status != 'deleted' AND episode_id = ?1
             ORDER BY created_at, id"
        ))?;
        let rows = stmt.query_map([episode_id], record)?;
        Ok(rows.collect::<Result<Vec<_>, _>>()?)
    }
}

/// Changes a memory's metadata in place (read, `change`, written back); `false` when there is no
/// such memory.
pub(crate) fn update_metadata(
    conn: &Connection,
    id: i64,
    change: impl FnOnce(&mut serde_json::Map<String, serde_json::Value>),
) -> Result<bool, MemoryError> {
    let Some(memory) = get(conn, id)? else {
        return Ok(false);
    };
    let mut map = match memory.metadata {
        serde_json::Value::Object(map) => map,
        _ => serde_json::Map::new(),
    };
    change(&mut map);
    cached(
        conn,
        "UPDATE memories SET metadata = ?2 WHERE id = ?1",
        params![id, serde_json::Value::Object(map).to_string()],
    )?;
    Ok(true)
}

/// The memory ids a metadata field lists (`supersedes`, a learned memory's `sources`…); none
/// when it is absent or not a list.
pub(crate) fn metadata_ids(metadata: &serde_json::Value, key: &str) -> Vec<i64> {
    metadata
        .get(key)
        .and_then(serde_json::Value::as_array)
        .map(|ids| ids.iter().filter_map(serde_json::Value::as_i64).collect())
        .unwrap_or_default()
}

/// Moves live memory `id` to another status (not `deleted`: see [`MemoryStore::delete`]), logged;
/// false when there was no such live memory.
pub(crate) fn change_status(
    tx: &Transaction<'_>,
    id: i64,
    status: Status,
    now: i64,
) -> Result<bool, MemoryError> {
    change_status_by(tx, id, status, now, None)
}

/// [`change_status`], logged as the person's own change when `by` says so (sync carries those
/// to the person's other devices; the background's are worked out on each).
fn change_status_by(
    tx: &Transaction<'_>,
    id: i64,
    status: Status,
    now: i64,
    by: Option<&str>,
) -> Result<bool, MemoryError> {
    let changed = cached(
        tx,
        "UPDATE memories SET status = ?2, updated_at = ?3 WHERE id = ?1 AND status != 'deleted'",
        params![id, status.as_str(), now],
    )?;
    if changed > 0 {
        log_change(
            tx,
            now,
            "status",
            Some(id),
            &match by {
                Some(by) => serde_json::json!({ "status": status.as_str(), "by": by }),
                None => serde_json::json!({ "status": status.as_str() }),
            },
        )?;
    }
    Ok(changed > 0)
}

/// The memory stored under `source` + `external_id`, if there is one.
pub(crate) fn stored_id(
    conn: &Connection,
    source: &str,
    external_id: &str,
) -> Result<Option<i64>, MemoryError> {
    Ok(conn
        .prepare_cached("SELECT id FROM memories WHERE source = ?1 AND external_id = ?2")?
        .query_row(params![source, external_id], |row| row.get(0))
        .optional()?)
}

pub(crate) fn get(conn: &Connection, id: i64) -> Result<Option<MemoryRecord>, MemoryError> {
    Ok(conn
        .query_row(
            &format!("SELECT {COLUMNS} FROM memories WHERE id = ?1"),
            [id],
            record,
        )
        .optional()?)
}

pub(crate) fn log_change(
    tx: &Connection,
    at: i64,
    op: &str,
    memory_id: Option<i64>,
    detail: &serde_json::Value,
) -> Result<(), MemoryError> {
    cached(
        tx,
        "INSERT INTO changes (at, op, memory_id, detail) VALUES (?1, ?2, ?3, ?4)",
        params![at, op, memory_id, detail.to_string()],
    )?;
    Ok(())
}

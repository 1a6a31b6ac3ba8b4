//! The store: opening the database, writing memories (idempotently, with their neighbourhood
//! indexed), reading, editing, deleting, and the counts the memory panel shows.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, RwLock};

use rusqlite::{params, Connection, OptionalExtension, Row, Transaction};

use crate::model::{Analysis, Layer, LoggedSearch, MemoryRecord, NewMemory, Overview, Status};
use crate::recall::TermStats;
use crate::text::{idents, Analyzer};
use crate::vectors::VectorIndex;
use crate::{redact, schema, Embedder, MemoryError};

/// How much of a memory's text [`MemoryStore::cjk_written`] reads to tell its script.
const SCRIPT_SAMPLE_CHARS: i64 = 400;

/// How much of a neighbouring memory is indexed as a memory's context.
const CONTEXT_CHARS: usize = 600;

/// Memories whose full-text terms went stale within a transaction. A write marks them and
/// [`MemoryStore::index_marked`] indexes each once before the commit: a batch of turns of one
/// conversation changes the previous memory's context turn after turn, and its terms are
/// computed once, not once per turn.
///
/// Found while doing so: FTS5's contentless-delete tables never lower their row count (or token
/// totals) on a delete, so every re-index of a neighbour counts the row again, and BM25's IDF
/// reads that count. Memories captured or added one at a time count about twice; an imported
/// conversation, indexed once per memory, counts once. Recall was tuned on the first; making
/// both the same (a separate context index, or BM25 computed by Cairn) is left to do.
#[derive(Default)]
pub(crate) struct Unindexed {
    marked: std::collections::BTreeSet<i64>,
    /// Written in this transaction, with the terms of their text: nothing of theirs is in the
    /// index to replace. (Deleting a row the contentless index never held corrupts its document
    /// count, and with it every BM25.)
    new: std::collections::HashMap<i64, String>,
    /// The terms of the context of memories written in this transaction, where they follow
    /// from their neighbours' lent terms (the analyser splits at the line between two
    /// neighbours, so the terms of a joined context are the joined terms): an import indexes
    /// without reading back or analysing again what it just wrote.
    contexts: std::collections::HashMap<i64, String>,
    /// The terms each memory written in this transaction lends its neighbours as context.
    lent: std::collections::HashMap<i64, String>,
}

/// A memory's text and metadata as the store keeps them (see [`MemoryStore::analyse`]).
pub(crate) struct Analysed {
    pub(crate) text: String,
    metadata: String,
    summary: String,
    /// Its structural fragments, space-separated.
    idents: String,
    /// Its full-text terms, space-separated.
    terms: String,
    /// The terms of what it lends its neighbours as their context (its first
    /// `CONTEXT_CHARS` characters).
    lent: String,
}

/// The memory database. All methods take `&self`; writes are serialised on one connection.
pub struct MemoryStore {
    conn: Mutex<Connection>,
    pub(crate) path: Option<PathBuf>,
    pub(crate) analyzer: Analyzer,
    clock: Box<dyn Fn() -> i64 + Send + Sync>,
    pub(crate) embedder: RwLock<Option<Arc<dyn Embedder>>>,
    /// The background model and what it is lent for.
    pub(crate) writer: RwLock<Option<(Arc<dyn crate::Writer>, crate::WriterUses)>>,
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

/// The current time in unix milliseconds.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
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
            writer: RwLock::new(None),
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

    /// Writes one memory. With `source` + `external_id` the write is idempotent: sending it again
    /// returns the stored memory unchanged.
    pub fn add(&self, memory: NewMemory) -> Result<MemoryRecord, MemoryError> {
        let mut conn = self.lock()?;
        let tx = conn.transaction()?;
        let mut unindexed = Unindexed::default();
        let id = self.insert(&tx, memory, None, None, &mut unindexed)?;
        self.index_marked(&tx, unindexed)?;
        tx.commit()?;
        self.wake_embedding();
        get(&conn, id)?.ok_or_else(|| MemoryError::NotFound(format!("memory {id}")))
    }

    /// Writes many memories in one transaction (imports, evaluation); returns their ids in order.
    pub fn add_batch(&self, memories: Vec<NewMemory>) -> Result<Vec<i64>, MemoryError> {
        let mut conn = self.lock()?;
        let tx = conn.transaction()?;
        let mut ids = Vec::with_capacity(memories.len());
        for memory in memories {
            // Indexed one by one, exactly as the same memories added singly: FTS5's
            // contentless-delete tables never lower their row count on a delete, so re-indexing
            // a neighbour counts a row again, and BM25 reads that count (see `Unindexed`).
            let mut unindexed = Unindexed::default();
            ids.push(self.insert(&tx, memory, None, None, &mut unindexed)?);
            self.index_marked(&tx, unindexed)?;
        }
        tx.commit()?;
        self.wake_embedding();
        Ok(ids)
    }

    pub(crate) fn insert(
        &self,
        tx: &Transaction<'_>,
        mut memory: NewMemory,
        episode_id: Option<i64>,
        turn_id: Option<i64>,
        unindexed: &mut Unindexed,
    ) -> Result<i64, MemoryError> {
        // Sent again: the stored memory, before any work on the text.
        if let Some(external) = &memory.external_id {
            let source = memory.source.as_deref().unwrap_or("cairn");
            if let Some(id) = stored_id(tx, source, external)? {
                return Ok(id);
            }
        }
        let analysed = self.analyse(&memory.text, memory.metadata.take());
        self.insert_analysed(tx, memory, analysed, episode_id, turn_id, unindexed)
    }

    /// What a memory's text and metadata become in the store, worked out apart from the write
    /// (an import does it on its reading thread): redacted, summarised, its fragments and terms.
    pub(crate) fn analyse(&self, text: &str, metadata: Option<serde_json::Value>) -> Analysed {
        let text = redact(text.trim()).into_owned();
        let metadata = metadata.unwrap_or_else(|| serde_json::Value::Object(Default::default()));
        Analysed {
            metadata: redact(&metadata.to_string()).into_owned(),
            summary: heuristic_summary(&text),
            idents: idents(&text).join(" "),
            terms: self.analyzer.indexed(&text),
            lent: self.analyzer.indexed(&snippet(&text, CONTEXT_CHARS)),
            text,
        }
    }

    /// Writes a memory whose text and metadata are `analysed` (its own `text` and `metadata`
    /// are not read). The caller made sure no memory is stored under its `external_id` yet.
    pub(crate) fn insert_analysed(
        &self,
        tx: &Transaction<'_>,
        memory: NewMemory,
        analysed: Analysed,
        episode_id: Option<i64>,
        turn_id: Option<i64>,
        unindexed: &mut Unindexed,
    ) -> Result<i64, MemoryError> {
        let source = memory.source.unwrap_or_else(|| "cairn".to_owned());
        let Analysed {
            text,
            metadata,
            summary,
            idents,
            terms,
            lent,
        } = analysed;
        if text.is_empty() {
            return Err(MemoryError::Invalid("a memory needs some text".into()));
        }
        let now = self.now();
        let created_at = memory.created_at.unwrap_or(now);
        let layer = memory.layer.unwrap_or(Layer::Trace);

        // The neighbourhood: the previous memory of the same conversation lends this one its text as
        // context, and receives this one's text in return.
        let previous: Option<(i64, String, String)> = match &memory.session {
            Some(session) => tx
                .prepare_cached(
                    "SELECT id, text, context FROM memories
                     WHERE session_key = ?1 AND created_at <= ?2 AND status != 'deleted'
                     ORDER BY created_at DESC, id DESC LIMIT 1",
                )?
                .query_row(params![session, created_at], |row| {
                    Ok((row.get(0)?, row.get(1)?, row.get(2)?))
                })
                .optional()?,
            None => None,
        };
        let context = previous
            .as_ref()
            .map(|(_, prev_text, _)| snippet(prev_text, CONTEXT_CHARS))
            .unwrap_or_default();
        cached(tx,
            "INSERT INTO memories (layer, status, text, source, external_id, session_key, episode_id,
                                   turn_id, created_at, updated_at, metadata, summary, context)
             VALUES (?1, 'activated', ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
            params![
                layer.as_str(),
                text,
                source,
                memory.external_id,
                memory.session,
                episode_id,
                turn_id,
                created_at,
                now,
                metadata,
                summary,
                context
            ],
        )?;
        let id = tx.last_insert_rowid();
        match &previous {
            None => {
                unindexed.contexts.insert(id, String::new());
            }
            Some((prev_id, _, prev_context)) => {
                if let Some(prev_lent) = unindexed.lent.get(prev_id) {
                    unindexed.contexts.insert(id, prev_lent.clone());
                }
                let prev_context = if prev_context.is_empty() {
                    snippet(&text, CONTEXT_CHARS)
                } else {
                    format!("{prev_context}\n{}", snippet(&text, CONTEXT_CHARS))
                };
                cached(
                    tx,
                    "UPDATE memories SET context = ?2 WHERE id = ?1",
                    params![prev_id, prev_context],
                )?;
                if let Some(terms) = unindexed.contexts.get_mut(prev_id) {
                    if !terms.is_empty() && !lent.is_empty() {
                        terms.push(' ');
                    }
                    terms.push_str(&lent);
                }
                unindexed.marked.insert(*prev_id);
            }
        }
        unindexed.marked.insert(id);
        unindexed.new.insert(id, terms);
        unindexed.lent.insert(id, lent);
        // Memories are never deleted as rows, so a new id has no fragments indexed yet.
        insert_idents(tx, id, &idents)?;
        log_change(
            tx,
            now,
            "add",
            Some(id),
            &serde_json::json!({ "layer": layer.as_str(), "source": source }),
        )?;
        Ok(id)
    }

    /// Indexes the full-text terms of every memory `unindexed` marked, each once, from its
    /// stored text and context.
    pub(crate) fn index_marked(
        &self,
        tx: &Transaction<'_>,
        mut unindexed: Unindexed,
    ) -> Result<(), MemoryError> {
        if let Ok(mut stats) = self.term_stats.lock() {
            stats.written(unindexed.marked.len());
        }
        for id in unindexed.marked {
            if let (Some(body), Some(context)) =
                (unindexed.new.remove(&id), unindexed.contexts.remove(&id))
            {
                cached(
                    tx,
                    "INSERT INTO memory_terms (rowid, body, context) VALUES (?1, ?2, ?3)",
                    params![id, body, context],
                )?;
                continue;
            }
            let stored: Option<(String, String)> = tx
                .prepare_cached("SELECT text, context FROM memories WHERE id = ?1")?
                .query_row([id], |row| Ok((row.get(0)?, row.get(1)?)))
                .optional()?;
            if let Some((text, context)) = stored {
                match unindexed.new.remove(&id) {
                    Some(terms) => self.insert_terms(tx, id, &terms, &context)?,
                    None => self.index_terms(tx, id, &text, &context)?,
                }
            }
        }
        Ok(())
    }

    /// Replaces a memory's full-text terms.
    fn index_terms(
        &self,
        tx: &Transaction<'_>,
        id: i64,
        text: &str,
        context: &str,
    ) -> Result<(), MemoryError> {
        cached(tx, "DELETE FROM memory_terms WHERE rowid = ?1", [id])?;
        self.insert_terms(tx, id, &self.analyzer.indexed(text), context)
    }

    /// Indexes a memory's terms (`body`, already analysed) and its context's.
    fn insert_terms(
        &self,
        tx: &Transaction<'_>,
        id: i64,
        body: &str,
        context: &str,
    ) -> Result<(), MemoryError> {
        cached(
            tx,
            "INSERT INTO memory_terms (rowid, body, context) VALUES (?1, ?2, ?3)",
            params![id, body, self.analyzer.indexed(context)],
        )?;
        Ok(())
    }

    /// One memory by id (deleted ones included, with their text gone).
    pub fn get(&self, id: i64) -> Result<Option<MemoryRecord>, MemoryError> {
        get(&*self.lock()?, id)
    }

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
    fn delete_in(
        &self,
        tx: &Transaction<'_>,
        id: i64,
        gone: &mut Vec<i64>,
    ) -> Result<bool, MemoryError> {
        let mut merged = Vec::new();
        if let Some(memory) = get(tx, id)?.filter(|m| m.status != Status::Deleted) {
            crate::facts::unlink(tx, &memory)?;
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

    /// Moves a live memory to another status (archive, restore…).
    pub fn set_status(&self, id: i64, status: Status) -> Result<bool, MemoryError> {
        if status == Status::Deleted {
            return self.delete(id);
        }
        let mut conn = self.lock()?;
        let tx = conn.transaction()?;
        let changed = change_status(&tx, id, status, self.now())?;
        tx.commit()?;
        Ok(changed)
    }

    /// Replaces a memory's text (the memory panel's edit), re-indexing it.
    pub fn update_text(&self, id: i64, text: &str) -> Result<MemoryRecord, MemoryError> {
        let text = redact(text.trim()).into_owned();
        if text.is_empty() {
            return Err(MemoryError::Invalid("a memory needs some text".into()));
        }
        let mut conn = self.lock()?;
        let tx = conn.transaction()?;
        self.rewrite(&tx, id, &text, "edit")?;
        tx.commit()?;
        self.forget_vector(id);
        self.wake_embedding();
        get(&conn, id)?.ok_or_else(|| MemoryError::NotFound(format!("memory {id}")))
    }

    /// Replaces the text of live memory `id` (already redacted) in `tx`, re-indexing it, and logs
    /// it as `op` (`edit`: the person's; `evolve`: the background queue's); its vector is dropped
    /// for the queue to embed again (the caller forgets the cached one after the commit).
    pub(crate) fn rewrite(
        &self,
        tx: &Transaction<'_>,
        id: i64,
        text: &str,
        op: &str,
    ) -> Result<(), MemoryError> {
        let context: Option<String> = tx
            .query_row(
                "SELECT context FROM memories WHERE id = ?1 AND status != 'deleted'",
                [id],
                |row| row.get(0),
            )
            .optional()?;
        let Some(context) = context else {
            return Err(MemoryError::NotFound(format!("memory {id}")));
        };
        cached(tx,
            "UPDATE memories SET text = ?2, updated_at = ?3, summary = ?4, summary_source = 'heuristic'
             WHERE id = ?1",
            params![id, text, self.now(), heuristic_summary(text)],
        )?;
        self.index_terms(tx, id, text, &context)?;
        index_idents(tx, id, &idents(text).join(" "))?;
        cached(tx, "DELETE FROM memory_vectors WHERE memory_id = ?1", [id])?;
        log_change(tx, self.now(), op, Some(id), &serde_json::json!({}))?;
        Ok(())
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

    /// Of the newest `newest` live memories, how many are written mostly in Chinese, Japanese or
    /// Korean script (at least a fifth of their letters), and how many were read: what tells
    /// whether the memory needs a multilingual embedder. A memory's first
    /// [`SCRIPT_SAMPLE_CHARS`] characters tell its script: a captured turn can hold pages of
    /// tool output, and this runs after every memory added while the store is locked.
    pub fn cjk_written(&self, newest: usize) -> Result<(usize, usize), MemoryError> {
        let conn = self.lock()?;
        let mut stmt = conn.prepare_cached(
            "SELECT substr(text, 1, ?2) FROM memories WHERE status != 'deleted'
             ORDER BY created_at DESC, id DESC LIMIT ?1",
        )?;
        let mut rows = stmt.query([newest as i64, SCRIPT_SAMPLE_CHARS])?;
        let (mut cjk, mut read) = (0, 0);
        while let Some(row) = rows.next()? {
            let text: String = row.get(0)?;
            read += 1;
            let letters = text.chars().filter(|c| c.is_alphanumeric()).count();
            let script = text.chars().filter(|&c| crate::text::is_cjk(c)).count();
            if letters > 0 && script * 5 >= letters {
                cjk += 1;
            }
        }
        Ok((cjk, read))
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

    /// Counts by layer and source, sessions, turns and the size on disk.
    pub fn overview(&self) -> Result<Overview, MemoryError> {
        let conn = self.lock()?;
        let count = |sql: &str| conn.query_row(sql, [], |row| row.get::<_, i64>(0));
        let grouped = |sql: &str| -> Result<Vec<(String, i64)>, rusqlite::Error> {
            let mut stmt = conn.prepare(sql)?;
            let rows = stmt.query_map([], |row| Ok((row.get(0)?, row.get(1)?)))?;
            rows.collect()
        };
        let storage_bytes = match &self.path {
            Some(path) => ["", "-wal"]
                .iter()
                .filter_map(|suffix| std::fs::metadata(format!("{}{suffix}", path.display())).ok())
                .map(|m| m.len() as i64)
                .sum(),
            None => {
                count("SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()")?
            }
        };
        Ok(Overview {
            total: count("SELECT count(*) FROM memories WHERE status != 'deleted'")?,
            by_layer: grouped("SELECT layer, count(*) FROM memories WHERE status != 'deleted' GROUP BY layer ORDER BY layer")?,
            by_source: grouped("SELECT source, count(*) FROM memories WHERE status != 'deleted' GROUP BY source ORDER BY 2 DESC")?,
            sessions: count("SELECT count(*) FROM sessions")?,
            turns: count("SELECT count(*) FROM turns")?,
            skipped_turns: count("SELECT count(*) FROM skipped_turns")?,
            storage_bytes,
            backlog: self.backlog(&conn)?,
            embedder: self.embedder_model(),
        })
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

    /// The background queue's waiting work, counted as each of its passes selects it.
    fn backlog(&self, conn: &Connection) -> Result<cairn_protocol::memory::Backlog, MemoryError> {
        let embeddings = self.pending_embeddings(conn)?;
        let facts = conn.query_row(
            "SELECT count(*) FROM memories m LEFT JOIN fact_checks f ON f.memory_id = m.id
             WHERE f.memory_id IS NULL AND m.status != 'deleted' AND m.layer = 'L1'",
            [],
            |row| row.get(0),
        )?;
        let outcomes = if self.evolution.load(std::sync::atomic::Ordering::SeqCst) {
            conn.query_row(
                "SELECT count(*) FROM episode_outcomes WHERE induced = 0",
                [],
                |row| row.get(0),
            )?
        } else {
            0
        };
        let rewording = if self.writer_for(|uses| uses.policies).is_some() {
            conn.query_row(
                "SELECT count(*) FROM memories WHERE layer = 'L2' AND source = ?1
                   AND status IN ('activated', 'resolving')
                   AND json_extract(metadata, '$.model_pending') = 1",
                [crate::policies::EVOLUTION_SOURCE],
                |row| row.get(0),
            )?
        } else {
            0
        };
        Ok(cairn_protocol::memory::Backlog {
            embeddings,
            facts,
            outcomes,
            rewording,
        })
    }

    /// Memories per day and source, and the search log's statistics.
    pub fn analysis(&self, recent: usize) -> Result<Analysis, MemoryError> {
        let conn = self.lock()?;
        let mut stmt = conn.prepare(
            "SELECT created_at / 86400000 AS day, source, count(*) FROM memories
             WHERE status != 'deleted' GROUP BY day, source ORDER BY day DESC, source DESC LIMIT 2000",
        )?;
        let mut per_day: Vec<(i64, String, i64)> = stmt
            .query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))?
            .collect::<Result<_, _>>()?;
        if let Some(last) = per_day.first().map(|d| d.0) {
            per_day.retain(|d| d.0 > last - 90);
        }
        per_day.reverse();
        let (searches, with_hits, mean_ms): (i64, i64, f64) = conn.query_row(
            "SELECT count(*), coalesce(sum(hits > 0), 0), coalesce(avg(took_ms), 0) FROM search_log",
            [],
            |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
        )?;
        let mut stmt = conn
            .prepare("SELECT at, query, hits, took_ms FROM search_log ORDER BY id DESC LIMIT ?1")?;
        let recent_searches = stmt
            .query_map([recent as i64], |row| {
                Ok(LoggedSearch {
                    at: row.get(0)?,
                    query: row.get(1)?,
                    hits: row.get(2)?,
                    took_ms: row.get(3)?,
                })
            })?
            .collect::<Result<_, _>>()?;
        Ok(Analysis {
            memories_per_day: per_day
                .into_iter()
                .map(|(day, source, n)| (crate::inject::date(day * 86_400_000), source, n))
                .collect(),
            searches,
            hit_rate: if searches == 0 {
                0.0
            } else {
                with_hits as f64 * 100.0 / searches as f64
            },
            mean_search_ms: mean_ms,
            recent_searches,
        })
    }

    /// `PRAGMA integrity_check`: "ok" for a sound database.
    pub fn integrity_check(&self) -> Result<String, MemoryError> {
        Ok(self
            .lock()?
            .query_row("PRAGMA integrity_check", [], |row| row.get(0))?)
    }

    /// The newest entry of the change log: it moves on every add, edit and delete, whichever
    /// process made it, so a view can tell cheaply that what it shows is out of date.
    pub fn revision(&self) -> Result<i64, MemoryError> {
        Ok(self
            .lock()?
            .query_row("SELECT coalesce(max(seq), 0) FROM changes", [], |row| {
                row.get(0)
            })?)
    }

    /// How many entries the append-only change log holds.
    pub fn change_count(&self) -> Result<i64, MemoryError> {
        Ok(self
            .lock()?
            .query_row("SELECT count(*) FROM changes", [], |row| row.get(0))?)
    }
}

pub(crate) const COLUMNS: &str = "id, layer, status, text, source, external_id, session_key, \
                                  episode_id, turn_id, created_at, updated_at, metadata, summary, \
                                  summary_source";

pub(crate) fn record(row: &Row<'_>) -> rusqlite::Result<MemoryRecord> {
    let layer: String = row.get(1)?;
    let status: String = row.get(2)?;
    let metadata: String = row.get(11)?;
    Ok(MemoryRecord {
        id: row.get(0)?,
        layer: Layer::parse(&layer).unwrap_or(Layer::Trace),
        status: Status::parse(&status).unwrap_or(Status::Activated),
        text: row.get(3)?,
        source: row.get(4)?,
        external_id: row.get(5)?,
        session: row.get(6)?,
        episode_id: row.get(7)?,
        turn_id: row.get(8)?,
        created_at: row.get(9)?,
        updated_at: row.get(10)?,
        metadata: serde_json::from_str(&metadata).unwrap_or_default(),
        summary: row.get(12)?,
        summary_source: row.get(13)?,
    })
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
            &serde_json::json!({ "status": status.as_str() }),
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

/// Reindexes the structural fragments of a memory's text (`idents`, space-separated).
fn index_idents(tx: &Connection, id: i64, idents: &str) -> Result<(), MemoryError> {
    cached(tx, "DELETE FROM memory_idents WHERE rowid = ?1", [id])?;
    insert_idents(tx, id, idents)
}

/// Indexes the structural fragments of a memory that has none indexed.
fn insert_idents(tx: &Connection, id: i64, idents: &str) -> Result<(), MemoryError> {
    if !idents.is_empty() {
        cached(
            tx,
            "INSERT INTO memory_idents (rowid, idents) VALUES (?1, ?2)",
            params![id, idents],
        )?;
    }
    Ok(())
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

/// A first summary without a model: the first sentence of each part of a trace (its "User:" and
/// "Assistant:" lines), or of its first line, at most 240 characters.
pub fn heuristic_summary(text: &str) -> String {
    let parts: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("User:") || l.starts_with("Assistant:"))
        .map(first_sentence)
        .collect();
    let summary = if parts.is_empty() {
        first_sentence(text.lines().next().unwrap_or_default()).to_owned()
    } else {
        parts.join(" ")
    };
    snippet(summary.trim(), 240)
}

/// Up to the first sentence end (`.`, `?`, `!` before a space or the end; `。？！` anywhere).
fn first_sentence(line: &str) -> &str {
    let mut chars = line.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let cjk = matches!(c, '。' | '？' | '！');
        let latin = matches!(c, '.' | '?' | '!')
            && chars.peek().is_none_or(|(_, next)| next.is_whitespace());
        if cjk || latin {
            return &line[..i + c.len_utf8()];
        }
    }
    line
}

/// At most `max` characters of `text`, cut at a character boundary, with an ellipsis when cut.
pub fn snippet(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_memorys_script_is_told_by_its_beginning() -> Result<(), MemoryError> {
        let store = MemoryStore::open_in_memory()?;
        let stack_trace = "at parser::tokenize (src/parser.rs:42)\n".repeat(200);
        for text in [
            "我的猫叫豆豆，它喜欢晒太阳。".to_owned(),
            "The deploy script reads the staging config.".to_owned(),
            // Told in Chinese, followed by pages of English tool output: only its beginning
            // is read, and that is Chinese.
            format!(
                "User: 解析器在处理嵌套注释时崩溃了，请帮我看看这个错误是怎么回事，\
                 然后修复它并补上测试。这个问题从昨天升级依赖以后就开始出现，本地和持续集成\
                 环境里都能复现，只有在注释里再套一层注释的时候才会触发。日志如下：\n{stack_trace}"
            ),
        ] {
            store.add(NewMemory {
                text,
                ..NewMemory::default()
            })?;
        }
        assert_eq!(store.cjk_written(200)?, (2, 3));
        assert_eq!(store.cjk_written(1)?.1, 1);
        Ok(())
    }
}

//! The database schema and its migrations. Each migration runs in one transaction; an existing
//! database is copied (`VACUUM INTO`) before it is migrated, so a failed upgrade loses nothing.

use std::path::Path;

use rusqlite::Connection;

use crate::MemoryError;

/// Migrations in order; the index + 1 is the schema version it produces.
const MIGRATIONS: &[&str] = &[
    r#"
CREATE TABLE sessions (
    id INTEGER PRIMARY KEY,
    key TEXT NOT NULL UNIQUE,
    source TEXT NOT NULL,
    title TEXT,
    workspace TEXT,
    opened_at INTEGER NOT NULL,
    closed_at INTEGER
);
CREATE TABLE episodes (
    id INTEGER PRIMARY KEY,
    session_id INTEGER NOT NULL REFERENCES sessions(id),
    started_at INTEGER NOT NULL,
    last_at INTEGER NOT NULL
);
CREATE INDEX episodes_session ON episodes(session_id, last_at);
CREATE TABLE turns (
    id INTEGER PRIMARY KEY,
    session_id INTEGER NOT NULL REFERENCES sessions(id),
    episode_id INTEGER REFERENCES episodes(id),
    idempotency_key TEXT UNIQUE,
    status TEXT NOT NULL,
    source TEXT NOT NULL,
    request TEXT NOT NULL,
    started_at INTEGER NOT NULL,
    completed_at INTEGER,
    raw TEXT
);
CREATE TABLE memories (
    id INTEGER PRIMARY KEY,
    layer TEXT NOT NULL,
    status TEXT NOT NULL,
    text TEXT NOT NULL,
    source TEXT NOT NULL,
    external_id TEXT,
    session_key TEXT,
    episode_id INTEGER REFERENCES episodes(id),
    turn_id INTEGER REFERENCES turns(id),
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    metadata TEXT NOT NULL DEFAULT '{}',
    context TEXT NOT NULL DEFAULT ''
);
CREATE UNIQUE INDEX memories_external ON memories(source, external_id) WHERE external_id IS NOT NULL;
CREATE INDEX memories_session ON memories(session_key, created_at);
CREATE INDEX memories_created ON memories(created_at);
CREATE VIRTUAL TABLE memory_terms USING fts5(
    body, context, content='', contentless_delete=1, tokenize='unicode61 remove_diacritics 2'
);
CREATE VIRTUAL TABLE memory_idents USING fts5(
    idents, content='', contentless_delete=1, tokenize="unicode61 tokenchars '_./:-#'"
);
CREATE TABLE changes (
    seq INTEGER PRIMARY KEY,
    at INTEGER NOT NULL,
    op TEXT NOT NULL,
    memory_id INTEGER,
    detail TEXT NOT NULL DEFAULT '{}'
);
CREATE TRIGGER changes_no_update BEFORE UPDATE ON changes
BEGIN SELECT RAISE(ABORT, 'the change log is append-only'); END;
CREATE TRIGGER changes_no_delete BEFORE DELETE ON changes
BEGIN SELECT RAISE(ABORT, 'the change log is append-only'); END;
CREATE TABLE search_log (
    id INTEGER PRIMARY KEY,
    at INTEGER NOT NULL,
    query TEXT NOT NULL,
    hits INTEGER NOT NULL,
    took_ms REAL NOT NULL,
    detail TEXT NOT NULL DEFAULT '{}'
);
CREATE TABLE skipped_turns (
    id INTEGER PRIMARY KEY,
    at INTEGER NOT NULL,
    source TEXT NOT NULL,
    reason TEXT NOT NULL,
    bytes INTEGER NOT NULL
);
"#,
    r#"
CREATE TABLE memory_vectors (
    memory_id INTEGER PRIMARY KEY REFERENCES memories(id),
    model TEXT NOT NULL,
    scale REAL NOT NULL,
    vec BLOB NOT NULL
);
"#,
    r#"
ALTER TABLE memories ADD COLUMN summary TEXT NOT NULL DEFAULT '';
ALTER TABLE memories ADD COLUMN summary_source TEXT NOT NULL DEFAULT 'heuristic';
CREATE INDEX memories_summary_source ON memories(summary_source);
"#,
    r#"
CREATE TABLE fact_checks (
    memory_id INTEGER PRIMARY KEY REFERENCES memories(id),
    owner TEXT NOT NULL,
    stance TEXT NOT NULL
);
CREATE INDEX fact_checks_owner ON fact_checks(owner, memory_id);
"#,
    r#"
CREATE TABLE feedback (
    id INTEGER PRIMARY KEY,
    at INTEGER NOT NULL,
    memory_id INTEGER NOT NULL REFERENCES memories(id),
    value REAL NOT NULL,
    origin TEXT NOT NULL,
    note TEXT
);
CREATE INDEX feedback_memory ON feedback(memory_id, at);
"#,
    r#"
CREATE TABLE episode_outcomes (
    episode_id INTEGER PRIMARY KEY REFERENCES episodes(id),
    reward REAL NOT NULL,
    at INTEGER NOT NULL,
    signature TEXT,
    induced INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX episode_outcomes_pending ON episode_outcomes(induced, at);
CREATE INDEX episode_outcomes_signature ON episode_outcomes(signature);
"#,
    r#"
ALTER TABLE fact_checks ADD COLUMN digest TEXT;
CREATE INDEX fact_checks_digest ON fact_checks(digest);
"#,
    r#"
ALTER TABLE memories ADD COLUMN uid TEXT;
ALTER TABLE memories ADD COLUMN content_version TEXT NOT NULL DEFAULT '';
ALTER TABLE memories ADD COLUMN status_version TEXT NOT NULL DEFAULT '';
CREATE UNIQUE INDEX memories_uid ON memories(uid) WHERE uid IS NOT NULL;
ALTER TABLE feedback ADD COLUMN uid TEXT;
CREATE UNIQUE INDEX feedback_uid ON feedback(uid) WHERE uid IS NOT NULL;
CREATE TABLE sync_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE sync_outbox (idx INTEGER PRIMARY KEY, version TEXT NOT NULL, body TEXT NOT NULL, sealed BLOB);
CREATE TABLE sync_cursors (device TEXT PRIMARY KEY, idx INTEGER NOT NULL);
CREATE TABLE sync_parked (uid TEXT PRIMARY KEY, memory TEXT NOT NULL, body TEXT NOT NULL);
"#,
];

/// Switches a connection to WAL. On a new database several connections may switch at once (the
/// app's history sync and its memory warm-up); the losers see the rollback journal vanish under
/// them (an I/O error), the file busy, or the mode left as it was (SQLite answers the mode it is
/// in, without an error, when it cannot switch) — so they wait a moment and try again. Two
/// connections in different modes would not exclude each other, and both would migrate.
fn use_wal(conn: &Connection) -> Result<(), MemoryError> {
    let mut attempts = 0;
    loop {
        let mode = conn
            .pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get::<_, String>(0));
        match mode {
            // A private in-memory database has no journal file to switch.
            Ok(mode) if mode.eq_ignore_ascii_case("wal") || mode.eq_ignore_ascii_case("memory") => {
                return Ok(())
            }
            Ok(mode) if attempts >= 40 => {
                return Err(MemoryError::Invalid(format!(
                    "the memory database stays in {mode} mode; WAL is needed (is it on a network file system?)"
                )))
            }
            Ok(_) => {
                attempts += 1;
                std::thread::sleep(std::time::Duration::from_millis(25));
            }
            Err(rusqlite::Error::SqliteFailure(e, _))
                if attempts < 40
                    && matches!(
                        e.code,
                        rusqlite::ErrorCode::SystemIoFailure
                            | rusqlite::ErrorCode::DatabaseBusy
                            | rusqlite::ErrorCode::DatabaseLocked
                    ) =>
            {
                attempts += 1;
                std::thread::sleep(std::time::Duration::from_millis(25));
            }
            Err(e) => return Err(e.into()),
        }
    }
}

/// The schema version this build writes.
pub const VERSION: i64 = MIGRATIONS.len() as i64;

/// Pages of write-ahead log after which a commit copies the log back into the database.
pub(crate) const WAL_AUTOCHECKPOINT: i64 = 4096;

/// Sets the connection up (WAL, foreign keys, busy timeout) and brings the schema up to date.
pub fn prepare(conn: &mut Connection, path: Option<&Path>) -> Result<(), MemoryError> {
    conn.busy_timeout(std::time::Duration::from_secs(5))?;
    use_wal(conn)?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    // Checkpoint every 16 MB of log rather than every 4: an import's transactions are large, and
    // pages a batch rewrites (full-text segments, index pages) are copied back once, not each time.
    conn.pragma_update(None, "wal_autocheckpoint", WAL_AUTOCHECKPOINT)?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    let current: i64 = conn.pragma_query_value(None, "user_version", |row| row.get(0))?;
    if current > VERSION {
        return Err(MemoryError::TooNew {
            found: current,
            supported: VERSION,
        });
    }
    if current == VERSION {
        return attach_vocabulary(conn);
    }
    if current > 0 {
        if let Some(path) = path {
            backup(conn, path, current)?;
        }
    }
    for (index, sql) in MIGRATIONS.iter().enumerate().skip(current as usize) {
        // One writer at a time: another connection (a thread of this app, a hook, the CLI) may be
        // opening the same database now; whoever takes the lock second finds the step done.
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let now: i64 = tx.pragma_query_value(None, "user_version", |row| row.get(0))?;
        if now > index as i64 {
            tx.commit()?;
            continue;
        }
        tx.execute_batch(sql)?;
        tx.pragma_update(None, "user_version", index as i64 + 1)?;
        tx.commit()?;
        tracing::info!("memory schema migrated to version {}", index + 1);
    }
    attach_vocabulary(conn)
}

/// Per-connection views of the term index's vocabulary (document frequency per term), used to plan
/// queries.
fn attach_vocabulary(conn: &Connection) -> Result<(), MemoryError> {
    conn.execute_batch(
        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.memory_terms_vocab USING fts5vocab(main, memory_terms, row);",
    )?;
    Ok(())
}

/// Copies the database to `<file>.v<version>.bak` before a migration.
fn backup(conn: &Connection, path: &Path, version: i64) -> Result<(), MemoryError> {
    let target = path.with_extension(format!("v{version}.bak"));
    if target.exists() {
        std::fs::remove_file(&target).map_err(|source| MemoryError::Io {
            path: target.display().to_string(),
            source,
        })?;
    }
    conn.execute("VACUUM INTO ?1", [target.display().to_string()])?;
    tracing::info!("memory database backed up to {}", target.display());
    Ok(())
}

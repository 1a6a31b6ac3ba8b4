//! The small SQLite helpers the database sources (Cursor, Hermes, OpenClaw, OpenCode) share:
//! opening an agent's database read-only while it writes, its columns, and typed reads of values.

use std::path::Path;

use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags};
use serde_json::Value;

use crate::turn::unix_ms;
use crate::ImportError;

/// Opens a database read-only (the agent may be writing it, in WAL mode); a file that cannot be
/// opened or is not a database is an error.
pub(super) fn open_read_only(path: &Path) -> Result<Connection, ImportError> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| ImportError::io(path, e))?;
    // Opening is lazy: a file that is not a database fails here.
    conn.query_row("SELECT count(*) FROM sqlite_master", [], |_| Ok(()))
        .map_err(|e| ImportError::io(path, e))?;
    Ok(conn)
}

/// The columns of a table, lower-cased (empty when the table does not exist).
pub(super) fn columns(conn: &Connection, table: &str) -> Vec<String> {
    let Ok(mut stmt) = conn.prepare("SELECT name FROM pragma_table_info(?1)") else {
        return Vec::new();
    };
    stmt.query_map([table], |row| row.get::<_, String>(0))
        .map(|rows| rows.flatten().map(|c| c.to_lowercase()).collect())
        .unwrap_or_default()
}

/// A column's value as text (numbers written out; blobs read as UTF-8).
pub(super) fn value_text(v: ValueRef<'_>) -> Option<String> {
    match v {
        ValueRef::Text(b) | ValueRef::Blob(b) => Some(String::from_utf8_lossy(b).into_owned()),
        ValueRef::Integer(i) => Some(i.to_string()),
        ValueRef::Real(f) => Some(f.to_string()),
        ValueRef::Null => None,
    }
}

/// A column holding JSON (as TEXT or BLOB), or `None` when it does not parse.
pub(super) fn value_json(v: ValueRef<'_>) -> Option<Value> {
    match v {
        ValueRef::Text(b) | ValueRef::Blob(b) => serde_json::from_slice(b).ok(),
        _ => None,
    }
}

/// A column holding a time (a number in any unit, or an ISO string) as unix ms; 0 when unknown.
pub(super) fn value_time(v: ValueRef<'_>) -> i64 {
    let value = match v {
        ValueRef::Integer(i) => Value::from(i),
        ValueRef::Real(f) => Value::from(f),
        ValueRef::Text(b) => Value::from(String::from_utf8_lossy(b).into_owned()),
        _ => return 0,
    };
    unix_ms(&value).unwrap_or(0)
}

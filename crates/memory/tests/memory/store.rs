//! Writing, reading, editing and deleting memories; idempotency; the change log; migrations.

use cairn_memory::{Layer, MemoryStore, NewMemory, Status};

use crate::TestResult;

fn memory(text: &str) -> NewMemory {
    NewMemory {
        text: text.into(),
        ..NewMemory::default()
    }
}

#[test]
fn add_get_and_defaults() -> TestResult {
    let store = MemoryStore::open_in_memory()?.with_clock(|| 1_700_000_000_000);
    let added = store.add(memory("  The deploy script lives in ops/deploy.sh  "))?;
    assert_eq!(added.text, "The deploy script lives in ops/deploy.sh");
    assert_eq!(added.layer, Layer::Trace);
    assert_eq!(added.status, Status::Activated);
    assert_eq!(added.source, "cairn");
    assert_eq!(added.created_at, 1_700_000_000_000);
    assert_eq!(store.get(added.id)?, Some(added));
    Ok(())
}

#[test]
fn the_same_external_id_is_written_once() -> TestResult {
    let store = MemoryStore::open_in_memory()?;
    let first = NewMemory {
        text: "first".into(),
        source: Some("codex".into()),
        external_id: Some("abc".into()),
        metadata: Some(serde_json::json!({ "k": "v" })),
        ..NewMemory::default()
    };
    let a = store.add(first.clone())?;
    let b = store.add(NewMemory {
        text: "changed".into(),
        ..first
    })?;
    assert_eq!(a.id, b.id);
    assert_eq!(b.text, "first");
    assert_eq!(b.metadata["k"], "v");
    assert_eq!(store.overview()?.total, 1);
    Ok(())
}

#[test]
fn empty_text_is_refused() -> TestResult {
    let store = MemoryStore::open_in_memory()?;
    let err = store
        .add(memory("   "))
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(err.contains("needs some text"), "{err}");
    Ok(())
}

#[test]
fn secrets_are_redacted_before_storing() -> TestResult {
    let store = MemoryStore::open_in_memory()?;
    let added = store.add(NewMemory {
        text: "use key sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz012345 for prod".into(),
        metadata: Some(
            serde_json::json!({ "header": "Authorization: Bearer abcdefghijklmnop1234" }),
        ),
        ..NewMemory::default()
    })?;
    assert!(!added.text.contains("AbCdEf"), "{}", added.text);
    assert!(added.text.contains("[REDACTED:openai-key]"));
    assert!(!added.metadata.to_string().contains("abcdefghijklmnop1234"));
    Ok(())
}

#[test]
fn delete_removes_the_text_and_recall_forgets_it() -> TestResult {
    let store = MemoryStore::open_in_memory()?;
    let added = store.add(memory("the staging password rotates on Fridays"))?;
    assert_eq!(
        store
            .search(&cairn_memory::SearchQuery::new("staging rotates"))?
            .hits
            .len(),
        1
    );
    assert!(store.delete(added.id)?);
    assert!(!store.delete(added.id)?, "a second delete changes nothing");
    let gone = store.get(added.id)?.ok_or("row missing")?;
    assert_eq!(gone.status, Status::Deleted);
    assert!(gone.text.is_empty());
    assert!(store
        .search(&cairn_memory::SearchQuery::new("staging rotates"))?
        .hits
        .is_empty());
    Ok(())
}

#[test]
fn edits_reindex_and_archive_hides_from_recall() -> TestResult {
    let store = MemoryStore::open_in_memory()?;
    let added = store.add(memory("builds run on the blue runner"))?;
    store.update_text(added.id, "builds run on the green runner")?;
    assert!(store
        .search(&cairn_memory::SearchQuery::new("blue"))?
        .hits
        .is_empty());
    assert_eq!(
        store
            .search(&cairn_memory::SearchQuery::new("green runner"))?
            .hits
            .len(),
        1
    );
    assert!(store.set_status(added.id, Status::Archived)?);
    assert!(store
        .search(&cairn_memory::SearchQuery::new("green runner"))?
        .hits
        .is_empty());
    Ok(())
}

#[test]
fn the_change_log_is_append_only() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("memory.sqlite");
    let store = MemoryStore::open(&path)?;
    let added = store.add(memory("one"))?;
    store.delete(added.id)?;
    assert_eq!(store.change_count()?, 2);
    drop(store);
    let conn = rusqlite::Connection::open(&path)?;
    let err = conn
        .execute("DELETE FROM changes", [])
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(err.contains("append-only"), "{err}");
    let err = conn
        .execute("UPDATE changes SET op = 'x'", [])
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(err.contains("append-only"), "{err}");
    Ok(())
}

#[test]
fn reopening_keeps_everything_and_the_database_is_wal() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("memory.sqlite");
    let id = MemoryStore::open(&path)?
        .add(memory("kept across restarts"))?
        .id;
    let store = MemoryStore::open(&path)?;
    assert_eq!(
        store.get(id)?.map(|m| m.text),
        Some("kept across restarts".into())
    );
    assert_eq!(store.integrity_check()?, "ok");
    let conn = rusqlite::Connection::open(&path)?;
    let mode: String = conn.query_row("PRAGMA journal_mode", [], |r| r.get(0))?;
    assert_eq!(mode, "wal");
    Ok(())
}

#[test]
fn a_database_from_a_newer_cairn_is_refused() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("memory.sqlite");
    rusqlite::Connection::open(&path)?.pragma_update(None, "user_version", 999)?;
    let err = MemoryStore::open(&path)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(err.contains("newer than this Cairn"), "{err}");
    Ok(())
}

#[test]
fn overview_counts_by_layer_and_source() -> TestResult {
    let store = MemoryStore::open_in_memory()?;
    store.add(memory("a"))?;
    store.add(NewMemory {
        text: "b".into(),
        layer: Some(Layer::Policy),
        source: Some("codex".into()),
        ..NewMemory::default()
    })?;
    let overview = store.overview()?;
    assert_eq!(overview.total, 2);
    assert!(overview.by_layer.contains(&("L2".to_owned(), 1)));
    assert!(overview.by_source.contains(&("codex".to_owned(), 1)));
    assert!(overview.storage_bytes > 0);
    Ok(())
}

#[test]
fn analysis_counts_days_sources_and_search_hits() -> TestResult {
    let store = MemoryStore::open_in_memory()?;
    let day = 86_400_000;
    for (text, source, at) in [
        ("alpha note", "cairn", 0),
        ("beta note", "codex", 0),
        ("gamma note", "cairn", day),
    ] {
        store.add(NewMemory {
            text: text.into(),
            source: Some(source.into()),
            created_at: Some(at),
            ..NewMemory::default()
        })?;
    }
    store.search(&cairn_memory::SearchQuery::new("alpha"))?;
    store.search(&cairn_memory::SearchQuery::new("nothing matches this"))?;
    let analysis = store.analysis(10)?;
    assert_eq!(
        analysis.memories_per_day,
        vec![
            ("1970-01-01".to_owned(), "cairn".to_owned(), 1),
            ("1970-01-01".to_owned(), "codex".to_owned(), 1),
            ("1970-01-02".to_owned(), "cairn".to_owned(), 1),
        ]
    );
    assert_eq!(analysis.searches, 2);
    assert_eq!(analysis.hit_rate, 50.0);
    assert_eq!(analysis.recent_searches[0].query, "nothing matches this");
    Ok(())
}

#[test]
fn an_older_schema_is_backed_up_then_migrated() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("memory.sqlite");
    let id = MemoryStore::open(&path)?
        .add(memory("written by an older Cairn"))?
        .id;
    {
        let conn = rusqlite::Connection::open(&path)?;
        conn.execute_batch(
            "DROP INDEX memories_summary_source; ALTER TABLE memories DROP COLUMN summary;
             ALTER TABLE memories DROP COLUMN summary_source; DROP TABLE memory_vectors; DROP TABLE fact_checks; DROP TABLE feedback;
             DROP TABLE episode_outcomes;
             DROP INDEX memories_uid; ALTER TABLE memories DROP COLUMN uid;
             ALTER TABLE memories DROP COLUMN content_version;
             ALTER TABLE memories DROP COLUMN status_version;
             DROP TABLE sync_meta; DROP TABLE sync_outbox; DROP TABLE sync_cursors;
             DROP TABLE sync_parked;
             PRAGMA user_version = 1;",
        )?;
    }
    let store = MemoryStore::open(&path)?;
    assert!(
        dir.path().join("memory.v1.bak").exists(),
        "a backup is taken before migrating"
    );
    assert_eq!(
        store.get(id)?.map(|m| m.text),
        Some("written by an older Cairn".into())
    );
    let conn = rusqlite::Connection::open(&path)?;
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    assert_eq!(version, 8);
    conn.query_row("SELECT count(*) FROM memory_vectors", [], |r| {
        r.get::<_, i64>(0)
    })?;
    conn.query_row("SELECT count(*) FROM fact_checks", [], |r| {
        r.get::<_, i64>(0)
    })?;
    Ok(())
}

#[test]
fn opening_one_new_database_from_many_threads_at_once_migrates_it_once() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("memory.sqlite");
    let opened: Vec<_> = (0..8)
        .map(|_| {
            let path = path.clone();
            std::thread::spawn(move || MemoryStore::open(&path).map(|_| ()))
        })
        .collect();
    for thread in opened {
        let outcome = thread.join().map_err(|_| "a thread panicked")?;
        assert!(outcome.is_ok(), "{outcome:?}");
    }
    MemoryStore::open(&path)?.add(NewMemory {
        text: "still works".into(),
        ..Default::default()
    })?;
    Ok(())
}

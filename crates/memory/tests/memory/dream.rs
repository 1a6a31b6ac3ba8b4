//! Dreams: what one changes (merges, episode notes, stale candidates archived, vectors of a new
//! embedder), logged with why; a dry run that changes nothing; a restore that brings back every
//! row exactly; one dream at a time; and a dream killed at any point that leaves the memory as
//! before or as after, never between.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use cairn_memory::{
    DreamOptions, Embedder, Layer, MemoryError, MemoryStore, NewMemory, Status, Writer,
    DREAM_SOURCE,
};
use cairn_protocol::memory::{DreamChangeKind, DreamState};
use rusqlite::types::ValueRef;
use rusqlite::Connection;

use crate::TestResult;

const DAY: i64 = 24 * 60 * 60 * 1000;
/// When the memories were written, and when the dreams run (a day and more later).
const WRITTEN: i64 = 1_760_000_000_000;
const DREAMT: i64 = WRITTEN + 100 * DAY;

/// A summary model that counts the turns it read; slow when asked to be.
struct Notes(Duration);

impl Writer for Notes {
    fn write(&self, instructions: &str, text: &str, _max: u32) -> Result<String, MemoryError> {
        assert!(instructions.contains("one conversation"), "{instructions}");
        std::thread::sleep(self.0);
        Ok(format!(
            "A conversation of {} turns, the first: {}",
            text.lines().count(),
            text.lines().next().unwrap_or_default()
        ))
    }
}

/// An embedder by letter counts, under a name of the test's choosing.
struct Letters(&'static str);

impl Embedder for Letters {
    fn model(&self) -> &str {
        self.0
    }
    fn dim(&self) -> usize {
        26
    }
    fn embed(&self, text: &str) -> Result<Vec<f32>, MemoryError> {
        let mut v = vec![0.01f32; 26];
        for c in text
            .to_ascii_lowercase()
            .bytes()
            .filter(u8::is_ascii_lowercase)
        {
            v[usize::from(c - b'a')] += 1.0;
        }
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        Ok(v.into_iter().map(|x| x / norm).collect())
    }
}

fn memory(text: &str, session: &str, at: i64) -> NewMemory {
    NewMemory {
        text: text.into(),
        session: Some(session.into()),
        created_at: Some(at),
        ..NewMemory::default()
    }
}

/// Conversations of three turns or more (`episodes` of them), a fact said twice in other words,
/// a short exchange, and a candidate policy left alone for months; the background queue caught
/// up.
fn seed(path: &Path, episodes: usize) -> Result<(), Box<dyn std::error::Error>> {
    let store = MemoryStore::open(path)?.with_clock(|| WRITTEN);
    let mut batch = vec![
        memory(
            "I moved to Berlin with my sister last year.",
            "facts-1",
            WRITTEN - 3 * DAY,
        ),
        memory(
            "Last year I moved to Berlin with my sister",
            "facts-2",
            WRITTEN - 2 * DAY,
        ),
        memory(
            "Alice told Bob about the new release plan today",
            "facts-3",
            WRITTEN - 2 * DAY,
        ),
        memory(
            "Bob told Alice about the new release plan today",
            "facts-4",
            WRITTEN - DAY,
        ),
        memory("thanks!", "short", WRITTEN),
    ];
    for e in 0..episodes {
        for t in 0..3 {
            batch.push(memory(
                &format!("episode {e} turn {t}: we planned the trip to city number {e} by train"),
                &format!("trip-{e}"),
                WRITTEN - DAY + (e * 10 + t) as i64 * 60_000,
            ));
        }
    }
    store.add_batch(batch)?;
    let policy = store.add(NewMemory {
        text: "When a build fails, read the first error.".into(),
        layer: Some(Layer::Policy),
        ..NewMemory::default()
    })?;
    store.set_status(policy.id, Status::Resolving)?;
    store.relate_all_pending()?;
    Ok(())
}

fn options(dir: &Path, dry_run: bool, writer: Option<Arc<dyn Writer>>) -> DreamOptions {
    DreamOptions {
        dir: dir.join("dreams"),
        dry_run,
        budget: Duration::from_secs(600),
        writer,
        trigger: "test".into(),
    }
}

/// Every row of every table, by table (`fts` false: the full-text index's own tables left out,
/// since compacting rewrites them without changing what they answer).
fn dump(path: &Path, fts: bool) -> Result<BTreeMap<String, Vec<String>>, rusqlite::Error> {
    let conn = Connection::open(path)?;
    let tables: Vec<String> = conn
        .prepare(
            "SELECT name FROM sqlite_master WHERE type = 'table'
             AND sql NOT LIKE 'CREATE VIRTUAL%' AND name NOT LIKE 'sqlite_%' ORDER BY name",
        )?
        .query_map([], |row| row.get(0))?
        .collect::<Result<_, _>>()?;
    let mut out = BTreeMap::new();
    for table in tables {
        if !fts && (table.starts_with("memory_terms") || table.starts_with("memory_idents")) {
            continue;
        }
        let mut stmt = conn.prepare(&format!("SELECT * FROM \"{table}\""))?;
        let columns = stmt.column_count();
        let mut rows: Vec<String> = stmt
            .query_map([], |row| {
                (0..columns)
                    .map(|i| {
                        Ok(match row.get_ref(i)? {
                            ValueRef::Text(text) => String::from_utf8_lossy(text).into_owned(),
                            other => format!("{other:?}"),
                        })
                    })
                    .collect::<Result<Vec<_>, rusqlite::Error>>()
                    .map(|cells| cells.join("|"))
            })?
            .collect::<Result<_, _>>()?;
        rows.sort();
        out.insert(table, rows);
    }
    Ok(out)
}

#[test]
fn a_dream_merges_notes_and_archives_with_its_log_and_a_restore_brings_back_every_row() -> TestResult
{
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("memory.sqlite");
    seed(&path, 2)?;
    let before = dump(&path, true)?;
    let store = MemoryStore::open(&path)?.with_clock(|| DREAMT);
    let writer: Arc<dyn Writer> = Arc::new(Notes(Duration::ZERO));

    // A dry run says what it would do and writes nothing.
    let dry = store.dream(options(dir.path(), true, Some(writer.clone())))?;
    assert_eq!(dry.state, DreamState::DryRun);
    assert_eq!(dump(&path, true)?, before);
    let kinds =
        |d: &cairn_protocol::memory::Dream, k| d.changes.iter().filter(|c| c.kind == k).count();
    assert_eq!(kinds(&dry, DreamChangeKind::Merged), 1, "{:?}", dry.changes);
    assert_eq!(kinds(&dry, DreamChangeKind::Noted), 2, "{:?}", dry.changes);
    assert_eq!(
        kinds(&dry, DreamChangeKind::Archived),
        1,
        "{:?}",
        dry.changes
    );

    let dream = store.dream(options(dir.path(), false, Some(writer.clone())))?;
    assert_eq!(dream.state, DreamState::Done, "{:?}", dream.error);
    assert_eq!(dream.id, 2);
    assert!(dream.restore_point_bytes > 0);
    // The same sentence in another order is merged into the newer (the fact reader took it for
    // a new version of the fact); other roles are not.
    let merged: Vec<_> = dream
        .changes
        .iter()
        .filter(|c| c.kind == DreamChangeKind::Merged)
        .collect();
    assert_eq!(merged.len(), 1);
    let duplicate = store.get(merged[0].memory)?.ok_or("merged")?;
    assert_eq!(duplicate.status, Status::Archived);
    assert!(duplicate.text.starts_with("I moved"));
    assert_eq!(duplicate.metadata["duplicate_of"], merged[0].from[0]);
    // Each finished conversation has its note, written by the model, dated with it.
    let notes: Vec<_> = dream
        .changes
        .iter()
        .filter(|c| c.kind == DreamChangeKind::Noted)
        .collect();
    assert_eq!(notes.len(), 2);
    for note in &notes {
        let written = store.get(note.memory)?.ok_or("note")?;
        assert_eq!(written.source, DREAM_SOURCE);
        assert!(
            written.text.starts_with("A conversation of 3 turns"),
            "{}",
            written.text
        );
        assert_eq!(note.from.len(), 3);
        let last = store.get(note.from[2])?.ok_or("turn")?;
        assert_eq!(written.created_at, last.created_at);
        assert!(note.why.contains("finished episode of 3 turns"));
    }
    // The candidate left alone for months is archived.
    let archived: Vec<_> = dream
        .changes
        .iter()
        .filter(|c| c.kind == DreamChangeKind::Archived)
        .collect();
    assert_eq!(
        store.get(archived[0].memory)?.ok_or("policy")?.status,
        Status::Archived
    );
    // The log keeps it, newest first.
    let log = store.dreams(&dir.path().join("dreams"), 10)?;
    assert_eq!(log.iter().map(|d| d.id).collect::<Vec<_>>(), [2, 1]);
    assert_eq!(log[0], dream);

    // A second dream finds nothing left to do.
    let again = store.dream(options(dir.path(), false, Some(writer)))?;
    assert!(again.changes.is_empty(), "{:?}", again.changes);

    // Restoring the first real dream undoes it and the one after, row for row.
    let restored = store.restore_dream(&dir.path().join("dreams"), 2)?;
    assert_eq!(restored.undone, [2, 3]);
    assert!(restored.changes_undone > 0);
    let mut after = dump(&path, true)?;
    let changes = after.get_mut("changes").ok_or("changes")?;
    let restore_entry = changes
        .iter()
        .position(|r| r.contains("dream-restore"))
        .ok_or("logged")?;
    changes.remove(restore_entry);
    assert_eq!(after, before);
    let log = store.dreams(&dir.path().join("dreams"), 10)?;
    assert!(log[0].undone.is_some() && log[1].undone.is_some() && log[2].undone.is_none());
    // The restored store reads the memory as it was.
    assert_eq!(
        store.get(duplicate.id)?.ok_or("back")?.status,
        Status::Activated
    );
    assert!(store.get(notes[0].memory)?.is_none());

    // A dry run has nothing to restore; an unknown dream is not found.
    let err = store
        .restore_dream(&dir.path().join("dreams"), 1)
        .err()
        .ok_or("dry")?;
    assert!(err.to_string().contains("dry run"), "{err}");
    assert!(matches!(
        store.restore_dream(&dir.path().join("dreams"), 9),
        Err(MemoryError::NotFound(_))
    ));
    Ok(())
}

#[test]
fn a_dream_embeds_again_under_a_new_embedder_and_says_what_it_left() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("memory.sqlite");
    seed(&path, 1)?;
    let store = MemoryStore::open(&path)?.with_clock(|| DREAMT);
    store.set_embedder(Arc::new(Letters("letters-a")));
    store.embed_all_pending()?;
    store.set_embedder(Arc::new(Letters("letters-b")));
    let dream = store.dream(options(dir.path(), false, None))?;
    assert_eq!(dream.state, DreamState::Done, "{:?}", dream.error);
    let live = store.overview()?.total;
    assert!(
        dream.caught_up.embedded >= live - 1,
        "{:?}",
        dream.caught_up
    );
    let conn = Connection::open(&path)?;
    let models: Vec<String> = conn
        .prepare("SELECT DISTINCT model FROM memory_vectors")?
        .query_map([], |row| row.get(0))?
        .collect::<Result<_, _>>()?;
    assert_eq!(models, ["letters-b"]);
    // Without a summary model no note is written, and the dream says so.
    assert!(dream
        .changes
        .iter()
        .all(|c| c.kind != DreamChangeKind::Noted));
    assert!(
        dream.left.iter().any(|l| l.contains("no summary model")),
        "{:?}",
        dream.left
    );
    Ok(())
}

#[test]
fn one_dream_at_a_time() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("memory.sqlite");
    seed(&path, 1)?;
    std::fs::create_dir_all(dir.path().join("dreams"))?;
    let held = std::fs::File::create(dir.path().join("dreams/lock"))?;
    held.lock()?;
    let store = MemoryStore::open(&path)?;
    let err = store
        .dream(options(dir.path(), false, None))
        .err()
        .ok_or("ran")?;
    assert!(err.to_string().contains("already running"), "{err}");
    let err = store
        .restore_dream(&dir.path().join("dreams"), 1)
        .err()
        .ok_or("ran")?;
    assert!(err.to_string().contains("already running"), "{err}");
    Ok(())
}

const CHILD_ENV: &str = "CAIRN_MEMORY_DREAM_CHILD_HOME";
/// Conversations in the killed dream's memory: enough notes that the kills land all along it.
const EPISODES: usize = 40;

/// The child's part, run in the process the test starts: one dream, slowly.
fn dream_until_killed(home: &str) -> TestResult {
    let home = Path::new(home);
    let store = MemoryStore::open(&home.join("memory.sqlite"))?.with_clock(|| DREAMT);
    println!("dreaming");
    store.dream(options(
        home,
        false,
        Some(Arc::new(Notes(Duration::from_millis(10)))),
    ))?;
    println!("dreamt");
    Ok(())
}

#[test]
fn a_dream_killed_anywhere_leaves_the_memory_as_before_or_as_after() -> TestResult {
    if let Ok(home) = std::env::var(CHILD_ENV) {
        return dream_until_killed(&home);
    }
    let dir = tempfile::tempdir()?;
    let seeded = dir.path().join("seeded.sqlite");
    seed(&seeded, EPISODES)?;
    let before = dump(&seeded, false)?;
    // What a dream left alone ends with.
    let whole = dir.path().join("whole");
    std::fs::create_dir_all(&whole)?;
    std::fs::copy(&seeded, whole.join("memory.sqlite"))?;
    let store = MemoryStore::open(&whole.join("memory.sqlite"))?.with_clock(|| DREAMT);
    let dream = store.dream(options(
        &whole,
        false,
        Some(Arc::new(Notes(Duration::ZERO))),
    ))?;
    drop(store);
    assert_eq!(dream.changes.len(), EPISODES + 2);
    let after = dump(&whole.join("memory.sqlite"), false)?;
    assert_ne!(before, after);

    let (mut saw_before, mut saw_after) = (0, 0);
    for (i, delay) in [0u64, 30, 60, 100, 150, 220, 300, 400, 600, 1500]
        .iter()
        .enumerate()
    {
        for round in 0..2 {
            let home = dir.path().join(format!("kill-{i}-{round}"));
            std::fs::create_dir_all(&home)?;
            std::fs::copy(&seeded, home.join("memory.sqlite"))?;
            let mut child = Command::new(std::env::current_exe()?)
                .args([
                    "--exact",
                    "dream::a_dream_killed_anywhere_leaves_the_memory_as_before_or_as_after",
                    "--nocapture",
                    "--test-threads",
                    "1",
                ])
                .env(CHILD_ENV, &home)
                .stdout(Stdio::piped())
                .spawn()?;
            let mut lines = BufReader::new(child.stdout.take().ok_or("no stdout")?).lines();
            while let Some(line) = lines.next().transpose()? {
                if line.contains("dreaming") {
                    break;
                }
            }
            std::thread::sleep(Duration::from_millis(delay + round * 7));
            child.kill()?;
            child.wait()?;
            let found = dump(&home.join("memory.sqlite"), false)?;
            let store = MemoryStore::open(&home.join("memory.sqlite"))?;
            assert_eq!(store.integrity_check()?, "ok");
            drop(store);
            if found == before {
                saw_before += 1;
            } else {
                assert_eq!(
                    found, after,
                    "killed after {delay} ms: between before and after"
                );
                saw_after += 1;
            }
            // The log tells it the same way: a dream that changed nothing is not called done
            // (read, the log settles what its killed process left running).
            let store = MemoryStore::open(&home.join("memory.sqlite"))?.with_clock(|| DREAMT);
            let first = store
                .dreams(&home.join("dreams"), 10)?
                .into_iter()
                .find(|d| d.id == 1);
            assert!(
                first
                    .as_ref()
                    .is_none_or(|d| d.state != DreamState::Running),
                "killed after {delay} ms: still running in the log"
            );
            assert_eq!(
                first.is_some_and(|d| d.state == DreamState::Done),
                found == after,
                "killed after {delay} ms: logged otherwise"
            );
        }
    }
    assert!(
        saw_before > 0 && saw_after > 0,
        "before {saw_before}, after {saw_after}"
    );
    Ok(())
}

//! Dreams: the slow consolidation the prompt path must not do, run by hand (`/dream`, `cairn
//! memory dream`) or once a day while the memory is idle. A dream first catches up the background
//! queue (embeddings, also of memories whose embedder changed; facts; learning from rated tasks;
//! rewritten summaries), then takes a restore point (an SQLite online backup), then works out
//! its own changes — memories that say the same in other words merged, finished episodes given a
//! note by the summary model, candidate policies and skills that never earned their place
//! archived — and writes them in one transaction with a marker in the change log, then compacts
//! the database. Killed before that commit, it changed nothing; after, all of it. Every change is
//! logged (what, why, from which memories) in a log beside the restore points, which a restore
//! does not touch; `restore` puts the memory back exactly as the restore point holds it.

use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use cairn_protocol::memory::{
    CaughtUp, Dream, DreamChange, DreamChangeKind, DreamState, Layer, NewMemory, Restored, Status,
    Undone,
};
use rusqlite::backup::Backup;
use rusqlite::{params, Connection, OpenFlags, OptionalExtension};
use serde_json::json;

use crate::background::QUEUE;
use crate::duplicates::merge;
use crate::lent_models::Writer;
use crate::overview::revision_of;
use crate::statements::words;
use crate::store::{change_status, get, log_change, stored_id};
use crate::text::snippet;
use crate::write::Unindexed;
use crate::{MemoryError, MemoryStore};

/// The source of the memories a dream writes (episode notes).
pub const DREAM_SOURCE: &str = "cairn-dream";

/// What the summary model is asked for an episode's note.
const NOTE_PROMPT: &str = "These are the turns of one conversation from a person's history with an AI agent, \
oldest first, each with its date. Write a short note for the person's memory: who and what it was about, \
what was decided, done or learned, and every name, date, place, number and preference that matters, \
with dates as written. Plain sentences, at most five. Reply with the note only.";

/// An episode is finished (and may get its note) this long after its last turn.
const QUIET_MS: i64 = 60 * 60 * 1000;
/// Episodes shorter than this get no note: their turns say it all.
const NOTE_MIN_TURNS: i64 = 3;
/// How much of an episode the model reads, and of each turn.
const NOTE_INPUT_CHARS: usize = 6_000;
const NOTE_TURN_CHARS: usize = 500;
/// The longest note.
const NOTE_TOKENS: u32 = 200;
/// A candidate policy or skill unchanged this long is stale.
const STALE_MS: i64 = 90 * 24 * 60 * 60 * 1000;
/// Memories shorter than this (in words) are never merged: short replies repeat by nature.
const MERGE_MIN_WORDS: usize = 6;
/// Words that do not change what a sentence says, left out when comparing.
const FILLER: &[&str] = &[
    "a", "an", "the", "so", "just", "well", "oh", "um", "uh", "yeah", "hey", "also", "actually",
];
/// Restore points kept (the newest); older ones are removed and their dreams can no longer be
/// undone.
const KEPT_RESTORE_POINTS: usize = 5;
/// How long a dream or restore waits for the dreams' lock before it says another one runs.
const LOCK_WAIT: Duration = Duration::from_secs(1);
/// The share of a dream's time the background queue's catch-up may take.
const CATCH_UP_SHARE: u32 = 2;

/// How a dream runs.
pub struct DreamOptions {
    /// Where the log and the restore points live (`~/.cairn/dreams`).
    pub dir: PathBuf,
    /// Work out and log what would change, writing nothing.
    pub dry_run: bool,
    /// The time the dream may take before it stops writing notes (the catch-up takes at most
    /// half of it); merges, archives and the commit are not cut short.
    pub budget: Duration,
    /// Writes episode notes: the summary model.
    pub writer: Option<Arc<dyn Writer>>,
    /// What started it (`cli`, `app`, `schedule`…).
    pub trigger: String,
}

/// The dreams' log and restore points.
struct DreamLog {
    dir: PathBuf,
    conn: Connection,
}

impl DreamLog {
    fn open(dir: &Path) -> Result<Self, MemoryError> {
        std::fs::create_dir_all(dir).map_err(|e| io_error(dir, e))?;
        let conn = Connection::open(dir.join("log.sqlite"))?;
        conn.busy_timeout(Duration::from_secs(5))?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS dreams (
                 id INTEGER PRIMARY KEY,
                 state TEXT NOT NULL,
                 report TEXT NOT NULL
             );",
        )?;
        Ok(Self {
            dir: dir.to_owned(),
            conn,
        })
    }

    /// Holds the dreams' lock (released when the file is dropped, or the process dies): one
    /// dream or restore at a time per data home, whichever process runs it. It is waited for a
    /// moment: a process started just as the lock was let go holds a copy of it until it has
    /// started (a fork shares the open lock), while a dream holds it for seconds at least.
    fn lock(&self) -> Result<File, MemoryError> {
        let path = self.dir.join("lock");
        let file = File::create(&path).map_err(|e| io_error(&path, e))?;
        let deadline = Instant::now() + LOCK_WAIT;
        loop {
            match file.try_lock() {
                Ok(()) => return Ok(file),
                Err(std::fs::TryLockError::WouldBlock) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20));
                }
                Err(std::fs::TryLockError::WouldBlock) => {
                    return Err(MemoryError::Busy(
                        "a dream or a restore is already running on this memory".into(),
                    ))
                }
                Err(std::fs::TryLockError::Error(e)) => return Err(io_error(&path, e)),
            }
        }
    }

    fn next_id(&self) -> Result<i64, MemoryError> {
        Ok(self
            .conn
            .query_row("SELECT coalesce(max(id), 0) + 1 FROM dreams", [], |row| {
                row.get(0)
            })?)
    }

    fn save(&self, dream: &Dream) -> Result<(), MemoryError> {
        self.conn.execute(
            "INSERT INTO dreams (id, state, report) VALUES (?1, ?2, ?3)
             ON CONFLICT(id) DO UPDATE SET state = excluded.state, report = excluded.report",
            params![
                dream.id,
                dream.state.as_str(),
                serde_json::to_string(dream)?
            ],
        )?;
        Ok(())
    }

    fn get(&self, id: i64) -> Result<Option<Dream>, MemoryError> {
        let report: Option<String> = self
            .conn
            .query_row("SELECT report FROM dreams WHERE id = ?1", [id], |row| {
                row.get(0)
            })
            .optional()?;
        report
            .map(|r| serde_json::from_str(&r).map_err(MemoryError::from))
            .transpose()
    }

    /// Newest first.
    fn list(&self, limit: usize) -> Result<Vec<Dream>, MemoryError> {
        let mut stmt = self
            .conn
            .prepare("SELECT report FROM dreams ORDER BY id DESC LIMIT ?1")?;
        let reports = stmt.query_map([limit as i64], |row| row.get::<_, String>(0))?;
        reports
            .map(|r| Ok(serde_json::from_str(&r?)?))
            .collect::<Result<_, MemoryError>>()
    }

    fn restore_point(&self, id: i64) -> PathBuf {
        self.dir.join(format!("{id}.sqlite"))
    }

    /// Removes restore points but the newest [`KEPT_RESTORE_POINTS`].
    fn prune(&self) -> Result<(), MemoryError> {
        let mut stmt = self.conn.prepare(
            "SELECT id FROM dreams WHERE json_extract(report, '$.restore_point_bytes') > 0
             ORDER BY id DESC LIMIT -1 OFFSET ?1",
        )?;
        let old: Vec<i64> = stmt
            .query_map([KEPT_RESTORE_POINTS as i64], |row| row.get(0))?
            .collect::<Result<_, _>>()?;
        for id in old {
            let path = self.restore_point(id);
            match std::fs::remove_file(&path) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(io_error(&path, e)),
            }
            if let Some(mut dream) = self.get(id)? {
                dream.restore_point_bytes = 0;
                self.save(&dream)?;
            }
        }
        Ok(())
    }
}

fn io_error(path: &Path, source: std::io::Error) -> MemoryError {
    MemoryError::Io {
        path: path.display().to_string(),
        source,
    }
}

/// A change worked out before the transaction that writes it.
enum Planned {
    Merge {
        id: i64,
        into: i64,
    },
    Note {
        group: Group,
        from: Vec<i64>,
        at: i64,
        text: String,
    },
    Archive {
        id: i64,
        skill: bool,
    },
}

/// The turns an episode note covers: an episode's, or a conversation's without episodes.
#[derive(Clone)]
enum Group {
    Episode(i64),
    Session(String),
}

impl Group {
    fn key(&self) -> String {
        match self {
            Self::Episode(id) => format!("note:episode:{id}"),
            Self::Session(key) => format!("note:session:{key}"),
        }
    }
}

impl MemoryStore {
    /// Runs a dream (see the module's comment) and returns its log entry. Fails when another
    /// dream or restore runs on this memory (after waiting a second for it, see `DreamLog::lock`).
    pub fn dream(&self, options: DreamOptions) -> Result<Dream, MemoryError> {
        let Some(path) = self.path.clone() else {
            return Err(MemoryError::Invalid(
                "a dream needs a memory on disk (for its restore point)".into(),
            ));
        };
        let log = DreamLog::open(&options.dir)?;
        let _lock = log.lock()?;
        self.settle_interrupted(&log)?;
        let started = Instant::now();
        let mut dream = Dream {
            id: log.next_id()?,
            started_at: self.now(),
            finished_at: None,
            state: DreamState::Running,
            trigger: options.trigger.clone(),
            caught_up: CaughtUp::default(),
            changes: Vec::new(),
            left: Vec::new(),
            restore_point_bytes: 0,
            freed_bytes: 0,
            error: None,
            undone: None,
        };
        log.save(&dream)?;
        let outcome = self.dream_steps(&options, &log, &path, started, &mut dream);
        dream.finished_at = Some(self.now());
        match outcome {
            Ok(()) => {
                dream.state = if options.dry_run {
                    DreamState::DryRun
                } else {
                    DreamState::Done
                };
            }
            Err(e) => {
                // Committed or not: the marker says which.
                dream.state = if self.dream_committed(dream.id)? {
                    DreamState::Done
                } else {
                    DreamState::Failed
                };
                dream.error = Some(e.to_string());
            }
        }
        log.save(&dream)?;
        log.prune()?;
        Ok(dream)
    }

    fn dream_steps(
        &self,
        options: &DreamOptions,
        log: &DreamLog,
        path: &Path,
        started: Instant,
        dream: &mut Dream,
    ) -> Result<(), MemoryError> {
        if !options.dry_run {
            dream.caught_up = self.catch_up_all(options.budget / CATCH_UP_SHARE, &mut dream.left);
            let point = log.restore_point(dream.id);
            dream.restore_point_bytes = backup(path, &point)?;
            log.save(dream)?;
        }
        let mut planned = self.plan_merges()?;
        planned.extend(self.plan_archives()?);
        let left = options.budget.saturating_sub(started.elapsed());
        planned.extend(self.plan_notes(
            options.writer.as_deref(),
            left,
            options.dry_run,
            &mut dream.left,
        )?);
        if options.dry_run {
            dream.changes = planned.iter().map(|p| describe(p, 0)).collect();
            return Ok(());
        }
        dream.changes = self.apply(dream.id, planned)?;
        log.save(dream)?;
        dream.freed_bytes = self.compact()?;
        Ok(())
    }

    /// The background queue's work, done now for at most `budget`; what failed is said in `left`.
    fn catch_up_all(&self, budget: Duration, left: &mut Vec<String>) -> CaughtUp {
        let started = Instant::now();
        let mut done = CaughtUp::default();
        loop {
            let before = done.clone();
            let mut failed = false;
            // Every kind is tried in each pass, whatever failed before it.
            for (what, batch, counted) in QUEUE {
                match batch(self) {
                    Ok(n) => *counted(&mut done) += n as i64,
                    Err(e) => {
                        left.push(format!("{what} stopped: {e}"));
                        failed = true;
                    }
                }
            }
            if done == before || failed {
                return done;
            }
            if started.elapsed() >= budget {
                left.push(
                    "the background queue was not caught up in time: it goes on after the dream"
                        .into(),
                );
                return done;
            }
        }
    }

    /// Live traces that say what another live trace says, in other words: the same words
    /// (fillers aside) in any order, with the same names and numbers in the same order. Each is
    /// merged into the newest that says it (the fact reader may have taken the restatement for
    /// a new version of the fact: then the version kept is the current one).
    fn plan_merges(&self) -> Result<Vec<Planned>, MemoryError> {
        let conn = self.lock()?;
        let mut stmt = conn.prepare(
            "SELECT id, text FROM memories
             WHERE layer = 'L1' AND status IN ('activated', 'resolving')
               AND json_extract(metadata, '$.duplicate_of') IS NULL
             ORDER BY created_at, id",
        )?;
        let rows = stmt.query_map([], |row| {
            Ok((row.get::<_, i64>(0)?, row.get::<_, String>(1)?))
        })?;
        let mut groups: HashMap<(String, String), Vec<i64>> = HashMap::new();
        let mut order = Vec::new();
        for row in rows {
            let (id, text) = row?;
            let Some(key) = merge_key(&text) else {
                continue;
            };
            let group = groups.entry(key.clone()).or_default();
            if group.is_empty() {
                order.push(key);
            }
            group.push(id);
        }
        let mut planned = Vec::new();
        for key in order {
            let Some((&into, older)) = groups.get(&key).and_then(|ids| ids.split_last()) else {
                continue;
            };
            planned.extend(older.iter().map(|&id| Planned::Merge { id, into }));
        }
        Ok(planned)
    }

    /// Candidate policies and skills that stayed candidates, unchanged, for [`STALE_MS`].
    fn plan_archives(&self) -> Result<Vec<Planned>, MemoryError> {
        let conn = self.lock()?;
        let mut stmt = conn.prepare(
            "SELECT id, layer FROM memories
             WHERE layer IN ('L2', 'skill') AND status = 'resolving' AND updated_at < ?1
             ORDER BY id",
        )?;
        let rows = stmt.query_map([self.now() - STALE_MS], |row| {
            Ok((row.get::<_, i64>(0)?, row.get::<_, String>(1)?))
        })?;
        let mut planned = Vec::new();
        for row in rows {
            let (id, layer) = row?;
            planned.push(Planned::Archive {
                id,
                skill: layer == Layer::Skill.as_str(),
            });
        }
        Ok(planned)
    }

    /// Notes for finished episodes that have none, newest first, while `budget` lasts.
    fn plan_notes(
        &self,
        writer: Option<&dyn Writer>,
        budget: Duration,
        dry_run: bool,
        left: &mut Vec<String>,
    ) -> Result<Vec<Planned>, MemoryError> {
        let groups = self.unnoted_groups()?;
        if groups.is_empty() {
            return Ok(Vec::new());
        }
        let Some(writer) = writer.filter(|_| !dry_run) else {
            if !dry_run {
                left.push(format!(
                    "{} finished episodes have no note: no summary model is set",
                    groups.len()
                ));
                return Ok(Vec::new());
            }
            return Ok(groups
                .into_iter()
                .map(|(group, from, at)| Planned::Note {
                    group,
                    from,
                    at,
                    text: String::new(),
                })
                .collect());
        };
        let started = Instant::now();
        let mut planned = Vec::new();
        let total = groups.len();
        for (group, from, at) in groups {
            if started.elapsed() >= budget {
                left.push(format!(
                    "{} of {total} finished episodes still have no note: the dream's time ran out",
                    total - planned.len()
                ));
                break;
            }
            let turns = self.note_input(&from)?;
            match writer.write(NOTE_PROMPT, &turns, NOTE_TOKENS) {
                Ok(text) if !text.trim().is_empty() => planned.push(Planned::Note {
                    group,
                    from,
                    at,
                    text: text.trim().to_owned(),
                }),
                Ok(_) => {}
                Err(e) => {
                    left.push(format!("episode notes stopped: {e}"));
                    break;
                }
            }
        }
        Ok(planned)
    }

    /// Finished episodes (or conversations without episodes) of [`NOTE_MIN_TURNS`] traces or
    /// more with no note yet: the group, its traces, when its last one was written. Newest first.
    fn unnoted_groups(&self) -> Result<Vec<(Group, Vec<i64>, i64)>, MemoryError> {
        let conn = self.lock()?;
        let mut stmt = conn.prepare(
            "SELECT episode_id, CASE WHEN episode_id IS NULL THEN session_key END AS session,
                    group_concat(id), max(created_at)
             FROM (SELECT id, episode_id, session_key, created_at FROM memories
                   WHERE layer = 'L1' AND status IN ('activated', 'resolving') AND source != ?1
                     AND (episode_id IS NOT NULL OR session_key IS NOT NULL)
                   ORDER BY created_at, id)
             GROUP BY episode_id, session
             HAVING count(*) >= ?2 AND max(created_at) < ?3
             ORDER BY max(created_at) DESC",
        )?;
        let rows = stmt.query_map(
            params![DREAM_SOURCE, NOTE_MIN_TURNS, self.now() - QUIET_MS],
            |row| {
                Ok((
                    row.get::<_, Option<i64>>(0)?,
                    row.get::<_, Option<String>>(1)?,
                    row.get::<_, String>(2)?,
                    row.get::<_, i64>(3)?,
                ))
            },
        )?;
        let mut groups = Vec::new();
        for row in rows {
            let (episode, session, ids, at) = row?;
            let group = match (episode, session) {
                (Some(episode), _) => Group::Episode(episode),
                (None, Some(session)) => Group::Session(session),
                (None, None) => continue,
            };
            if stored_id(&conn, DREAM_SOURCE, &group.key())?.is_some() {
                continue;
            }
            let ids = ids.split(',').filter_map(|id| id.parse().ok()).collect();
            groups.push((group, ids, at));
        }
        Ok(groups)
    }

    /// What the model reads for a note: each trace with its date, oldest first.
    fn note_input(&self, ids: &[i64]) -> Result<String, MemoryError> {
        let conn = self.lock()?;
        let mut input = String::new();
        for id in ids {
            let Some(memory) = get(&conn, *id)? else {
                continue;
            };
            let line = format!(
                "[{}] {}\n",
                crate::clock::date(memory.created_at),
                snippet(&memory.text, NOTE_TURN_CHARS)
            );
            if input.len() + line.len() > NOTE_INPUT_CHARS {
                break;
            }
            input.push_str(&line);
        }
        Ok(input)
    }

    /// Writes `planned` in one transaction with the dream's marker; what was written.
    fn apply(&self, dream: i64, planned: Vec<Planned>) -> Result<Vec<DreamChange>, MemoryError> {
        let now = self.now();
        let mut conn = self.lock()?;
        let tx = conn.transaction()?;
        let mut changes = Vec::new();
        for change in planned {
            let memory = match &change {
                Planned::Merge { id, into } => {
                    let live = |id: i64| -> Result<bool, MemoryError> {
                        Ok(get(&tx, id)?.is_some_and(|m| {
                            matches!(m.status, Status::Activated | Status::Resolving)
                                && m.metadata.get("duplicate_of").is_none()
                        }))
                    };
                    if !live(*id)? || !live(*into)? {
                        continue;
                    }
                    merge(&tx, *id, *into, now)?;
                    *id
                }
                Planned::Note {
                    group,
                    from,
                    at,
                    text,
                } => {
                    let mut unindexed = Unindexed::default();
                    let episode = match group {
                        Group::Episode(id) => Some(*id),
                        Group::Session(_) => None,
                    };
                    let id = self.insert(
                        &tx,
                        NewMemory {
                            text: text.clone(),
                            layer: Some(Layer::Trace),
                            source: Some(DREAM_SOURCE.to_owned()),
                            external_id: Some(group.key()),
                            created_at: Some(*at),
                            metadata: Some(json!({
                                "kind": "episode_note",
                                "from": from,
                                "dream": dream,
                            })),
                            ..NewMemory::default()
                        },
                        episode,
                        None,
                        &mut unindexed,
                    )?;
                    self.index_marked(&tx, unindexed)?;
                    id
                }
                Planned::Archive { id, .. } => {
                    if !change_status(&tx, *id, Status::Archived, now)? {
                        continue;
                    }
                    *id
                }
            };
            changes.push(describe(&change, memory));
        }
        log_change(
            &tx,
            now,
            "dream",
            None,
            &json!({ "dream": dream, "changes": changes.len() }),
        )?;
        tx.commit()?;
        drop(conn);
        // Merged memories leave the vector channel; notes wait for their vectors.
        self.forget_caches();
        Ok(changes)
    }

    /// Whether dream `id`'s changes were committed (its marker is in the change log).
    fn dream_committed(&self, id: i64) -> Result<bool, MemoryError> {
        Ok(self
            .lock()?
            .query_row(
                "SELECT 1 FROM changes WHERE op = 'dream' AND json_extract(detail, '$.dream') = ?1",
                [id],
                |_| Ok(()),
            )
            .optional()?
            .is_some())
    }

    /// Dreams the log still holds as running (their process was killed): done when their
    /// commit landed, interrupted (nothing changed) when it did not.
    fn settle_interrupted(&self, log: &DreamLog) -> Result<(), MemoryError> {
        let mut stmt = log
            .conn
            .prepare("SELECT id FROM dreams WHERE state = 'running'")?;
        let running: Vec<i64> = stmt
            .query_map([], |row| row.get(0))?
            .collect::<Result<_, _>>()?;
        for id in running {
            let Some(mut dream) = log.get(id)? else {
                continue;
            };
            dream.state = if self.dream_committed(id)? {
                DreamState::Done
            } else {
                DreamState::Interrupted
            };
            if dream.state == DreamState::Interrupted {
                dream.changes.clear();
            }
            log.save(&dream)?;
        }
        Ok(())
    }

    /// Compacts the database when a tenth or more of it is free pages; the bytes freed.
    fn compact(&self) -> Result<i64, MemoryError> {
        let conn = self.lock()?;
        let pages = |conn: &Connection, pragma: &str| -> Result<i64, MemoryError> {
            Ok(conn.pragma_query_value(None, pragma, |row| row.get::<_, i64>(0))?)
        };
        conn.execute_batch(
            "INSERT INTO memory_terms(memory_terms) VALUES('optimize'); PRAGMA optimize;",
        )?;
        let size = pages(&conn, "page_count")?;
        let free = pages(&conn, "freelist_count")?;
        if free * 10 < size {
            return Ok(0);
        }
        conn.execute_batch("VACUUM")?;
        let page = pages(&conn, "page_size")?;
        Ok((size - pages(&conn, "page_count")?) * page)
    }

    /// The dreams' log, newest first. A dream its process left running (killed) is settled
    /// first — done when its changes were committed, interrupted when not — unless a dream or a
    /// restore runs now.
    pub fn dreams(&self, dir: &Path, limit: usize) -> Result<Vec<Dream>, MemoryError> {
        let log = DreamLog::open(dir)?;
        if let Ok(_lock) = log.lock() {
            self.settle_interrupted(&log)?;
        }
        log.list(limit)
    }

    /// Puts the memory back exactly as dream `id`'s restore point holds it: that dream, every
    /// dream after it, and every other change since are undone.
    pub fn restore_dream(&self, dir: &Path, id: i64) -> Result<Restored, MemoryError> {
        let log = DreamLog::open(dir)?;
        let _lock = log.lock()?;
        self.settle_interrupted(&log)?;
        let Some(dream) = log.get(id)? else {
            return Err(MemoryError::NotFound(format!("dream {id}")));
        };
        let point = log.restore_point(id);
        if dream.state == DreamState::DryRun {
            return Err(MemoryError::Invalid(format!(
                "dream {id} was a dry run: it changed nothing to restore"
            )));
        }
        if dream.restore_point_bytes == 0 || !point.exists() {
            return Err(MemoryError::Invalid(format!(
                "dream {id} has no restore point any more (the newest {KEPT_RESTORE_POINTS} are kept)"
            )));
        }
        let source = Connection::open_with_flags(&point, OpenFlags::SQLITE_OPEN_READ_ONLY)?;
        let at_point = revision_of(&source)?;
        let now = self.now();
        let changes_undone = {
            let mut conn = self.lock()?;
            let before = revision_of(&conn)?;
            Backup::new(&source, &mut conn)?.step(-1)?;
            log_change(&conn, now, "dream-restore", None, &json!({ "dream": id }))?;
            before - at_point
        };
        self.forget_caches();
        let mut undone = Vec::new();
        for mut later in log.list(usize::MAX)?.into_iter().filter(|d| d.id >= id) {
            if later.state == DreamState::Done && later.undone.is_none() {
                later.undone = Some(Undone {
                    by_restore_of: id,
                    at: now,
                });
                log.save(&later)?;
                undone.push(later.id);
            }
        }
        undone.sort_unstable();
        Ok(Restored {
            dream: id,
            undone,
            changes_undone,
        })
    }

    /// Forgets what the store keeps beside the database, after the database changed under it.
    fn forget_caches(&self) {
        if let Ok(mut index) = self.vectors.lock() {
            *index = None;
        }
        if let Ok(mut stats) = self.term_stats.lock() {
            *stats = Default::default();
        }
        if let Ok(mut after) = self.embed_after.lock() {
            *after = None;
        }
        if let Ok(mut after) = self.relate_after.lock() {
            *after = None;
        }
        self.wake_embedding();
    }
}

/// An online backup of the database at `path` into `point` (written beside it first, so a
/// half-written restore point is never taken for one); its size.
fn backup(path: &Path, point: &Path) -> Result<u64, MemoryError> {
    let part = point.with_extension("sqlite.part");
    let _ = std::fs::remove_file(&part);
    let source = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    {
        let mut copy = Connection::open(&part)?;
        Backup::new(&source, &mut copy)?.step(-1)?;
        copy.pragma_update(None, "journal_mode", "DELETE")?;
    }
    File::open(&part)
        .and_then(|f| f.sync_all())
        .map_err(|e| io_error(&part, e))?;
    std::fs::rename(&part, point).map_err(|e| io_error(point, e))?;
    Ok(std::fs::metadata(point)
        .map_err(|e| io_error(point, e))?
        .len())
}

/// What two memories are compared by for a merge: their words but fillers, sorted; and their
/// names and numbers in order ("Alice told Bob" is not "Bob told Alice"). `None` when too short.
fn merge_key(text: &str) -> Option<(String, String)> {
    let mut said: Vec<String> = words(text)
        .into_iter()
        .filter(|w| !FILLER.contains(&w.as_str()))
        .collect();
    if said.len() < MERGE_MIN_WORDS {
        return None;
    }
    said.sort_unstable();
    let names: Vec<&str> = text
        .split(|c: char| !(c.is_alphanumeric() || c == '.' || c == '-'))
        .map(|w| w.trim_matches(['.', '-']))
        .filter(|w| {
            w.chars().any(|c| c.is_ascii_digit())
                || (w.chars().count() > 1 && w.chars().next().is_some_and(char::is_uppercase))
        })
        .collect();
    // A sentence's first word is capitalised whatever it is: names are compared without the
    // words that open a sentence in either text, so only their relative order counts.
    let opening: Vec<String> = text
        .split(['.', '!', '?', '\n'])
        .filter_map(|s| s.split_whitespace().next())
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()).to_owned())
        .collect();
    let names: Vec<&str> = names
        .into_iter()
        .filter(|w| !opening.iter().any(|o| o == w) || w.chars().any(|c| c.is_ascii_digit()))
        .collect();
    Some((said.join(" "), names.join(" ").to_lowercase()))
}

/// A planned change as the log says it, once written as `memory` (0 in a dry run: not written).
fn describe(change: &Planned, memory: i64) -> DreamChange {
    match change {
        Planned::Merge { id, into } => DreamChange {
            kind: DreamChangeKind::Merged,
            memory: *id,
            from: vec![*into],
            why: format!("says what memory {into} says (in other words, or again)"),
        },
        Planned::Note { from, text, .. } => DreamChange {
            kind: DreamChangeKind::Noted,
            memory,
            from: from.clone(),
            why: if text.is_empty() {
                format!("a finished episode of {} turns has no note", from.len())
            } else {
                format!(
                    "the note of a finished episode of {} turns: {}",
                    from.len(),
                    snippet(text, 200)
                )
            },
        },
        Planned::Archive { id, skill } => DreamChange {
            kind: DreamChangeKind::Archived,
            memory: *id,
            from: Vec::new(),
            why: format!(
                "a candidate {} unchanged for {} days never earned its place",
                if *skill { "skill" } else { "policy" },
                STALE_MS / (24 * 60 * 60 * 1000)
            ),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_words_and_names_in_another_order_merge_but_not_other_roles_or_values() {
        let key = |t: &str| merge_key(t).map(|k| k.0 + "|" + &k.1);
        assert_eq!(
            key("I moved to Berlin with my sister last year."),
            key("Last year I moved to Berlin with my sister")
        );
        assert_eq!(
            key("The deploy script uses port 8080 on staging"),
            key("deploy script uses port 8080 on staging.")
        );
        assert_ne!(
            key("Alice told Bob about the new release plan"),
            key("Bob told Alice about the new release plan")
        );
        assert_ne!(
            key("The deploy script uses port 8080 on staging"),
            key("The deploy script uses port 8081 on staging")
        );
        assert_ne!(
            key("I did not move to Berlin last year at all"),
            key("I did move to Berlin last year at all")
        );
        assert_eq!(key("thanks, see you soon"), None);
    }
}

//! Turn capture: sessions, `turn.start` / `turn.complete`, episodes (follow-ups within two hours
//! merge), the raw turn kept whole, and one L1 trace per turn with the spec's caps. Secrets are
//! redacted before anything is written; a turn over 2 MiB is skipped and counted, not truncated.

use std::collections::{HashMap, HashSet};

use rusqlite::{params, Connection, OptionalExtension, Transaction};
use serde::{Deserialize, Serialize};

use crate::model::{Layer, NewMemory};
use crate::store::{cached, log_change, stored_id};
use crate::text::snippet;
use crate::write::{Analysed, Unindexed};
use crate::{redact, MemoryError, MemoryStore};

/// The capture caps.
pub struct CaptureLimits {
    /// Characters of the request and of the answer kept in the trace.
    pub text_chars: usize,
    /// Characters of each tool output kept in the trace.
    pub tool_output_chars: usize,
    /// A whole turn larger than this is skipped.
    pub turn_bytes: usize,
    /// Follow-ups closer than this (ms) join the same episode.
    pub episode_gap_ms: i64,
}

pub const CAPTURE_LIMITS: CaptureLimits = CaptureLimits {
    text_chars: 4_000,
    tool_output_chars: 2_000,
    turn_bytes: 2 * 1024 * 1024,
    episode_gap_ms: 2 * 60 * 60 * 1000,
};

/// `turn.start`: a person's request arrives.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TurnStart {
    /// The conversation (the caller's session id).
    pub session: String,
    pub request: String,
    /// The agent the turn happens in; `cairn` by default.
    #[serde(default)]
    pub source: Option<String>,
    /// Sending the same key again returns the same turn.
    #[serde(default)]
    pub idempotency_key: Option<String>,
    #[serde(default)]
    pub started_at: Option<i64>,
    #[serde(default)]
    pub workspace: Option<String>,
}

/// One tool call of a turn with its result, paired by call id.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    #[serde(default)]
    pub input: serde_json::Value,
    #[serde(default)]
    pub output: Option<String>,
    #[serde(default)]
    pub is_error: bool,
}

/// `turn.complete`: the answer and what happened on the way.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct TurnCompletion {
    pub answer: String,
    #[serde(default)]
    pub tool_calls: Vec<ToolCall>,
    /// A summary of the model's reasoning, kept in the trace's metadata.
    #[serde(default)]
    pub reasoning: Option<String>,
    /// `completed` (default), `failed` or `cancelled`.
    #[serde(default)]
    pub status: Option<String>,
    #[serde(default)]
    pub completed_at: Option<i64>,
    /// Where the turn came from (an imported turn's agent, conversation, workspace, git root),
    /// kept in the trace's metadata.
    #[serde(default)]
    pub origin: Option<serde_json::Value>,
}

/// What `complete_turn` did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum CaptureOutcome {
    Captured {
        memory_id: i64,
    },
    /// The turn was captured before; nothing changed.
    AlreadyCaptured {
        memory_id: i64,
    },
    /// The turn was larger than the cap and was counted, not stored.
    Skipped {
        bytes: usize,
    },
}

impl MemoryStore {
    /// Opens (or reopens) a conversation; returns its row id.
    pub fn open_session(
        &self,
        key: &str,
        source: Option<&str>,
        title: Option<&str>,
        workspace: Option<&str>,
    ) -> Result<i64, MemoryError> {
        open_session(&*self.lock()?, key, source, title, workspace, self.now())
    }

    /// Closes a conversation; false when it was not open.
    pub fn close_session(&self, key: &str) -> Result<bool, MemoryError> {
        let changed = self.lock()?.execute(
            "UPDATE sessions SET closed_at = ?2 WHERE key = ?1 AND closed_at IS NULL",
            params![key, self.now()],
        )?;
        Ok(changed > 0)
    }

    /// Records the start of a turn (opening its session if needed) and places it in an episode.
    pub fn start_turn(&self, start: TurnStart) -> Result<i64, MemoryError> {
        check_request(&start)?;
        let mut conn = self.lock()?;
        let tx = conn.transaction()?;
        let session_id = self.open_turn_session(&tx, &start)?;
        let request = redact(&start.request).into_owned();
        let id = self.begin_turn(&tx, start, request, session_id)?.id();
        tx.commit()?;
        Ok(id)
    }

    fn open_turn_session(
        &self,
        tx: &Transaction<'_>,
        start: &TurnStart,
    ) -> Result<i64, MemoryError> {
        open_session(
            tx,
            &start.session,
            Some(start.source.as_deref().unwrap_or("cairn")),
            None,
            start.workspace.as_deref(),
            self.now(),
        )
    }

    /// The start of a turn within a transaction, its session opened: the turn's row (with
    /// `request`, the request redacted), its episode and the implicit rating its request gives the
    /// reply before it.
    fn begin_turn(
        &self,
        tx: &Transaction<'_>,
        start: TurnStart,
        request: String,
        session_id: i64,
    ) -> Result<Begun, MemoryError> {
        let source = start.source.clone().unwrap_or_else(|| "cairn".to_owned());
        let at = start.started_at.unwrap_or_else(|| self.now());
        if let Some(key) = &start.idempotency_key {
            let existing: Option<i64> = tx
                .prepare_cached("SELECT id FROM turns WHERE idempotency_key = ?1")?
                .query_row([key], |row| row.get(0))
                .optional()?;
            if let Some(id) = existing {
                return Ok(Begun::Existing(id));
            }
        }
        let last: Option<(i64, i64)> = tx
            .prepare_cached(
                "SELECT id, last_at FROM episodes WHERE session_id = ?1 ORDER BY last_at DESC LIMIT 1",
            )?
            .query_row([session_id], |row| Ok((row.get(0)?, row.get(1)?)))
            .optional()?;
        let episode_id = match last {
            Some((id, last_at)) if at - last_at <= CAPTURE_LIMITS.episode_gap_ms => {
                cached(
                    tx,
                    "UPDATE episodes SET last_at = max(last_at, ?2) WHERE id = ?1",
                    params![id, at],
                )?;
                id
            }
            _ => {
                cached(
                    tx,
                    "INSERT INTO episodes (session_id, started_at, last_at) VALUES (?1, ?2, ?2)",
                    params![session_id, at],
                )?;
                tx.last_insert_rowid()
            }
        };
        cached(tx,
            "INSERT INTO turns (session_id, episode_id, idempotency_key, status, source, request, started_at)
             VALUES (?1, ?2, ?3, 'started', ?4, ?5, ?6)",
            params![session_id, episode_id, start.idempotency_key, source, request, at],
        )?;
        let id = tx.last_insert_rowid();
        crate::feedback::rate_previous_reply(tx, at, id, session_id, &start.request)?;
        Ok(Begun::New(
            id,
            OpenTurn {
                request,
                source,
                session: start.session,
                episode_id: Some(episode_id),
                started_at: at,
            },
        ))
    }

    /// Completes a started turn: keeps the whole turn raw and writes its L1 trace.
    pub fn complete_turn(
        &self,
        turn_id: i64,
        done: TurnCompletion,
    ) -> Result<CaptureOutcome, MemoryError> {
        let mut conn = self.lock()?;
        let tx = conn.transaction()?;
        let mut unindexed = Unindexed::default();
        let outcome = self.finish_turn(&tx, turn_id, done, &mut unindexed)?;
        self.index_marked(&tx, unindexed)?;
        tx.commit()?;
        Ok(outcome)
    }

    /// The end of a turn within a transaction; the terms of the memories it writes are left to
    /// the caller's [`MemoryStore::index_marked`].
    fn finish_turn(
        &self,
        tx: &Transaction<'_>,
        turn_id: i64,
        done: TurnCompletion,
        unindexed: &mut Unindexed,
    ) -> Result<CaptureOutcome, MemoryError> {
        match turn_to_finish(tx, turn_id)? {
            TurnToFinish::Captured(memory_id) => Ok(CaptureOutcome::AlreadyCaptured { memory_id }),
            TurnToFinish::Open(turn) => {
                let analysed = self.analyse_turn(&turn.request, &done);
                self.write_turn(tx, turn_id, turn, analysed, unindexed)
            }
        }
    }

    /// What a completed turn becomes in the store, from its `request` as stored (redacted): the
    /// whole turn as JSON and its L1 trace, analysed. Needs no database, so an import does it on
    /// its reading thread.
    fn analyse_turn(&self, request: &str, done: &TurnCompletion) -> AnalysedTurn {
        let raw = serde_json::json!({
            "request": request,
            "answer": done.answer,
            "tool_calls": done.tool_calls,
            "reasoning": done.reasoning,
            "status": done.status,
        })
        .to_string();
        let status = done
            .status
            .clone()
            .unwrap_or_else(|| "completed".to_owned());
        if raw.len() > CAPTURE_LIMITS.turn_bytes {
            return AnalysedTurn {
                raw_bytes: raw.len(),
                kept: None,
            };
        }
        let trace = self.analyse(
            &trace_text(request, done),
            Some(serde_json::json!({
                "turn_status": status,
                "tools": done.tool_calls.iter().map(|c| c.name.clone()).collect::<Vec<_>>(),
                "reasoning": done.reasoning.as_deref().map(|r| snippet(r, 1_000)),
                "origin": done.origin,
            })),
        );
        AnalysedTurn {
            raw_bytes: raw.len(),
            kept: Some(KeptTurn {
                raw: redact(&raw).into_owned(),
                status,
                completed_at: done.completed_at,
                trace,
                failures: done.tool_calls.iter().filter(|c| c.is_error).count(),
            }),
        }
    }

    /// Writes an analysed turn that [`turn_to_finish`] found open in this transaction: the whole
    /// turn kept raw and its L1 trace, or, over the size cap, the turn counted as skipped.
    fn write_turn(
        &self,
        tx: &Transaction<'_>,
        turn_id: i64,
        turn: OpenTurn,
        analysed: AnalysedTurn,
        unindexed: &mut Unindexed,
    ) -> Result<CaptureOutcome, MemoryError> {
        let now = self.now();
        let Some(kept) = analysed.kept else {
            cached(tx,
                "INSERT INTO skipped_turns (at, source, reason, bytes) VALUES (?1, ?2, 'over 2 MiB', ?3)",
                params![now, turn.source, analysed.raw_bytes as i64],
            )?;
            cached(
                tx,
                "UPDATE turns SET status = 'skipped', completed_at = ?2 WHERE id = ?1",
                params![turn_id, now],
            )?;
            return Ok(CaptureOutcome::Skipped {
                bytes: analysed.raw_bytes,
            });
        };
        cached(
            tx,
            "UPDATE turns SET status = ?2, completed_at = ?3, raw = ?4 WHERE id = ?1",
            params![
                turn_id,
                kept.status,
                kept.completed_at.unwrap_or(now),
                kept.raw
            ],
        )?;
        let memory_id = self.insert_analysed(
            tx,
            NewMemory {
                layer: Some(Layer::Trace),
                source: Some(turn.source),
                external_id: Some(format!("turn:{turn_id}")),
                session: Some(turn.session),
                created_at: Some(turn.started_at),
                ..NewMemory::default()
            },
            kept.trace,
            turn.episode_id,
            Some(turn_id),
            unindexed,
        )?;
        log_change(
            tx,
            now,
            "capture",
            Some(memory_id),
            &serde_json::json!({ "turn": turn_id }),
        )?;
        crate::feedback::rate_implicitly(tx, now, memory_id, &kept.status, kept.failures)?;
        Ok(CaptureOutcome::Captured { memory_id })
    }
}

/// A started turn as the store holds it, before it completes.
struct OpenTurn {
    /// The request, redacted.
    request: String,
    source: String,
    session: String,
    episode_id: Option<i64>,
    started_at: i64,
}

/// What starting a turn did.
enum Begun {
    /// Its key was known: the turn of that key.
    Existing(i64),
    New(i64, OpenTurn),
}

impl Begun {
    fn id(&self) -> i64 {
        match self {
            Begun::Existing(id) | Begun::New(id, _) => *id,
        }
    }
}

/// Whether a turn still waits for its completion.
enum TurnToFinish {
    Open(OpenTurn),
    /// Its trace is this memory already.
    Captured(i64),
}

fn turn_to_finish(tx: &Transaction<'_>, turn_id: i64) -> Result<TurnToFinish, MemoryError> {
    let turn = tx
        .prepare_cached(
            "SELECT t.request, t.source, s.key, t.episode_id, t.started_at
             FROM turns t JOIN sessions s ON s.id = t.session_id WHERE t.id = ?1",
        )?
        .query_row([turn_id], |row| {
            Ok(OpenTurn {
                request: row.get(0)?,
                source: row.get(1)?,
                session: row.get(2)?,
                episode_id: row.get(3)?,
                started_at: row.get(4)?,
            })
        })
        .optional()?;
    let Some(turn) = turn else {
        return Err(MemoryError::NotFound(format!("turn {turn_id}")));
    };
    Ok(
        match stored_id(tx, &turn.source, &format!("turn:{turn_id}"))? {
            Some(memory_id) => TurnToFinish::Captured(memory_id),
            None => TurnToFinish::Open(turn),
        },
    )
}

/// A completed turn, analysed ([`MemoryStore::analyse_turn`]).
struct AnalysedTurn {
    /// The size of the whole turn as JSON, before redaction: over the cap, it is not kept.
    raw_bytes: usize,
    kept: Option<KeptTurn>,
}

struct KeptTurn {
    /// The whole turn as JSON, redacted.
    raw: String,
    status: String,
    completed_at: Option<i64>,
    trace: Analysed,
    /// Its tool calls that failed.
    failures: usize,
}

/// A whole turn from another agent's history.
#[derive(Debug, Clone)]
pub struct ImportTurn {
    /// Unique per turn across imports (`<source>:<conversation>:<turn id>`): importing the same
    /// key again adds nothing.
    pub key: String,
    pub start: TurnStart,
    pub done: TurnCompletion,
}

/// What importing one turn did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImportOutcome {
    Added,
    /// Already in memory (a rescan, or captured by a hook).
    Existing,
    /// Over the size cap: skipped and counted.
    Skipped,
}

impl MemoryStore {
    /// Imports a complete turn in one call, idempotently by its key.
    pub fn import_turn(&self, turn: ImportTurn) -> Result<ImportOutcome, MemoryError> {
        let mut outcomes = self.import_turns(vec![turn])?;
        outcomes
            .pop()
            .unwrap_or_else(|| Err(MemoryError::Invalid("no turn was imported".into())))
    }

    /// Imports complete turns (a conversation, in order) in one transaction, idempotently by
    /// their keys: all of them are stored or, when the write fails, none. A turn that cannot be
    /// imported (no request) gets its error in the outcomes and the others go on.
    pub fn import_turns(
        &self,
        turns: Vec<ImportTurn>,
    ) -> Result<Vec<Result<ImportOutcome, MemoryError>>, MemoryError> {
        self.import_prepared(self.prepare_import(turns))
    }

    /// Works out what `turns` become in the store — redacted, their traces written, summarised
    /// and analysed into terms — without the database: an import does this on its reading thread
    /// while [`MemoryStore::import_prepared`] writes the conversation before.
    /// Turns memory already holds (a rescan) are not analysed again.
    pub fn prepare_import(&self, turns: Vec<ImportTurn>) -> Vec<PreparedTurn> {
        if turns.is_empty() {
            return Vec::new();
        }
        let held = self
            .read(|conn| {
                // The keys of a conversation share their start: one range of the index holds them.
                let shared = turns.iter().map(|t| t.key.as_str()).reduce(common_start);
                let mut held = HashSet::new();
                let mut stmt = conn.prepare_cached(
                    "SELECT idempotency_key FROM turns
                     WHERE idempotency_key >= ?1 AND idempotency_key < ?1 || char(1114111)
                       AND status != 'started'",
                )?;
                let mut rows = stmt.query([shared.unwrap_or_default()])?;
                while let Some(row) = rows.next()? {
                    held.insert(row.get::<_, String>(0)?);
                }
                Ok(held)
            })
            .unwrap_or_else(|e| {
                tracing::debug!("cannot tell which turns memory holds: {e}");
                HashSet::new()
            });
        turns
            .into_iter()
            .map(|turn| {
                let analysed = (check_request(&turn.start).is_ok() && !held.contains(&turn.key))
                    .then(|| {
                        let request = redact(&turn.start.request).into_owned();
                        let analysed = self.analyse_turn(&request, &turn.done);
                        (request, analysed)
                    });
                PreparedTurn { turn, analysed }
            })
            .collect()
    }

    /// Imports turns [`MemoryStore::prepare_import`] prepared, as [`MemoryStore::import_turns`].
    pub fn import_prepared(
        &self,
        turns: Vec<PreparedTurn>,
    ) -> Result<Vec<Result<ImportOutcome, MemoryError>>, MemoryError> {
        let mut conn = self.lock()?;
        let tx = conn.transaction()?;
        let mut unindexed = Unindexed::default();
        let mut sessions: HashMap<String, i64> = HashMap::new();
        let mut outcomes = Vec::with_capacity(turns.len());
        for prepared in turns {
            let PreparedTurn { mut turn, analysed } = prepared;
            if let Err(e) = check_request(&turn.start) {
                outcomes.push(Err(e));
                continue;
            }
            let known: Option<String> = tx
                .prepare_cached("SELECT status FROM turns WHERE idempotency_key = ?1")?
                .query_row([&turn.key], |row| row.get(0))
                .optional()?;
            match known.as_deref() {
                Some("skipped") => {
                    outcomes.push(Ok(ImportOutcome::Skipped));
                    continue;
                }
                Some(status) if status != "started" => {
                    outcomes.push(Ok(ImportOutcome::Existing));
                    continue;
                }
                _ => {}
            }
            let session_id = match sessions.get(&turn.start.session) {
                Some(id) => *id,
                None => {
                    let id = self.open_turn_session(&tx, &turn.start)?;
                    sessions.insert(turn.start.session.clone(), id);
                    id
                }
            };
            let (request, analysed) = match analysed {
                Some((request, analysed)) => (request, Some(analysed)),
                None => (redact(&turn.start.request).into_owned(), None),
            };
            turn.start.idempotency_key = Some(turn.key);
            let (id, open) = match self.begin_turn(&tx, turn.start, request.clone(), session_id)? {
                // A row just written has no trace yet (turns are never deleted, so its id
                // was never another turn's).
                Begun::New(id, open) => (id, open),
                // A turn a hook started (or a started one imported before) waits for its end.
                Begun::Existing(id) => match turn_to_finish(&tx, id)? {
                    TurnToFinish::Captured(_) => {
                        outcomes.push(Ok(ImportOutcome::Existing));
                        continue;
                    }
                    TurnToFinish::Open(open) => (id, open),
                },
            };
            // A turn a hook started holds the hook's request, which the trace is made of.
            let analysed = match analysed {
                Some(analysed) if open.request == request => analysed,
                _ => self.analyse_turn(&open.request, &turn.done),
            };
            outcomes.push(Ok(
                match self.write_turn(&tx, id, open, analysed, &mut unindexed)? {
                    CaptureOutcome::Captured { .. } => ImportOutcome::Added,
                    CaptureOutcome::AlreadyCaptured { .. } => ImportOutcome::Existing,
                    CaptureOutcome::Skipped { .. } => ImportOutcome::Skipped,
                },
            ));
        }
        self.index_marked(&tx, unindexed)?;
        tx.commit()?;
        Ok(outcomes)
    }
}

/// A turn to import with what it becomes in the store worked out
/// ([`MemoryStore::prepare_import`]).
pub struct PreparedTurn {
    turn: ImportTurn,
    /// The request, redacted, and the turn analysed from it; `None` when the turn cannot be
    /// imported (no request) or memory held it already: should it be needed after all, the write
    /// does this itself.
    analysed: Option<(String, AnalysedTurn)>,
}

/// The longest start `a` and `b` share, on a character boundary.
fn common_start<'a>(a: &'a str, b: &str) -> &'a str {
    let end = a
        .char_indices()
        .zip(b.chars())
        .find(|((_, x), y)| x != y)
        .map_or(a.len().min(b.len()), |((at, _), _)| at);
    &a[..end]
}

/// A turn needs the person's request.
fn check_request(start: &TurnStart) -> Result<(), MemoryError> {
    if start.request.trim().is_empty() {
        return Err(MemoryError::Invalid(
            "a turn needs the person's request".into(),
        ));
    }
    Ok(())
}

/// Opens (or reopens) a conversation on `conn`; returns its row id.
fn open_session(
    conn: &Connection,
    key: &str,
    source: Option<&str>,
    title: Option<&str>,
    workspace: Option<&str>,
    now: i64,
) -> Result<i64, MemoryError> {
    if key.trim().is_empty() {
        return Err(MemoryError::Invalid(
            "a session needs a non-empty id".into(),
        ));
    }
    cached(conn,
        "INSERT INTO sessions (key, source, title, workspace, opened_at) VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT(key) DO UPDATE SET closed_at = NULL,
             title = coalesce(excluded.title, title), workspace = coalesce(excluded.workspace, workspace)",
        params![key, source.unwrap_or("cairn"), title, workspace, now],
    )?;
    Ok(conn
        .prepare_cached("SELECT id FROM sessions WHERE key = ?1")?
        .query_row([key], |row| row.get(0))?)
}

/// The L1 trace of a turn: request, answer and tool calls, each within its cap.
fn trace_text(request: &str, done: &TurnCompletion) -> String {
    let limits = &CAPTURE_LIMITS;
    let mut text = format!("User: {}", snippet(request.trim(), limits.text_chars));
    for call in &done.tool_calls {
        let input = snippet(&call.input.to_string(), 300);
        let output = call
            .output
            .as_deref()
            .map(|o| snippet(o.trim(), limits.tool_output_chars));
        let mark = if call.is_error { " [error]" } else { "" };
        match output {
            Some(output) => {
                text.push_str(&format!("\nTool {}({input}){mark} → {output}", call.name))
            }
            None => text.push_str(&format!("\nTool {}({input}){mark}", call.name)),
        }
    }
    if !done.answer.trim().is_empty() {
        text.push_str(&format!(
            "\nAssistant: {}",
            snippet(done.answer.trim(), limits.text_chars)
        ));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    type TestResult = Result<(), Box<dyn std::error::Error>>;

    fn turn(i: usize, request: &str, answer: &str) -> ImportTurn {
        ImportTurn {
            key: format!("claude-code:c1:{i}"),
            start: TurnStart {
                session: "claude-code:c1".into(),
                request: request.into(),
                source: Some("claude-code".into()),
                idempotency_key: None,
                started_at: Some(1_000 + i as i64 * 1_000),
                workspace: None,
            },
            done: TurnCompletion {
                answer: answer.into(),
                ..TurnCompletion::default()
            },
        }
    }

    /// The terms the full-text index holds in each memory's context column, in order.
    fn indexed_contexts(store: &MemoryStore) -> Result<Vec<(i64, Vec<String>)>, MemoryError> {
        store.read(|conn| {
            conn.execute_batch(
                "CREATE VIRTUAL TABLE IF NOT EXISTS temp.terms_at USING fts5vocab(main, memory_terms, instance)",
            )?;
            let mut ids = conn.prepare("SELECT id FROM memories ORDER BY id")?;
            let ids = ids
                .query_map([], |row| row.get::<_, i64>(0))?
                .collect::<Result<Vec<_>, _>>()?;
            let mut terms = conn.prepare(
                "SELECT term FROM temp.terms_at WHERE doc = ?1 AND col = 'context' ORDER BY offset",
            )?;
            ids.into_iter()
                .map(|id| {
                    let held = terms
                        .query_map([id], |row| row.get::<_, String>(0))?
                        .collect::<Result<Vec<_>, _>>()?;
                    Ok((id, held))
                })
                .collect()
        })
    }

    /// What each memory's stored context analyses to, which the index must hold.
    fn analysed_contexts(store: &MemoryStore) -> Result<Vec<(i64, Vec<String>)>, MemoryError> {
        store.read(|conn| {
            let mut rows = conn.prepare("SELECT id, context FROM memories ORDER BY id")?;
            let rows = rows
                .query_map([], |row| {
                    Ok((row.get::<_, i64>(0)?, row.get::<_, String>(1)?))
                })?
                .collect::<Result<Vec<_>, _>>()?;
            Ok(rows
                .into_iter()
                .map(|(id, context)| (id, store.analyzer.terms(&context)))
                .collect())
        })
    }

    #[test]
    fn contexts_joined_from_lent_terms_index_what_analysing_them_would() -> TestResult {
        let store = MemoryStore::open_in_memory()?;
        let long = "the deploy's canary stalled at forty percent; ".repeat(20);
        let turns = [
            (
                "staging hangs on the migration lock",
                "a stuck reindex job holds it",
            ),
            ("who started it", &long[..]),
            ("kill the reindex", "the, a, of"),
            ("write it down", "noted in the runbook under staging"),
            ("and the canary?", "rolled back; 部署已回滚"),
        ];
        let mut turns = turns
            .iter()
            .enumerate()
            .map(|(i, (request, answer))| turn(i, request, answer));
        // Two batches: the second's first turn leans on a memory of an earlier transaction.
        store.import_turns(turns.by_ref().take(2).collect())?;
        store.import_turns(turns.collect())?;
        // And one captured live afterwards, alone in its transaction.
        let id = store.start_turn(TurnStart {
            request: "is staging green now".into(),
            started_at: Some(9_000),
            ..turn(9, "", "").start
        })?;
        store.complete_turn(
            id,
            TurnCompletion {
                answer: "yes, all green".into(),
                ..TurnCompletion::default()
            },
        )?;
        let held = indexed_contexts(&store)?;
        assert_eq!(held.len(), 6);
        assert!(held.iter().all(|(_, terms)| !terms.is_empty()), "{held:?}");
        assert_eq!(held, analysed_contexts(&store)?);
        Ok(())
    }
}

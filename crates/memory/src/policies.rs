//! L2 policies, induced from rewarded episodes. When an episode's reward changes (a rating, the
//! person's next message, tools failing again and again), the background queue reads the task it
//! was: its first request, the workspace, the tools its steps used, the errors they met. Tasks of
//! one signature (workspace and tools) whose requests are alike (shared rare words, or close
//! vectors) are pooled. From [`MIN_SUPPORT`] that went well a policy is written — when it applies,
//! what to do, why, caveats — linked to the traces it came from; from [`MIN_FAILURES`] that went
//! badly, a repair policy says what to avoid. Every later outcome in the pool updates the policy's
//! gain (the mean reward of its tasks; for a repair policy, of its failures): activated from
//! [`MIN_GAIN`], archived at [`ARCHIVE_GAIN`], a candidate between. Recall reads the gain as the
//! policy's quality bonus; nothing here runs on the prompt's path. Each induction also rewrites
//! the workspace's world model (see `world`).

use std::collections::BTreeSet;

use cairn_protocol::memory::{Layer, NewMemory, Status};
use rusqlite::{params, OptionalExtension, Transaction};
use serde_json::Value;

use crate::facts::{cosine, overlap, vector, TermWeights};
use crate::store::{cached, change_status, stored_id, update_metadata};
use crate::text::snippet;
use crate::write::Unindexed;
use crate::{MemoryError, MemoryStore, SearchHit};

/// Tasks of one kind that went well before a policy is written.
pub const MIN_SUPPORT: usize = 2;
/// Tasks of one kind that went badly before a repair policy is written.
pub const MIN_FAILURES: usize = 2;
/// The gain from which a policy is activated.
pub const MIN_GAIN: f64 = 0.02;
/// The gain at or below which a policy is archived.
pub const ARCHIVE_GAIN: f64 = -0.05;
/// The source of the memories induction writes.
pub const EVOLUTION_SOURCE: &str = "cairn-evolution";
/// Weighted overlap of two requests' words from which they ask for the same kind of task.
const SAME_KIND_TERMS: f64 = 0.35;
/// Or the similarity of their first steps' vectors.
const SAME_KIND_VECTORS: f64 = 0.65;
/// The most tasks a pool reads (the newest outcomes).
const POOL_MAX: usize = 200;
/// How many steps of the best task a policy spells out.
const STEPS_SHOWN: usize = 6;

/// What a policy says: what worked, or what to avoid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Prefer,
    Avoid,
}

impl Kind {
    fn as_str(self) -> &'static str {
        match self {
            Self::Prefer => "prefer",
            Self::Avoid => "avoid",
        }
    }
}

/// One rewarded episode, read as a task.
pub(crate) struct Task {
    pub(crate) episode: i64,
    pub(crate) reward: f64,
    /// The first request, as stored (redacted).
    pub(crate) request: String,
    pub(crate) workspace: String,
    /// The tools its steps used, sorted, once each.
    pub(crate) tools: Vec<String>,
    /// Its tool calls, in order (`Tool name(input) → output` lines of its traces).
    pub(crate) steps: Vec<String>,
    /// The calls that failed.
    pub(crate) errors: Vec<String>,
    /// Its last answer.
    pub(crate) answer: String,
    /// Its L1 traces, in order.
    pub(crate) traces: Vec<i64>,
    /// The skills it read (`read_skill` calls), by name.
    pub(crate) skills_read: Vec<String>,
}

impl Task {
    fn signature(&self) -> String {
        format!("{}\u{1f}{}", self.workspace, self.tools.join(","))
    }

    /// When the policy applies, from this task's request, workspace and tools: `asked "…" in
    /// /path (tools: …)`.
    pub(crate) fn when(&self) -> String {
        let request = snippet(self.request.trim(), 200).replace(['"', '\n'], " ");
        let mut when = format!("asked \"{request}\"");
        if !self.workspace.is_empty() {
            when.push_str(&format!(" in {}", self.workspace));
        }
        if !self.tools.is_empty() {
            when.push_str(&format!(" (tools: {})", self.tools.join(", ")));
        }
        when
    }

    fn steps_text(&self) -> String {
        let mut steps: Vec<String> = self
            .steps
            .iter()
            .take(STEPS_SHOWN)
            .map(|s| snippet(s, 160))
            .collect();
        if self.steps.len() > STEPS_SHOWN {
            steps.push(format!("… {} more", self.steps.len() - STEPS_SHOWN));
        }
        if !self.answer.is_empty() {
            let answer = snippet(&self.answer, 240);
            steps.push(format!("answer: {}", answer.trim_end_matches('.')));
        }
        if steps.is_empty() {
            "answer as before".to_owned()
        } else {
            steps.join("; ")
        }
    }
}

impl MemoryStore {
    /// Turns learning from rated episodes on or off. Off, outcomes are still queued, and are
    /// learned from once it is on again.
    pub fn set_evolution(&self, on: bool) {
        self.evolution
            .store(on, std::sync::atomic::Ordering::SeqCst);
        if on {
            self.wake_embedding();
        }
    }

    /// Reads up to `max` episodes whose outcome changed and writes or updates the policies of
    /// their kind; returns how many it read (none while evolution is off).
    pub fn induce_pending(&self, max: usize) -> Result<usize, MemoryError> {
        if !self.evolution.load(std::sync::atomic::Ordering::SeqCst) {
            return Ok(0);
        }
        let pending: Vec<i64> = {
            let conn = self.lock()?;
            let mut stmt = conn.prepare_cached(
                "SELECT episode_id FROM episode_outcomes WHERE induced = 0
                 ORDER BY at, episode_id LIMIT ?1",
            )?;
            let rows = stmt.query_map([max as i64], |row| row.get(0))?;
            rows.collect::<Result<_, _>>()?
        };
        for episode in &pending {
            self.induce(*episode)?;
        }
        Ok(pending.len())
    }

    /// Reads every episode whose outcome changed (the background queue does this a few at a
    /// time); returns how many it read.
    pub fn induce_all_pending(&self) -> Result<usize, MemoryError> {
        crate::store::drain(|| self.induce_pending(32))
    }

    /// Pools episode `episode` with the earlier tasks of its kind and writes what they teach.
    fn induce(&self, episode: i64) -> Result<(), MemoryError> {
        let model = self.embedder().map(|e| e.model().to_owned());
        let mut touched: Vec<i64> = Vec::new();
        {
            let mut conn = self.lock()?;
            let tx = conn.transaction()?;
            let task = task_of(&tx, episode)?;
            cached(
                &tx,
                "UPDATE episode_outcomes SET induced = 1, signature = ?2 WHERE episode_id = ?1",
                params![episode, task.as_ref().map(Task::signature)],
            )?;
            if let Some(task) = task {
                // A task that read a learned skill is a trial of it.
                self.try_skills(&tx, &task)?;
                let pool = self.pool(&tx, task, model.as_deref())?;
                for kind in [Kind::Prefer, Kind::Avoid] {
                    touched.extend(self.write_policy(&tx, kind, &pool)?);
                }
                // What the workspace's policies now say of it (L3).
                if let Some(id) = self.refresh_world(&tx, &pool[0].workspace)? {
                    touched.push(id);
                }
            }
            tx.commit()?;
        }
        for id in touched {
            self.forget_vector(id);
        }
        self.wake_embedding();
        Ok(())
    }

    /// `task` and the earlier tasks of its signature whose requests ask for the same kind of
    /// thing, `task` first.
    fn pool(
        &self,
        tx: &Transaction<'_>,
        task: Task,
        model: Option<&str>,
    ) -> Result<Vec<Task>, MemoryError> {
        let others: Vec<i64> = {
            let mut stmt = tx.prepare_cached(
                "SELECT episode_id FROM episode_outcomes WHERE signature = ?1 AND episode_id != ?2
                 ORDER BY at DESC, episode_id DESC LIMIT ?3",
            )?;
            let rows = stmt.query_map(
                params![task.signature(), task.episode, POOL_MAX as i64],
                |row| row.get(0),
            )?;
            rows.collect::<Result<_, _>>()?
        };
        let mut weights = TermWeights::new(tx)?;
        let mine = self.weighted_terms(tx, &task.request, &mut weights);
        let my_vector = match (model, task.traces.first()) {
            (Some(model), Some(first)) => vector(tx, *first, model)?,
            _ => None,
        };
        let mut pool = vec![task];
        for other in others {
            let Some(theirs) = task_of(tx, other)? else {
                continue;
            };
            let lexical = overlap(
                &mine,
                &self.weighted_terms(tx, &theirs.request, &mut weights),
            );
            let close = match (model, &my_vector, theirs.traces.first()) {
                (Some(model), Some(mine), Some(first)) => vector(tx, *first, model)?
                    .is_some_and(|v| cosine(mine, &v) >= SAME_KIND_VECTORS),
                _ => false,
            };
            if lexical >= SAME_KIND_TERMS || close {
                pool.push(theirs);
            }
        }
        Ok(pool)
    }

    /// Writes or updates the `kind` policy of `pool`, and the skill a well-supported policy
    /// crystallises into; the ids of what was written or changed.
    fn write_policy(
        &self,
        tx: &Transaction<'_>,
        kind: Kind,
        pool: &[Task],
    ) -> Result<Vec<i64>, MemoryError> {
        let wins: Vec<&Task> = pool.iter().filter(|t| t.reward > 0.0).collect();
        let losses: Vec<&Task> = pool.iter().filter(|t| t.reward < 0.0).collect();
        let episodes: Vec<i64> = pool.iter().map(|t| t.episode).collect();
        let existing = policy_of(tx, kind, &episodes)?;
        let (support, needed) = match kind {
            Kind::Prefer => (&wins, MIN_SUPPORT),
            Kind::Avoid => (&losses, MIN_FAILURES),
        };
        if existing.is_none() && support.len() < needed {
            return Ok(Vec::new());
        }
        let mean = pool.iter().map(|t| t.reward).sum::<f64>() / pool.len() as f64;
        let gain = round(match kind {
            Kind::Prefer => mean,
            Kind::Avoid => -mean,
        });
        let status = if gain >= MIN_GAIN {
            Status::Activated
        } else if gain <= ARCHIVE_GAIN {
            Status::Archived
        } else {
            Status::Resolving
        };
        let text = policy_text(kind, &wins, &losses);
        let mut sources: Vec<i64> = support.iter().flat_map(|t| t.traces.clone()).collect();
        sources.sort_unstable();
        let mut metadata = serde_json::Map::new();
        metadata.insert("policy".into(), Value::from(kind.as_str()));
        metadata.insert("signature".into(), Value::from(pool[0].signature()));
        metadata.insert("gain".into(), Value::from(gain));
        metadata.insert("support".into(), Value::from(wins.len()));
        metadata.insert("failures".into(), Value::from(losses.len()));
        metadata.insert("episodes".into(), Value::from(episodes.clone()));
        metadata.insert("sources".into(), Value::from(sources.clone()));
        // The rules' text is kept beside what is shown: a policy the model put in its own words
        // keeps them until what the rules say changes.
        if let Some(text) = &text {
            metadata.insert("rules_text".into(), Value::from(text.as_str()));
        }
        let id = match existing {
            Some(id) => {
                let said = crate::store::get(tx, id)?.map(|m| m.metadata);
                let in_model_words = said.as_ref().is_some_and(|m| {
                    m.get("rules_text").and_then(Value::as_str) == text.as_deref()
                        && m.get("written_by").and_then(Value::as_str) == Some("model")
                });
                if text.is_some() && !in_model_words {
                    self.update_learned(tx, id, text.as_deref(), false)?;
                    metadata.insert("written_by".into(), Value::from("rules"));
                    metadata.insert("model_pending".into(), Value::from(true));
                }
                update_metadata(tx, id, |map| map.extend(metadata))?;
                id
            }
            None => {
                let Some(text) = text else {
                    return Ok(Vec::new());
                };
                metadata.insert("written_by".into(), Value::from("rules"));
                metadata.insert("model_pending".into(), Value::from(true));
                let external = format!(
                    "policy:{}:{}",
                    kind.as_str(),
                    episodes.iter().min().copied().unwrap_or_default()
                );
                self.insert_learned(tx, Layer::Policy, external, text, metadata)?
            }
        };
        change_status(tx, id, status, self.now())?;
        let mut written = vec![id];
        if kind == Kind::Prefer {
            match (status, best(&wins)) {
                (Status::Activated, Some(best)) => {
                    written.extend(self.crystallise(tx, id, best, wins.len(), gain, &sources)?)
                }
                // A skill whose policy no longer holds is not offered.
                (Status::Archived, _) => {
                    if let Some(skill) = stored_id(tx, EVOLUTION_SOURCE, &format!("skill:{id}"))? {
                        change_status(tx, skill, Status::Archived, self.now())?;
                    }
                }
                _ => {}
            }
        }
        Ok(written)
    }
}

/// Says of each policy among `hits` what it was learned from and that its gain lifted it.
pub(crate) fn explain_policies(hits: &mut [SearchHit]) {
    for hit in hits.iter_mut().filter(|h| h.memory.layer == Layer::Policy) {
        let Some(gain) = hit.memory.metadata.get("gain").and_then(Value::as_f64) else {
            continue;
        };
        let support = hit.memory.metadata.get("support").and_then(Value::as_u64);
        let failures = hit.memory.metadata.get("failures").and_then(Value::as_u64);
        hit.reason.push_str(&format!(
            "; a policy learned from {} task(s) that went well and {} that went badly, \
             boosted by its gain {gain:.2}",
            support.unwrap_or(0),
            failures.unwrap_or(0)
        ));
    }
}

impl MemoryStore {
    /// Writes a memory the background queue learned (a policy, a world model, a skill), from
    /// [`EVOLUTION_SOURCE`] under `external`.
    pub(crate) fn insert_learned(
        &self,
        tx: &Transaction<'_>,
        layer: Layer,
        external: String,
        text: String,
        metadata: serde_json::Map<String, Value>,
    ) -> Result<i64, MemoryError> {
        let mut unindexed = Unindexed::default();
        let id = self.insert(
            tx,
            NewMemory {
                text,
                layer: Some(layer),
                source: Some(EVOLUTION_SOURCE.to_owned()),
                external_id: Some(external),
                metadata: Some(Value::Object(metadata)),
                ..NewMemory::default()
            },
            None,
            None,
            &mut unindexed,
        )?;
        self.index_marked(tx, unindexed)?;
        Ok(id)
    }

    /// Brings learned memory `id` to `text` when that changed (unless `keep_edits` and the person
    /// edited it: their words stay); false when the memory is deleted (it stays deleted).
    pub(crate) fn update_learned(
        &self,
        tx: &Transaction<'_>,
        id: i64,
        text: Option<&str>,
        keep_edits: bool,
    ) -> Result<bool, MemoryError> {
        let stored: Option<String> = tx
            .query_row(
                "SELECT text FROM memories WHERE id = ?1 AND status != 'deleted'",
                [id],
                |row| row.get(0),
            )
            .optional()?;
        let Some(stored) = stored else {
            return Ok(false);
        };
        let Some(text) = text.map(crate::redact) else {
            return Ok(true);
        };
        let edited = keep_edits
            && tx
                .query_row(
                    "SELECT 1 FROM changes WHERE memory_id = ?1 AND op = 'edit' LIMIT 1",
                    [id],
                    |_| Ok(()),
                )
                .optional()?
                .is_some();
        if stored != text && !edited {
            self.rewrite(tx, id, &text, "evolve")?;
        }
        Ok(true)
    }
}

/// What a `kind` policy says of its pool; `None` when it has nothing to say (no task of its
/// side left: it keeps its text, and its gain archives it).
fn policy_text(kind: Kind, wins: &[&Task], losses: &[&Task]) -> Option<String> {
    let tried = wins.len() + losses.len();
    match kind {
        Kind::Prefer => {
            let best = best(wins)?;
            let mut text = format!(
                "What worked when {}: {}. Why: it went well in {} of {} tasks like it.",
                best.when(),
                best.steps_text(),
                wins.len(),
                tried.max(wins.len())
            );
            let caveats = caveats(losses);
            if !caveats.is_empty() {
                text.push_str(&format!(" Caveats: it went badly when {caveats}."));
            }
            Some(text)
        }
        Kind::Avoid => {
            let worst = losses.iter().min_by(|a, b| {
                a.reward
                    .total_cmp(&b.reward)
                    .then(b.episode.cmp(&a.episode))
            })?;
            let mut text = format!(
                "What to avoid when {}: {}. Why: it went badly in {} of {} tasks like it.",
                worst.when(),
                worst.steps_text(),
                losses.len(),
                tried.max(losses.len())
            );
            if let Some(best) = wins.iter().max_by(|a, b| a.reward.total_cmp(&b.reward)) {
                text.push_str(&format!(" Instead: {}.", best.steps_text()));
            }
            Some(text)
        }
    }
}

/// The task that went best; among equals the one that took fewest steps (the way to teach),
/// then the earliest.
fn best<'a>(wins: &[&'a Task]) -> Option<&'a Task> {
    wins.iter().copied().max_by(|a, b| {
        a.reward
            .total_cmp(&b.reward)
            .then(b.steps.len().cmp(&a.steps.len()))
            .then(b.episode.cmp(&a.episode))
    })
}

/// The failed calls of tasks that went badly, once each.
fn caveats(losses: &[&Task]) -> String {
    let mut seen = BTreeSet::new();
    let errors: Vec<String> = losses
        .iter()
        .flat_map(|t| t.errors.iter())
        .filter(|e| seen.insert(e.as_str()))
        .take(3)
        .map(|e| snippet(e, 160))
        .collect();
    if errors.is_empty() {
        losses
            .iter()
            .take(2)
            .map(|t| format!("the answer was \"{}\"", snippet(&t.answer, 120)))
            .collect::<Vec<_>>()
            .join("; ")
    } else {
        errors.join("; ")
    }
}

/// The live policy of `kind` induced from any of `episodes`.
fn policy_of(
    tx: &Transaction<'_>,
    kind: Kind,
    episodes: &[i64],
) -> Result<Option<i64>, MemoryError> {
    let mut stmt = tx.prepare_cached(
        "SELECT m.id FROM memories m, json_each(m.metadata, '$.episodes') e
         WHERE m.layer = 'L2' AND m.source = ?1 AND m.status != 'deleted'
           AND json_extract(m.metadata, '$.policy') = ?2 AND e.value = ?3
         ORDER BY m.id LIMIT 1",
    )?;
    for episode in episodes {
        if let Some(id) = stmt
            .query_row(params![EVOLUTION_SOURCE, kind.as_str(), episode], |row| {
                row.get(0)
            })
            .optional()?
        {
            return Ok(Some(id));
        }
    }
    Ok(None)
}

/// Episode `episode` as a task; `None` when it has no outcome or no live trace left.
fn task_of(tx: &Transaction<'_>, episode: i64) -> Result<Option<Task>, MemoryError> {
    let Some(reward) = tx
        .query_row(
            "SELECT reward FROM episode_outcomes WHERE episode_id = ?1",
            [episode],
            |row| row.get::<_, f64>(0),
        )
        .optional()?
    else {
        return Ok(None);
    };
    let request: Option<String> = tx
        .query_row(
            "SELECT request FROM turns WHERE episode_id = ?1 ORDER BY started_at, id LIMIT 1",
            [episode],
            |row| row.get(0),
        )
        .optional()?;
    let workspace: Option<String> = tx
        .query_row(
            "SELECT s.workspace FROM episodes e JOIN sessions s ON s.id = e.session_id
             WHERE e.id = ?1",
            [episode],
            |row| row.get(0),
        )
        .optional()?
        .flatten();
    let mut task = Task {
        episode,
        reward,
        request: request.unwrap_or_default(),
        workspace: workspace.unwrap_or_default(),
        tools: Vec::new(),
        steps: Vec::new(),
        errors: Vec::new(),
        answer: String::new(),
        traces: Vec::new(),
        skills_read: Vec::new(),
    };
    let mut tools = BTreeSet::new();
    let mut stmt = tx.prepare_cached(
        "SELECT id, text, metadata FROM memories
         WHERE episode_id = ?1 AND layer = 'L1' AND status IN ('activated', 'resolving')
         ORDER BY created_at, id",
    )?;
    let rows = stmt.query_map([episode], |row| {
        Ok((
            row.get::<_, i64>(0)?,
            row.get::<_, String>(1)?,
            row.get::<_, String>(2)?,
        ))
    })?;
    for row in rows {
        let (id, text, metadata) = row?;
        task.traces.push(id);
        let metadata: Value = serde_json::from_str(&metadata).unwrap_or(Value::Null);
        if let Some(names) = metadata.get("tools").and_then(Value::as_array) {
            tools.extend(names.iter().filter_map(Value::as_str).map(str::to_owned));
        }
        for line in text.lines() {
            if let Some(input) = line.strip_prefix("Tool read_skill(") {
                // `{"name":"…"}`, as the trace wrote the call's input.
                let input = input.split(')').next().unwrap_or_default();
                if let Some(name) = serde_json::from_str::<Value>(input)
                    .ok()
                    .and_then(|v| v.get("name").and_then(Value::as_str).map(str::to_owned))
                {
                    task.skills_read.push(name);
                }
            }
            if let Some(call) = line.strip_prefix("Tool ") {
                if call.contains(") [error]") {
                    task.errors.push(call.to_owned());
                }
                task.steps.push(call.to_owned());
            } else if let Some(answer) = line.strip_prefix("Assistant: ") {
                task.answer = answer.to_owned();
            }
        }
        if task.request.is_empty() {
            if let Some(request) = text.lines().next().and_then(|l| l.strip_prefix("User: ")) {
                task.request = request.to_owned();
            }
        }
    }
    if task.traces.is_empty() {
        return Ok(None);
    }
    task.tools = tools.into_iter().collect();
    Ok(Some(task))
}

fn round(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

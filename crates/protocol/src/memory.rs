//! The memory's data as every side sees it: layers, statuses, records, queries, explained hits,
//! the panel's overview and analysis (the memory crate stores and computes them).

use serde::{Deserialize, Serialize};

use crate::ParseError;

/// The four memory layers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Layer {
    /// L1: what happened in a turn (request, answer, tool calls, results).
    #[serde(rename = "L1")]
    Trace,
    /// L2: guidance induced from valuable traces.
    #[serde(rename = "L2")]
    Policy,
    /// L3: stable knowledge about a project or environment.
    #[serde(rename = "L3")]
    WorldModel,
    /// A callable procedure.
    #[serde(rename = "skill")]
    Skill,
}

impl Layer {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Trace => "L1",
            Self::Policy => "L2",
            Self::WorldModel => "L3",
            Self::Skill => "skill",
        }
    }

    pub const ALL: [Layer; 4] = [Self::Trace, Self::Policy, Self::WorldModel, Self::Skill];
}

/// A layer by its wire name or its long name, in any case (`L1`, `trace`, `world-model`): the one
/// place a typed layer is read, so the CLI, the HTTP routes and the API refuse alike.
impl std::str::FromStr for Layer {
    type Err = ParseError;

    fn from_str(s: &str) -> Result<Self, ParseError> {
        match s.to_ascii_lowercase().as_str() {
            "l1" | "trace" => Ok(Self::Trace),
            "l2" | "policy" => Ok(Self::Policy),
            "l3" | "world_model" | "world-model" => Ok(Self::WorldModel),
            "skill" => Ok(Self::Skill),
            _ => Err(ParseError::UnknownLayer(s.to_owned())),
        }
    }
}

/// Where a memory is in its life. Only `activated` and `resolving` memories are recalled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Activated,
    Resolving,
    Archived,
    Deleted,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Activated => "activated",
            Self::Resolving => "resolving",
            Self::Archived => "archived",
            Self::Deleted => "deleted",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "activated" => Some(Self::Activated),
            "resolving" => Some(Self::Resolving),
            "archived" => Some(Self::Archived),
            "deleted" => Some(Self::Deleted),
            _ => None,
        }
    }
}

/// A memory to write (`memory.add`, capture, imports).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct NewMemory {
    pub text: String,
    #[serde(default)]
    pub layer: Option<Layer>,
    /// Which agent it came from (`cairn`, `claude-code`, `codex`…).
    #[serde(default)]
    pub source: Option<String>,
    /// The caller's own id; with `source` it makes the write idempotent.
    #[serde(default)]
    pub external_id: Option<String>,
    /// The conversation it belongs to (the caller's session id).
    #[serde(default)]
    pub session: Option<String>,
    /// Unix milliseconds; now when absent.
    #[serde(default)]
    pub created_at: Option<i64>,
    #[serde(default)]
    pub metadata: Option<serde_json::Value>,
}

/// A stored memory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryRecord {
    pub id: i64,
    pub layer: Layer,
    pub status: Status,
    pub text: String,
    pub source: String,
    pub external_id: Option<String>,
    pub session: Option<String>,
    pub episode_id: Option<i64>,
    pub turn_id: Option<i64>,
    pub created_at: i64,
    pub updated_at: i64,
    pub metadata: serde_json::Value,
    /// One or two sentences about the memory: a heuristic at first, rewritten by the summary model
    /// in the background when one is configured.
    pub summary: String,
    pub summary_source: SummarySource,
}

wire_enum! {
    /// Who wrote a memory's summary.
    pub enum SummarySource {
        /// The first sentences, cut (every memory starts with one).
        Heuristic = "heuristic",
        /// The summary model, in the background.
        Model = "model",
    }
}

/// A recall request.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SearchQuery {
    pub query: String,
    #[serde(default = "default_limit")]
    pub limit: usize,
    /// Layers to search; all when empty.
    #[serde(default)]
    pub layers: Vec<Layer>,
    /// Only memories from these sources; all when empty.
    #[serde(default)]
    pub sources: Vec<String>,
    /// Only this conversation.
    #[serde(default)]
    pub session: Option<String>,
    /// Leave out this conversation (the one asking, so a turn does not echo back).
    #[serde(default)]
    pub exclude_session: Option<String>,
    /// Unix ms bounds on `created_at`.
    #[serde(default)]
    pub after: Option<i64>,
    #[serde(default)]
    pub before: Option<i64>,
    /// Return every candidate with its channels, scores and why it was kept or dropped.
    #[serde(default)]
    pub verbose: bool,
}

fn default_limit() -> usize {
    10
}

impl SearchQuery {
    pub fn new(query: impl Into<String>) -> Self {
        Self {
            query: query.into(),
            limit: default_limit(),
            layers: Vec::new(),
            sources: Vec::new(),
            session: None,
            exclude_session: None,
            after: None,
            before: None,
            verbose: false,
        }
    }

    pub fn limit(mut self, limit: usize) -> Self {
        self.limit = limit;
        self
    }
}

/// One recalled memory and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchHit {
    pub memory: MemoryRecord,
    /// The fused relevance the hit was ranked by.
    pub score: f64,
    /// Channel name → (rank in that channel, 0-based; raw channel score).
    pub channels: Vec<Trace>,
    pub kept: bool,
    /// Why it was kept or dropped, in words.
    pub reason: String,
    /// The question's own words the memory holds, as the person wrote them: what the plain
    /// "why" names ("Matches your words “staging database”").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub words: Vec<String>,
    /// Whether it is close to the question in meaning (its vector similarity reached the bar
    /// from which recall keeps a memory however few words it shares).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub close_in_meaning: bool,
}

/// One channel's view of a hit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Trace {
    pub channel: String,
    pub rank: usize,
    pub score: f64,
}

/// The answer to a search: kept hits (and, when verbose, the dropped candidates too).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchResult {
    pub hits: Vec<SearchHit>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dropped: Vec<SearchHit>,
    pub took_ms: f64,
    /// Where the time went, phase by phase (`terms`, `fts`, `structural`, `embed`, `vectors`,
    /// `fetch`, `fusion`), in the order they first ran.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub phases: Vec<Phase>,
}

/// Time spent in one phase of a recall.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Phase {
    pub phase: String,
    pub ms: f64,
}

/// Adds `ms` to `phase` in `phases`, keeping first-run order.
pub fn add_phase(phases: &mut Vec<Phase>, phase: &str, ms: f64) {
    match phases.iter_mut().find(|p| p.phase == phase) {
        Some(p) => p.ms += ms,
        None => phases.push(Phase {
            phase: phase.to_owned(),
            ms,
        }),
    }
}

/// Counts for the memory panel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Overview {
    pub total: i64,
    pub by_layer: Vec<(String, i64)>,
    pub by_source: Vec<(String, i64)>,
    pub sessions: i64,
    pub turns: i64,
    pub skipped_turns: i64,
    pub storage_bytes: i64,
    /// What the background queue has still to do.
    #[serde(default)]
    pub backlog: Backlog,
    /// The model memories are embedded by for recall by meaning; none: recall matches words.
    #[serde(default)]
    pub embedder: Option<String>,
}

/// The background queue's work still waiting: memories to embed, memories to read for facts
/// that change and duplicates, rated episodes to learn from, policies for the model to reword.
/// All zero once recall reflects everything written (a client that just wrote may wait for it).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Backlog {
    pub embeddings: i64,
    pub facts: i64,
    pub outcomes: i64,
    pub rewording: i64,
}

/// Analytics for the memory panel: memories over time by source, and how recall has been doing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Analysis {
    /// (day `YYYY-MM-DD`, source, memories created that day), oldest first, last 90 days with data.
    pub memories_per_day: Vec<(String, String, i64)>,
    pub searches: i64,
    /// Searches that returned at least one hit, in percent of all searches.
    pub hit_rate: f64,
    pub mean_search_ms: f64,
    /// The latest searches, newest first.
    pub recent_searches: Vec<LoggedSearch>,
}

/// One entry of the search log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoggedSearch {
    pub at: i64,
    pub query: String,
    pub hits: i64,
    pub took_ms: f64,
}

/// A search's hits plus the Markdown block an agent injects before its request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchAnswer {
    #[serde(flatten)]
    pub result: SearchResult,
    #[serde(default)]
    pub injection: String,
}

/// A person's verdict on a reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Rating {
    Up,
    Down,
}

/// `POST /api/v1/feedback`: a rating of one reply, named by its memory or by its captured turn.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FeedbackRequest {
    #[serde(default)]
    pub memory_id: Option<i64>,
    #[serde(default)]
    pub turn_id: Option<i64>,
    pub rating: Rating,
    /// An optional word on why.
    #[serde(default)]
    pub note: Option<String>,
}

/// What a rating changed: the episode's reward and the value each of its steps now carries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reward {
    /// The memory the rating was recorded on.
    pub memory_id: i64,
    pub episode_id: Option<i64>,
    /// The episode's reward, -1 (it failed) to 1 (it worked).
    pub reward: f64,
    /// The ratings it is made of (the latest per reply counts).
    pub ratings: usize,
    /// `(memory id, value)` of each step, in order.
    pub steps: Vec<(i64, f64)>,
}

/// One dream: the memory's slow consolidation (`/dream`, `cairn memory dream`, the daily run),
/// as its log keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Dream {
    /// Counts up from 1, per data home.
    pub id: i64,
    pub started_at: i64,
    pub finished_at: Option<i64>,
    pub state: DreamState,
    /// What started it: `cli`, `app`, `api`, `schedule`.
    pub trigger: String,
    /// The background queue's work done first (it is not undone by a restore).
    pub caught_up: CaughtUp,
    /// What the dream changed (or, dry, would change), each with why and from which memories.
    pub changes: Vec<DreamChange>,
    /// What it left undone, and why (its time ran out, no model to write notes).
    pub left: Vec<String>,
    /// Bytes of the restore point taken before it changed anything (0 once removed).
    pub restore_point_bytes: u64,
    /// Bytes the database shrank by when it was compacted afterwards.
    pub freed_bytes: i64,
    /// Why it failed, when it did.
    pub error: Option<String>,
    /// When a restore undid it: the dream whose restore point was used, and when.
    pub undone: Option<Undone>,
}

/// Where a dream is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DreamState {
    Running,
    /// Its changes were written (in one transaction).
    Done,
    /// A dry run: `changes` is what it would do; nothing was written.
    DryRun,
    /// Stopped before its changes were written (the app quit, the process was killed): nothing
    /// was changed.
    Interrupted,
    Failed,
}

impl DreamState {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::Done => "done",
            Self::DryRun => "dry run",
            Self::Interrupted => "interrupted",
            Self::Failed => "failed",
        }
    }
}

/// The background queue's work a dream did before its own.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CaughtUp {
    /// Memories embedded (new ones, or again for a changed embedder).
    pub embedded: i64,
    /// Memories read for facts that change and for duplicates.
    pub read: i64,
    /// Rated episodes learned from (policies, world models, skills).
    pub learned: i64,
    /// Summaries and policies the background model rewrote.
    pub rewritten: i64,
}

/// One change of a dream.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DreamChange {
    pub kind: DreamChangeKind,
    /// The memory changed or written.
    pub memory: i64,
    /// The memories it came from: the memory a duplicate was merged into, an episode's turns.
    pub from: Vec<i64>,
    pub why: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DreamChangeKind {
    /// Merged into the memory that says the same in other words (archived, `duplicate_of`).
    Merged,
    /// An episode's note, written by the summary model.
    Noted,
    /// Archived as stale.
    Archived,
}

impl DreamChangeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Merged => "merged",
            Self::Noted => "noted",
            Self::Archived => "archived",
        }
    }
}

/// A restore that undid a dream.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Undone {
    /// The dream whose restore point the memory went back to.
    pub by_restore_of: i64,
    pub at: i64,
}

/// What `dream-restore` did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Restored {
    /// The dream whose restore point the memory is back at.
    pub dream: i64,
    /// The dreams undone (it, and any after it).
    pub undone: Vec<i64>,
    /// Changes to the memory made after the restore point (by the dreams, captures, edits) that
    /// the restore took back.
    pub changes_undone: i64,
}

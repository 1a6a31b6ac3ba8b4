//! Cairn's memory. A SQLite store (WAL, migrations with a backup before each) of sessions, episodes,
//! raw turns and layered memories (L1 trace, L2 policy, L3 world model, Skill), with an append-only
//! change log; capture of whole turns with secrets redacted; recall that fuses full-text,
//! identifier, neighbourhood and vector channels (the [`Embedder`] is injected) and explains every
//! hit; and the background passes over what was written: facts that change, duplicates, feedback
//! and what is learned from it.

mod capture;
mod checkpoint;
mod dates;
mod duplicates;
mod error;
mod facts;
mod feedback;
mod inject;
mod model;
mod policies;
mod policy_words;
mod recall;
mod redact;
mod relevance;
mod schema;
mod skills;
mod store;
mod summaries;
mod text;
mod vectors;
mod vocabulary;
mod world;

pub mod knowledge_update;
pub mod locomo;

pub use capture::{
    CaptureOutcome, ImportOutcome, ImportTurn, PreparedTurn, ToolCall, TurnCompletion, TurnStart,
    CAPTURE_LIMITS,
};
pub use checkpoint::CheckpointBeside;
pub use error::MemoryError;
pub use feedback::{Rated, STOPPED};
pub use inject::{date, render_injection, today};
pub use model::{
    Analysis, FeedbackRequest, Layer, LoggedSearch, MemoryRecord, NewMemory, Overview, Rating,
    Reward, SearchHit, SearchQuery, SearchResult, Status, Trace,
};
pub use recall::Baseline;
pub use redact::{redact, set_known_secrets};
pub use store::{now_ms, snippet, MemoryStore};
pub use summaries::{Writer, WriterUses};
pub use vectors::{Embedder, BINARY_FIRST_FROM};

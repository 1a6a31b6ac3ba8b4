//! Cairn's memory. A SQLite store (WAL, migrations with a backup before each) of sessions, episodes,
//! raw turns and layered memories (L1 trace, L2 policy, L3 world model, Skill), with an append-only
//! change log; capture of whole turns with secrets redacted; recall that fuses full-text,
//! identifier, neighbourhood and vector channels (the [`Embedder`] is injected) and explains every
//! hit; and the background passes over what was written: facts that change, duplicates, feedback
//! and what is learned from it; and dreams, the slow consolidation with a restore point.

mod background;
mod capture;
mod channels;
mod checkpoint;
mod clock;
mod dates;
mod delete;
mod dream;
mod duplicates;
mod error;
mod facts;
mod feedback;
mod index;
mod inject;
mod lent_models;
mod model;
mod overview;
mod policies;
mod policy_words;
mod recall;
mod redact;
mod relevance;
mod schema;
mod selection;
mod skills;
mod statements;
mod store;
mod summaries;
mod sync;
mod text;
mod vector_index;
mod vectors;
mod versions;
mod vocabulary;
mod world;
mod write;

pub use capture::{
    CaptureOutcome, ImportOutcome, ImportTurn, PreparedTurn, ToolCall, TurnCompletion, TurnStart,
    CAPTURE_LIMITS,
};
pub use checkpoint::CheckpointBeside;
pub use clock::{date, now_ms, today};
pub use dream::{DreamOptions, DREAM_SOURCE};
pub use duplicates::merged_ids;
pub use error::MemoryError;
pub use feedback::{Rated, STOPPED};
pub use inject::render_injection;
pub use lent_models::{Embedder, Writer, WriterUses};
pub use model::{
    Analysis, FeedbackRequest, Layer, LoggedSearch, MemoryRecord, NewMemory, Overview, Rating,
    Reward, SearchHit, SearchQuery, SearchResult, Status, Trace,
};
pub use redact::{redact, set_known_secrets};
pub use store::MemoryStore;
pub use sync::{Applied, Outgoing};
pub use text::{fts_or_query, snippet};
pub use vector_index::BINARY_FIRST_FROM;

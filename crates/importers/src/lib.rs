//! Other agents' history, imported as turns. Each agent is a [`HistorySource`] (where it keeps its
//! history, which files, how a file reads as conversations); [`sync`] brings their turns into
//! memory idempotently, with per-file checkpoints and a per-source watermark, so a rescan of
//! unchanged history adds nothing and a killed scan loses nothing.

mod error;
mod source;
pub mod sources;
mod sync;
pub mod synthetic;
mod turn;

/// A scan's counts and progress events are wire types: the Sources page reads them as they are.
pub use cairn_protocol::{ScanProgress as Progress, SourceReport};
pub use error::ImportError;
pub use source::{
    files_under, has_extension, json_lines, parse_json_lines, read_transcript, HistorySource,
    SourceEnv, SourceId, Transcript,
};
pub use sync::{
    import_conversation, import_of, scan, session_key, turn_key, ConversationCheckpoint,
    FileCheckpoint, ScanControl, ScanMode, SourceState, SyncState,
};
pub use turn::{
    content_text, git_root, parse_time, stable_id, ImportedConversation, ImportedToolCall,
    ImportedTurn, Piece, TurnBuilder,
};

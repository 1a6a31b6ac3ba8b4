//! Bringing sources' turns into memory: per-file checkpoints (size, modification time) and
//! per-conversation checkpoints (last turn, time, content hash) so an incremental scan reads only
//! what changed; a per-source watermark that advances only after a clean scan; every turn imported
//! under a stable key, so re-imports (after a crash, a full scan, or a hook that captured the turn
//! first) add nothing. Progress streams through a callback; a scan can be paused and stopped.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, UNIX_EPOCH};

use cairn_memory::{
    ImportOutcome, ImportTurn, MemoryError, MemoryStore, PreparedTurn, TurnCompletion, TurnStart,
};
use serde::{Deserialize, Serialize};

use cairn_protocol::{ScanProgress as Progress, SourceReport};

use crate::turn::stable_id;
use crate::{HistorySource, ImportError, ImportedConversation, ImportedTurn};

/// What a scan reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ScanMode {
    /// Only files that changed since their checkpoint.
    #[default]
    Incremental,
    /// Every file again ("deep"): still adds only what memory does not hold.
    Full,
}

/// The checkpoint of one file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FileCheckpoint {
    pub size: u64,
    pub modified_ms: i64,
    #[serde(default)]
    pub conversations: BTreeMap<String, ConversationCheckpoint>,
}

/// The checkpoint of one conversation.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ConversationCheckpoint {
    pub last_turn: String,
    pub last_at: i64,
    /// A hash of its complete turns: unchanged → nothing to import.
    pub content_hash: String,
    pub turns: usize,
}

/// A source's sync state.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SourceState {
    /// When the last clean scan started (unix ms): advanced only when nothing failed.
    pub watermark: Option<i64>,
    /// When the last scan ended, clean or not.
    pub last_sync: Option<i64>,
    pub files: BTreeMap<String, FileCheckpoint>,
}

/// Every source's state, kept in one JSON file written atomically.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SyncState {
    pub sources: BTreeMap<String, SourceState>,
}

impl SyncState {
    /// The state on disk; a missing file is a first sync, a damaged one is set aside and
    /// rebuilt (imports are idempotent, so nothing is duplicated).
    pub fn load(path: &Path) -> Self {
        let Ok(bytes) = std::fs::read(path) else {
            return Self::default();
        };
        match serde_json::from_slice(&bytes) {
            Ok(state) => state,
            Err(e) => {
                tracing::warn!(
                    "{} is damaged ({e}); sources are scanned afresh",
                    path.display()
                );
                let _ = std::fs::rename(path, path.with_extension("json.damaged"));
                Self::default()
            }
        }
    }

    pub fn save(&self, path: &Path) -> Result<(), ImportError> {
        let json = serde_json::to_vec(self).map_err(|e| ImportError::io(path, e))?;
        cairn_config::write_private_atomically(path, &json).map_err(|e| ImportError::io(path, e))
    }
}

/// Pause, resume and stop a running scan from another thread.
#[derive(Debug, Default)]
pub struct ScanControl {
    paused: AtomicBool,
    stopped: AtomicBool,
}

impl ScanControl {
    pub fn pause(&self) {
        self.paused.store(true, Ordering::SeqCst);
    }
    pub fn resume(&self) {
        self.paused.store(false, Ordering::SeqCst);
    }
    pub fn stop(&self) {
        self.stopped.store(true, Ordering::SeqCst);
    }
    pub fn is_stopped(&self) -> bool {
        self.stopped.load(Ordering::SeqCst)
    }
    pub fn is_paused(&self) -> bool {
        self.paused.load(Ordering::SeqCst)
    }
    fn should_stop(&self) -> bool {
        while self.paused.load(Ordering::SeqCst) && !self.stopped.load(Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(50));
        }
        self.stopped.load(Ordering::SeqCst)
    }
}

/// The memory key of a turn: the same turn gets the same key from a scan and from a hook.
pub fn turn_key(source: &str, conversation: &str, turn: &str) -> String {
    format!("{source}:{conversation}:{turn}")
}

/// The memory session of a conversation.
pub fn session_key(source: &str, conversation: &str) -> String {
    format!("{source}:{conversation}")
}

/// Imports one conversation's complete turns; returns its checkpoint.
pub fn import_conversation(
    memory: &MemoryStore,
    source: &str,
    conversation: &ImportedConversation,
    report: &mut SourceReport,
) -> Result<ConversationCheckpoint, ImportError> {
    let complete: Vec<&ImportedTurn> = conversation.turns.iter().filter(|t| t.complete).collect();
    let turns = memory.prepare_import(
        complete
            .iter()
            .map(|turn| import_of(source, conversation, turn))
            .collect(),
    );
    write_conversation(memory, source, &conversation.id, turns, report)?;
    Ok(checkpoint_of(&complete))
}

/// Writes a conversation's prepared turns to memory, counting what happened in `report`.
fn write_conversation(
    memory: &MemoryStore,
    source: &str,
    conversation: &str,
    turns: Vec<PreparedTurn>,
    report: &mut SourceReport,
) -> Result<(), ImportError> {
    for outcome in memory.import_prepared(turns)? {
        report.turns_seen += 1;
        match outcome {
            Ok(ImportOutcome::Added) => report.turns_added += 1,
            Ok(ImportOutcome::Existing) => {}
            Ok(ImportOutcome::Skipped) => report.turns_skipped += 1,
            Err(MemoryError::Invalid(e)) => {
                tracing::debug!("{source}: a turn of {conversation} was not imported: {e}");
                report.turns_failed += 1;
            }
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

fn checkpoint_of(complete: &[&ImportedTurn]) -> ConversationCheckpoint {
    let parts: Vec<String> = complete
        .iter()
        .map(|t| format!("{}\u{1}{}\u{1}{}", t.id, t.answer.len(), t.tool_calls.len()))
        .collect();
    let refs: Vec<&str> = parts.iter().map(String::as_str).collect();
    ConversationCheckpoint {
        last_turn: complete.last().map(|t| t.id.clone()).unwrap_or_default(),
        last_at: complete.last().map(|t| t.ended_at).unwrap_or(0),
        content_hash: stable_id(&refs),
        turns: complete.len(),
    }
}

/// A turn as memory imports it.
pub fn import_of(
    source: &str,
    conversation: &ImportedConversation,
    turn: &ImportedTurn,
) -> ImportTurn {
    into_import(source, conversation, turn.clone())
}

/// A turn as memory imports it, its text moved rather than copied.
fn into_import(
    source: &str,
    conversation: &ImportedConversation,
    turn: ImportedTurn,
) -> ImportTurn {
    ImportTurn {
        key: turn_key(source, &conversation.id, &turn.id),
        start: TurnStart {
            session: session_key(source, &conversation.id),
            request: turn.request,
            source: Some(source.to_owned()),
            idempotency_key: None,
            started_at: (turn.started_at > 0).then_some(turn.started_at),
            workspace: conversation.workspace.clone(),
        },
        done: TurnCompletion {
            answer: turn.answer,
            tool_calls: turn
                .tool_calls
                .into_iter()
                .map(|c| cairn_memory::ToolCall {
                    id: c.id,
                    name: c.name,
                    input: c.input,
                    output: c.output,
                    is_error: c.is_error,
                })
                .collect(),
            reasoning: turn.reasoning,
            status: Some("completed".into()),
            completed_at: (turn.ended_at > 0).then_some(turn.ended_at),
            origin: Some(serde_json::json!({
                "agent": source,
                "conversation": conversation.id,
                "turn": turn.id,
                "workspace": conversation.workspace,
                "git_root": conversation.git_root,
                "title": conversation.title,
            })),
        },
    }
}

/// How often, at most, a scan writes its checkpoints (each write is two fsyncs, and once per
/// file they were a sixth of an import's time). A scan killed in between reads the last files
/// again and adds nothing twice: turns are keyed.
const CHECKPOINT_EVERY: Duration = Duration::from_millis(250);

/// How many files read and prepared may wait for the writer.
const READ_AHEAD_FILES: usize = 4;

/// One file as the reading thread hands it over.
enum FileRead {
    /// Its size and time match its checkpoint (an incremental scan skips it).
    Unchanged { conversations: usize },
    /// It could not be read (gone, unreadable, not the source's format).
    Failed,
    Read {
        size: u64,
        modified_ms: i64,
        conversations: Vec<ReadConversation>,
    },
}

/// A conversation of a file read, with its checkpoint now and, unless it is unchanged since the
/// last scan, its complete turns prepared for memory.
struct ReadConversation {
    id: String,
    malformed: usize,
    checkpoint: ConversationCheckpoint,
    /// `None`: its content hash matches its checkpoint (an incremental scan imports nothing).
    turns: Option<Vec<PreparedTurn>>,
}

/// Reads one file unless its checkpoint says it has not changed, and prepares the turns of each
/// conversation that changed for memory (redacted, traced, analysed): all the work of an import
/// that needs no database, done on the reading thread.
fn read_file(
    source: &dyn HistorySource,
    memory: &MemoryStore,
    file: &Path,
    known: &SourceState,
    mode: ScanMode,
) -> FileRead {
    let Some((size, modified_ms)) = stat(file) else {
        return FileRead::Failed;
    };
    let previous = known.files.get(&file.display().to_string());
    if mode == ScanMode::Incremental {
        if let Some(previous) = previous.filter(|p| p.size == size && p.modified_ms == modified_ms)
        {
            return FileRead::Unchanged {
                conversations: previous.conversations.len(),
            };
        }
    }
    match source.read(file) {
        Ok(conversations) => FileRead::Read {
            size,
            modified_ms,
            conversations: conversations
                .into_iter()
                .map(|mut conversation| {
                    let complete: Vec<&ImportedTurn> =
                        conversation.turns.iter().filter(|t| t.complete).collect();
                    let checkpoint = checkpoint_of(&complete);
                    let unchanged = mode == ScanMode::Incremental
                        && previous
                            .and_then(|p| p.conversations.get(&conversation.id))
                            .is_some_and(|k| k.content_hash == checkpoint.content_hash);
                    let turns = (!unchanged).then(|| {
                        let turns = std::mem::take(&mut conversation.turns);
                        memory.prepare_import(
                            turns
                                .into_iter()
                                .filter(|t| t.complete)
                                .map(|turn| into_import(source.name(), &conversation, turn))
                                .collect(),
                        )
                    });
                    ReadConversation {
                        id: conversation.id.clone(),
                        malformed: conversation.malformed,
                        checkpoint,
                        turns,
                    }
                })
                .collect(),
        },
        Err(e) => {
            tracing::warn!("{}: {e}", source.name());
            FileRead::Failed
        }
    }
}

fn stat(path: &Path) -> Option<(u64, i64)> {
    let meta = std::fs::metadata(path).ok()?;
    let modified = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0);
    Some((meta.len(), modified))
}

/// Scans `sources` into `memory`, keeping checkpoints in `state_path`.
pub fn scan(
    sources: &[&dyn HistorySource],
    memory: &MemoryStore,
    state_path: &Path,
    mode: ScanMode,
    control: &ScanControl,
    on_progress: &mut dyn FnMut(Progress),
) -> Result<Vec<SourceReport>, ImportError> {
    let mut state = SyncState::load(state_path);
    let mut reports = Vec::new();
    // The log is copied back on the other core while this thread writes (a sixth of an import's
    // time when its commits did it).
    let _checkpoints = memory.checkpoint_beside().unwrap_or_else(|e| {
        tracing::warn!("the import checkpoints as it commits: no second connection ({e})");
        None
    });
    for source in sources {
        let started = cairn_memory::now_ms();
        let name = source.name();
        let files = source.files();
        on_progress(Progress::SourceStarted {
            source: name.to_owned(),
            files: files.len(),
        });
        let mut report = SourceReport {
            source: name.to_owned(),
            ..SourceReport::default()
        };
        let mut stopped = false;
        let mut checkpointed: Option<Instant> = None;
        // One thread reads and parses the next files while this one writes the last to memory; a
        // few files of slack keep both busy when file sizes vary.
        let known = state.sources.get(name).cloned().unwrap_or_default();
        std::thread::scope(|scope| -> Result<(), ImportError> {
            let (send, files_read) = std::sync::mpsc::sync_channel(READ_AHEAD_FILES);
            let files = &files;
            let known = &known;
            let reader = scope.spawn(move || {
                for file in files {
                    let read = read_file(*source, memory, file, known, mode);
                    if send.send((file, read)).is_err() {
                        return;
                    }
                }
            });
            for (done, (file, read)) in files_read.iter().enumerate() {
                if control.should_stop() {
                    stopped = true;
                    break;
                }
                let key = file.display().to_string();
                let (size, modified_ms, conversations) = match read {
                    FileRead::Unchanged { conversations } => {
                        report.conversations += conversations;
                        continue;
                    }
                    FileRead::Failed => {
                        report.files_failed += 1;
                        continue;
                    }
                    FileRead::Read {
                        size,
                        modified_ms,
                        conversations,
                    } => (size, modified_ms, conversations),
                };
                report.files_read += 1;
                report.bytes_read += size;
                let mut checkpoint = FileCheckpoint {
                    size,
                    modified_ms,
                    conversations: BTreeMap::new(),
                };
                for conversation in conversations {
                    report.conversations += 1;
                    report.lines_malformed += conversation.malformed;
                    match conversation.turns {
                        None => report.turns_seen += conversation.checkpoint.turns,
                        Some(turns) => {
                            write_conversation(memory, name, &conversation.id, turns, &mut report)?
                        }
                    }
                    checkpoint
                        .conversations
                        .insert(conversation.id, conversation.checkpoint);
                }
                state
                    .sources
                    .entry(name.to_owned())
                    .or_default()
                    .files
                    .insert(key, checkpoint);
                // A killed scan keeps the files done until its last checkpoint.
                if checkpointed.is_none_or(|at| at.elapsed() >= CHECKPOINT_EVERY) {
                    state.save(state_path)?;
                    checkpointed = Some(Instant::now());
                }
                on_progress(Progress::File {
                    source: name.to_owned(),
                    done: done + 1,
                    files: files.len(),
                    report: report.clone(),
                });
            }
            drop(files_read);
            let _ = reader.join();
            Ok(())
        })?;
        let source_state = state.sources.entry(name.to_owned()).or_default();
        source_state.last_sync = Some(cairn_memory::now_ms());
        if !stopped && report.files_failed == 0 {
            source_state.watermark = Some(started);
        }
        state.save(state_path)?;
        if stopped {
            on_progress(Progress::Stopped);
            reports.push(report);
            break;
        }
        on_progress(Progress::SourceDone {
            report: report.clone(),
        });
        reports.push(report);
    }
    Ok(reports)
}

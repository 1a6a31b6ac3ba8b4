//! Other agents' history as a source of memories: scan counts and progress, the sources list and
//! the hooks' status.

use serde::{Deserialize, Serialize};

/// Counts of one source's scan (the `--json` summary's shape).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceReport {
    pub source: String,
    pub conversations: usize,
    pub turns_seen: usize,
    pub turns_added: usize,
    pub turns_skipped: usize,
    pub turns_failed: usize,
    pub lines_malformed: usize,
    /// Files that could not be read (the watermark waits for them).
    pub files_failed: usize,
    /// Files read (incremental scans skip unchanged ones).
    pub files_read: usize,
    /// Bytes of the files read.
    pub bytes_read: u64,
}

impl SourceReport {
    pub fn add(&mut self, other: &SourceReport) {
        self.conversations += other.conversations;
        self.turns_seen += other.turns_seen;
        self.turns_added += other.turns_added;
        self.turns_skipped += other.turns_skipped;
        self.turns_failed += other.turns_failed;
        self.lines_malformed += other.lines_malformed;
        self.files_failed += other.files_failed;
        self.files_read += other.files_read;
        self.bytes_read += other.bytes_read;
    }
}

/// What the person does to a running scan of other agents' history.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScanAction {
    Pause,
    Resume,
    Stop,
}

/// What a scan of other agents' history reports as it goes (streamed to the Sources page).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum ScanProgress {
    SourceStarted {
        source: String,
        files: usize,
    },
    /// One more file done; `report` is the source's counts so far.
    File {
        source: String,
        done: usize,
        files: usize,
        report: SourceReport,
    },
    SourceDone {
        report: SourceReport,
    },
    /// The scan was stopped before the end (checkpoints keep what was done).
    Stopped,
}

/// A source as `cairn sources list` shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SourceInfo {
    pub name: String,
    pub label: String,
    pub detected: bool,
    pub enabled: bool,
    /// Where it reads.
    pub path: String,
    pub files: usize,
    /// From the last scans' checkpoints.
    pub conversations: usize,
    pub turns: usize,
    pub last_sync: Option<i64>,
    pub watermark: Option<i64>,
}

/// Whether Cairn's hooks are in an agent's hook file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HookStatus {
    pub agent: String,
    /// The hook file (it may not exist yet).
    pub path: std::path::PathBuf,
    /// Every event Cairn hooks into has Cairn's entry.
    pub installed: bool,
}

//! The `HistorySource` trait: where an agent keeps its history on this machine, which files hold
//! it, and how one file reads as conversations. Paths come from an injected environment so tests
//! never touch the real home.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::turn::ImportedConversation;
use crate::ImportError;

/// The environment sources resolve their folders in: the home directory, environment variables,
/// and per-source folder overrides from the config.
#[derive(Clone, Default)]
pub struct SourceEnv {
    pub home: PathBuf,
    pub vars: HashMap<String, String>,
    /// Source name → the folder to read instead of the default.
    pub overrides: HashMap<String, PathBuf>,
}

impl SourceEnv {
    /// The process environment (`HOME` and the variables the formats notes name).
    pub fn from_process(overrides: HashMap<String, PathBuf>) -> Self {
        Self {
            home: std::env::var_os("HOME")
                .map(PathBuf::from)
                .unwrap_or_default(),
            vars: std::env::vars().collect(),
            overrides,
        }
    }

    /// `$VAR` when set and not empty, else `~/<default>`.
    pub fn dir(&self, var: &str, default: &str) -> PathBuf {
        match self.vars.get(var).filter(|v| !v.is_empty()) {
            Some(v) => PathBuf::from(v),
            None => self.home.join(default),
        }
    }

    /// The override for `source`, if the person set one.
    pub fn overridden(&self, source: &str) -> Option<PathBuf> {
        self.overrides.get(source).cloned()
    }
}

/// Who a source is: the short name used in memory, on the command line and for the folder the
/// person set for it (`claude-code`), and the name people know (`Claude Code`). Each source
/// declares its own once, as its `ID` constant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SourceId {
    pub name: &'static str,
    pub label: &'static str,
}

impl SourceId {
    /// The source's folder in `env`: the one the person set for it, else `default`.
    pub fn folder(self, env: &SourceEnv, default: impl FnOnce() -> PathBuf) -> PathBuf {
        env.overridden(self.name).unwrap_or_else(default)
    }
}

/// One agent's history on disk.
pub trait HistorySource: Send + Sync {
    /// Who it is.
    fn id(&self) -> SourceId;
    /// The short name used in memory and on the command line (`claude-code`).
    fn name(&self) -> &'static str {
        self.id().name
    }
    /// The name people know (`Claude Code`).
    fn label(&self) -> &'static str {
        self.id().label
    }
    /// The folders (or database files) it reads; the first is shown as "where".
    fn roots(&self) -> Vec<PathBuf>;
    /// Whether the agent's history is on this machine.
    fn detected(&self) -> bool {
        self.roots().iter().any(|r| r.exists())
    }
    /// The files to read (each read whole; a database file holds many conversations): by
    /// default, every JSONL transcript under its roots.
    fn files(&self) -> Vec<PathBuf> {
        self.roots()
            .iter()
            .flat_map(|root| files_under(root, &|p| has_extension(p, "jsonl")))
            .collect()
    }
    /// Reads one file as conversations; bad lines and records are skipped and counted.
    fn read(&self, file: &Path) -> Result<Vec<ImportedConversation>, ImportError>;
}

/// Every file under `root` (recursively) whose name satisfies `keep`, sorted.
pub fn files_under(root: &Path, keep: &dyn Fn(&Path) -> bool) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            match entry.file_type() {
                Ok(t) if t.is_dir() => stack.push(path),
                Ok(t) if t.is_file() && keep(&path) => out.push(path),
                _ => {}
            }
        }
    }
    out.sort();
    out
}

/// Whether the file name ends with `.ext`.
pub fn has_extension(path: &Path, ext: &str) -> bool {
    path.extension().is_some_and(|e| e == ext)
}

/// The lines of a JSONL file parsed as JSON; a line that does not parse (a torn last line, a
/// damaged record) is counted, not fatal.
pub fn json_lines(path: &Path) -> Result<(Vec<serde_json::Value>, usize), ImportError> {
    let bytes = std::fs::read(path).map_err(|e| ImportError::io(path, e))?;
    Ok(parse_json_lines(&bytes))
}

/// A JSONL transcript read whole.
pub struct Transcript {
    pub records: Vec<serde_json::Value>,
    /// Lines that did not parse.
    pub malformed: usize,
    /// The file's name without `.jsonl`.
    pub stem: String,
    /// The session a sub-agent's transcript belongs to (`<session>/subagents/<name>.jsonl`).
    pub parent: Option<String>,
}

/// Reads a JSONL transcript: its records, its name and the session above it, if any.
pub fn read_transcript(path: &Path) -> Result<Transcript, ImportError> {
    let (records, malformed) = json_lines(path)?;
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let parent = path
        .parent()
        .filter(|p| p.file_name().is_some_and(|n| n == "subagents"))
        .and_then(Path::parent)
        .and_then(Path::file_name)
        .map(|n| n.to_string_lossy().into_owned());
    Ok(Transcript {
        records,
        malformed,
        stem,
        parent,
    })
}

/// [`json_lines`] over bytes (for fuzzing and tests).
pub fn parse_json_lines(bytes: &[u8]) -> (Vec<serde_json::Value>, usize) {
    let mut records = Vec::new();
    let mut malformed = 0;
    for line in bytes.split(|b| *b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice::<serde_json::Value>(line) {
            Ok(v) if v.is_object() => records.push(v),
            _ => malformed += 1,
        }
    }
    (records, malformed)
}

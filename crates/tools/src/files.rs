//! `read_file`, `write_file` and `edit_file`: paths relative to the working directory, results
//! tagged with the file's sha so the runtime can write headers and spot rereads.

use std::path::Path;

use serde::Deserialize;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use crate::access::{inside, read_asks, Protected};
use crate::counters::Counter;
use crate::diff::diff_summary;
use crate::edit::{edit_text, Edit};
use crate::texts::{fill, FOLDER_LISTING, MISSING_FILE};
use crate::{field, parse, Declaration, ResultKind, Tool, ToolContext, ToolFuture, ToolOutput};

/// Lines one read shows at most (agent-loop.json: "its own window: 2000 lines from an offset").
pub const READ_WINDOW: usize = 2000;

/// The first 8 hex digits of the SHA-256 of `bytes` (agent-loop.json `sha_digits`).
pub fn sha_of(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    digest.iter().take(4).map(|b| format!("{b:02x}")).collect()
}

fn missing(path: &str) -> ToolOutput {
    ToolOutput::failed(fill(MISSING_FILE, &[("path", path)]))
}

fn path_parameter() -> Value {
    json!({"type": "string", "description": "File path, relative to the working directory."})
}

/// `read_file`; a read outside the project or in a [`Protected`] place asks first when `yolo` is
/// off.
#[derive(Debug, Clone, Default)]
pub struct ReadFile {
    pub protected: Protected,
}

#[derive(Deserialize)]
struct ReadInput {
    path: String,
    #[serde(default)]
    start: usize,
    #[serde(default)]
    end: usize,
    #[serde(default)]
    numbered: bool,
}

impl Tool for ReadFile {
    fn name(&self) -> &str {
        "read_file"
    }

    fn declaration(&self) -> Declaration {
        Declaration {
            name: "read_file".into(),
            description: format!(
                "Read a text file, or a range of its lines (at most {READ_WINDOW} lines at a time). The path of a folder lists what it holds."
            ),
            parameters: json!({
                "type": "object",
                "properties": {
                    "path": path_parameter(),
                    "start": {"type": "integer", "description": "First line (1-based); 0 = from the start."},
                    "end": {"type": "integer", "description": "Last line (1-based, inclusive); 0 = to the end."},
                    "numbered": {"type": "boolean", "description": "Prefix each line with its number."}
                },
                "required": ["path"]
            }),
        }
    }

    fn needs_permission(&self, input: &Value, ctx: &ToolContext) -> bool {
        let path = field(input, "path").trim();
        !path.is_empty() && read_asks(&ctx.resolve(path), &ctx.cwd, &self.protected)
    }

    fn target_file(&self, input: &Value) -> Option<String> {
        Some(field(input, "path").to_owned())
    }

    fn display(&self, input: &Value) -> String {
        format!("📝 read_file: {}", field(input, "path"))
    }

    fn counter(&self) -> Option<Counter> {
        Some(Counter::FileOp)
    }

    fn run<'a>(&'a self, input: Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let input: ReadInput = match parse("read_file", input) {
                Ok(i) => i,
                Err(e) => return ToolOutput::failed(e),
            };
            let absolute = ctx.resolve(&input.path);
            if absolute.is_dir() {
                return list_folder(&input.path, &absolute, ctx);
            }
            let bytes = match tokio::fs::read(&absolute).await {
                Ok(b) => b,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return missing(&input.path),
                Err(e) => {
                    return ToolOutput::failed(format!("[read_file: {}: {e}]", input.path));
                }
            };
            read_window(&input, absolute.as_path(), &bytes, ctx)
        })
    }
}

/// The most entries of a folder `read_file` lists.
const FOLDER_ENTRIES: usize = 200;

/// What a folder holds, for a `read_file` of its path (a small model reads a folder to list it):
/// its entries sorted, folders marked with a slash.
fn list_folder(path: &str, absolute: &Path, ctx: &ToolContext) -> ToolOutput {
    let entries = match std::fs::read_dir(absolute) {
        Ok(entries) => entries,
        Err(e) => return ToolOutput::failed(format!("[read_file: {path}: {e}]")),
    };
    let mut names: Vec<String> = entries
        .filter_map(Result::ok)
        .map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                format!("{name}/")
            } else {
                name
            }
        })
        .collect();
    names.sort();
    let total = names.len();
    let mut text = fill(
        FOLDER_LISTING,
        &[("path", path), ("count", &total.to_string())],
    );
    for name in names.iter().take(FOLDER_ENTRIES) {
        text.push('\n');
        text.push_str(name);
    }
    if total > FOLDER_ENTRIES {
        text.push_str(&format!("\n… and {} more", total - FOLDER_ENTRIES));
    }
    ToolOutput {
        text: ctx.truncate(text),
        failed: false,
        kind: ResultKind::Plain,
    }
}

fn read_window(input: &ReadInput, absolute: &Path, bytes: &[u8], ctx: &ToolContext) -> ToolOutput {
    let sha = sha_of(bytes);
    let text = String::from_utf8_lossy(bytes);
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let of = lines.len();
    let from = input.start.max(1);
    if of == 0 || from > of {
        let shown = if of == 0 {
            String::new()
        } else {
            format!(
                "[read_file: {} has {of} lines; start {from} is past the end]",
                input.path
            )
        };
        return ToolOutput {
            failed: of != 0,
            kind: ResultKind::Read {
                path: input.path.clone(),
                absolute: absolute.to_path_buf(),
                from: 0,
                to: 0,
                of,
                sha,
                full: of == 0,
            },
            text: shown,
        };
    }
    let asked_end = if input.end == 0 {
        of
    } else {
        input.end.min(of)
    };
    let to = asked_end.max(from).min(from + READ_WINDOW - 1);
    let mut out = String::new();
    for (n, line) in lines[from - 1..to].iter().enumerate() {
        if input.numbered {
            out.push_str(&format!("{:>6}\t", from + n));
        }
        out.push_str(line);
    }
    if to < of && out.ends_with('\n') {
        out.pop();
    }
    ToolOutput {
        text: ctx.truncate(out),
        failed: false,
        kind: ResultKind::Read {
            path: input.path.clone(),
            absolute: absolute.to_path_buf(),
            from,
            to,
            of,
            sha,
            full: from == 1 && to == of,
        },
    }
}

/// Writes `content` to `path` through a temporary file in the same directory (flushed, then
/// renamed), keeping the permissions of the file it replaces.
pub async fn write_atomically(path: &Path, content: &[u8]) -> std::io::Result<()> {
    let (path, content) = (path.to_path_buf(), content.to_vec());
    tokio::task::spawn_blocking(move || {
        cairn_config::write_atomically(&path, &content, cairn_config::Access::AsBefore)
            .map_err(|e| std::io::Error::other(e.to_string()))
    })
    .await
    .map_err(std::io::Error::other)?
}

/// Whether an edit only reports what it would change.
fn dry_run(input: &Value) -> bool {
    input
        .get("dry_run")
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

pub struct WriteFile;

#[derive(Deserialize)]
struct WriteInput {
    path: String,
    content: String,
}

impl Tool for WriteFile {
    fn name(&self) -> &str {
        "write_file"
    }

    fn declaration(&self) -> Declaration {
        Declaration {
            name: "write_file".into(),
            description: "Write a whole file (created with its parent directories, or entirely \
replaced). Answers with the diff against the previous content."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "File path, relative to the working directory; parent directories are created."},
                    "content": {"type": "string", "description": "The whole content of the file."}
                },
                "required": ["path", "content"]
            }),
        }
    }

    fn needs_permission(&self, _input: &Value, _ctx: &ToolContext) -> bool {
        true
    }

    fn leaves_folder(&self, input: &Value, ctx: &ToolContext) -> bool {
        let path = ctx.resolve(field(input, "path"));
        path.is_file() || !inside(&path, &ctx.cwd)
    }

    fn target_file(&self, input: &Value) -> Option<String> {
        Some(field(input, "path").to_owned())
    }

    fn display(&self, input: &Value) -> String {
        format!("📝 write_file: {}", field(input, "path"))
    }

    fn counter(&self) -> Option<Counter> {
        Some(Counter::FileOp)
    }

    fn run<'a>(&'a self, input: Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let input: WriteInput = match parse("write_file", input) {
                Ok(i) => i,
                Err(e) => return ToolOutput::failed(e),
            };
            let absolute = ctx.resolve(&input.path);
            let previous = match tokio::fs::read(&absolute).await {
                Ok(b) => Some(String::from_utf8_lossy(&b).into_owned()),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                Err(e) => return ToolOutput::failed(format!("[write_file: {}: {e}]", input.path)),
            };
            let kind = ResultKind::Edit {
                path: input.path.clone(),
                sha: sha_of(input.content.as_bytes()),
            };
            if previous.as_deref() == Some(input.content.as_str()) {
                return ToolOutput {
                    text: format!(
                        "{} already has this content: nothing was written.",
                        input.path
                    ),
                    failed: false,
                    kind,
                };
            }
            if let Err(e) = write_atomically(&absolute, input.content.as_bytes()).await {
                return ToolOutput::failed(format!("[write_file: {}: {e}]", input.path));
            }
            let text = match previous {
                None => format!("Created, {} lines.", input.content.lines().count()),
                Some(previous) => {
                    let diff = diff_summary(&previous, &input.content);
                    format!(
                        "Wrote {}: +{} -{} lines\n{}",
                        input.path, diff.added, diff.deleted, diff.diff
                    )
                }
            };
            ToolOutput {
                text: ctx.truncate(text),
                failed: false,
                kind,
            }
        })
    }
}

pub struct EditFile;

#[derive(Deserialize)]
struct EditInput {
    path: String,
    #[serde(default)]
    edits: Vec<Edit>,
    #[serde(default)]
    dry_run: bool,
}

impl Tool for EditFile {
    fn name(&self) -> &str {
        "edit_file"
    }

    fn declaration(&self) -> Declaration {
        Declaration {
            name: "edit_file".into(),
            description: "Replace text in an existing file. Each edit's `old` must appear exactly \
once in the file (include surrounding lines to make it unique); all edits are resolved against \
the original file and applied together, or none is. Answers with the diff."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "Path of an existing file."},
                    "edits": {
                        "type": "array",
                        "description": "Replacements, all resolved against the original file.",
                        "items": {
                            "type": "object",
                            "properties": {
                                "old": {"type": "string", "description": "Exact text to find, present exactly once."},
                                "new": {"type": "string", "description": "Replacement; empty deletes the matched text."}
                            },
                            "required": ["old", "new"]
                        }
                    },
                    "dry_run": {"type": "boolean", "description": "Report what would change, write nothing."}
                },
                "required": ["path", "edits"]
            }),
        }
    }

    fn needs_permission(&self, input: &Value, _ctx: &ToolContext) -> bool {
        !dry_run(input)
    }

    fn leaves_folder(&self, input: &Value, ctx: &ToolContext) -> bool {
        !dry_run(input) && !inside(&ctx.resolve(field(input, "path")), &ctx.cwd)
    }

    fn target_file(&self, input: &Value) -> Option<String> {
        Some(field(input, "path").to_owned())
    }

    fn display(&self, input: &Value) -> String {
        format!("📝 edit_file: {}", field(input, "path"))
    }

    fn counter(&self) -> Option<Counter> {
        Some(Counter::FileOp)
    }

    fn run<'a>(&'a self, input: Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let input: EditInput = match parse("edit_file", input) {
                Ok(i) => i,
                Err(e) => return ToolOutput::failed(e),
            };
            let absolute = ctx.resolve(&input.path);
            let original = match tokio::fs::read(&absolute).await {
                Ok(b) => String::from_utf8_lossy(&b).into_owned(),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return missing(&input.path),
                Err(e) => return ToolOutput::failed(format!("[edit_file: {}: {e}]", input.path)),
            };
            let edited = match edit_text(&input.path, &original, &input.edits) {
                Ok(edited) => edited,
                Err(refusal) => return ToolOutput::failed(refusal),
            };
            if input.dry_run {
                return ToolOutput::ok(
                    ctx.truncate(format!("Dry run, nothing was written. {}", edited.report)),
                );
            }
            if let Err(e) = write_atomically(&absolute, edited.text.as_bytes()).await {
                return ToolOutput::failed(format!("[edit_file: {}: {e}]", input.path));
            }
            ToolOutput {
                text: ctx.truncate(edited.report),
                failed: false,
                kind: ResultKind::Edit {
                    path: input.path.clone(),
                    sha: sha_of(edited.text.as_bytes()),
                },
            }
        })
    }
}

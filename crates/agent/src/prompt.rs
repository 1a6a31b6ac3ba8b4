//! The system prompt with its environment block (no absolute paths), and the note carried on each
//! user message.

use std::path::Path;

use crate::texts::{ENV_PROJECT, ENV_STARTED, NOTE_DATE};

const BASE: &str =
    "You are Cairn, a local-first assistant with a long memory. Work on the person's task \
carefully and answer plainly. When the message carries recalled memories, treat them as history: \
check them against the current request, which always takes precedence.";

/// What a small model is told about tools: it calls them for anything, unless told not to.
const COMPACT_GUIDE: &str =
    "Answer directly when you can. Call a tool only when the task needs it: \
to read or change a file, or to run a command. Never call a tool to remember something: what the \
person tells you is remembered by itself.";

/// The system prompt for a session working in `cwd` under the project `root`; `compact` for a
/// small model on this device.
pub fn system_prompt(root: &Path, cwd: &Path, compact: bool) -> String {
    let name = root
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "workspace".to_owned());
    let guide = if compact { COMPACT_GUIDE } else { "" };
    let mut prompt = format!(
        "{BASE}{}{guide}\n\n{}",
        if compact { " " } else { "" },
        ENV_PROJECT.replace("{{name}}", &name)
    );
    if let Ok(relative) = cwd.strip_prefix(root) {
        if !relative.as_os_str().is_empty() {
            prompt.push('\n');
            prompt.push_str(&ENV_STARTED.replace("{{path}}", &relative.display().to_string()));
        }
    }
    prompt
}

/// The person's words, then the note (today's date, what changed), then the recalled memories.
pub fn user_message(text: &str, date: &str, note: &str, recalled: &str) -> String {
    let mut message = format!("{text}\n\n{}", NOTE_DATE.replace("{{date}}", date));
    if !note.is_empty() {
        message.push('\n');
        message.push_str(note);
    }
    if !recalled.is_empty() {
        message.push_str("\n\n");
        message.push_str(recalled);
    }
    message
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_environment_names_the_project_and_a_relative_start() {
        let prompt = system_prompt(
            Path::new("/home/ada/src/cairn"),
            Path::new("/home/ada/src/cairn/crates/llm"),
            false,
        );
        assert!(prompt.contains("Project: cairn (paths are relative to its root)"));
        assert!(prompt.contains("Started in: crates/llm (relative to the project root)"));
        assert!(!prompt.contains("/home/ada"));
        let at_root = system_prompt(Path::new("/p/x"), Path::new("/p/x"), false);
        assert!(!at_root.contains("Started in"));
    }

    #[test]
    fn the_note_follows_the_words() {
        assert_eq!(
            user_message("hi", "2026-11-29", "", ""),
            "hi\n\nToday is 2026-11-29."
        );
    }
}

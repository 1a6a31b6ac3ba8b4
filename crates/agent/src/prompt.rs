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
    "Answer directly when you can. When the task is to look at, change, create, delete or run \
something, do it yourself by calling the tools: never tell the person how to do it, and never \
write a tool call as text. Use bash to list a folder or run a program, and read a file before \
you edit it. Never call a tool to remember something: what the person tells you is remembered by \
itself; only when the person tells you a fact and asks for nothing, say in one sentence that you \
will remember it. When the tools have run, say in one sentence what was done, as their results \
show it.";

/// The system prompt for a session working in `cwd` under the project `root`; `compact` for a
/// small model on this device, which is also told the date `today` here: on its user message, a
/// small model takes "Today is …" for something the person said and answers it.
pub fn system_prompt(root: &Path, cwd: &Path, compact: bool, today: &str) -> String {
    let name = folder_name(root);
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
    if compact {
        prompt.push('\n');
        prompt.push_str(&NOTE_DATE.replace("{{date}}", today));
    }
    prompt
}

/// A folder's name as the model is told it (never its whole path).
pub fn folder_name(folder: &Path) -> String {
    folder
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "workspace".to_owned())
}

/// Whether the next user message's note says the date: unless the system prompt already says it
/// is `today`.
pub fn needs_date_note(system: Option<&str>, today: &str) -> bool {
    !system.is_some_and(|s| s.ends_with(&NOTE_DATE.replace("{{date}}", today)))
}

/// The person's words, then the note (today's date unless `date` is `None`, what changed), then
/// the recalled memories; with `recalled_first`, the memories come first: a small model answers
/// the last thing it read, and copies an old answer when that is a memory.
pub fn user_message(
    text: &str,
    date: Option<&str>,
    note: &str,
    recalled: &str,
    recalled_first: bool,
) -> String {
    let mut lines = Vec::new();
    if let Some(date) = date {
        lines.push(NOTE_DATE.replace("{{date}}", date));
    }
    if !note.is_empty() {
        lines.push(note.to_owned());
    }
    let mut message = text.to_owned();
    if !lines.is_empty() {
        message.push_str("\n\n");
        message.push_str(&lines.join("\n"));
    }
    if recalled.is_empty() {
        message
    } else if recalled_first {
        format!("{recalled}\n\n{message}")
    } else {
        format!("{message}\n\n{recalled}")
    }
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
            "2026-11-29",
        );
        assert!(prompt.contains("Project: cairn (paths are relative to its root)"));
        assert!(prompt.contains("Started in: crates/llm (relative to the project root)"));
        assert!(!prompt.contains("/home/ada"));
        assert!(!prompt.contains("Today is"));
        let at_root = system_prompt(Path::new("/p/x"), Path::new("/p/x"), true, "2026-11-29");
        assert!(!at_root.contains("Started in"));
        assert!(at_root.ends_with("\nToday is 2026-11-29."));
        assert!(!needs_date_note(Some(&at_root), "2026-11-29"));
        assert!(needs_date_note(Some(&at_root), "2026-11-30"));
        assert!(needs_date_note(Some(&prompt), "2026-11-29"));
        assert!(needs_date_note(None, "2026-11-29"));
    }

    #[test]
    fn the_note_follows_the_words() {
        assert_eq!(
            user_message("hi", Some("2026-11-29"), "", "", false),
            "hi\n\nToday is 2026-11-29."
        );
        assert_eq!(user_message("hi", None, "", "", true), "hi");
        assert_eq!(
            user_message("hi", None, "a note", "## Recalled", false),
            "hi\n\na note\n\n## Recalled"
        );
        assert_eq!(
            user_message("hi", None, "a note", "## Recalled", true),
            "## Recalled\n\nhi\n\na note"
        );
    }
}

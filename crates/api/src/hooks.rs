//! Cairn's live hooks in other agents' hook files (Claude Code, Codex, Cursor): install, remove
//! and look. Edits are atomic and idempotent and keep other tools' entries; the hooks run
//! `<cairn> hook <event> --agent <agent>`, so they need the path of the `cairn` command.

use std::path::{Path, PathBuf};

use cairn_importers::SourceEnv;
use serde_json::{json, Value};

use crate::Error;

/// The agents Cairn can hook into, by source name.
pub const HOOK_AGENTS: [&str; 3] = ["claude-code", "codex", "cursor"];

pub use cairn_protocol::HookStatus;

/// How another agent runs Cairn: the `cairn` program, and the data home when it is not the one
/// `cairn` finds by itself (`~/.cairn`) — hook runners and MCP clients pass on little of the
/// environment, so a `CAIRN_HOME` would be lost and the memory read another one.
#[derive(Debug, Clone)]
pub struct CairnCommand {
    pub exe: PathBuf,
    pub home: Option<PathBuf>,
}

impl CairnCommand {
    /// `exe` for the data home at `home`: named only when it is not `$HOME/.cairn`.
    pub fn new(exe: impl Into<PathBuf>, home: &Path) -> Self {
        let default = std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cairn"));
        Self {
            exe: exe.into(),
            home: (default.as_deref() != Some(home)).then(|| home.to_path_buf()),
        }
    }

    /// The arguments before a subcommand: `--home DIR`, or nothing.
    pub fn home_args(&self) -> Vec<String> {
        self.home
            .iter()
            .flat_map(|h| ["--home".to_owned(), h.display().to_string()])
            .collect()
    }
}

/// Adds Cairn's hooks (running `command`) to `agent`'s hook file; returns the file.
pub fn install_hooks(agent: &str, command: &CairnCommand) -> Result<PathBuf, Error> {
    edit(agent, Some(command))
}

/// Takes Cairn's hooks out of `agent`'s hook file, leaving the others; returns the file.
pub fn remove_hooks(agent: &str) -> Result<PathBuf, Error> {
    edit(agent, None)
}

/// Whether Cairn's hooks are installed for `agent` (an unknown agent has no file: not installed).
pub fn hook_status(agent: &str) -> HookStatus {
    let Ok((path, events)) = hook_file(agent) else {
        return HookStatus {
            agent: agent.to_owned(),
            path: PathBuf::new(),
            installed: false,
        };
    };
    let doc: Value = std::fs::read(&path)
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or(Value::Null);
    let installed = events.iter().all(|event| {
        doc["hooks"][*event]
            .as_array()
            .is_some_and(|entries| entries.iter().any(|entry| entry_is_ours(agent, entry)))
    });
    HookStatus {
        agent: agent.to_owned(),
        path,
        installed,
    }
}

/// The command an agent runs for `event`.
fn hook_command(cairn: &CairnCommand, agent: &str, event: &str) -> String {
    let home = cairn
        .home
        .as_ref()
        .map(|h| format!(" --home '{}'", h.display()))
        .unwrap_or_default();
    format!(
        "'{}'{home} hook {event} --agent {agent}",
        cairn.exe.display()
    )
}

/// Our entries are recognised by their command: `… hook <event> --agent …` of a cairn binary.
fn is_ours(command: &str) -> bool {
    command.contains(" hook ") && command.contains("--agent") && command.contains("cairn")
}

/// A Cursor entry is `{command}`; the others are `{matcher, hooks: [{type, command, timeout}]}`.
fn entry_is_ours(agent: &str, entry: &Value) -> bool {
    if agent == "cursor" {
        return entry["command"].as_str().is_some_and(is_ours);
    }
    entry["hooks"].as_array().is_some_and(|hooks| {
        hooks
            .iter()
            .any(|h| h["command"].as_str().is_some_and(is_ours))
    })
}

/// Where an agent keeps its hooks, and the events Cairn hooks into.
fn hook_file(agent: &str) -> Result<(PathBuf, &'static [&'static str]), Error> {
    let env = SourceEnv::from_process(Default::default());
    Ok(match agent {
        "claude-code" => (
            env.dir("CLAUDE_CONFIG_DIR", ".claude")
                .join("settings.json"),
            &["UserPromptSubmit", "Stop"],
        ),
        "codex" => (
            env.dir("CODEX_HOME", ".codex").join("hooks.json"),
            &["UserPromptSubmit", "Stop"],
        ),
        "cursor" => (env.home.join(".cursor").join("hooks.json"), &["stop"]),
        other => {
            return Err(Error::UnknownSource(format!(
                "no hooks for {other:?}: claude-code, codex or cursor"
            )))
        }
    })
}

fn hook_error(path: &Path, what: impl std::fmt::Display) -> Error {
    Error::Hooks(format!("{}: {what}", path.display()))
}

/// Installs (with the executable) or removes Cairn's entries.
fn edit(agent: &str, install: Option<&CairnCommand>) -> Result<PathBuf, Error> {
    let (path, events) = hook_file(agent)?;
    let mut doc: Value = match std::fs::read(&path) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .map_err(|e| hook_error(&path, format!("not valid JSON ({e}); fix it first")))?,
        // Nothing to take out of a file that is not there.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && install.is_none() => return Ok(path),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => json!({}),
        Err(e) => return Err(hook_error(&path, format!("cannot read it: {e}"))),
    };
    if !doc.is_object() {
        return Err(hook_error(&path, "not a JSON object; fix it first"));
    }
    if agent == "cursor" && doc.get("version").is_none() {
        doc["version"] = json!(1);
    }
    for event in events {
        let list = doc["hooks"][*event].as_array().cloned().unwrap_or_default();
        let mut kept: Vec<Value> = Vec::new();
        for entry in list {
            if agent == "cursor" {
                if !entry["command"].as_str().is_some_and(is_ours) {
                    kept.push(entry);
                }
                continue;
            }
            // { matcher, hooks: [ {type, command, timeout} ] }: drop ours, keep the group if
            // anything else is left in it.
            let mut entry = entry;
            if let Some(hooks) = entry["hooks"].as_array() {
                let others: Vec<Value> = hooks
                    .iter()
                    .filter(|h| !h["command"].as_str().is_some_and(is_ours))
                    .cloned()
                    .collect();
                if others.is_empty() {
                    continue;
                }
                entry["hooks"] = json!(others);
            }
            kept.push(entry);
        }
        if let Some(exe) = install {
            let command = hook_command(exe, agent, event);
            kept.push(if agent == "cursor" {
                json!({"command": command})
            } else {
                json!({"matcher": "", "hooks": [{"type": "command", "command": command, "timeout": 30}]})
            });
        }
        if !doc["hooks"].is_object() {
            doc["hooks"] = json!({});
        }
        if kept.is_empty() {
            if let Some(hooks) = doc["hooks"].as_object_mut() {
                hooks.remove(*event);
            }
        } else {
            doc["hooks"][*event] = json!(kept);
        }
    }
    write_json(&path, &doc)?;
    if agent == "codex" && install.is_some() {
        enable_codex_hooks(&path.with_file_name("config.toml"))?;
    }
    Ok(path)
}

/// Writes JSON through a temporary file, keeping the file's permissions.
fn write_json(path: &Path, doc: &Value) -> Result<(), Error> {
    let bytes = serde_json::to_vec_pretty(doc)
        .map_err(|e| hook_error(path, format!("cannot write it: {e}")))?;
    cairn_config::write_atomically(path, &bytes, cairn_config::Access::AsBefore)
        .map_err(|e| hook_error(path, format!("cannot write it: {e}")))
}

/// Current Codex runs hooks only with `[features] codex_hooks = true`.
fn enable_codex_hooks(config: &Path) -> Result<(), Error> {
    let text = std::fs::read_to_string(config).unwrap_or_default();
    if text.contains("codex_hooks") {
        return Ok(());
    }
    let updated = if let Some(at) = text.find("[features]") {
        let end = at + "[features]".len();
        format!("{}\ncodex_hooks = true{}", &text[..end], &text[end..])
    } else {
        format!(
            "{}{}[features]\ncodex_hooks = true\n",
            text,
            if text.is_empty() || text.ends_with('\n') {
                ""
            } else {
                "\n"
            }
        )
    };
    cairn_config::write_atomically(config, updated.as_bytes(), cairn_config::Access::AsBefore)
        .map_err(|e| hook_error(config, format!("cannot write it: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn our_entries_are_told_apart_from_others() {
        let ours = json!({"matcher": "", "hooks": [{"type": "command",
            "command": "'/opt/cairn/cairn' hook Stop --agent claude-code"}]});
        let other = json!({"matcher": "", "hooks": [{"type": "command", "command": "node x.js"}]});
        assert!(entry_is_ours("claude-code", &ours));
        assert!(!entry_is_ours("claude-code", &other));
        assert!(entry_is_ours(
            "cursor",
            &json!({"command": "'/opt/cairn/cairn' hook stop --agent cursor"})
        ));
        let plain = CairnCommand {
            exe: "/opt/cairn/cairn".into(),
            home: None,
        };
        assert_eq!(
            hook_command(&plain, "codex", "Stop"),
            "'/opt/cairn/cairn' hook Stop --agent codex"
        );
        let elsewhere = CairnCommand {
            home: Some("/data/cairn".into()),
            ..plain
        };
        let command = hook_command(&elsewhere, "codex", "Stop");
        assert_eq!(
            command,
            "'/opt/cairn/cairn' --home '/data/cairn' hook Stop --agent codex"
        );
        assert!(is_ours(&command));
    }

    #[test]
    fn an_unknown_agent_has_no_hooks() {
        assert!(matches!(
            install_hooks("gemini", &CairnCommand::new("/bin/cairn", Path::new("/x"))),
            Err(Error::UnknownSource(_))
        ));
        assert!(!hook_status("gemini").installed);
    }
}

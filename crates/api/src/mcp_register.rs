//! Cairn registered as an MCP server (`<cairn> mcp`) in other agents' own configs, so that they
//! use Cairn's memory without hooks: Claude Code (`~/.claude.json`, `mcpServers`), Cursor
//! (`~/.cursor/mcp.json`, `mcpServers`) and Codex (`config.toml`, `[mcp_servers.cairn]`). Edits are
//! atomic and idempotent, keep every other entry, and a removal takes out only Cairn's.

use std::path::{Path, PathBuf};

use cairn_importers::SourceEnv;
use serde_json::{json, Value};

use crate::hooks::CairnCommand;
use crate::Error;

/// The name Cairn's entry has in every agent's config.
const ENTRY: &str = "cairn";

/// Where `agent` keeps its MCP servers.
fn mcp_file(agent: &str) -> Result<PathBuf, Error> {
    let env = SourceEnv::from_process(Default::default());
    Ok(match agent {
        // Claude Code's user-scope servers live in .claude.json, in CLAUDE_CONFIG_DIR when set.
        "claude-code" => match std::env::var_os("CLAUDE_CONFIG_DIR").filter(|d| !d.is_empty()) {
            Some(dir) => PathBuf::from(dir).join(".claude.json"),
            None => env.home.join(".claude.json"),
        },
        "codex" => env.dir("CODEX_HOME", ".codex").join("config.toml"),
        "cursor" => env.home.join(".cursor").join("mcp.json"),
        other => {
            return Err(Error::UnknownSource(format!(
                "no MCP config for {other:?}: claude-code, codex or cursor"
            )))
        }
    })
}

fn config_error(path: &Path, what: impl std::fmt::Display) -> Error {
    Error::Hooks(format!("{}: {what}", path.display()))
}

/// Registers `<cairn> [--home DIR] mcp` as the MCP server `cairn` in `agent`'s config (replacing
/// an older registration); returns the file.
pub fn register_mcp(agent: &str, command: &CairnCommand) -> Result<PathBuf, Error> {
    edit(agent, Some(command))
}

/// Takes Cairn's MCP registration out of `agent`'s config; returns the file.
pub fn unregister_mcp(agent: &str) -> Result<PathBuf, Error> {
    edit(agent, None)
}

fn edit(agent: &str, install: Option<&CairnCommand>) -> Result<PathBuf, Error> {
    let path = mcp_file(agent)?;
    let existing = match std::fs::read_to_string(&path) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(config_error(&path, format!("cannot read it: {e}"))),
    };
    if existing.is_none() && install.is_none() {
        return Ok(path);
    }
    let text = existing.unwrap_or_default();
    let updated = if agent == "codex" {
        edit_toml(&path, &text, install)?
    } else {
        edit_json(&path, &text, install, agent == "claude-code")?
    };
    if updated == text {
        return Ok(path);
    }
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| config_error(&path, format!("cannot create its folder: {e}")))?;
    }
    cairn_config::write_atomically(&path, updated.as_bytes(), cairn_config::Access::AsBefore)
        .map_err(|e| config_error(&path, format!("cannot write it: {e}")))?;
    Ok(path)
}

fn edit_json(
    path: &Path,
    text: &str,
    install: Option<&CairnCommand>,
    typed: bool,
) -> Result<String, Error> {
    let mut doc: Value = if text.trim().is_empty() {
        json!({})
    } else {
        serde_json::from_str(text)
            .map_err(|e| config_error(path, format!("not valid JSON ({e}); fix it first")))?
    };
    if !doc.is_object() {
        return Err(config_error(path, "not a JSON object; fix it first"));
    }
    if !doc["mcpServers"].is_object() {
        doc["mcpServers"] = json!({});
    }
    if let Some(servers) = doc["mcpServers"].as_object_mut() {
        match install {
            Some(cairn) => {
                let mut args = cairn.home_args();
                args.push("mcp".to_owned());
                let mut entry = json!({"command": cairn.exe.to_string_lossy(), "args": args});
                if typed {
                    entry["type"] = json!("stdio");
                }
                servers.insert(ENTRY.to_owned(), entry);
            }
            None => {
                if servers.remove(ENTRY).is_none() {
                    return Ok(text.to_owned());
                }
            }
        }
    }
    serde_json::to_string_pretty(&doc)
        .map(|s| s + "\n")
        .map_err(|e| config_error(path, format!("cannot write it: {e}")))
}

fn edit_toml(path: &Path, text: &str, install: Option<&CairnCommand>) -> Result<String, Error> {
    let mut doc: toml_edit::DocumentMut = text
        .parse()
        .map_err(|e| config_error(path, format!("not valid TOML ({e}); fix it first")))?;
    if doc.get("mcp_servers").is_none() {
        let mut servers = toml_edit::Table::new();
        servers.set_implicit(true);
        doc["mcp_servers"] = toml_edit::Item::Table(servers);
    }
    let Some(servers) = doc["mcp_servers"].as_table_mut() else {
        return Err(config_error(
            path,
            "`mcp_servers` is not a table; fix it first",
        ));
    };
    match install {
        Some(cairn) => {
            let mut entry = toml_edit::Table::new();
            entry["command"] = toml_edit::value(cairn.exe.to_string_lossy().into_owned());
            let mut args = toml_edit::Array::new();
            for arg in cairn.home_args() {
                args.push(arg);
            }
            args.push("mcp");
            entry["args"] = toml_edit::value(args);
            servers.insert(ENTRY, toml_edit::Item::Table(entry));
        }
        None => {
            if servers.remove(ENTRY).is_none() {
                return Ok(text.to_owned());
            }
        }
    }
    Ok(doc.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_registration_is_idempotent_and_keeps_the_others() -> Result<(), Error> {
        let path = Path::new("/home/ada/.cursor/mcp.json");
        let before = r#"{"mcpServers": {"github": {"command": "gh-mcp"}}, "other": 1}"#;
        let exe = &CairnCommand {
            exe: "/usr/bin/cairn".into(),
            home: None,
        };
        let once = edit_json(path, before, Some(exe), false)?;
        let twice = edit_json(path, &once, Some(exe), false)?;
        assert_eq!(once, twice);
        let doc: Value = serde_json::from_str(&twice).map_err(|e| Error::Hooks(e.to_string()))?;
        assert_eq!(
            doc["mcpServers"]["cairn"],
            json!({"command": "/usr/bin/cairn", "args": ["mcp"]})
        );
        assert_eq!(doc["mcpServers"]["github"]["command"], "gh-mcp");
        assert_eq!(doc["other"], 1);
        let removed = edit_json(path, &twice, None, false)?;
        let doc: Value = serde_json::from_str(&removed).map_err(|e| Error::Hooks(e.to_string()))?;
        assert!(doc["mcpServers"].get("cairn").is_none());
        assert_eq!(doc["mcpServers"]["github"]["command"], "gh-mcp");
        assert!(edit_json(path, "{not json", Some(exe), false).is_err());
        // Nothing of Cairn's: the file is left exactly as it was.
        assert_eq!(edit_json(path, before, None, false)?, before);
        Ok(())
    }

    #[test]
    fn codex_toml_gets_one_table_and_keeps_its_comments() -> Result<(), Error> {
        let path = Path::new("/home/ada/.codex/config.toml");
        let before =
            "# my settings\nmodel = \"o3\"\n\n[mcp_servers.docs]\ncommand = \"docs-mcp\"\n";
        let exe = &CairnCommand {
            exe: "/usr/bin/cairn".into(),
            home: Some("/data/cairn".into()),
        };
        let once = edit_toml(path, before, Some(exe))?;
        let twice = edit_toml(path, &once, Some(exe))?;
        assert_eq!(once, twice);
        assert!(
            twice.starts_with("# my settings\nmodel = \"o3\""),
            "{twice}"
        );
        assert!(
            twice.contains("[mcp_servers.docs]\ncommand = \"docs-mcp\""),
            "{twice}"
        );
        assert!(
            twice.contains(
                "[mcp_servers.cairn]\ncommand = \"/usr/bin/cairn\"\nargs = [\"--home\", \"/data/cairn\", \"mcp\"]"
            ),
            "{twice}"
        );
        let removed = edit_toml(path, &twice, None)?;
        assert!(!removed.contains("cairn"), "{removed}");
        assert!(removed.contains("[mcp_servers.docs]"), "{removed}");
        Ok(())
    }
}

//! Rewriting keys of `config.toml` in place: the rest of the file (comments, order, other keys) is
//! kept as the person wrote it, and the new file replaces the old one atomically.

use std::path::Path;

use toml_edit::{DocumentMut, Item, Table};

use crate::ConfigError;

/// A value written to the config.
#[derive(Debug, Clone, PartialEq)]
pub enum EditValue {
    String(String),
    Bool(bool),
    Strings(Vec<String>),
    /// Written as an integer when it is whole.
    Number(f64),
}

/// One change: the key's path (`["providers", "local", "base_url"]`) and its new value, or `None`
/// to remove the key (or the whole table the path names).
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigEdit {
    pub path: Vec<String>,
    pub value: Option<EditValue>,
}

impl ConfigEdit {
    /// Sets the key at `path` to `value`.
    pub fn set(path: &[&str], value: EditValue) -> Self {
        Self {
            path: path.iter().map(|p| (*p).to_owned()).collect(),
            value: Some(value),
        }
    }

    /// Removes the key or table at `path`.
    pub fn remove(path: &[&str]) -> Self {
        Self {
            path: path.iter().map(|p| (*p).to_owned()).collect(),
            value: None,
        }
    }
}

fn invalid(file: &Path, message: String) -> ConfigError {
    ConfigError::Invalid {
        file: file.to_path_buf(),
        line: 1,
        message,
    }
}

/// Applies `edits` to config text; `file` only names the file in errors.
pub fn edit_config_text(
    text: &str,
    edits: &[ConfigEdit],
    file: &Path,
) -> Result<String, ConfigError> {
    let mut doc: DocumentMut = text.parse().map_err(|e: toml_edit::TomlError| {
        crate::errors::toml_error(text, file, e.message(), e.span())
    })?;
    for edit in edits {
        let Some((last, parents)) = edit.path.split_last() else {
            return Err(invalid(file, "an edit needs a key".into()));
        };
        match &edit.value {
            Some(value) => {
                let table = table_at(doc.as_table_mut(), parents, file, true)?
                    .ok_or_else(|| invalid(file, "cannot create the table".into()))?;
                table.insert(last, Item::Value(to_value(value)));
            }
            None => {
                if let Some(table) = table_at(doc.as_table_mut(), parents, file, false)? {
                    table.remove(last);
                }
                prune_empty(doc.as_table_mut(), parents);
            }
        }
    }
    Ok(doc.to_string())
}

/// The table at `path` (created when `create`; parents of nested tables stay implicit).
fn table_at<'a>(
    mut table: &'a mut Table,
    path: &[String],
    file: &Path,
    create: bool,
) -> Result<Option<&'a mut Table>, ConfigError> {
    for (depth, key) in path.iter().enumerate() {
        if !table.contains_key(key) {
            if !create {
                return Ok(None);
            }
            let mut new = Table::new();
            // `[providers.local]` rather than an empty `[providers]` header above it.
            new.set_implicit(depth + 1 < path.len());
            table.insert(key, Item::Table(new));
        }
        let item = table
            .get_mut(key)
            .ok_or_else(|| invalid(file, format!("`{key}` vanished")))?;
        if let Item::Value(toml_edit::Value::InlineTable(_)) = item {
            let inline = std::mem::take(item);
            if let Item::Value(toml_edit::Value::InlineTable(inline)) = inline {
                *item = Item::Table(inline.into_table());
            }
        }
        table = match item {
            Item::Table(t) => t,
            _ => {
                return Err(invalid(
                    file,
                    format!("`{}` is not a table", path[..=depth].join(".")),
                ))
            }
        };
    }
    Ok(Some(table))
}

/// Removes tables along `path` left empty, deepest first (a `[voice]` with nothing in it is noise).
fn prune_empty(root: &mut Table, path: &[String]) {
    for len in (1..=path.len()).rev() {
        let (last, parents) = match path[..len].split_last() {
            Some(split) => split,
            None => return,
        };
        let mut table = &mut *root;
        for key in parents {
            match table.get_mut(key) {
                Some(Item::Table(t)) => table = t,
                _ => return,
            }
        }
        let empty = matches!(table.get(last), Some(Item::Table(t)) if t.is_empty());
        if empty {
            table.remove(last);
        }
    }
}

fn to_value(value: &EditValue) -> toml_edit::Value {
    match value {
        EditValue::String(s) => toml_edit::Value::from(s.as_str()),
        EditValue::Bool(b) => toml_edit::Value::from(*b),
        EditValue::Strings(items) => {
            let mut array = toml_edit::Array::new();
            for item in items {
                array.push(item.as_str());
            }
            toml_edit::Value::Array(array)
        }
        EditValue::Number(n) if n.fract() == 0.0 && n.abs() < 1e15 => {
            toml_edit::Value::from(*n as i64)
        }
        EditValue::Number(n) => toml_edit::Value::from(*n),
    }
}

/// Applies `edits` to the config file at `path` (a missing file starts empty), checks the result with
/// `validate` (nothing is written when it fails), and replaces the file atomically.
pub fn update_config_file(
    path: &Path,
    edits: &[ConfigEdit],
    validate: impl FnOnce(&str) -> Result<(), ConfigError>,
) -> Result<(), ConfigError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(ConfigError::io(path, e)),
    };
    let new = edit_config_text(&text, edits, path)?;
    validate(&new)?;
    crate::write_private_atomically(path, new.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Config;

    const FILE: &str = "# my config\n[agent]\nmodel = \"a/x\" # the usual\nyolo = false\n\n[providers.a]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:1/v1\"\nmodels = [\"x\"]\n";

    fn edit(text: &str, edits: &[ConfigEdit]) -> Result<String, ConfigError> {
        edit_config_text(text, edits, Path::new("config.toml"))
    }

    #[test]
    fn setting_one_key_keeps_the_rest_of_the_file() -> Result<(), ConfigError> {
        let out = edit(
            FILE,
            &[ConfigEdit::set(
                &["log", "level"],
                EditValue::String("debug".into()),
            )],
        )?;
        assert!(out.starts_with(FILE.trim_end()), "{out}");
        assert!(out.contains("[log]\nlevel = \"debug\""), "{out}");
        let config = Config::parse(&out, Path::new("c.toml"), |_| None)?;
        assert_eq!(config.log_level, crate::LogLevel::Debug);
        assert!(!config.agent.yolo);
        Ok(())
    }

    #[test]
    fn replacing_a_value_keeps_comments() -> Result<(), ConfigError> {
        let out = edit(
            FILE,
            &[ConfigEdit::set(
                &["agent", "model"],
                EditValue::String("a/y".into()),
            )],
        )?;
        assert!(out.contains("# my config"), "{out}");
        assert!(out.contains("model = \"a/y\""), "{out}");
        assert!(out.contains("yolo = false"), "{out}");
        Ok(())
    }

    #[test]
    fn a_new_provider_is_a_dotted_table() -> Result<(), ConfigError> {
        let out = edit(
            "",
            &[
                ConfigEdit::set(
                    &["providers", "mock", "kind"],
                    EditValue::String("openai".into()),
                ),
                ConfigEdit::set(
                    &["providers", "mock", "models"],
                    EditValue::Strings(vec!["m1".into(), "m2".into()]),
                ),
            ],
        )?;
        assert!(out.contains("[providers.mock]"), "{out}");
        assert!(!out.contains("[providers]\n"), "{out}");
        let config = Config::parse(&out, Path::new("c.toml"), |_| None)?;
        assert_eq!(config.providers["mock"].models, vec!["m1", "m2"]);
        Ok(())
    }

    #[test]
    fn removing_a_table_and_emptied_parents() -> Result<(), ConfigError> {
        let out = edit(
            FILE,
            &[
                ConfigEdit::remove(&["providers", "a"]),
                ConfigEdit::remove(&["agent", "model"]),
            ],
        )?;
        assert!(!out.contains("providers"), "{out}");
        assert!(!out.contains("model ="), "{out}");
        assert!(out.contains("yolo = false"), "{out}");
        // Removing what is not there is not an error.
        edit(FILE, &[ConfigEdit::remove(&["voice", "model"])])?;
        Ok(())
    }

    #[test]
    fn inline_tables_are_edited_too() -> Result<(), ConfigError> {
        let out = edit(
            "voice = { model = \"base\" }\n",
            &[ConfigEdit::set(
                &["voice", "language"],
                EditValue::String("fr".into()),
            )],
        )?;
        let config = Config::parse(&out, Path::new("c.toml"), |_| None)?;
        assert_eq!(config.voice.model, "base");
        assert_eq!(config.voice.language, "fr");
        Ok(())
    }

    #[test]
    fn a_key_that_is_not_a_table_is_an_error() {
        let err = edit(
            "agent = 3\n",
            &[ConfigEdit::set(&["agent", "model"], EditValue::Bool(true))],
        );
        assert!(matches!(err, Err(ConfigError::Invalid { .. })), "{err:?}");
    }

    #[test]
    fn the_file_is_written_only_when_valid() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("config.toml");
        std::fs::write(&path, FILE)?;
        let check = |text: &str| Config::parse(text, Path::new("c.toml"), |_| None).map(|_| ());
        let bad = update_config_file(
            &path,
            &[ConfigEdit::set(
                &["log", "level"],
                EditValue::String("loud".into()),
            )],
            check,
        );
        assert!(bad.is_err());
        assert_eq!(std::fs::read_to_string(&path)?, FILE);
        update_config_file(
            &path,
            &[ConfigEdit::set(
                &["ui", "theme"],
                EditValue::String("dark".into()),
            )],
            check,
        )?;
        assert!(std::fs::read_to_string(&path)?.contains("[ui]\ntheme = \"dark\""));
        // A missing file starts empty.
        let fresh = dir.path().join("new.toml");
        update_config_file(
            &fresh,
            &[ConfigEdit::set(
                &["pet", "shortcut"],
                EditValue::String("Alt+Space".into()),
            )],
            check,
        )?;
        assert_eq!(
            std::fs::read_to_string(&fresh)?,
            "[pet]\nshortcut = \"Alt+Space\"\n"
        );
        Ok(())
    }
}

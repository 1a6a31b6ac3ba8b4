//! The UI's two languages: English (the text in the source) and Simplified Chinese (a table keyed
//! by that English text). The language is chosen in Settings and applies when a window loads.

use std::cell::Cell;
use std::collections::HashMap;
use std::sync::OnceLock;

mod zh;
mod zh_folders;
mod zh_review;
mod zh_workbench;

thread_local! {
    /// The UI runs on one thread (wasm); tests each get their own.
    static CHINESE: Cell<bool> = const { Cell::new(false) };
}

/// The languages offered in Settings: code and name (in that language).
pub const LANGUAGES: [(&str, &str); 2] = [("en", "English"), ("zh-CN", "简体中文")];

/// Chooses the language the windows show (`en` or `zh-CN`; anything else is English).
pub fn set_language(code: &str) {
    CHINESE.set(is_chinese(code));
}

/// Whether `code` names Simplified Chinese.
pub fn is_chinese(code: &str) -> bool {
    matches!(
        code.to_ascii_lowercase().as_str(),
        "zh" | "zh-cn" | "zh-hans" | "zh_cn"
    )
}

/// The current language's code, for `<html lang>`.
pub fn language() -> &'static str {
    if CHINESE.get() {
        "zh-CN"
    } else {
        "en"
    }
}

/// Every Chinese entry: the pages' and the workbench's.
fn entries() -> impl Iterator<Item = (&'static str, &'static str)> {
    zh::ZH
        .iter()
        .chain(zh_workbench::ZH_WORKBENCH)
        .chain(zh_review::ZH_REVIEW)
        .chain(zh_folders::ZH_FOLDERS)
        .copied()
}

fn table() -> &'static HashMap<&'static str, &'static str> {
    static TABLE: OnceLock<HashMap<&'static str, &'static str>> = OnceLock::new();
    TABLE.get_or_init(|| entries().collect())
}

/// `english` in the current language (itself when there is no translation).
pub fn t(english: &'static str) -> &'static str {
    if !CHINESE.get() {
        return english;
    }
    table().get(english).copied().unwrap_or(english)
}

/// A text that comes from elsewhere (e.g. the model catalogue's descriptions) in the current
/// language, when the table has it; else as it is.
pub fn t_known(english: &str) -> String {
    if !CHINESE.get() {
        return english.to_owned();
    }
    table().get(english).copied().unwrap_or(english).to_owned()
}

/// [`t`] with `{name}` placeholders filled in, e.g. `tf("{n} tasks", &[("n", "3")])`.
pub fn tf(english: &'static str, args: &[(&str, &str)]) -> String {
    let mut text = t(english).to_owned();
    for (name, value) in args {
        text = text.replace(&format!("{{{name}}}"), value);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn placeholders(text: &str) -> Vec<&str> {
        let mut found: Vec<&str> = text
            .split('{')
            .skip(1)
            .filter_map(|rest| rest.split_once('}').map(|(name, _)| name))
            .collect();
        found.sort_unstable();
        found
    }

    #[test]
    fn every_entry_is_unique_and_keeps_its_placeholders() {
        let mut seen = std::collections::HashSet::new();
        for (english, chinese) in entries() {
            assert!(seen.insert(english), "{english:?} is in the table twice");
            assert!(
                !chinese.trim().is_empty(),
                "{english:?} has an empty translation"
            );
            assert_eq!(
                placeholders(english),
                placeholders(chinese),
                "{english:?} → {chinese:?} changes the placeholders"
            );
        }
    }

    /// The string literals passed to `t(` and `tf(` in `code` (unescaped).
    fn literals(code: &str) -> Vec<String> {
        let mut found = Vec::new();
        for opener in ["t(", "tf("] {
            for (at, _) in code.match_indices(opener) {
                let before = code[..at].chars().next_back();
                if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                    continue;
                }
                let rest = code[at + opener.len()..].trim_start();
                let Some(rest) = rest.strip_prefix('"') else {
                    continue;
                };
                let mut literal = String::new();
                let mut chars = rest.chars();
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' => match chars.next() {
                            Some('n') => literal.push('\n'),
                            Some(other) => literal.push(other),
                            None => break,
                        },
                        c => literal.push(c),
                    }
                }
                found.push(literal);
            }
        }
        found
    }

    #[test]
    fn literals_are_read_whole() {
        let code = "t(\"A \\\"b\\\"\") + tf(\n  \"{n} x\", &[(\"n\", \"3\")]); format!(\"y\")";
        assert_eq!(literals(code), ["A \"b\"", "{n} x"]);
    }

    /// Every `t("…")` / `tf("…"` in the UI's source has a Chinese entry.
    #[test]
    fn every_text_the_ui_shows_is_translated() -> std::io::Result<()> {
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut missing = Vec::new();
        // Every source file, in the folders of the page modules too.
        let mut files = Vec::new();
        let mut folders = vec![src];
        while let Some(folder) = folders.pop() {
            for entry in std::fs::read_dir(&folder)? {
                let path = entry?.path();
                if path.is_dir() && path.file_name().is_some_and(|n| n != "i18n") {
                    folders.push(path);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    files.push(path);
                }
            }
        }
        assert!(files.len() > 10, "only {} source files found", files.len());
        for path in files {
            let code = std::fs::read_to_string(&path)?;
            if path.file_name().is_some_and(|n| n == "i18n.rs") {
                continue;
            }
            for literal in literals(&code) {
                if !table().contains_key(literal.as_str()) {
                    missing.push(format!("{}: {literal}", path.display()));
                }
            }
        }
        assert!(missing.is_empty(), "untranslated:\n{}", missing.join("\n"));
        Ok(())
    }

    #[test]
    fn the_language_switch_picks_the_table() {
        set_language("zh-CN");
        assert_eq!(t("Settings"), "设置");
        assert_eq!(tf("{n} tasks", &[("n", "3")]), "3 个任务");
        assert_eq!(t("a text nobody translated"), "a text nobody translated");
        set_language("en");
        assert_eq!(t("Settings"), "Settings");
        assert_eq!(language(), "en");
    }
}

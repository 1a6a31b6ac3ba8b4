//! Whether a turn of a small model on this device is offered tools at all. Such a model calls
//! a tool for whatever it is offered one for — it "saves" a fact it was told with `echo`, lists
//! files to answer a greeting — and reading the tool schemas costs it seconds before the first
//! word. So its turns get tools only when the person's words ask for work on files or commands
//! (a path or file name, or a word for a file, a folder or running something), or when the
//! conversation is already doing such work, or the words name a file of the folder it works in.
//! Larger models always get them.

use std::path::Path;

use cairn_llm::{Message, Role};

/// Words that ask for files, folders or commands (English and Chinese).
const WORK_WORDS: &[&str] = &[
    "file",
    "files",
    "folder",
    "folders",
    "directory",
    "directories",
    "dir",
    "repo",
    "repository",
    "run",
    "execute",
    "shell",
    "terminal",
    "bash",
    "script",
    "install",
    "installed",
    "compile",
    "build",
    "git",
    "commit",
    "grep",
    "ls",
    "cd",
    "mkdir",
    "edit",
    "rename",
    "delete",
];

const WORK_WORDS_ZH: &[&str] = &[
    "文件",
    "目录",
    "文件夹",
    "运行",
    "执行",
    "命令",
    "终端",
    "脚本",
    "安装",
    "编译",
    "仓库",
    "删除",
    "重命名",
    "编辑",
];

/// Whether this turn offers tools: always unless `compact`; for a compact profile, when `text`
/// asks for work on files or commands, or it names a file of the folder (`names_files`), or
/// `history` already holds a tool call.
pub(crate) fn offers_tools(
    compact: bool,
    text: &str,
    names_files: bool,
    history: &[Message],
) -> bool {
    !compact
        || asks_for_work(text)
        || names_files
        || history
            .iter()
            .any(|m| m.role == Role::Assistant && !m.tool_calls.is_empty())
}

/// Whether `request` names a file or folder that is in `folder` ("notes.txt", "src/app.py",
/// ".gitignore"): a word with a dot or a slash in it, stripped of quotes and punctuation.
pub(crate) fn names_files(request: &str, folder: &Path) -> bool {
    request
        .split(|c: char| c.is_whitespace() || matches!(c, '`' | '\'' | '"' | ',' | '(' | ')'))
        .map(|word| word.trim_end_matches(['.', ',', ':', ';', '?', '!']))
        .filter(|word| word.len() > 1 && (word.contains('.') || word.contains('/')))
        .filter(|word| !word.starts_with('/') && !word.contains(".."))
        .any(|word| folder.join(word).exists())
}

/// Whether the person's words name a file or path or ask for files, folders or commands.
fn asks_for_work(text: &str) -> bool {
    if WORK_WORDS_ZH.iter().any(|w| text.contains(w)) || text.contains("```") {
        return true;
    }
    text.split_whitespace().any(|raw| {
        let word = raw.trim_matches(|c: char| !c.is_alphanumeric() && !"/._-~".contains(c));
        let word = word.trim_end_matches('.');
        let lower = word.to_lowercase();
        WORK_WORDS.contains(&lower.as_str()) || is_path(word)
    })
}

/// `notes.txt`, `src/lib.rs`, `./run`, `~/x`: a name with an extension, or with a slash between
/// names. Numbers (`10.0.3.7`, `3.5`) and abbreviations (`e.g`) are not.
fn is_path(word: &str) -> bool {
    let has_letters = |s: &str| s.chars().any(|c| c.is_alphabetic());
    if word.starts_with("./") || word.starts_with("~/") || word.starts_with("../") {
        return true;
    }
    // A dotfile: `.gitignore`, `.env`.
    if let Some(name) = word.strip_prefix('.') {
        if name.len() > 1
            && has_letters(name)
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c))
        {
            return true;
        }
    }
    if let Some((left, right)) = word.split_once('/') {
        if has_letters(left) && has_letters(right) && !word.contains("://") {
            return true;
        }
    }
    match word.rsplit_once('.') {
        Some((name, ext)) => {
            name.chars().count() > 1
                && has_letters(name)
                && (1..=5).contains(&ext.len())
                && ext.chars().all(|c| c.is_ascii_alphanumeric())
                && ext.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_paths_and_commands_are_work() {
        for text in [
            "Use the write_file tool to create the file notes.txt with the content: buy milk",
            "Make todo.md with three items",
            "What does src/lib.rs do?",
            "Run the tests and tell me what fails",
            "List what is in this folder",
            "Put 'hello' in ./greeting",
            "Add the line 'node_modules/' to .gitignore.",
            "Which Python version is installed on this machine?",
            "```\nfn main() {}\n```\nwhy does this not compile?",
            "创建一个文件 notes.txt",
            "运行测试",
        ] {
            assert!(asks_for_work(text), "{text}");
        }
    }

    #[test]
    fn facts_questions_and_chat_are_not() {
        for text in [
            "Remember this: our staging server's IP address is 10.0.3.7.",
            "My dog's name is Biscuit.",
            "What is the capital of France? Answer in one word.",
            "How do we deploy this project?",
            "For this project we deploy with the command: make ship-prod",
            "Write a haiku about autumn, e.g. with leaves.",
            "Is https://example.com/docs a good page?",
            "Python 3.12 came out when?",
            "我的狗叫什么名字？",
        ] {
            assert!(!asks_for_work(text), "{text}");
        }
    }

    #[test]
    fn a_conversation_that_called_tools_keeps_them_and_larger_models_always_have_them() {
        let mut call = Message::new(Role::Assistant, "");
        call.tool_calls = vec![cairn_llm::ToolCall {
            id: "c1".into(),
            name: "bash".into(),
            arguments: "{}".into(),
        }];
        assert!(offers_tools(true, "now do it again", false, &[call]));
        assert!(!offers_tools(true, "thanks!", false, &[]));
        assert!(offers_tools(false, "thanks!", false, &[]));
    }

    #[test]
    fn a_file_of_the_folder_named_in_any_words_is_work() -> std::io::Result<()> {
        let folder = tempfile::tempdir()?;
        std::fs::write(folder.path().join("Makefile.am"), "")?;
        std::fs::create_dir(folder.path().join("docs"))?;
        std::fs::write(folder.path().join("docs").join("plan"), "")?;
        assert!(names_files("What does Makefile.am say?", folder.path()));
        assert!(names_files("Summarise `docs/plan`, please.", folder.path()));
        assert!(!names_files("What does notes.txt say?", folder.path()));
        assert!(!names_files("Read /etc/passwd or ../x.txt", folder.path()));
        Ok(())
    }
}

//! The set of tools a session declares, chosen by options (agent-tools.md "Declared when …").

use std::path::PathBuf;
use std::sync::Arc;

use crate::ask::AskUser;
use crate::{
    Bash, Declaration, EditFile, FetchContent, ReadFile, ReadSkill, SaveAnswer, Tool, WriteFile,
};

/// Which built-ins are declared.
#[derive(Debug, Clone)]
pub struct ToolboxOptions {
    /// `bashTool` (default true).
    pub bash: bool,
    /// `editTools`: read_file, write_file, edit_file (default true).
    pub edit_tools: bool,
    /// `askUserTool` (default true).
    pub ask_user: bool,
    /// `saveAnswerTool` (default false).
    pub save_answer: bool,
    /// `fetchContentTool`: web pages as Markdown (Cairn's default: on).
    pub fetch_content: bool,
    /// `skillsDir`: read_skill is declared when it holds a skill.
    pub skills_dir: Option<PathBuf>,
}

impl Default for ToolboxOptions {
    fn default() -> Self {
        Self {
            bash: true,
            edit_tools: true,
            ask_user: true,
            save_answer: false,
            fetch_content: true,
            skills_dir: None,
        }
    }
}

#[derive(Clone, Default)]
pub struct Toolbox {
    tools: Vec<Arc<dyn Tool>>,
}

impl Toolbox {
    pub fn new(options: &ToolboxOptions) -> Self {
        let mut toolbox = Self::default();
        if options.bash {
            toolbox.add(Arc::new(Bash));
        }
        if let Some(skills) = options.skills_dir.as_deref().and_then(ReadSkill::load) {
            toolbox.add(Arc::new(skills));
        }
        if options.edit_tools {
            toolbox.add(Arc::new(ReadFile));
            toolbox.add(Arc::new(WriteFile));
            toolbox.add(Arc::new(EditFile));
        }
        if options.ask_user {
            toolbox.add(Arc::new(AskUser));
        }
        if options.save_answer {
            toolbox.add(Arc::new(SaveAnswer));
        }
        if options.fetch_content {
            toolbox.add(Arc::new(FetchContent::default()));
        }
        toolbox
    }

    /// Adds (or replaces, by name) a tool.
    pub fn add(&mut self, tool: Arc<dyn Tool>) {
        self.tools.retain(|t| t.name() != tool.name());
        self.tools.push(tool);
    }

    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.tools.iter().find(|t| t.name() == name)
    }

    pub fn names(&self) -> Vec<&str> {
        self.tools.iter().map(|t| t.name()).collect()
    }

    pub fn declarations(&self) -> Vec<Declaration> {
        self.tools.iter().map(|t| t.declaration()).collect()
    }

    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }
}

//! The set of tools a session declares, chosen by options (agent-tools.md "Declared when …").

use std::path::PathBuf;
use std::sync::Arc;

use crate::ask::AskUser;
use crate::{
    Bash, Declaration, EditFile, FetchContent, JobList, JobOutput, JobStop, Protected, ReadFile,
    ReadSkill, SaveAnswer, Tool, WriteFile,
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
    /// Where a read always asks first when `yolo` is off (Cairn's home, `~/.ssh`, …).
    pub protected: Protected,
    /// `[agent] fetch_allow_hosts`: hosts fetch_content reads without asking, private addresses
    /// included.
    pub fetch_allow_hosts: Vec<String>,
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
            protected: Protected::default(),
            fetch_allow_hosts: Vec::new(),
        }
    }
}

/// Tools that come and go while a session runs (an MCP server's, once it has started).
pub trait ToolSource: Send + Sync {
    /// The tools available now.
    fn tools(&self) -> Vec<Arc<dyn Tool>>;
    /// Waits a little for tools still on their way (a server starting), before a turn's first
    /// step; never long.
    fn settle(&self) -> BoxFuture<'_, ()>;
    /// Instructions that come with the tools, as `(origin, text)` (an MCP server's).
    fn instructions(&self) -> Vec<(String, String)> {
        Vec::new()
    }
}

/// A boxed future of a tool source.
pub type BoxFuture<'a, T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send + 'a>>;

#[derive(Clone, Default)]
pub struct Toolbox {
    tools: Vec<Arc<dyn Tool>>,
    sources: Vec<Arc<dyn ToolSource>>,
    /// Set by [`Toolbox::restrict`]: only tools these patterns name are offered, the sources'
    /// included.
    allowed: Option<Arc<[String]>>,
}

/// Whether `pattern` names `tool`: the name itself, `*` for every tool, or a prefix ending in `*`
/// (`mcp__github__*`).
fn names(pattern: &str, tool: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(prefix) => tool.starts_with(prefix),
        None => pattern == tool,
    }
}

impl Toolbox {
    pub fn new(options: &ToolboxOptions) -> Self {
        let mut toolbox = Self::default();
        if options.bash {
            toolbox.add(Arc::new(Bash));
            toolbox.add(Arc::new(JobList));
            toolbox.add(Arc::new(JobOutput));
            toolbox.add(Arc::new(JobStop));
        }
        if let Some(skills) = options.skills_dir.as_deref().and_then(ReadSkill::load) {
            toolbox.add(Arc::new(skills));
        }
        if options.edit_tools {
            toolbox.add(Arc::new(ReadFile {
                protected: options.protected.clone(),
            }));
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
            toolbox.add(Arc::new(FetchContent::new(
                options.fetch_allow_hosts.clone(),
            )));
        }
        toolbox
    }

    /// Adds (or replaces, by name) a tool.
    pub fn add(&mut self, tool: Arc<dyn Tool>) {
        self.tools.retain(|t| t.name() != tool.name());
        self.tools.push(tool);
    }

    /// Keeps only the tools named in `names` (an asked agent's `tools`); the sources' tools (the
    /// person's MCP servers) stay.
    pub fn retain(&mut self, names: &[String]) {
        self.tools.retain(|t| names.iter().any(|n| n == t.name()));
    }

    /// Offers only the tools `patterns` name (see [`names`]), whichever way they came: what a
    /// caller of the OpenAI-compatible API was granted.
    pub fn restrict(&mut self, patterns: &[String]) {
        self.allowed = Some(patterns.iter().map(|p| p.trim().to_owned()).collect());
    }

    fn is_allowed(&self, tool: &str) -> bool {
        self.allowed
            .as_ref()
            .is_none_or(|patterns| patterns.iter().any(|p| names(p, tool)))
    }

    /// Adds tools that may change between steps; a built-in keeps its name over a source's tool.
    pub fn add_source(&mut self, source: Arc<dyn ToolSource>) {
        self.sources.push(source);
    }

    /// Waits (briefly) for every source's tools still on their way.
    pub async fn settle(&self) {
        for source in &self.sources {
            source.settle().await;
        }
    }

    /// Every source's instructions, as `(origin, text)`.
    pub fn instructions(&self) -> Vec<(String, String)> {
        self.sources.iter().flat_map(|s| s.instructions()).collect()
    }

    /// Every tool now: the built-ins, then the sources' (a name already taken is skipped).
    fn all(&self) -> Vec<Arc<dyn Tool>> {
        let mut all = self.tools.clone();
        for source in &self.sources {
            for tool in source.tools() {
                if !all.iter().any(|t| t.name() == tool.name()) {
                    all.push(tool);
                }
            }
        }
        all.retain(|t| self.is_allowed(t.name()));
        all
    }

    pub fn get(&self, name: &str) -> Option<Arc<dyn Tool>> {
        if !self.is_allowed(name) {
            return None;
        }
        if let Some(tool) = self.tools.iter().find(|t| t.name() == name) {
            return Some(tool.clone());
        }
        self.sources
            .iter()
            .flat_map(|s| s.tools())
            .find(|t| t.name() == name)
    }

    pub fn names(&self) -> Vec<String> {
        self.all().iter().map(|t| t.name().to_owned()).collect()
    }

    pub fn declarations(&self) -> Vec<Declaration> {
        self.all().iter().map(|t| t.declaration()).collect()
    }

    pub fn is_empty(&self) -> bool {
        self.all().is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_restricted_toolbox_offers_only_what_its_patterns_name() {
        let mut toolbox = Toolbox::new(&ToolboxOptions::default());
        assert!(toolbox.get("bash").is_some());
        toolbox.restrict(&["read_file".to_owned(), "job_*".to_owned()]);
        assert!(toolbox.get("bash").is_none(), "bash was not granted");
        assert!(toolbox.get("write_file").is_none());
        assert!(toolbox.get("read_file").is_some());
        let mut names = toolbox.names();
        names.sort();
        assert_eq!(names, ["job_list", "job_output", "job_stop", "read_file"]);
        toolbox.restrict(&[]);
        assert!(toolbox.is_empty());
    }
}

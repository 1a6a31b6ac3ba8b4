//! The counters shown after a turn (agent-tools.md "Counters shown after a turn").

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Counter {
    /// `bash` responses.
    Command,
    /// `read_file`, `write_file`, `edit_file` responses.
    FileOp,
    /// `read_skill` responses.
    Skill,
    /// `lsp` responses.
    Lsp,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counters {
    pub commands: usize,
    pub file_ops: usize,
    pub skills: usize,
    pub lsp_calls: usize,
}

impl Counters {
    pub fn add(&mut self, counter: Counter) {
        match counter {
            Counter::Command => self.commands += 1,
            Counter::FileOp => self.file_ops += 1,
            Counter::Skill => self.skills += 1,
            Counter::Lsp => self.lsp_calls += 1,
        }
    }

    /// The recap line (`⚙ 2 command(s) · 📝 1 file op(s)`), or `None` when nothing was counted.
    pub fn recap(&self) -> Option<String> {
        let parts: Vec<String> = [
            (self.commands, "⚙", "command(s)"),
            (self.file_ops, "📝", "file op(s)"),
            (self.skills, "📖", "skill(s)"),
            (self.lsp_calls, "🔎", "lsp call(s)"),
        ]
        .into_iter()
        .filter(|(n, _, _)| *n > 0)
        .map(|(n, icon, what)| format!("{icon} {n} {what}"))
        .collect();
        (!parts.is_empty()).then(|| parts.join(" · "))
    }
}

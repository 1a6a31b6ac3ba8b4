//! One module per agent; [`all`] lists them in the order `cairn sources list` shows them.

mod claude_code;
mod codex;
mod cursor;
mod gemini;
mod hermes;
mod openclaw;
mod opencode;
mod pi;
mod sqlite;
mod workbuddy;

use crate::{HistorySource, SourceEnv};

pub use claude_code::ClaudeCode;
pub use codex::Codex;
pub use cursor::{CursorAgent, CursorIde};
pub use gemini::Gemini;
pub use hermes::Hermes;
pub use openclaw::OpenClaw;
pub use opencode::OpenCode;
pub use pi::Pi;
pub use workbuddy::WorkBuddy;

/// Every known source, resolved in `env`.
pub fn all(env: &SourceEnv) -> Vec<Box<dyn HistorySource>> {
    vec![
        Box::new(ClaudeCode::new(env)),
        Box::new(Codex::new(env)),
        Box::new(CursorIde::new(env)),
        Box::new(CursorAgent::new(env)),
        Box::new(OpenCode::new(env)),
        Box::new(Gemini::new(env)),
        Box::new(Hermes::new(env)),
        Box::new(OpenClaw::new(env)),
        Box::new(Pi::new(env)),
        Box::new(WorkBuddy::new(env)),
        Box::new(ClaudeCode::qwenwork(env)),
    ]
}

//! Importers against the shared fixtures in `../shared/eval/transcripts/` (read in place, never
//! copied) and small fixtures of our own: each test owns its expected turns.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod claude_code;
mod codex;
mod cursor;
mod fuzz;
mod gemini;
mod hermes;
mod openclaw;
mod opencode;
mod pi;
mod workbuddy;

use std::path::PathBuf;

/// A file of the shared evaluation fixtures.
pub fn shared(relative: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/eval/transcripts")
        .join(relative)
}

/// An environment whose home is `home` (nothing else set).
pub fn env_at(home: &std::path::Path) -> cairn_importers::SourceEnv {
    cairn_importers::SourceEnv {
        home: home.to_path_buf(),
        ..Default::default()
    }
}

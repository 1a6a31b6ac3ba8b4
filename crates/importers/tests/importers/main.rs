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

/// A file of the shared evaluation fixtures: `$CAIRN_EVAL_DIR/transcripts/…`, else the
/// `shared/eval` folder beside this checkout.
pub fn shared(relative: &str) -> PathBuf {
    let eval = std::env::var_os("CAIRN_EVAL_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/eval"));
    eval.join("transcripts").join(relative)
}

/// An environment whose home is `home` (nothing else set).
pub fn env_at(home: &std::path::Path) -> cairn_importers::SourceEnv {
    cairn_importers::SourceEnv {
        home: home.to_path_buf(),
        ..Default::default()
    }
}

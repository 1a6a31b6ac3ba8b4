//! The HTTP API as a client sees it: the guards on every route, and a real server on loopback.

mod caps;
mod guards;
mod hardening;
mod mcp;
mod mcp_conformance;
mod memory;
mod openai;
mod server;
mod tasks;

use std::path::Path;
use std::sync::Arc;

use cairn_api::chat::Chat;
use cairn_api::Cairn;
use cairn_config::Home;
use cairn_http::{app, AppState, Token};
use cairn_protocol::RuntimeInfo;

/// The app over the home at `home` (no environment), answering `token`, with its own chat.
pub fn test_app(home: &Path, token: &str) -> axum::Router {
    let cairn = Cairn::with_env(Home::at(home), Arc::new(|_: &str| None));
    let chat = Arc::new(Chat::new(cairn.clone(), home.to_path_buf()));
    let serving = RuntimeInfo {
        api_url: "http://127.0.0.1:9".into(),
        token: token.into(),
        pid: 1,
    };
    app(AppState::new(
        cairn,
        Token::from_string(token),
        serving,
        chat,
    ))
}

//! The local HTTP API. [`app`] builds the axum router over `cairn-api` with its guards (loopback Host,
//! no foreign Origin, bearer token); [`serve`] binds it on 127.0.0.1 with a fresh token and publishes
//! `runtime.json` for the CLI and hooks.

mod caps;
mod guard;
mod memory_routes;
mod openai_routes;
mod routes;
mod server;
mod task_routes;

pub use caps::{MAX_EVENT_STREAMS, MAX_KEY_COMPLETIONS, MAX_MCP_SESSIONS, MAX_RUNNING_TASKS};
pub use guard::Token;
pub use routes::{app, AppState};
pub use server::{serve, HttpError, RunningApi};

//! The agent runtime. [`Runtime::submit`] takes an [`Op`] and returns a stream of [`Event`]s; it
//! knows nothing of Tauri or HTTP. Each turn recalls relevant memories before the request, runs the
//! model step by step (with the spec's step backstop, wrap-up and nudges), and captures the turn
//! into memory when it ends.

mod prompt;
mod runtime;
mod sessions;
mod texts;

pub use runtime::{AgentSettings, Event, Op, Runtime};
pub use sessions::{title_of, Session, SessionError, SessionStore};
pub use texts::{NUDGE_CUT_OFF, NUDGE_THINKING_ONLY, WRAP_UP};

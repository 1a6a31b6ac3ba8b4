//! Wire and domain types shared by the UI (wasm) and the backend: what the API, the Tauri commands and
//! the CLI exchange. Plain serde data, no behaviour beyond small formatting helpers.

#[macro_use]
mod wire_enum;

mod chat;
mod error;
mod models;
mod sources;
mod status;
mod tasks;

pub mod calendar;
pub mod memory;
pub mod openai;
pub mod schedule;
pub mod settings;
pub mod sync;

pub use chat::*;
pub use error::*;
pub use models::*;
pub use sources::*;
pub use status::*;
pub use tasks::*;

#[cfg(test)]
mod wire_tags;

//! The memory crate's data — layers, statuses, records, queries and explained hits — defined once in
//! `cairn-protocol`, since the UI, the HTTP API and the CLI all see them.

pub use cairn_protocol::memory::*;

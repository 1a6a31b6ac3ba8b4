//! The HTTP API as a client sees it: the guards on every route, and a real server on loopback.

mod guards;
mod memory;
mod server;

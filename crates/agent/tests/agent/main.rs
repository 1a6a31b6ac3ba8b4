//! The runtime against the scripted mock model server: events out, requests in, memory around.

mod conformance;
mod folders;
mod honesty;
mod jobs;
mod support;
mod turns;
mod unload;
mod web;

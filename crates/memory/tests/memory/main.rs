//! The memory store as its callers use it: writes, recall, capture, and a crash in the middle of
//! an ingest.

mod capture;
mod crash;
mod dream;
mod facts;
mod feedback;
mod policies;
mod recall;
mod store;
mod sync;
mod vectors;

pub type TestResult = Result<(), Box<dyn std::error::Error>>;

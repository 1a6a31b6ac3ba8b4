//! Cairn's memory evaluations: the LoCoMo retrieval evaluation and the knowledge-update
//! evaluation, each asking its questions through the real recall path of a fresh store and
//! scoring the answers next to a plain BM25 baseline, the recall benchmark's synthetic
//! corpus and timings, and the dream benchmark's. They measure `cairn-memory` from outside;
//! `cairn eval …` runs them.

pub mod baseline;
pub mod dream_bench;
pub mod knowledge_update;
pub mod locomo;
pub mod recall_bench;

pub use baseline::Baseline;

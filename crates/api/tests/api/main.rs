//! cairn-api wired to its parts: the memory's background summaries through a configured model.

mod summaries;

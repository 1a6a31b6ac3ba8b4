//! cairn-api wired to its parts: the memory's background summaries through a configured model,
//! and goals set before a task's first message.

mod chat;
mod goals;
mod summaries;

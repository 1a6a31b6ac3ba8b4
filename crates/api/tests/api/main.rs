//! cairn-api wired to its parts: the chat's turns, the memory's background summaries through a
//! configured model, and goals set before a task's first message.

mod ask;
mod chat;
mod config_reload;
mod goals;
mod learning;
mod lsp;
mod mcp;
mod schedules;
mod slots;
mod summaries;
mod task;
mod team;
mod voice;

/// A data home whose default model is `mock/m` at `base_url` (the scripted server), plus `extra`
/// config lines.
pub fn write_config(home: &std::path::Path, base_url: &str, extra: &str) -> std::io::Result<()> {
    std::fs::write(
        home.join("config.toml"),
        format!(
            "[agent]\nmodel = \"mock/m\"\n\n[providers.mock]\nbase_url = \"{base_url}\"\n{extra}"
        ),
    )
}

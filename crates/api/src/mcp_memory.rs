//! Cairn's memory behind the MCP server's three tools (`cairn mcp`): the same recall and
//! injection text the hooks give, a memory added with source `mcp`, and `resume`.
//!
//! MCP clients start `cairn mcp` with an environment of their own — the official SDKs pass on
//! only `HOME`, `PATH`, `USER` and a few more — so a `CAIRN_HOME` set in the person's shell does
//! not reach it, and the server opens `~/.cairn` instead: another, often empty, memory, in which
//! nothing the person added from that shell is found. So the server says which memory it serves
//! (on stderr as it starts, and in every search that finds nothing) and how to name the right one.

use cairn_mcp::MemoryBackend;
use cairn_memory::{NewMemory, SearchQuery};

use crate::Cairn;

/// How `resume_episode` tells its caller to pick an episode from the list.
const RESUME_HINT: &str = "call resume_episode with the number";

/// [`Cairn`] as the MCP server's memory.
pub struct McpMemory(pub Cairn);

impl McpMemory {
    /// Which memory this server serves and how many memories it holds, as a sentence: what
    /// `cairn mcp` says on stderr as it starts, so a client's log shows the data home in use.
    pub fn serving(&self) -> Result<String, crate::Error> {
        let held = self.0.panel_overview()?.total;
        Ok(format!(
            "cairn mcp: serving {}; another data home is named with `cairn --home DIR mcp`",
            self.memory_of_home(held)
        ))
    }

    /// "the memory of the data home DIR (N memories)".
    fn memory_of_home(&self, held: i64) -> String {
        let memories = if held == 1 { "memory" } else { "memories" };
        format!(
            "the memory of the data home {} ({held} {memories})",
            self.0.home().root().display()
        )
    }
}

/// A failed memory call reaches the calling agent as its sentence.
impl From<crate::Error> for cairn_mcp::Error {
    fn from(e: crate::Error) -> Self {
        cairn_mcp::Error::Memory(e.to_string())
    }
}

impl MemoryBackend for McpMemory {
    fn search(&self, query: &str, limit: usize) -> Result<String, cairn_mcp::Error> {
        let query = SearchQuery::new(query).limit(limit);
        let answer = self.0.search_memory(query)?;
        if !answer.injection.trim().is_empty() {
            return Ok(answer.injection);
        }
        let held = self.0.panel_overview()?.total;
        Ok(format!(
            "Nothing in memory matches. Searched {}. If you expected a match, this server may \
             be reading another memory than yours: start it as `cairn --home DIR mcp` with your \
             data home (many MCP clients do not pass CAIRN_HOME on).",
            self.memory_of_home(held)
        ))
    }

    fn remember(&self, text: &str) -> Result<String, cairn_mcp::Error> {
        let record = self.0.add_memory(NewMemory {
            text: text.to_owned(),
            source: Some("mcp".to_owned()),
            ..NewMemory::default()
        })?;
        Ok(format!("Remembered (memory {}).", record.id))
    }

    fn resume(&self, words: &str) -> Result<String, cairn_mcp::Error> {
        let text = self.0.resume_text(words, RESUME_HINT)?;
        Ok(if text.is_empty() {
            format!("Nothing in memory matches {words:?}.")
        } else {
            text
        })
    }
}

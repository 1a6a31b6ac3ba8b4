//! Cairn's memory behind the MCP server's three tools (`cairn mcp`): the same recall and
//! injection text the hooks give, a memory added with source `mcp`, and `resume`.

use cairn_mcp::MemoryBackend;
use cairn_memory::{NewMemory, SearchQuery};

use crate::Cairn;

/// How `resume_episode` tells its caller to pick an episode from the list.
const RESUME_HINT: &str = "call resume_episode with the number";

/// [`Cairn`] as the MCP server's memory.
pub struct McpMemory(pub Cairn);

impl MemoryBackend for McpMemory {
    fn search(&self, query: &str, limit: usize) -> Result<String, String> {
        let query = SearchQuery::new(query).limit(limit);
        let answer = self.0.search_memory(query).map_err(|e| e.to_string())?;
        Ok(if answer.injection.trim().is_empty() {
            "Nothing in memory matches.".to_owned()
        } else {
            answer.injection
        })
    }

    fn remember(&self, text: &str) -> Result<String, String> {
        let record = self
            .0
            .add_memory(NewMemory {
                text: text.to_owned(),
                source: Some("mcp".to_owned()),
                ..NewMemory::default()
            })
            .map_err(|e| e.to_string())?;
        Ok(format!("Remembered (memory {}).", record.id))
    }

    fn resume(&self, words: &str) -> Result<String, String> {
        let text = self
            .0
            .resume_text(words, RESUME_HINT)
            .map_err(|e| e.to_string())?;
        Ok(if text.is_empty() {
            format!("Nothing in memory matches {words:?}.")
        } else {
            text
        })
    }
}

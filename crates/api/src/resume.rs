//! Resuming earlier work from memory (`cairn resume`, `/cairn-resume`, the workbench's `/resume`):
//! the episodes that match some words, numbered; then the chosen one's memories as context.

use cairn_memory::{MemoryStore, SearchHit, SearchQuery};

use crate::{Cairn, Error};

/// Episodes offered at a time.
const RESUME_CHOICES: usize = 5;

impl Cairn {
    /// `words`: the matching episodes, numbered (empty when nothing matches); a number: the
    /// context of that episode of the last list. `hint` says how to pick one (e.g. `/resume N`).
    pub fn resume_text(&self, words: &str, hint: &str) -> Result<String, Error> {
        // Lexical search only: resuming must not wait for the embedding model to load.
        let store = MemoryStore::open(&self.memory_path())?;
        let last = self.home().data_dir().join("resume.json");
        let words = words.trim();
        if let Ok(n) = words.parse::<usize>() {
            let listed: Vec<i64> = std::fs::read(&last)
                .ok()
                .and_then(|b| serde_json::from_slice(&b).ok())
                .unwrap_or_default();
            let Some(episode) = n.checked_sub(1).and_then(|i| listed.get(i)) else {
                return Err(Error::NotFound(format!(
                    "no episode {n} in the last list: search first ({hint} takes words, then a number)"
                )));
            };
            let mut out = format!("## Resumed from memory: episode {n}\n");
            for m in store.episode_memories(*episode)? {
                out.push_str(&format!(
                    "\n[{} · {}]\n{}\n",
                    cairn_memory::date(m.created_at),
                    m.source,
                    m.text.trim()
                ));
            }
            return Ok(out);
        }
        if words.is_empty() {
            return Err(Error::Invalid(
                "say what to resume: some words from that work".into(),
            ));
        }
        let hits = store.search(&SearchQuery::new(words).limit(25))?.hits;
        let mut episodes: Vec<(i64, &SearchHit)> = Vec::new();
        for hit in &hits {
            if let Some(e) = hit.memory.episode_id {
                if !episodes.iter().any(|(id, _)| *id == e) {
                    episodes.push((e, hit));
                }
            }
        }
        episodes.truncate(RESUME_CHOICES);
        if episodes.is_empty() {
            return Ok(String::new());
        }
        let ids: Vec<i64> = episodes.iter().map(|(e, _)| *e).collect();
        let json = serde_json::to_vec(&ids).map_err(|e| Error::Sessions(e.to_string()))?;
        cairn_config::write_private_atomically(&last, &json)
            .map_err(|e| Error::Sessions(format!("cannot write {}: {e}", last.display())))?;
        let mut out =
            format!("Episodes from memory that match; resume one with its number ({hint}):\n");
        for (i, (_, hit)) in episodes.iter().enumerate() {
            let first = hit.memory.text.lines().next().unwrap_or("");
            out.push_str(&format!(
                "{}. {} · {} · {}\n",
                i + 1,
                cairn_memory::date(hit.memory.created_at),
                hit.memory.source,
                cairn_memory::snippet(first, 120)
            ));
        }
        Ok(out)
    }
}

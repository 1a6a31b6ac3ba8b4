//! What the memory panel counts: memories by layer and source, the background queue's backlog,
//! memories per day and the search log, the script memories are written in, and the database's
//! health (integrity, revision, change log).

use rusqlite::Connection;

use crate::clock::date;
use crate::model::{Analysis, LoggedSearch, Overview};
use crate::{MemoryError, MemoryStore};

/// How much of a memory's text [`MemoryStore::cjk_written`] reads to tell its script.
const SCRIPT_SAMPLE_CHARS: i64 = 400;

impl MemoryStore {
    /// Of the newest `newest` live memories, how many are written mostly in Chinese, Japanese or
    /// Korean script (at least a fifth of their letters), and how many were read: what tells
    /// whether the memory needs a multilingual embedder. A memory's first
    /// [`SCRIPT_SAMPLE_CHARS`] characters tell its script: a captured turn can hold pages of
    /// tool output, and this runs after every memory added while the store is locked.
    pub fn cjk_written(&self, newest: usize) -> Result<(usize, usize), MemoryError> {
        let conn = self.lock()?;
        let mut stmt = conn.prepare_cached(
            "SELECT substr(text, 1, ?2) FROM memories WHERE status != 'deleted'
             ORDER BY created_at DESC, id DESC LIMIT ?1",
        )?;
        let mut rows = stmt.query([newest as i64, SCRIPT_SAMPLE_CHARS])?;
        let (mut cjk, mut read) = (0, 0);
        while let Some(row) = rows.next()? {
            let text: String = row.get(0)?;
            read += 1;
            let letters = text.chars().filter(|c| c.is_alphanumeric()).count();
            let script = text.chars().filter(|&c| crate::text::is_cjk(c)).count();
            if letters > 0 && script * 5 >= letters {
                cjk += 1;
            }
        }
        Ok((cjk, read))
    }

    /// Counts by layer and source, sessions, turns and the size on disk.
    pub fn overview(&self) -> Result<Overview, MemoryError> {
        let conn = self.lock()?;
        let count = |sql: &str| conn.query_row(sql, [], |row| row.get::<_, i64>(0));
        let grouped = |sql: &str| -> Result<Vec<(String, i64)>, rusqlite::Error> {
            let mut stmt = conn.prepare(sql)?;
            let rows = stmt.query_map([], |row| Ok((row.get(0)?, row.get(1)?)))?;
            rows.collect()
        };
        let storage_bytes = match &self.path {
            Some(path) => ["", "-wal"]
                .iter()
                .filter_map(|suffix| std::fs::metadata(format!("{}{suffix}", path.display())).ok())
                .map(|m| m.len() as i64)
                .sum(),
            None => {
                count("SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()")?
            }
        };
        Ok(Overview {
            total: count("SELECT count(*) FROM memories WHERE status != 'deleted'")?,
            by_layer: grouped("SELECT layer, count(*) FROM memories WHERE status != 'deleted' GROUP BY layer ORDER BY layer")?,
            by_source: grouped("SELECT source, count(*) FROM memories WHERE status != 'deleted' GROUP BY source ORDER BY 2 DESC")?,
            sessions: count("SELECT count(*) FROM sessions")?,
            turns: count("SELECT count(*) FROM turns")?,
            skipped_turns: count("SELECT count(*) FROM skipped_turns")?,
            storage_bytes,
            backlog: self.backlog(&conn)?,
            embedder: self.embedder_model(),
        })
    }

    /// The background queue's waiting work, counted as each of its passes selects it.
    fn backlog(&self, conn: &Connection) -> Result<cairn_protocol::memory::Backlog, MemoryError> {
        let embeddings = self.pending_embeddings(conn)?;
        let facts = conn.query_row(
            "SELECT count(*) FROM memories m LEFT JOIN fact_checks f ON f.memory_id = m.id
             WHERE f.memory_id IS NULL AND m.status != 'deleted' AND m.layer = 'L1'",
            [],
            |row| row.get(0),
        )?;
        let outcomes = if self.evolution.load(std::sync::atomic::Ordering::SeqCst) {
            conn.query_row(
                "SELECT count(*) FROM episode_outcomes WHERE induced = 0",
                [],
                |row| row.get(0),
            )?
        } else {
            0
        };
        let rewording = if self.writer_for(|uses| uses.policies).is_some() {
            conn.query_row(
                "SELECT count(*) FROM memories WHERE layer = 'L2' AND source = ?1
                   AND status IN ('activated', 'resolving')
                   AND json_extract(metadata, '$.model_pending') = 1",
                [crate::policies::EVOLUTION_SOURCE],
                |row| row.get(0),
            )?
        } else {
            0
        };
        Ok(cairn_protocol::memory::Backlog {
            embeddings,
            facts,
            outcomes,
            rewording,
        })
    }

    /// Memories per day and source, and the search log's statistics.
    pub fn analysis(&self, recent: usize) -> Result<Analysis, MemoryError> {
        let conn = self.lock()?;
        let mut stmt = conn.prepare(
            "SELECT created_at / 86400000 AS day, source, count(*) FROM memories
             WHERE status != 'deleted' GROUP BY day, source ORDER BY day DESC, source DESC LIMIT 2000",
        )?;
        let mut per_day: Vec<(i64, String, i64)> = stmt
            .query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))?
            .collect::<Result<_, _>>()?;
        if let Some(last) = per_day.first().map(|d| d.0) {
            per_day.retain(|d| d.0 > last - 90);
        }
        per_day.reverse();
        let (searches, with_hits, mean_ms): (i64, i64, f64) = conn.query_row(
            "SELECT count(*), coalesce(sum(hits > 0), 0), coalesce(avg(took_ms), 0) FROM search_log",
            [],
            |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
        )?;
        let mut stmt = conn
            .prepare("SELECT at, query, hits, took_ms FROM search_log ORDER BY id DESC LIMIT ?1")?;
        let recent_searches = stmt
            .query_map([recent as i64], |row| {
                Ok(LoggedSearch {
                    at: row.get(0)?,
                    query: row.get(1)?,
                    hits: row.get(2)?,
                    took_ms: row.get(3)?,
                })
            })?
            .collect::<Result<_, _>>()?;
        Ok(Analysis {
            memories_per_day: per_day
                .into_iter()
                .map(|(day, source, n)| (date(day * 86_400_000), source, n))
                .collect(),
            searches,
            hit_rate: if searches == 0 {
                0.0
            } else {
                with_hits as f64 * 100.0 / searches as f64
            },
            mean_search_ms: mean_ms,
            recent_searches,
        })
    }

    /// `PRAGMA integrity_check`: "ok" for a sound database.
    pub fn integrity_check(&self) -> Result<String, MemoryError> {
        Ok(self
            .lock()?
            .query_row("PRAGMA integrity_check", [], |row| row.get(0))?)
    }

    /// The newest entry of the change log: it moves on every add, edit and delete, whichever
    /// process made it, so a view can tell cheaply that what it shows is out of date.
    pub fn revision(&self) -> Result<i64, MemoryError> {
        let conn = self.lock()?;
        revision_of(&conn)
    }

    /// When the memory last changed (its change log's newest entry), if ever.
    pub fn last_change_at(&self) -> Result<Option<i64>, MemoryError> {
        Ok(self
            .lock()?
            .query_row("SELECT max(at) FROM changes", [], |row| row.get(0))?)
    }

    /// How many entries the append-only change log holds.
    pub fn change_count(&self) -> Result<i64, MemoryError> {
        Ok(self
            .lock()?
            .query_row("SELECT count(*) FROM changes", [], |row| row.get(0))?)
    }
}

/// The newest entry of the change log of the database `conn` opens (0 when it is empty).
pub(crate) fn revision_of(conn: &rusqlite::Connection) -> Result<i64, MemoryError> {
    Ok(
        conn.query_row("SELECT coalesce(max(seq), 0) FROM changes", [], |row| {
            row.get(0)
        })?,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::NewMemory;

    #[test]
    fn a_memorys_script_is_told_by_its_beginning() -> Result<(), MemoryError> {
        let store = MemoryStore::open_in_memory()?;
        let stack_trace = "at parser::tokenize (src/parser.rs:42)\n".repeat(200);
        for text in [
            "我的猫叫豆豆，它喜欢晒太阳。".to_owned(),
            "The deploy script reads the staging config.".to_owned(),
            // Told in Chinese, followed by pages of English tool output: only its beginning
            // is read, and that is Chinese.
            format!(
                "User: 解析器在处理嵌套注释时崩溃了，请帮我看看这个错误是怎么回事，\
                 然后修复它并补上测试。这个问题从昨天升级依赖以后就开始出现，本地和持续集成\
                 环境里都能复现，只有在注释里再套一层注释的时候才会触发。日志如下：\n{stack_trace}"
            ),
        ] {
            store.add(NewMemory {
                text,
                ..NewMemory::default()
            })?;
        }
        assert_eq!(store.cjk_written(200)?, (2, 3));
        assert_eq!(store.cjk_written(1)?.1, 1);
        Ok(())
    }
}

//! The memory operations: sessions, turn capture, search with the injection text, explicit writes,
//! reads, deletes, and the memory panel's overview, items and analysis.

use cairn_memory::{
    render_injection, Analysis, CaptureOutcome, FeedbackRequest, Layer, MemoryError, MemoryRecord,
    NewMemory, Overview, Reward, SearchQuery, TurnCompletion, TurnStart,
};
use serde::{Deserialize, Serialize};

use crate::{Cairn, Error};

/// `POST /api/v1/sessions/open`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SessionOpen {
    pub session_id: String,
    #[serde(default)]
    pub source: Option<String>,
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    pub workspace: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SessionOpened {
    pub session_id: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TurnStarted {
    pub turn_id: i64,
}

pub use cairn_protocol::memory::SearchAnswer;

/// `cairn memory health`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MemoryHealth {
    pub status: String,
    pub database: String,
    pub integrity: String,
    pub overview: Overview,
}

impl Cairn {
    pub fn memory_health(&self) -> Result<MemoryHealth, Error> {
        let store = self.memory()?;
        let integrity = store.integrity_check()?;
        Ok(MemoryHealth {
            status: if integrity == "ok" {
                "ok".into()
            } else {
                "degraded".into()
            },
            database: self.memory_path().display().to_string(),
            integrity,
            overview: store.overview()?,
        })
    }

    pub fn open_session(&self, open: SessionOpen) -> Result<SessionOpened, Error> {
        self.memory()?.open_session(
            &open.session_id,
            open.source.as_deref(),
            open.title.as_deref(),
            open.workspace.as_deref(),
        )?;
        Ok(SessionOpened {
            session_id: open.session_id,
        })
    }

    pub fn close_session(&self, session_id: &str) -> Result<bool, Error> {
        Ok(self.memory()?.close_session(session_id)?)
    }

    pub fn start_turn(&self, start: TurnStart) -> Result<TurnStarted, Error> {
        Ok(TurnStarted {
            turn_id: self.memory()?.start_turn(start)?,
        })
    }

    pub fn complete_turn(
        &self,
        turn_id: i64,
        done: TurnCompletion,
    ) -> Result<CaptureOutcome, Error> {
        let outcome = self.memory()?.complete_turn(turn_id, done)?;
        self.follow_embedder();
        Ok(outcome)
    }

    pub fn search_memory(&self, query: SearchQuery) -> Result<SearchAnswer, Error> {
        if query.query.trim().is_empty() {
            return Err(MemoryError::Invalid("the search needs a query".into()).into());
        }
        let result = self.memory()?.search(&query)?;
        let injection = render_injection(&result.hits);
        Ok(SearchAnswer { result, injection })
    }

    pub fn add_memory(&self, memory: NewMemory) -> Result<MemoryRecord, Error> {
        let added = self.memory()?.add(memory)?;
        // A memory written in Chinese may be what turns the multilingual embedder on.
        self.follow_embedder();
        Ok(added)
    }

    pub fn get_memory(&self, id: i64) -> Result<MemoryRecord, Error> {
        self.memory()?
            .get(id)?
            .filter(|m| m.status != cairn_memory::Status::Deleted)
            .ok_or_else(|| MemoryError::NotFound(format!("memory {id}")).into())
    }

    /// The versions of a memory's fact, oldest first (just the memory when nothing replaced it
    /// and it replaced nothing).
    pub fn memory_versions(&self, id: i64) -> Result<Vec<MemoryRecord>, Error> {
        self.get_memory(id)?;
        Ok(self
            .memory()?
            .versions(id)?
            .into_iter()
            .filter(|m| m.status != cairn_memory::Status::Deleted)
            .collect())
    }

    /// A person's rating of a reply; the reward it changed.
    pub fn give_feedback(&self, request: &FeedbackRequest) -> Result<Reward, Error> {
        Ok(self.memory()?.give_feedback(request)?)
    }

    pub fn delete_memory(&self, id: i64) -> Result<bool, Error> {
        Ok(self.memory()?.delete(id)?)
    }

    /// Moves whenever a memory is added, edited or deleted, here or by another process.
    pub fn memory_revision(&self) -> Result<i64, Error> {
        Ok(self.memory()?.revision()?)
    }

    pub fn panel_overview(&self) -> Result<Overview, Error> {
        Ok(self.memory()?.overview()?)
    }

    pub fn panel_items(
        &self,
        layer: Option<Layer>,
        offset: usize,
        limit: usize,
    ) -> Result<Vec<MemoryRecord>, Error> {
        Ok(self.memory()?.list(layer, offset, limit.clamp(1, 500))?)
    }

    pub fn panel_analysis(&self) -> Result<Analysis, Error> {
        Ok(self.memory()?.analysis(50)?)
    }

    /// The panel's list with the layer named as the wire names it (`L1`, `L2`, `L3`, `skill`).
    pub fn panel_items_named(
        &self,
        layer: Option<&str>,
        offset: usize,
        limit: usize,
    ) -> Result<Vec<MemoryRecord>, Error> {
        self.panel_items(layer_named(layer)?, offset, limit)
    }

    /// The panel's search: every candidate, kept or dropped, with its channels and the reason,
    /// optionally within one layer.
    pub fn panel_search(
        &self,
        query: &str,
        layer: Option<&str>,
        limit: usize,
    ) -> Result<SearchAnswer, Error> {
        let mut search = SearchQuery::new(query).limit(limit.clamp(1, 50));
        search.layers = layer_named(layer)?.into_iter().collect();
        search.verbose = true;
        self.search_memory(search)
    }

    /// The panel's edit: a memory's new text, re-indexed.
    pub fn edit_memory(&self, id: i64, text: &str) -> Result<MemoryRecord, Error> {
        Ok(self.memory()?.update_text(id, text)?)
    }
}

fn layer_named(name: Option<&str>) -> Result<Option<Layer>, Error> {
    match name.map(str::trim).filter(|n| !n.is_empty()) {
        None => Ok(None),
        Some(name) => name
            .parse::<Layer>()
            .map(Some)
            .map_err(|e| MemoryError::Invalid(e.to_string()).into()),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use cairn_config::Home;
    use cairn_memory::{Layer, NewMemory};

    use crate::{Cairn, ErrorKind};

    type TestResult = Result<(), Box<dyn std::error::Error>>;

    fn cairn(home: &std::path::Path) -> Cairn {
        Cairn::with_env(Home::at(home), Arc::new(|_: &str| None))
    }

    fn add(cairn: &Cairn, text: &str, layer: Layer) -> Result<i64, crate::Error> {
        Ok(cairn
            .add_memory(NewMemory {
                text: text.into(),
                layer: Some(layer),
                ..NewMemory::default()
            })?
            .id)
    }

    #[test]
    fn the_panel_lists_by_layer_name_and_refuses_unknown_layers() -> TestResult {
        let home = tempfile::tempdir()?;
        let cairn = cairn(home.path());
        add(
            &cairn,
            "The staging database runs Postgres 16.",
            Layer::WorldModel,
        )?;
        add(
            &cairn,
            "Ran the nightly build; the cache was full.",
            Layer::Trace,
        )?;
        let l3 = cairn.panel_items_named(Some("L3"), 0, 10)?;
        assert_eq!(l3.len(), 1);
        assert_eq!(l3[0].layer, Layer::WorldModel);
        assert_eq!(cairn.panel_items_named(None, 0, 10)?.len(), 2);
        assert_eq!(cairn.panel_items_named(Some(""), 0, 10)?.len(), 2);
        let unknown = cairn.panel_items_named(Some("L9"), 0, 10);
        assert!(matches!(unknown, Err(e) if e.kind() == ErrorKind::BadRequest));
        Ok(())
    }

    #[test]
    fn the_panel_search_explains_every_candidate_within_a_layer() -> TestResult {
        let home = tempfile::tempdir()?;
        let cairn = cairn(home.path());
        let trace = add(
            &cairn,
            "The nightly build failed: the cache volume was full.",
            Layer::Trace,
        )?;
        add(
            &cairn,
            "Before a nightly build, clear the cache volume.",
            Layer::Policy,
        )?;
        let answer = cairn.panel_search("nightly build cache", Some("L1"), 10)?;
        assert_eq!(answer.result.hits.len(), 1);
        let hit = &answer.result.hits[0];
        assert_eq!(hit.memory.id, trace);
        assert!(hit.kept);
        assert!(hit.channels.iter().any(|c| c.channel == "fts"));
        assert!(!hit.reason.is_empty());
        let everything = cairn.panel_search("nightly build cache", None, 10)?;
        assert_eq!(
            everything.result.hits.len() + everything.result.dropped.len(),
            2
        );
        assert!(cairn.panel_search("  ", None, 10).is_err());
        Ok(())
    }

    #[test]
    fn an_edit_replaces_the_text_and_search_follows() -> TestResult {
        let home = tempfile::tempdir()?;
        let cairn = cairn(home.path());
        let id = add(&cairn, "Deploys go out on Tuesdays.", Layer::WorldModel)?;
        let edited = cairn.edit_memory(id, "Deploys go out on Thursdays.")?;
        assert_eq!(edited.text, "Deploys go out on Thursdays.");
        assert_eq!(cairn.get_memory(id)?.text, "Deploys go out on Thursdays.");
        assert_eq!(
            cairn.panel_search("thursdays", None, 10)?.result.hits.len(),
            1
        );
        assert!(cairn
            .panel_search("tuesdays", None, 10)?
            .result
            .hits
            .is_empty());
        assert!(cairn.edit_memory(id, "   ").is_err());
        assert!(cairn.delete_memory(id)?);
        let gone = cairn.edit_memory(id, "Again.");
        assert!(matches!(gone, Err(e) if e.kind() == ErrorKind::NotFound));
        Ok(())
    }
}

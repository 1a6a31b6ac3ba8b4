//! The memory operations: sessions, turn capture, search with the injection text, explicit writes,
//! reads, deletes, and the memory panel's overview, items and analysis.

use cairn_memory::{
    render_injection, Analysis, CaptureOutcome, Layer, MemoryError, MemoryRecord, NewMemory,
    Overview, SearchQuery, SearchResult, TurnCompletion, TurnStart,
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

/// A search's hits plus the Markdown block an agent injects before its request.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SearchAnswer {
    #[serde(flatten)]
    pub result: SearchResult,
    pub injection: String,
}

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
        Ok(self.memory()?.complete_turn(turn_id, done)?)
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
        Ok(self.memory()?.add(memory)?)
    }

    pub fn get_memory(&self, id: i64) -> Result<MemoryRecord, Error> {
        self.memory()?
            .get(id)?
            .filter(|m| m.status != cairn_memory::Status::Deleted)
            .ok_or_else(|| MemoryError::NotFound(format!("memory {id}")).into())
    }

    pub fn delete_memory(&self, id: i64) -> Result<bool, Error> {
        Ok(self.memory()?.delete(id)?)
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
}

//! What the live hooks do when another agent runs them (`cairn hook <event>`): recall for the
//! prompt it is about to send (the memories to add as context, or the episodes `/cairn-resume`
//! asks for), and capture of the conversation when its turn stops. The hook files themselves
//! are edited in `hooks.rs`; the CLI only reads the hook's JSON and prints the answer.

use std::path::Path;
use std::time::Duration;

use cairn_importers::sources::ClaudeCode;
use cairn_importers::{
    import_conversation, session_key, HistorySource, ScanControl, ScanMode, SourceEnv, SourceReport,
};
use cairn_memory::{render_injection, MemoryStore, SearchHit, SearchQuery};

use crate::{Cairn, Error, SearchAnswer};

/// How long recall may take on the prompt path (Claude Code allows about 30 s in all).
const RECALL_BUDGET: Duration = Duration::from_secs(8);
/// Memories injected into a prompt.
const RECALL_LIMIT: usize = 6;
/// How the CLI and the hooks pick an episode `resume` listed.
pub const RESUME_HINT: &str = "cairn resume N, or /cairn-resume N";

fn live_hook_error(what: impl std::fmt::Display) -> Error {
    Error::LiveHook(what.to_string())
}

impl Cairn {
    /// The context the prompt hook of `agent` adds to `prompt` in its `session`: the memories
    /// relevant to it, or for `/cairn-resume …` the episodes to resume (empty: add nothing).
    /// Cursor's prompt hook can only allow or block, so it gets nothing.
    pub async fn hook_prompt_context(
        &self,
        agent: &str,
        session: &str,
        prompt: &str,
    ) -> Result<String, Error> {
        let text = prompt.trim();
        if text.is_empty() || agent == "cursor" {
            return Ok(String::new());
        }
        match text.strip_prefix("/cairn-resume") {
            Some(words) => self.resume_text(words.trim(), RESUME_HINT),
            None => {
                let mut query = SearchQuery::new(text).limit(RECALL_LIMIT);
                query.exclude_session = Some(session_key(agent, session));
                let hits = tokio::time::timeout(RECALL_BUDGET, self.hook_recall(query))
                    .await
                    .map_err(|_| live_hook_error("recall ran out of time"))??;
                Ok(render_injection(&hits))
            }
        }
    }

    /// Recall through the running app when there is one (its embeddings are loaded), else
    /// straight on the database with the lexical channels (no model to load on the prompt path).
    async fn hook_recall(&self, query: SearchQuery) -> Result<Vec<SearchHit>, Error> {
        if let Some(info) = self.running_api().await {
            let http = reqwest::Client::builder()
                .no_proxy()
                .build()
                .map_err(live_hook_error)?;
            let answer: SearchAnswer = http
                .post(format!("{}/api/v1/memory/search", info.api_url))
                .bearer_auth(&info.token)
                .json(&query)
                .send()
                .await
                .and_then(reqwest::Response::error_for_status)
                .map_err(live_hook_error)?
                .json()
                .await
                .map_err(live_hook_error)?;
            return Ok(answer.result.hits);
        }
        Ok(self.lexical_store()?.search(&query)?.hits)
    }

    /// The memory database without an embedder (nothing to load on a hook's path).
    fn lexical_store(&self) -> Result<MemoryStore, Error> {
        Ok(MemoryStore::open(&self.memory_path())?)
    }

    /// The stop hook of `agent`: the conversation at `transcript` imported with the same keys a
    /// scan uses, so the turn is in memory now and a later scan adds nothing. Cursor's hooks carry
    /// no transcript: its history is brought up to date instead.
    pub fn hook_capture(&self, agent: &str, transcript: Option<&Path>) -> Result<(), Error> {
        let store = self.lexical_store()?;
        let env = SourceEnv::from_process(Default::default());
        let mut report = SourceReport::default();
        match agent {
            "claude-code" | "codex" => {
                let Some(path) = transcript else {
                    return Err(live_hook_error("the hook input has no transcript_path"));
                };
                let source: Box<dyn HistorySource> = match agent {
                    "codex" => source_named(&env, "codex")?,
                    _ => Box::new(ClaudeCode::new(&env)),
                };
                for conversation in source.read(path)? {
                    import_conversation(&store, source.name(), &conversation, &mut report)?;
                }
            }
            _ => {
                let control = ScanControl::default();
                self.scan_sources(Some(agent), ScanMode::Incremental, &control, &mut |_| {})?;
            }
        }
        Ok(())
    }
}

fn source_named(env: &SourceEnv, name: &str) -> Result<Box<dyn HistorySource>, Error> {
    cairn_importers::sources::all(env)
        .into_iter()
        .find(|s| s.name() == name)
        .ok_or_else(|| Error::UnknownSource(format!("no source called {name}")))
}

//! Other agents' history: which sources are on this machine, and scans that bring their turns
//! into memory (the same operations for the CLI, the HTTP API and the desktop app).

use std::collections::HashMap;
use std::path::PathBuf;

use cairn_importers::{
    HistorySource, Progress, ScanControl, ScanMode, SourceEnv, SourceReport, SyncState,
};

use crate::{Cairn, Error};

pub use cairn_protocol::SourceInfo;

impl Cairn {
    /// Every known source, with the config's folder overrides; disabled ones marked.
    pub fn history_sources(&self) -> Vec<(Box<dyn HistorySource>, bool)> {
        let config = self.load_config().unwrap_or_default();
        let overrides: HashMap<String, PathBuf> = config
            .sources
            .iter()
            .filter_map(|(name, s)| Some((name.clone(), PathBuf::from(s.path.as_ref()?))))
            .collect();
        let env = SourceEnv::from_process(overrides);
        cairn_importers::sources::all(&env)
            .into_iter()
            .map(|source| {
                let enabled = config.sources.get(source.name()).is_none_or(|s| s.enabled);
                (source, enabled)
            })
            .collect()
    }

    /// Where the sync checkpoints are kept.
    pub fn sources_state_path(&self) -> PathBuf {
        self.home().data_dir().join("sources.json")
    }

    pub fn list_sources(&self) -> Vec<SourceInfo> {
        let state = SyncState::load(&self.sources_state_path());
        self.history_sources()
            .into_iter()
            .map(|(source, enabled)| {
                let kept = state.sources.get(source.name());
                let (conversations, turns) = kept
                    .map(|s| {
                        s.files.values().fold((0, 0), |(c, t), f| {
                            (
                                c + f.conversations.len(),
                                t + f.conversations.values().map(|c| c.turns).sum::<usize>(),
                            )
                        })
                    })
                    .unwrap_or((0, 0));
                let detected = source.detected();
                SourceInfo {
                    name: source.name().to_owned(),
                    label: source.label().to_owned(),
                    detected,
                    enabled,
                    path: source
                        .roots()
                        .first()
                        .map(|p| p.display().to_string())
                        .unwrap_or_default(),
                    files: if detected { source.files().len() } else { 0 },
                    conversations,
                    turns,
                    last_sync: kept.and_then(|s| s.last_sync),
                    watermark: kept.and_then(|s| s.watermark),
                }
            })
            .collect()
    }

    /// Scans the detected, enabled sources (or only `only`) into memory.
    pub fn scan_sources(
        &self,
        only: Option<&str>,
        mode: ScanMode,
        control: &ScanControl,
        on_progress: &mut dyn FnMut(Progress),
    ) -> Result<Vec<SourceReport>, Error> {
        let all = self.history_sources();
        if let Some(name) = only {
            if !all.iter().any(|(s, _)| s.name() == name) {
                let names: Vec<&str> = all.iter().map(|(s, _)| s.name()).collect();
                return Err(Error::UnknownSource(format!(
                    "no source called {name:?}; sources: {}",
                    names.join(", ")
                )));
            }
        }
        let chosen: Vec<&dyn HistorySource> = all
            .iter()
            .filter(|(s, enabled)| match only {
                Some(name) => s.name() == name,
                None => *enabled && s.detected(),
            })
            .map(|(s, _)| s.as_ref())
            .collect();
        let memory = self.memory()?;
        let reports = cairn_importers::scan(
            &chosen,
            &memory,
            &self.sources_state_path(),
            mode,
            control,
            on_progress,
        )?;
        // History written in Chinese (WorkBuddy's, say) turns the multilingual embedder on.
        self.follow_embedder();
        Ok(reports)
    }
}

/// What following the sources reports.
#[derive(Debug, Clone, PartialEq)]
pub enum FollowEvent {
    /// The first scan is done; these folders are watched (source, folder).
    Watching(Vec<(String, PathBuf)>),
    /// A rescan after a change found new turns.
    Added(SourceReport),
}

impl Cairn {
    /// Scans the detected, enabled sources (or only `only`), then rescans a source within about a
    /// second of its files changing (file-system notifications, debounced) until `control` is
    /// stopped. Continuous sync: a turn another agent writes is in memory seconds later.
    pub fn follow_sources(
        &self,
        only: Option<&str>,
        control: &ScanControl,
        on_event: &mut dyn FnMut(FollowEvent),
    ) -> Result<(), Error> {
        use notify::{RecursiveMode, Watcher};
        use std::time::Duration;

        self.scan_sources(only, ScanMode::Incremental, control, &mut |_| {})?;
        let (tx, rx) = std::sync::mpsc::channel::<Vec<PathBuf>>();
        let mut watcher =
            notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
                if let Ok(event) = event {
                    let _ = tx.send(event.paths);
                }
            })
            .map_err(|e| Error::Watch(e.to_string()))?;
        let mut watched: Vec<(String, PathBuf)> = Vec::new();
        for (source, enabled) in self.history_sources() {
            if !enabled || only.is_some_and(|o| o != source.name()) {
                continue;
            }
            for root in source.roots().into_iter().filter(|r| r.exists()) {
                if watcher.watch(&root, RecursiveMode::Recursive).is_ok() {
                    watched.push((source.name().to_owned(), root));
                }
            }
        }
        on_event(FollowEvent::Watching(watched.clone()));
        if watched.is_empty() {
            return Ok(());
        }
        while !control.is_stopped() {
            let Ok(first) = rx.recv_timeout(Duration::from_secs(1)) else {
                continue;
            };
            // Debounce: gather what else changes in the next moment, then scan once per source.
            let mut paths = first;
            while let Ok(more) = rx.recv_timeout(Duration::from_millis(750)) {
                paths.extend(more);
            }
            let mut touched: Vec<&str> = watched
                .iter()
                .filter(|(_, root)| paths.iter().any(|p| p.starts_with(root)))
                .map(|(name, _)| name.as_str())
                .collect();
            touched.dedup();
            for name in touched {
                let reports =
                    self.scan_sources(Some(name), ScanMode::Incremental, control, &mut |_| {})?;
                for report in reports.into_iter().filter(|r| r.turns_added > 0) {
                    on_event(FollowEvent::Added(report));
                }
            }
        }
        Ok(())
    }
}

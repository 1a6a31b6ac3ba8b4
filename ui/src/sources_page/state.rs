//! What the page's parts share: the listed sources, the scan (which outlives the page), the
//! deep-scan confirmation and the hooks, with the actions that load and change them.

use cairn_protocol::{HookStatus as Hook, SourceInfo as Source};
use leptos::prelude::*;
use leptos::task::spawn_local;

use super::scan::{Phase, Scan};
use crate::i18n::{t, tf};
use crate::ipc::{hook_change, hooks_cli, hooks_status, list_sources, scan_control, scan_sources};

/// The agents with hooks, as people know them, and what the hooks do.
pub(super) fn hook_agent(agent: &str) -> (&'static str, &'static str) {
    match agent {
        "claude-code" => (
            "Claude Code",
            t("Recalls memory before each prompt and captures every finished turn (UserPromptSubmit, Stop)."),
        ),
        "codex" => (
            "Codex",
            t("Recalls memory before each prompt and captures every finished turn (UserPromptSubmit, Stop)."),
        ),
        "cursor" => ("Cursor", t("Captures every finished turn (stop).")),
        _ => (t("This agent"), ""),
    }
}

thread_local! {
    /// The scan outlives the page: leaving and coming back shows it still running.
    pub(super) static SCAN: ArcRwSignal<Option<Scan>> = ArcRwSignal::new(None);
}

/// What the page's parts share.
#[derive(Clone, Copy)]
pub(super) struct Ctx {
    pub(super) sources: RwSignal<Option<Result<Vec<Source>, String>>>,
    pub(super) scan: RwSignal<Option<Scan>>,
    /// A deep scan waiting for its confirmation: of all sources (`None`) or one.
    pub(super) confirm: RwSignal<Option<Option<String>>>,
    pub(super) hooks: RwSignal<Option<Result<Vec<Hook>, String>>>,
    pub(super) cli: RwSignal<Option<(String, bool)>>,
    /// The last install/remove result per agent: (agent, succeeded, text).
    pub(super) hook_notes: RwSignal<Vec<(String, bool, String)>>,
    pub(super) hook_busy: RwSignal<Option<String>>,
}

impl Ctx {
    pub(super) fn scanning(&self) -> bool {
        self.scan.with(|s| s.as_ref().is_some_and(Scan::running))
    }

    pub(super) fn label_of(&self) -> impl Fn(&str) -> String + 'static {
        let labels: Vec<(String, String)> = self.sources.with_untracked(|s| {
            s.as_ref()
                .and_then(|r| r.as_ref().ok())
                .map(|all| {
                    all.iter()
                        .map(|s| (s.name.clone(), s.label.clone()))
                        .collect()
                })
                .unwrap_or_default()
        });
        move |name: &str| {
            labels
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, l)| l.clone())
                .unwrap_or_else(|| name.to_owned())
        }
    }

    pub(super) fn load_sources(self) {
        spawn_local(async move {
            let listed = list_sources().await.map_err(|e| e.message);
            self.sources.set(Some(listed));
        });
    }

    pub(super) fn load_hooks(self) {
        spawn_local(async move {
            let hooks = hooks_status().await.map_err(|e| e.message);
            self.hooks.set(Some(hooks));
            if let Ok(cli) = hooks_cli().await {
                self.cli.set(Some(cli));
            }
        });
    }

    pub(super) fn start_scan(self, only: Option<String>, full: bool) {
        if self.scanning() {
            return;
        }
        self.confirm.set(None);
        let label = self.label_of();
        let scan = SCAN.with(Clone::clone);
        scan.set(Some(Scan::new(only.as_deref().map(&label), full)));
        let events = scan.clone();
        let event_label = self.label_of();
        spawn_local(async move {
            let outcome = scan_sources(only.as_deref(), full, move |event| {
                events.update(|s| {
                    if let Some(s) = s {
                        s.apply(event, &event_label);
                    }
                })
            })
            .await;
            scan.update(|s| {
                if let Some(s) = s {
                    s.finish(outcome, &label);
                }
            });
            // The cards show the new counts (if the page is still open).
            if let Ok(listed) = list_sources().await {
                self.sources.try_set(Some(Ok(listed)));
            }
        });
    }

    pub(super) fn control(self, action: &'static str, next: Phase) {
        let scan = SCAN.with(Clone::clone);
        spawn_local(async move {
            match scan_control(action).await {
                Ok(true) => scan.update(|s| {
                    if let Some(s) = s.as_mut().filter(|s| s.running()) {
                        s.phase = next;
                    }
                }),
                Ok(false) => {}
                Err(e) => scan.update(|s| {
                    if let Some(s) = s {
                        s.error = Some(e.message);
                    }
                }),
            }
        });
    }

    pub(super) fn change_hook(self, agent: String, install: bool) {
        self.hook_busy.set(Some(agent.clone()));
        spawn_local(async move {
            let (label, _) = hook_agent(&agent);
            let note = match hook_change(&agent, install).await {
                Ok(hook) => {
                    let path = hook.path.display().to_string();
                    let text = if install {
                        tf(
                            "Installed in {path}. Restart {name} or open a new session to load it.",
                            &[("name", label), ("path", &path)],
                        )
                    } else {
                        tf(
                            "Removed from {path}. Other hooks there were kept, and imported memories stay.",
                            &[("path", &path)],
                        )
                    };
                    self.hooks.update(|h| {
                        if let Some(Ok(all)) = h {
                            if let Some(slot) = all.iter_mut().find(|h| h.agent == hook.agent) {
                                *slot = hook;
                            }
                        }
                    });
                    (true, text)
                }
                Err(e) => (false, e.message),
            };
            self.hook_notes.update(|notes| {
                notes.retain(|(a, _, _)| *a != agent);
                notes.push((agent.clone(), note.0, note.1));
            });
            self.hook_busy.set(None);
        });
    }
}

//! The Sources page: the other agents whose history is on this machine (a card each, with what
//! was imported and when), scans with live progress (pause, resume, stop) and their summary, and
//! Cairn's live hooks in Claude Code, Codex and Cursor.

use cairn_protocol::{ApiError, ScanProgress, SourceReport};
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::format::{ago, date};
use crate::i18n::{t, tf};
use crate::ipc::{hook_change, hooks_cli, hooks_status, list_sources, scan_control, scan_sources};

use cairn_protocol::{HookStatus as Hook, SourceInfo as Source};

#[derive(Debug, Clone, Copy, PartialEq)]
enum Phase {
    Running,
    Paused,
    Stopping,
    Done,
    Stopped,
    Failed,
}

/// One source's line in the progress panel.
#[derive(Debug, Clone, PartialEq)]
struct Row {
    source: String,
    label: String,
    files: usize,
    done: usize,
    report: SourceReport,
    finished: bool,
}

impl Row {
    fn percent(&self) -> f64 {
        if self.files == 0 {
            return if self.finished { 100.0 } else { 0.0 };
        }
        (self.done.min(self.files) as f64 * 100.0 / self.files as f64).round()
    }
}

/// A scan, from the click to its summary.
#[derive(Debug, Clone, PartialEq)]
struct Scan {
    full: bool,
    /// The one source scanned (its label), or all.
    only: Option<String>,
    phase: Phase,
    rows: Vec<Row>,
    /// Why it failed.
    error: Option<String>,
}

impl Scan {
    fn new(only: Option<String>, full: bool) -> Self {
        Self {
            full,
            only,
            phase: Phase::Running,
            rows: Vec::new(),
            error: None,
        }
    }

    fn running(&self) -> bool {
        matches!(self.phase, Phase::Running | Phase::Paused | Phase::Stopping)
    }

    /// Applies one streamed event; `label` names a source. Events may arrive after the summary,
    /// so nothing here moves backwards.
    fn apply(&mut self, event: ScanProgress, label: impl Fn(&str) -> String) {
        match event {
            ScanProgress::SourceStarted { source, files } => {
                if !self.rows.iter().any(|r| r.source == source) {
                    self.rows.push(Row {
                        label: label(&source),
                        report: SourceReport {
                            source: source.clone(),
                            ..SourceReport::default()
                        },
                        source,
                        files,
                        done: 0,
                        finished: false,
                    });
                }
            }
            ScanProgress::File {
                source,
                done,
                files,
                report,
            } => {
                if let Some(row) = self.rows.iter_mut().find(|r| r.source == source) {
                    row.files = files;
                    if done >= row.done && !row.finished {
                        row.done = done;
                        row.report = report;
                    }
                }
            }
            ScanProgress::SourceDone { report } => {
                if let Some(row) = self.rows.iter_mut().find(|r| r.source == report.source) {
                    row.done = row.files;
                    row.finished = true;
                    row.report = report;
                }
            }
            ScanProgress::Stopped => {
                if self.phase != Phase::Failed {
                    self.phase = Phase::Stopped;
                }
            }
        }
    }

    /// The command returned: the reports are final.
    fn finish(
        &mut self,
        outcome: Result<Vec<SourceReport>, ApiError>,
        label: impl Fn(&str) -> String,
    ) {
        match outcome {
            Ok(reports) => {
                let stopped = matches!(self.phase, Phase::Stopping | Phase::Stopped);
                for report in reports {
                    match self.rows.iter_mut().find(|r| r.source == report.source) {
                        Some(row) => {
                            if !stopped {
                                row.done = row.files;
                                row.finished = true;
                            }
                            row.report = report;
                        }
                        None => self.rows.push(Row {
                            label: label(&report.source),
                            source: report.source.clone(),
                            files: 0,
                            done: 0,
                            report,
                            finished: !stopped,
                        }),
                    }
                }
                self.phase = if stopped { Phase::Stopped } else { Phase::Done };
            }
            Err(e) => {
                self.phase = Phase::Failed;
                self.error = Some(e.message);
            }
        }
    }

    fn total(&self) -> SourceReport {
        let mut total = SourceReport::default();
        for r in self.rows.iter().map(|r| &r.report) {
            total.add(r);
        }
        total
    }

    /// The one-line state above the bars.
    fn headline(&self) -> String {
        let kind = if self.full { t("Deep scan") } else { t("Scan") };
        let args = [("kind", kind)];
        match self.phase {
            Phase::Running => match self.rows.iter().rev().find(|r| !r.finished) {
                Some(row) => tf(
                    "{kind}: reading {name}…",
                    &[("kind", kind), ("name", &row.label)],
                ),
                None => tf("{kind}: looking for history…", &args),
            },
            Phase::Paused => tf("{kind} paused", &args),
            Phase::Stopping => tf("{kind}: stopping after the current file…", &args),
            Phase::Done => tf("{kind} finished", &args),
            Phase::Stopped => tf("{kind} stopped: what was read so far is kept", &args),
            Phase::Failed => tf(
                "{kind} failed: {error}",
                &[
                    ("kind", kind),
                    ("error", self.error.as_deref().unwrap_or(t("unknown error"))),
                ],
            ),
        }
    }
}

/// "3 turns", "1 turn".
fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The agents with hooks, as people know them, and what the hooks do.
fn hook_agent(agent: &str) -> (&'static str, &'static str) {
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
    static SCAN: ArcRwSignal<Option<Scan>> = ArcRwSignal::new(None);
}

/// What the page's parts share.
#[derive(Clone, Copy)]
struct Ctx {
    sources: RwSignal<Option<Result<Vec<Source>, String>>>,
    scan: RwSignal<Option<Scan>>,
    /// A deep scan waiting for its confirmation: of all sources (`None`) or one.
    confirm: RwSignal<Option<Option<String>>>,
    hooks: RwSignal<Option<Result<Vec<Hook>, String>>>,
    cli: RwSignal<Option<(String, bool)>>,
    /// The last install/remove result per agent: (agent, succeeded, text).
    hook_notes: RwSignal<Vec<(String, bool, String)>>,
    hook_busy: RwSignal<Option<String>>,
}

impl Ctx {
    fn scanning(&self) -> bool {
        self.scan.with(|s| s.as_ref().is_some_and(Scan::running))
    }

    fn label_of(&self) -> impl Fn(&str) -> String + 'static {
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

    fn load_sources(self) {
        spawn_local(async move {
            let listed = list_sources().await.map_err(|e| e.message);
            self.sources.set(Some(listed));
        });
    }

    fn load_hooks(self) {
        spawn_local(async move {
            let hooks = hooks_status().await.map_err(|e| e.message);
            self.hooks.set(Some(hooks));
            if let Ok(cli) = hooks_cli().await {
                self.cli.set(Some(cli));
            }
        });
    }

    fn start_scan(self, only: Option<String>, full: bool) {
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

    fn control(self, action: &'static str, next: Phase) {
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

    fn change_hook(self, agent: String, install: bool) {
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

#[component]
pub fn SourcesPage() -> impl IntoView {
    let ctx = Ctx {
        sources: RwSignal::new(None),
        scan: RwSignal::from(SCAN.with(Clone::clone)),
        confirm: RwSignal::new(None),
        hooks: RwSignal::new(None),
        cli: RwSignal::new(None),
        hook_notes: RwSignal::new(Vec::new()),
        hook_busy: RwSignal::new(None),
    };
    ctx.load_sources();
    ctx.load_hooks();
    let refresh = move |_| {
        ctx.load_sources();
        ctx.load_hooks();
    };
    view! {
        <div id="sources-page" class="sources-page">
            <header class="sources-head">
                <div>
                    <h1 class="page-title">{t("Sources")}</h1>
                    <p class="hint">
                        {t("Other agents' history on this machine. A scan brings their finished turns into memory; it never changes the agents' files.")}
                    </p>
                </div>
                <div class="sources-actions">
                    <button id="sources-refresh" class="secondary" on:click=refresh>
                        {t("Refresh")}
                    </button>
                    <button
                        id="deep-scan-all"
                        class="secondary"
                        disabled=move || ctx.scanning()
                        on:click=move |_| ctx.confirm.set(Some(None))
                    >
                        {t("Deep scan")}
                    </button>
                    <button
                        id="scan-all"
                        class="primary"
                        disabled=move || ctx.scanning()
                        on:click=move |_| ctx.start_scan(None, false)
                    >
                        {t("Scan")}
                    </button>
                </div>
            </header>
            <DeepScanConfirm ctx />
            <ScanPanel ctx />
            <SourceCards ctx />
            <HooksSection ctx />
        </div>
    }
}

#[component]
fn DeepScanConfirm(ctx: Ctx) -> impl IntoView {
    let start = NodeRef::<leptos::html::Button>::new();
    Effect::new(move |_| {
        if ctx.confirm.get().is_some() {
            request_animation_frame(move || {
                if let Some(button) = start.get_untracked() {
                    let _ = button.focus();
                }
            });
        }
    });
    move || {
        let target = ctx.confirm.get()?;
        let what = match &target {
            Some(name) => (ctx.label_of())(name),
            None => t("every detected agent").to_owned(),
        };
        Some(view! {
            <div id="deep-scan-confirm" class="sources-confirm" role="alertdialog" aria-labelledby="deep-scan-confirm-text">
                <p id="deep-scan-confirm-text">
                    <strong>{tf("Deep scan {name}?", &[("name", &what)])}</strong>
                    {t(" It rereads every history file to backfill older conversations, which can take a while. Turns already in memory are not added twice.")}
                </p>
                <div class="sources-confirm-actions">
                    <button class="secondary" on:click=move |_| ctx.confirm.set(None)>{t("Cancel")}</button>
                    <button
                        id="deep-scan-start"
                        class="primary"
                        node_ref=start
                        on:click=move |_| ctx.start_scan(target.clone(), true)
                    >
                        {t("Start deep scan")}
                    </button>
                </div>
            </div>
        })
    }
}

#[component]
fn ScanPanel(ctx: Ctx) -> impl IntoView {
    move || {
        let scan = ctx.scan.get()?;
        let running = scan.running();
        let paused = scan.phase == Phase::Paused;
        let stopping = scan.phase == Phase::Stopping;
        let total = scan.total();
        let finished = matches!(scan.phase, Phase::Done | Phase::Stopped);
        let state_class = match scan.phase {
            Phase::Failed => "scan-panel failed",
            Phase::Done => "scan-panel done",
            Phase::Paused => "scan-panel paused",
            _ => "scan-panel",
        };
        let rows = scan
            .rows
            .iter()
            .map(|row| {
                let percent = row.percent();
                let label = row.label.clone();
                view! {
                    <li class="scan-row" data-source={row.source.clone()}>
                        <div class="scan-row-head">
                            <span class="scan-row-label">{row.label.clone()}</span>
                            <span class="scan-row-count">
                                {tf("{done} / {files} files · {turns} added", &[
                                    ("done", &row.done.to_string()),
                                    ("files", &row.files.to_string()),
                                    ("turns", &count(row.report.turns_added, t("turn"), t("turns"))),
                                ])}
                            </span>
                        </div>
                        <div
                            class={if row.finished { "progress complete" } else { "progress" }}
                            role="progressbar"
                            aria-label={tf("{name} files read", &[("name", &label)])}
                            aria-valuemin="0"
                            aria-valuemax={row.files.to_string()}
                            aria-valuenow={row.done.to_string()}
                        >
                            <div class="progress-fill" style:width={format!("{percent}%")}></div>
                        </div>
                    </li>
                }
            })
            .collect_view();
        let summary = finished.then(|| {
            let lines = scan
                .rows
                .iter()
                .map(|row| {
                    let r = &row.report;
                    view! {
                        <tr>
                            <th scope="row">{row.label.clone()}</th>
                            <td>{r.conversations}</td>
                            <td>{r.turns_seen}</td>
                            <td class="added">{r.turns_added}</td>
                            <td>{r.turns_skipped}</td>
                            <td class={if r.turns_failed > 0 { "bad" } else { "" }}>{r.turns_failed}</td>
                            <td>{r.lines_malformed}</td>
                        </tr>
                    }
                })
                .collect_view();
            let headline = if scan.rows.is_empty() {
                t("No agent history to scan: no detected, enabled agent.").to_owned()
            } else {
                let unreadable = if total.files_failed > 0 {
                    format!(" · {}", count(total.files_failed, t("unreadable file"), t("unreadable files")))
                } else {
                    String::new()
                };
                tf(
                    "{turns} added from {conversations} · {seen} seen · {skipped} skipped · {failed} failed · {malformed}{unreadable}",
                    &[
                        ("turns", &count(total.turns_added, t("turn"), t("turns"))),
                        ("conversations", &count(total.conversations, t("conversation"), t("conversations"))),
                        ("seen", &total.turns_seen.to_string()),
                        ("skipped", &total.turns_skipped.to_string()),
                        ("failed", &total.turns_failed.to_string()),
                        ("malformed", &count(total.lines_malformed, t("malformed line"), t("malformed lines"))),
                        ("unreadable", &unreadable),
                    ],
                )
            };
            let table = (!scan.rows.is_empty()).then(|| {
                view! {
                    <table class="scan-table">
                        <thead>
                            <tr>
                                <th scope="col">{t("Agent")}</th>
                                <th scope="col">{t("Conversations")}</th>
                                <th scope="col">{t("Turns seen")}</th>
                                <th scope="col">{t("Added")}</th>
                                <th scope="col">{t("Skipped")}</th>
                                <th scope="col">{t("Failed")}</th>
                                <th scope="col">{t("Malformed lines")}</th>
                            </tr>
                        </thead>
                        <tbody>{lines}</tbody>
                    </table>
                }
            });
            view! {
                <div id="scan-summary" class="scan-summary">
                    <p class="scan-totals">{headline}</p>
                    {table}
                </div>
            }
        });
        let error = scan
            .error
            .clone()
            .filter(|_| scan.phase != Phase::Failed)
            .map(|e| view! { <p class="error-text">{e}</p> });
        Some(view! {
            <section id="scan-panel" class=state_class aria-live="polite" aria-label=t("Scan progress")>
                <div class="scan-panel-head">
                    <h2 id="scan-status" class="scan-status">{scan.headline()}</h2>
                    <div class="scan-controls">
                        {running.then(|| view! {
                            <button
                                id="scan-pause"
                                class="secondary"
                                disabled=stopping
                                on:click=move |_| {
                                    if paused {
                                        ctx.control("resume", Phase::Running)
                                    } else {
                                        ctx.control("pause", Phase::Paused)
                                    }
                                }
                            >
                                {if paused { t("Resume") } else { t("Pause") }}
                            </button>
                            <button
                                id="scan-stop"
                                class="secondary danger"
                                disabled=stopping
                                on:click=move |_| ctx.control("stop", Phase::Stopping)
                            >
                                {t("Stop")}
                            </button>
                        })}
                        {(!running).then(|| view! {
                            <button id="scan-dismiss" class="secondary" on:click=move |_| ctx.scan.set(None)>
                                {t("Close")}
                            </button>
                        })}
                    </div>
                </div>
                <ul class="scan-rows">{rows}</ul>
                {running.then(|| view! {
                    <p id="scan-live" class="hint">
                        {tf("{turns} added so far", &[("turns", &count(total.turns_added, t("turn"), t("turns")))])}
                    </p>
                })}
                {error}
                {summary}
            </section>
        })
    }
}

#[component]
fn SourceCards(ctx: Ctx) -> impl IntoView {
    move || {
        let listed = match ctx.sources.get() {
            None => return view! { <p class="hint sources-loading">{t("Looking for agents…")}</p> }.into_any(),
            Some(Err(e)) => {
                return view! { <p class="error-text">{tf("The sources could not be listed: {error}", &[("error", &e)])}</p> }
                    .into_any()
            }
            Some(Ok(listed)) => listed,
        };
        let now = js_sys::Date::now() as i64;
        let (found, missing): (Vec<Source>, Vec<Source>) =
            listed.into_iter().partition(|s| s.detected);
        let found_count = found.len();
        let cards = found
            .into_iter()
            .map(|s| source_card(ctx, s, now))
            .collect_view();
        let missing_list = (!missing.is_empty()).then(|| {
            let items = missing
                .into_iter()
                .map(|s| {
                    view! {
                        <li id={format!("source-{}", s.name)} class="source-missing">
                            <span class="source-missing-label">{s.label.clone()}</span>
                            <span class="source-path" title={s.path.clone()}>{s.path.clone()}</span>
                        </li>
                    }
                })
                .collect_view();
            view! {
                <details class="sources-missing">
                    <summary>{t("Not found on this machine")}</summary>
                    <p class="hint">{t("Cairn looked for their history here; install or use one and it shows up above.")}</p>
                    <ul>{items}</ul>
                </details>
            }
        });
        view! {
            <section class="sources-section" aria-labelledby="sources-agents-title">
                <h2 id="sources-agents-title" class="section-title">{t("Agents")}</h2>
                {(found_count == 0).then(|| view! {
                    <div class="card sources-empty">
                        <h3>{t("No agent history found")}</h3>
                        <p>{t("Cairn reads Claude Code, Codex, Cursor and other agents' history when it is on this machine.")}</p>
                    </div>
                })}
                <div id="source-cards" class="source-grid">{cards}</div>
                {missing_list}
            </section>
        }
        .into_any()
    }
}

fn source_card(ctx: Ctx, s: Source, now: i64) -> impl IntoView {
    let last = match s.last_sync {
        Some(at) => tf("Last sync {when}", &[("when", &ago(at, now))]),
        None => t("Never synced").to_owned(),
    };
    let last_title = s.last_sync.map(date).unwrap_or_default();
    let (badge, badge_class) = if s.enabled {
        (t("Detected"), "badge badge-ok")
    } else {
        (t("Disabled in config"), "badge badge-off")
    };
    let scan_name = s.name.clone();
    let deep_name = s.name.clone();
    let label = s.label.clone();
    view! {
        <article id={format!("source-{}", s.name)} class="source-card" aria-label={s.label.clone()}>
            <header class="source-card-head">
                <h3 class="source-label">{s.label.clone()}</h3>
                <span class=badge_class>{badge}</span>
            </header>
            <p class="source-path" title={s.path.clone()}>{s.path.clone()}</p>
            <dl class="source-stats">
                <div>
                    <dt>{t("Files")}</dt>
                    <dd class="stat-files">{s.files}</dd>
                </div>
                <div>
                    <dt>{t("Conversations")}</dt>
                    <dd class="stat-conversations">{s.conversations}</dd>
                </div>
                <div>
                    <dt>{t("Turns")}</dt>
                    <dd class="stat-turns">{s.turns}</dd>
                </div>
            </dl>
            <footer class="source-card-foot">
                <span class="source-last" title={last_title}>{last}</span>
                <div class="source-card-actions">
                    <button
                        class="secondary small"
                        aria-label={tf("Deep scan {name}", &[("name", &label)])}
                        disabled=move || ctx.scanning()
                        on:click=move |_| ctx.confirm.set(Some(Some(deep_name.clone())))
                    >
                        {t("Deep scan")}
                    </button>
                    <button
                        class="secondary small source-scan"
                        aria-label={tf("Scan {name}", &[("name", &s.label)])}
                        disabled=move || ctx.scanning()
                        on:click=move |_| ctx.start_scan(Some(scan_name.clone()), false)
                    >
                        {t("Scan")}
                    </button>
                </div>
            </footer>
        </article>
    }
}

#[component]
fn HooksSection(ctx: Ctx) -> impl IntoView {
    let cli_missing = move || {
        ctx.cli
            .get()
            .filter(|(_, found)| !found)
            .map(|(path, _)| path)
    };
    view! {
        <section id="hooks" class="sources-section" aria-labelledby="hooks-title">
            <h2 id="hooks-title" class="section-title">{t("Live hooks")}</h2>
            <p class="hint">
                {t("A hook lets an agent ask Cairn for relevant memories before each prompt and hand over each finished turn, so new conversations land in memory without a scan.")}
            </p>
            {move || cli_missing().map(|path| view! {
                <div id="hooks-no-cli" class="sources-warning" role="status">
                    <strong>{t("The cairn command is missing.")}</strong>
                    {t(" Hooks run it, and it should be at ")}
                    <code>{path}</code>
                    {t(", but it is not there. Install Cairn's command-line tool beside the app to install hooks.")}
                </div>
            })}
            {move || match ctx.hooks.get() {
                None => view! { <p class="hint">{t("Checking hooks…")}</p> }.into_any(),
                Some(Err(e)) => view! { <p class="error-text">{e}</p> }.into_any(),
                Some(Ok(hooks)) => {
                    let rows = hooks.into_iter().map(|h| hook_row(ctx, h, cli_missing().is_some())).collect_view();
                    view! { <ul class="hook-list">{rows}</ul> }.into_any()
                }
            }}
        </section>
    }
}

fn hook_row(ctx: Ctx, hook: Hook, no_cli: bool) -> impl IntoView {
    let (label, what) = hook_agent(&hook.agent);
    let agent = hook.agent.clone();
    let note_agent = hook.agent.clone();
    let busy_agent = hook.agent.clone();
    let busy = move || ctx.hook_busy.get().is_some_and(|a| a == busy_agent);
    let note = move || {
        ctx.hook_notes.with(|notes| {
            notes
                .iter()
                .find(|(a, _, _)| *a == note_agent)
                .map(|(_, ok, text)| {
                    view! {
                        <p class={if *ok { "hook-note ok" } else { "hook-note failed" }} role="status">
                            {text.clone()}
                        </p>
                    }
                })
        })
    };
    let installed = hook.installed;
    let button = if installed {
        let agent = agent.clone();
        view! {
            <button
                id={format!("hook-remove-{}", hook.agent)}
                class="secondary"
                aria-label={tf("Remove the {name} hook", &[("name", label)])}
                disabled=busy.clone()
                on:click=move |_| ctx.change_hook(agent.clone(), false)
            >
                {t("Remove hook")}
            </button>
        }
        .into_any()
    } else {
        let agent = agent.clone();
        view! {
            <button
                id={format!("hook-install-{}", hook.agent)}
                class="primary"
                aria-label={tf("Install the {name} hook", &[("name", label)])}
                disabled=move || no_cli || busy()
                on:click=move |_| ctx.change_hook(agent.clone(), true)
            >
                {t("Install hook")}
            </button>
        }
        .into_any()
    };
    view! {
        <li id={format!("hook-{}", hook.agent)} class="hook-row">
            <div class="hook-main">
                <div class="hook-title">
                    <h3>{label}</h3>
                    <span class={if installed { "badge badge-ok" } else { "badge badge-off" }}>
                        {if installed { t("Installed") } else { t("Not installed") }}
                    </span>
                </div>
                <p class="hook-what">{what}</p>
                <p class="source-path" title={hook.path.display().to_string()}>{hook.path.display().to_string()}</p>
                {note}
            </div>
            <div class="hook-actions">{button}</div>
        </li>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn label(name: &str) -> String {
        match name {
            "claude-code" => "Claude Code".into(),
            other => other.into(),
        }
    }

    fn report(source: &str, added: usize) -> SourceReport {
        SourceReport {
            source: source.into(),
            conversations: 3,
            turns_seen: added,
            turns_added: added,
            ..SourceReport::default()
        }
    }

    #[test]
    fn a_scan_follows_its_events_and_ends_with_the_reports() {
        let mut scan = Scan::new(None, false);
        assert_eq!(scan.headline(), "Scan: looking for history…");
        scan.apply(
            ScanProgress::SourceStarted {
                source: "claude-code".into(),
                files: 3,
            },
            label,
        );
        scan.apply(
            ScanProgress::File {
                source: "claude-code".into(),
                done: 2,
                files: 3,
                report: report("claude-code", 8),
            },
            label,
        );
        assert_eq!(scan.rows[0].done, 2);
        assert_eq!(scan.rows[0].percent(), 67.0);
        assert_eq!(scan.headline(), "Scan: reading Claude Code…");
        // The summary may arrive before the last events: they do not move it back.
        scan.finish(Ok(vec![report("claude-code", 12)]), label);
        scan.apply(
            ScanProgress::File {
                source: "claude-code".into(),
                done: 2,
                files: 3,
                report: report("claude-code", 8),
            },
            label,
        );
        assert_eq!(scan.phase, Phase::Done);
        assert_eq!(scan.rows[0].done, 3);
        assert_eq!(scan.total().turns_added, 12);
        assert_eq!(scan.headline(), "Scan finished");
    }

    #[test]
    fn a_stopped_scan_says_so() {
        let mut scan = Scan::new(Some("Claude Code".into()), true);
        scan.apply(
            ScanProgress::SourceStarted {
                source: "claude-code".into(),
                files: 10,
            },
            label,
        );
        scan.phase = Phase::Stopping;
        scan.apply(ScanProgress::Stopped, label);
        scan.finish(Ok(vec![report("claude-code", 4)]), label);
        assert_eq!(scan.phase, Phase::Stopped);
        assert!(!scan.rows[0].finished);
        assert!(scan.headline().starts_with("Deep scan stopped"));
        let mut failed = Scan::new(None, false);
        failed.finish(Err(ApiError::new("internal", "disk full")), label);
        assert_eq!(failed.headline(), "Scan failed: disk full");
    }

    #[test]
    fn times_read_as_people_say_them() {
        let now = 1_772_400_000_000;
        assert_eq!(ago(now - 5_000, now), "just now");
        assert_eq!(ago(now - 90_000, now), "a minute ago");
        assert_eq!(ago(now - 12 * 60_000, now), "12 minutes ago");
        assert_eq!(ago(now - 3 * 3_600_000, now), "3 hours ago");
        assert_eq!(ago(now - 30 * 3_600_000, now), "yesterday");
        assert_eq!(ago(now - 5 * 86_400_000, now), "5 days ago");
        assert_eq!(ago(951_782_400_000, now), "on 2000-02-29");
        assert_eq!(count(1, "turn", "turns"), "1 turn");
        assert_eq!(count(0, "turn", "turns"), "0 turns");
    }
}

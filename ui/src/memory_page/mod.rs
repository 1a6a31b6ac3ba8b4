//! The Memory page: what Cairn remembers, counted by layer and source; the entries, browsed by layer
//! or searched with every candidate explained; one entry in full, to edit or delete; and how memory
//! and recall have been doing (memories per day by source, the hit rate, the search log).

use cairn_protocol::ApiError;
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::dom::focus_soon;
use crate::i18n::{t, tf};
use crate::ipc;

mod analytics;
mod chart;
mod detail;
mod entries;
mod overview;
#[cfg(test)]
mod tests;
mod text;

use crate::format::*;
use analytics::*;
use chart::*;
use detail::*;
use entries::*;
use overview::*;
use text::*;

/// Entries per page of the list.
const PAGE: usize = 20;
/// Candidates an explained search keeps at most.
const SEARCH_LIMIT: usize = 10;
/// Searches the analytics table shows.
const RECENT_SEARCHES: usize = 15;

// What the commands answer: the memory's own types, from the protocol crate.
use cairn_protocol::memory::{
    Analysis, Backlog, MemoryRecord as Memory, Overview, SearchHit as Hit,
    SearchResult as SearchAnswer, Status, SummarySource, Trace as Channel,
};

// ---------------------------------------------------------------------------------------------
// The page's state and operations.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tab {
    Overview,
    Entries,
    Analytics,
}

type Loaded<T> = Option<Result<T, ApiError>>;

/// A line under the toolbar after an edit or a delete.
#[derive(Debug, Clone, PartialEq)]
struct Notice {
    text: String,
    error: bool,
}

/// Every signal of the page, copied into each part of it.
#[derive(Clone, Copy)]
struct Panel {
    tab: RwSignal<Tab>,
    overview: RwSignal<Loaded<Overview>>,
    /// The layer filter (`L1`, `L2`, `L3`, `skill`), all when `None`.
    layer: RwSignal<Option<String>>,
    offset: RwSignal<usize>,
    items: RwSignal<Loaded<Vec<Memory>>>,
    /// What the search box holds.
    draft: RwSignal<String>,
    /// The search shown, when one is.
    searched: RwSignal<Option<String>>,
    answer: RwSignal<Loaded<SearchAnswer>>,
    explain: RwSignal<bool>,
    selected: RwSignal<Option<i64>>,
    detail: RwSignal<Loaded<Memory>>,
    /// The edited text while the entry is being edited.
    editing: RwSignal<Option<String>>,
    confirming: RwSignal<bool>,
    busy: RwSignal<bool>,
    notice: RwSignal<Option<Notice>>,
    analysis: RwSignal<Loaded<Analysis>>,
    /// The memory's revision when the page last read it (`None` before the first look).
    revision: StoredValue<Option<i64>>,
    /// Request counters, so a slow answer never replaces a newer one.
    overview_request: StoredValue<u32>,
    items_request: StoredValue<u32>,
    search_request: StoredValue<u32>,
    detail_request: StoredValue<u32>,
}

impl Panel {
    fn new() -> Self {
        Self {
            tab: RwSignal::new(Tab::Overview),
            overview: RwSignal::new(None),
            layer: RwSignal::new(None),
            offset: RwSignal::new(0),
            items: RwSignal::new(None),
            draft: RwSignal::new(String::new()),
            searched: RwSignal::new(None),
            answer: RwSignal::new(None),
            explain: RwSignal::new(false),
            selected: RwSignal::new(None),
            detail: RwSignal::new(None),
            editing: RwSignal::new(None),
            confirming: RwSignal::new(false),
            busy: RwSignal::new(false),
            notice: RwSignal::new(None),
            analysis: RwSignal::new(None),
            revision: StoredValue::new(None),
            overview_request: StoredValue::new(0),
            items_request: StoredValue::new(0),
            search_request: StoredValue::new(0),
            detail_request: StoredValue::new(0),
        }
    }

    fn load_overview(self) {
        let request = next(self.overview_request);
        spawn_local(async move {
            let answer = ipc::memory_overview().await;
            if self.overview_request.get_value() == request {
                show_if_new(self.overview, answer);
            }
        });
    }

    /// Takes the memory's revision as seen, after a change the page made and has shown itself.
    fn note_revision(self) {
        spawn_local(async move {
            if let Ok(now) = ipc::memory_revision().await {
                self.revision.set_value(Some(now));
            }
        });
    }

    /// Reads everything shown again when the memory changed since the last look: a turn captured,
    /// a scan, the local API or the CLI may have written to it.
    fn follow_changes(self) {
        spawn_local(async move {
            let Ok(now) = ipc::memory_revision().await else {
                return;
            };
            let seen = self.revision.get_value();
            self.revision.set_value(Some(now));
            if seen.is_some_and(|seen| seen != now) {
                self.refresh();
            }
        });
    }

    fn load_items(self) {
        let request = next(self.items_request);
        let layer = self.layer.get_untracked();
        let offset = self.offset.get_untracked();
        spawn_local(async move {
            let answer = ipc::memory_items(layer.as_deref(), offset, PAGE).await;
            if self.items_request.get_value() == request {
                show_if_new(self.items, answer);
            }
        });
    }

    /// Runs the search box's query (or clears the search when it is empty).
    fn search(self) {
        let query = self.draft.get_untracked().trim().to_owned();
        if query.is_empty() {
            self.clear_search();
            return;
        }
        self.searched.set(Some(query));
        self.answer.set(None);
        self.rerun_search();
    }

    fn rerun_search(self) {
        let Some(query) = self.searched.get_untracked() else {
            return;
        };
        let request = next(self.search_request);
        let layer = self.layer.get_untracked();
        spawn_local(async move {
            let answer = ipc::memory_search(&query, layer.as_deref(), SEARCH_LIMIT).await;
            if self.search_request.get_value() == request {
                show_if_new(self.answer, answer);
            }
        });
    }

    fn clear_search(self) {
        next(self.search_request);
        self.draft.set(String::new());
        self.searched.set(None);
        self.answer.set(None);
        self.explain.set(false);
    }

    fn set_layer(self, layer: Option<String>) {
        self.layer.set(layer);
        self.offset.set(0);
        self.load_items();
        self.rerun_search();
    }

    fn page(self, forward: bool) {
        let offset = self.offset.get_untracked();
        self.offset.set(if forward {
            offset + PAGE
        } else {
            offset.saturating_sub(PAGE)
        });
        self.load_items();
    }

    /// Shows one entry in the detail pane, read afresh.
    fn open(self, id: i64) {
        self.selected.set(Some(id));
        self.editing.set(None);
        self.confirming.set(false);
        self.notice.set(None);
        self.detail.set(None);
        self.load_detail();
    }

    fn load_detail(self) {
        let Some(id) = self.selected.get_untracked() else {
            return;
        };
        let request = next(self.detail_request);
        spawn_local(async move {
            let answer = ipc::memory_get(id).await;
            if self.detail_request.get_value() == request {
                show_if_new(self.detail, answer);
            }
        });
    }

    fn close(self) {
        next(self.detail_request);
        self.selected.set(None);
        self.detail.set(None);
        self.editing.set(None);
        self.confirming.set(false);
    }

    fn save(self) {
        let (Some(id), Some(text)) = (self.selected.get_untracked(), self.editing.get_untracked())
        else {
            return;
        };
        if text.trim().is_empty() {
            self.notice.set(Some(Notice {
                text: t("A memory needs some text: write something, or delete it instead.").into(),
                error: true,
            }));
            return;
        }
        self.busy.set(true);
        spawn_local(async move {
            match ipc::memory_edit(id, &text).await {
                Ok(memory) => {
                    self.detail.set(Some(Ok(memory)));
                    self.editing.set(None);
                    self.notice.set(Some(Notice {
                        text: tf(
                            "Memory #{id} saved and re-indexed.",
                            &[("id", &id.to_string())],
                        ),
                        error: false,
                    }));
                    self.load_items();
                    self.rerun_search();
                    self.note_revision();
                }
                Err(e) => self.notice.set(Some(Notice {
                    text: tf("Not saved: {error}", &[("error", &e.message)]),
                    error: true,
                })),
            }
            self.busy.set(false);
        });
    }

    fn delete(self) {
        let Some(id) = self.selected.get_untracked() else {
            return;
        };
        self.busy.set(true);
        spawn_local(async move {
            match ipc::memory_delete(id).await {
                Ok(_) => {
                    self.close();
                    self.notice.set(Some(Notice {
                        text: tf(
                            "Memory #{id} deleted: its text has left the database.",
                            &[("id", &id.to_string())],
                        ),
                        error: false,
                    }));
                    self.load_overview();
                    self.load_items();
                    self.rerun_search();
                    self.note_revision();
                }
                Err(e) => {
                    self.confirming.set(false);
                    self.notice.set(Some(Notice {
                        text: tf("Not deleted: {error}", &[("error", &e.message)]),
                        error: true,
                    }));
                }
            }
            self.busy.set(false);
        });
    }

    fn load_analysis(self) {
        spawn_local(async move {
            let answer = ipc::memory_analysis().await;
            show_if_new(self.analysis, answer);
        });
    }

    fn show(self, tab: Tab) {
        self.tab.set(tab);
        if tab == Tab::Analytics {
            self.load_analysis();
        }
    }

    /// Opens the entries with `layer` as the filter.
    fn browse(self, layer: Option<String>) {
        self.tab.set(Tab::Entries);
        self.clear_search();
        self.set_layer(layer);
    }

    /// Runs a logged search again, explained.
    fn replay(self, query: String) {
        self.tab.set(Tab::Entries);
        self.draft.set(query);
        self.explain.set(true);
        self.search();
    }

    fn refresh(self) {
        self.load_overview();
        self.load_items();
        self.rerun_search();
        if self.editing.get_untracked().is_none() {
            self.load_detail();
        }
        if self.tab.get_untracked() == Tab::Analytics {
            self.load_analysis();
        }
    }
}

/// Puts an answer on the page only when it differs from what is shown, so a refresh that finds
/// nothing new leaves the rows (and the focus and whatever is being clicked) alone.
fn show_if_new<T: PartialEq + Send + Sync + 'static>(
    shown: RwSignal<Loaded<T>>,
    answer: Result<T, ApiError>,
) {
    if shown.with_untracked(|now| now.as_ref() != Some(&answer)) {
        shown.set(Some(answer));
    }
}

/// Bumps a request counter and returns the new number.
fn next(counter: StoredValue<u32>) -> u32 {
    counter.update_value(|n| *n = n.wrapping_add(1));
    counter.get_value()
}

// ---------------------------------------------------------------------------------------------
// The page.

#[component]
pub fn MemoryPage() -> impl IntoView {
    let panel = Panel::new();
    // "Memory #9 deleted" and the like fade; the page's notices stay on the page.
    crate::notice::fade_in_time(panel.notice, |n| n.text.as_str());
    panel.load_overview();
    panel.load_items();
    panel.follow_changes();
    if let Ok(handle) = set_interval_with_handle(
        move || panel.follow_changes(),
        std::time::Duration::from_secs(2),
    ) {
        on_cleanup(move || handle.clear());
    }

    let tab_button = move |tab: Tab, id: &'static str, label: &'static str| {
        view! {
            <button
                id=id
                role="tab"
                class="mem-tab"
                aria-selected=move || if panel.tab.get() == tab { "true" } else { "false" }
                on:click=move |_| panel.show(tab)
            >
                {label}
            </button>
        }
    };

    view! {
        <div class="memory-page" id="memory-page">
            <header class="mem-head">
                <div>
                    <h1 class="page-title">{t("Memory")}</h1>
                    <p class="hint">
                        {t("What Cairn remembers from your tasks and your other agents, and how recall uses it.")}
                    </p>
                </div>
                <button id="mem-refresh" class="secondary" on:click=move |_| panel.refresh()>
                    {t("Refresh")}
                </button>
            </header>
            <div class="mem-tabs" role="tablist" aria-label=t("Memory views")>
                {tab_button(Tab::Overview, "mem-tab-overview", t("Overview"))}
                {tab_button(Tab::Entries, "mem-tab-entries", t("Memories"))}
                {tab_button(Tab::Analytics, "mem-tab-analytics", t("Analytics"))}
            </div>
            {move || match panel.tab.get() {
                Tab::Overview => view! { <OverviewTab panel /> }.into_any(),
                Tab::Entries => view! { <EntriesTab panel /> }.into_any(),
                Tab::Analytics => view! { <AnalyticsTab panel /> }.into_any(),
            }}
        </div>
    }
}

#[component]
fn Failure(error: ApiError) -> impl IntoView {
    view! {
        <div class="card mem-failure" role="alert">
            <h3>{t("The memory could not be read")}</h3>
            <p class="error-text">{error.message}</p>
        </div>
    }
}

#[component]
fn Loading() -> impl IntoView {
    view! { <p class="hint mem-loading">{t("Loading…")}</p> }
}

/// What a fresh home shows: what fills the memory.
#[component]
fn EmptyMemory() -> impl IntoView {
    view! {
        <div class="card mem-empty" id="mem-empty">
            <h3>{t("Nothing remembered yet")}</h3>
            <p>{t("Cairn's memory fills by itself as you work:")}</p>
            <ul>
                <li>
                    <strong>{t("Your tasks. ")}</strong>
                    {t("Every task you run in Cairn is kept as L1 traces: your request, the answer, the tools it used.")}
                </li>
                <li>
                    <strong>{t("Your other agents. ")}</strong>
                    {t("On the Sources page, Cairn reads the history of Claude Code, Codex, Cursor and others, and keeps it in sync through their hooks.")}
                </li>
                <li>
                    <strong>{t("Explicit notes. ")}</strong>
                    {t("Agents and scripts can write a memory directly:")}
                    <code class="mem-code">"cairn memory add \"The staging DB runs Postgres 16\" --layer L3"</code>
                </li>
            </ul>
            <p>{t("Relevant memories are then recalled into each new task, and you can inspect, correct or delete them here.")}</p>
        </div>
    }
}

//! The Memory page: what Cairn remembers, counted by layer and source; the entries, browsed by layer
//! or searched with every candidate explained; one entry in full, to edit or delete; and how memory
//! and recall have been doing (memories per day by source, the hit rate, the search log).

use cairn_protocol::ApiError;
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::i18n::{t, tf};
use crate::ipc;
use cairn_protocol::calendar::{civil_from_days, day_name, days_from_civil};

/// Entries per page of the list.
const PAGE: usize = 20;
/// Candidates an explained search keeps at most.
const SEARCH_LIMIT: usize = 10;
/// Searches the analytics table shows.
const RECENT_SEARCHES: usize = 15;

// What the commands answer: the memory's own types, from the protocol crate.
use cairn_protocol::memory::{
    Analysis, MemoryRecord as Memory, Overview, SearchHit as Hit, SearchResult as SearchAnswer,
    Status, Trace as Channel,
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
                self.overview.set(Some(answer));
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
                self.items.set(Some(answer));
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
                self.answer.set(Some(answer));
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
                self.detail.set(Some(answer));
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
            self.analysis.set(Some(answer));
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

/// Bumps a request counter and returns the new number.
fn next(counter: StoredValue<u32>) -> u32 {
    counter.update_value(|n| *n = n.wrapping_add(1));
    counter.get_value()
}

/// Focuses the element with this id once it is on the page.
fn focus_soon(id: &'static str) {
    use wasm_bindgen::JsCast;
    request_animation_frame(move || {
        if let Some(element) = web_sys::window()
            .and_then(|w| w.document())
            .and_then(|d| d.get_element_by_id(id))
            .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok())
        {
            let _ = element.focus();
        }
    });
}

// ---------------------------------------------------------------------------------------------
// The page.

#[component]
pub fn MemoryPage() -> impl IntoView {
    let panel = Panel::new();
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

// --- Overview ----------------------------------------------------------------------------------

#[component]
fn OverviewTab(panel: Panel) -> impl IntoView {
    view! {
        <section id="mem-overview" class="mem-section" role="tabpanel" aria-labelledby="mem-tab-overview">
            {move || match panel.overview.get() {
                None => view! { <Loading /> }.into_any(),
                Some(Err(error)) => view! { <Failure error /> }.into_any(),
                Some(Ok(overview)) => overview_view(panel, overview).into_any(),
            }}
        </section>
    }
}

fn overview_view(panel: Panel, o: Overview) -> impl IntoView {
    let turns_note =
        (o.skipped_turns > 0).then(|| tf("{n} skipped", &[("n", &o.skipped_turns.to_string())]));
    let stats = view! {
        <div class="mem-stats">
            <Stat id="mem-stat-total" label=t("Memories") value=o.total.to_string() />
            <Stat id="mem-stat-sessions" label=t("Sessions") value=o.sessions.to_string() />
            <Stat id="mem-stat-turns" label=t("Turns captured") value=o.turns.to_string() note=turns_note />
            <Stat id="mem-stat-size" label=t("On disk") value=crate::format::bytes(o.storage_bytes.max(0) as u64) />
        </div>
    };
    if o.total == 0 {
        return view! { {stats} <EmptyMemory /> }.into_any();
    }
    let layer_max = layers()
        .iter()
        .map(|l| count_of(&o.by_layer, l.key))
        .max()
        .unwrap_or(0);
    let layers = layers()
        .iter()
        .map(|l| {
            let n = count_of(&o.by_layer, l.key);
            let key = l.key;
            view! {
                <li>
                    <button
                        class="mem-bar-row"
                        id=format!("mem-overview-{key}")
                        title=tf("Show the {name}", &[("name", &l.plural.to_lowercase())])
                        on:click=move |_| panel.browse(Some(key.to_owned()))
                    >
                        <LayerBadge layer=key.to_owned() />
                        <span class="mem-row-name">
                            {l.plural}
                            <small>{l.blurb}</small>
                        </span>
                        <span class="mem-bar" aria-hidden="true">
                            <span style=format!("width: {:.1}%", share(n, layer_max))></span>
                        </span>
                        <span class="mem-row-count">{n}</span>
                    </button>
                </li>
            }
        })
        .collect_view();
    let source_max = o.by_source.iter().map(|s| s.1).max().unwrap_or(0);
    let sources = o
        .by_source
        .iter()
        .map(|(source, n)| {
            let colour = source_colour(source);
            view! {
                <li class="mem-bar-row static">
                    <span class=format!("mem-swatch mem-src-{colour}")></span>
                    <span class="mem-row-name">{source.clone()}</span>
                    <span class="mem-bar" aria-hidden="true">
                        <span
                            class=format!("mem-src-{colour}")
                            style=format!("width: {:.1}%", share(*n, source_max))
                        ></span>
                    </span>
                    <span class="mem-row-count">{*n}</span>
                </li>
            }
        })
        .collect_view();
    view! {
        {stats}
        <div class="mem-cards">
            <div class="card mem-card" id="mem-by-layer">
                <h3>{t("By layer")}</h3>
                <ul class="mem-bars">{layers}</ul>
            </div>
            <div class="card mem-card" id="mem-by-source">
                <h3>{t("By source")}</h3>
                <ul class="mem-bars">{sources}</ul>
            </div>
        </div>
    }
    .into_any()
}

#[component]
fn Stat(
    id: &'static str,
    label: &'static str,
    value: String,
    #[prop(optional_no_strip)] note: Option<String>,
) -> impl IntoView {
    view! {
        <div class="mem-stat" id=id>
            <span class="mem-stat-value">{value}</span>
            <span class="mem-stat-label">{label}</span>
            {note.map(|n| view! { <span class="mem-stat-note">{n}</span> })}
        </div>
    }
}

#[component]
fn LayerBadge(layer: String) -> impl IntoView {
    let info = layer_info(&layer);
    let class = format!("mem-badge layer-{}", info.map_or("other", |l| l.key));
    let title = info.map_or_else(|| layer.clone(), |l| l.singular.to_owned());
    let short = info.map_or(layer, |l| l.short.to_owned());
    view! { <span class=class title=title>{short}</span> }
}

// --- Entries -----------------------------------------------------------------------------------

#[component]
fn EntriesTab(panel: Panel) -> impl IntoView {
    let filter_button = move |key: Option<&'static str>, label: &'static str| {
        let id = format!("mem-layer-{}", key.unwrap_or("all"));
        let count = move || {
            panel.overview.with(|o| match o {
                Some(Ok(o)) => Some(match key {
                    None => o.total,
                    Some(key) => count_of(&o.by_layer, key),
                }),
                _ => None,
            })
        };
        view! {
            <button
                id=id
                class="mem-filter-button"
                aria-pressed=move || {
                    if panel.layer.get().as_deref() == key { "true" } else { "false" }
                }
                on:click=move |_| panel.set_layer(key.map(str::to_owned))
            >
                {label}
                <span class="mem-filter-count">{move || count().map(|n| n.to_string())}</span>
            </button>
        }
    };
    let filters = std::iter::once(filter_button(None, t("All")))
        .chain(
            layers()
                .iter()
                .map(|l| filter_button(Some(l.key), l.plural)),
        )
        .collect_view();

    view! {
        <section id="mem-entries" class="mem-section" role="tabpanel" aria-labelledby="mem-tab-entries">
            <div class="mem-toolbar">
                <div class="mem-filter" role="group" aria-label=t("Layer")>{filters}</div>
                <form class="mem-search" role="search" on:submit=move |ev| {
                    ev.prevent_default();
                    panel.search();
                }>
                    <label for="mem-search-input" class="sr-only">{t("Search memories")}</label>
                    <input
                        id="mem-search-input"
                        type="search"
                        placeholder=t("Search memories…")
                        prop:value=move || panel.draft.get()
                        on:input=move |ev| panel.draft.set(event_target_value(&ev))
                        on:keydown=move |ev: web_sys::KeyboardEvent| {
                            if ev.key() == "Escape" && panel.searched.get_untracked().is_some() {
                                panel.clear_search();
                            }
                        }
                    />
                    <button id="mem-search-go" class="primary" type="submit">{t("Search")}</button>
                </form>
            </div>
            <p id="mem-notice" role="status" aria-live="polite" class=move || {
                match panel.notice.get() {
                    Some(Notice { error: true, .. }) => "mem-notice error",
                    Some(_) => "mem-notice",
                    None => "mem-notice empty",
                }
            }>
                {move || panel.notice.get().map(|n| n.text)}
            </p>
            <div class=move || {
                if panel.selected.get().is_some() { "mem-split with-detail" } else { "mem-split" }
            }>
                <div class="mem-results">
                    {move || {
                        if panel.searched.get().is_some() {
                            view! { <SearchResults panel /> }.into_any()
                        } else {
                            view! { <EntryList panel /> }.into_any()
                        }
                    }}
                </div>
                <Show when=move || panel.selected.get().is_some()>
                    <Detail panel />
                </Show>
            </div>
        </section>
    }
}

/// One entry in a list: its layer, source, date and the start of it.
fn entry_button(panel: Panel, memory: &Memory, score: Option<f64>) -> impl IntoView {
    let id = memory.id;
    let preview = preview(memory);
    let when = short_date(memory.created_at);
    view! {
        <li>
            <button
                class=move || {
                    if panel.selected.get() == Some(id) { "mem-item selected" } else { "mem-item" }
                }
                data-id=id.to_string()
                on:click=move |_| panel.open(id)
            >
                <span class="mem-item-head">
                    <LayerBadge layer=memory.layer.as_str().to_owned() />
                    <span class="mem-item-source">{memory.source.clone()}</span>
                    <span class="mem-item-id">"#"{id}</span>
                    {score.map(|s| view! { <span class="mem-item-score" title=t("Fused relevance")>{format!("{s:.3}")}</span> })}
                    <span class="mem-item-date">{when}</span>
                </span>
                <span class="mem-item-text">{preview}</span>
            </button>
        </li>
    }
}

#[component]
fn EntryList(panel: Panel) -> impl IntoView {
    let total = move || {
        panel.overview.with(|o| match o {
            Some(Ok(o)) => Some(match panel.layer.get().as_deref() {
                None => o.total,
                Some(key) => count_of(&o.by_layer, key),
            }),
            _ => None,
        })
    };
    move || match panel.items.get() {
        None => view! { <Loading /> }.into_any(),
        Some(Err(error)) => view! { <Failure error /> }.into_any(),
        Some(Ok(items)) if items.is_empty() && panel.offset.get() == 0 => {
            match panel.layer.get().as_deref().and_then(layer_info) {
                None => view! { <EmptyMemory /> }.into_any(),
                Some(layer) => view! {
                    <div class="card mem-empty" id="mem-empty">
                        <h3>{tf("No {name} yet", &[("name", &layer.plural.to_lowercase())])}</h3>
                        <p>{tf("{blurb}. {origin}", &[("blurb", layer.blurb), ("origin", layer.origin)])}</p>
                    </div>
                }
                .into_any(),
            }
        }
        Some(Ok(items)) => {
            let offset = panel.offset.get();
            let shown = items.len();
            let total = total();
            let more = match total {
                Some(total) => ((offset + shown) as i64) < total,
                None => shown == PAGE,
            };
            let rows = items
                .iter()
                .map(|m| entry_button(panel, m, None))
                .collect_view();
            view! {
                <ul id="mem-list" class="mem-list">{rows}</ul>
                <nav class="mem-pager" aria-label=t("Pages of memories")>
                    <span id="mem-range" class="hint">{page_range(offset, shown, total)}</span>
                    <button
                        id="mem-prev"
                        class="secondary"
                        disabled={offset == 0}
                        on:click=move |_| panel.page(false)
                    >
                        {t("Previous")}
                    </button>
                    <button id="mem-next" class="secondary" disabled={!more} on:click=move |_| panel.page(true)>
                        {t("Next")}
                    </button>
                </nav>
            }
            .into_any()
        }
    }
}

#[component]
fn SearchResults(panel: Panel) -> impl IntoView {
    move || {
        let query = panel.searched.get().unwrap_or_default();
        match panel.answer.get() {
            None => view! { <p class="hint mem-loading">{t("Searching…")}</p> }.into_any(),
            Some(Err(error)) => view! { <Failure error /> }.into_any(),
            Some(Ok(answer)) => {
                let summary = search_summary(&query, &answer);
                let candidates = candidates(&answer);
                let body = if candidates.is_empty() {
                    view! {
                        <div class="card mem-empty" id="mem-no-hits">
                            <h3>{tf("Nothing matched “{query}”", &[("query", &query)])}</h3>
                            <p>
                                {t("Recall looks for the words and identifiers of your query (and their meaning, when the embedding model is installed). Try fewer or other words, or another layer.")}
                            </p>
                        </div>
                    }
                    .into_any()
                } else if panel.explain.get() {
                    explain_view(panel, candidates).into_any()
                } else if answer.hits.is_empty() {
                    view! {
                        <p class="hint mem-none-kept">
                            {t("Candidates were found but none was kept: open the explanation to see why.")}
                        </p>
                    }
                    .into_any()
                } else {
                    let rows = answer
                        .hits
                        .iter()
                        .map(|h| entry_button(panel, &h.memory, Some(h.score)))
                        .collect_view();
                    view! { <ul id="mem-list" class="mem-list">{rows}</ul> }.into_any()
                };
                view! {
                    <div class="mem-search-head">
                        <p id="mem-search-summary">{summary}</p>
                        <div class="mem-search-actions">
                        <button
                            id="mem-explain-toggle"
                            class="secondary"
                            aria-expanded=move || if panel.explain.get() { "true" } else { "false" }
                            aria-controls="mem-explain"
                            on:click=move |_| panel.explain.update(|e| *e = !*e)
                        >
                            {move || if panel.explain.get() { t("Show results") } else { t("Explain this search") }}
                        </button>
                        <button id="mem-search-clear" class="secondary" on:click=move |_| panel.clear_search()>
                            {t("Clear search")}
                        </button>
                        </div>
                    </div>
                    {body}
                }
                .into_any()
            }
        }
    }
}

fn explain_view(panel: Panel, candidates: Vec<Hit>) -> impl IntoView {
    let rows = candidates
        .into_iter()
        .enumerate()
        .map(|(i, hit)| {
            let id = hit.memory.id;
            let chips = || {
                hit.channels
                    .iter()
                    .map(|c| {
                        view! {
                            <span class="mem-chip" title=channel_title(c)>
                                <b>{c.channel.clone()}</b>
                                {format!(" #{} · {}", c.rank + 1, raw_score(c.score))}
                            </span>
                        }
                    })
                    .collect_view()
            };
            let fused = format!("{:.3}", hit.score);
            let kept = hit.kept;
            let (outcome, class) = if hit.kept {
                (t("Kept"), "mem-outcome kept")
            } else {
                (t("Dropped"), "mem-outcome dropped")
            };
            view! {
                <tr
                    class=move || {
                        let outcome = if kept { "kept" } else { "dropped" };
                        if panel.selected.get() == Some(id) { format!("{outcome} selected") } else { outcome.to_owned() }
                    }
                    data-id=id.to_string()
                >
                    <td class="num">{i + 1}</td>
                    <td class="mem-explain-memory">
                        <button class="mem-link" on:click=move |_| panel.open(id) title=t("Open this memory")>
                            <LayerBadge layer=hit.memory.layer.as_str().to_owned() />
                            <span class="mem-item-id">"#"{id}</span>
                            <span class="mem-explain-text">{preview(&hit.memory)}</span>
                        </button>
                        // Beside an open entry the table narrows: channels and score go under the text.
                        <div class="mem-explain-inline">
                            {chips()}
                            <span class="mem-explain-fused">{tf("fused {score}", &[("score", &fused)])}</span>
                        </div>
                    </td>
                    <td class="mem-explain-channels">{chips()}</td>
                    <td class="num mem-explain-score">{fused}</td>
                    <td>
                        <span class=class>{outcome}</span>
                        <span class="mem-reason">{reason_text(&hit.reason)}</span>
                    </td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <div class="mem-explain-wrap">
            <table id="mem-explain" class="mem-explain">
                <caption>
                    {t("Every candidate the recall channels found, by fused score. A candidate's score is its best channel score plus a bonus for each channel's rank and for recency; those under 20% of the best are dropped unless two channels agree.")}
                </caption>
                <thead>
                    <tr>
                        <th scope="col" class="num">"#"</th>
                        <th scope="col">{t("Memory")}</th>
                        <th scope="col" class="mem-explain-channels">{t("Found by (rank · raw score)")}</th>
                        <th scope="col" class="num mem-explain-score">{t("Fused")}</th>
                        <th scope="col">{t("Outcome")}</th>
                    </tr>
                </thead>
                <tbody>{rows}</tbody>
            </table>
        </div>
    }
}

// --- Detail ------------------------------------------------------------------------------------

#[component]
fn Detail(panel: Panel) -> impl IntoView {
    view! {
        <aside id="mem-detail" class="card mem-detail" aria-label=t("Memory details")>
            {move || match panel.detail.get() {
                None => view! { <Loading /> }.into_any(),
                Some(Err(error)) => view! {
                    <div class="mem-detail-head">
                        <h2>{t("Memory unavailable")}</h2>
                        <CloseButton panel />
                    </div>
                    <p class="error-text">{error.message}</p>
                }
                .into_any(),
                Some(Ok(memory)) => detail_view(panel, memory).into_any(),
            }}
        </aside>
    }
}

#[component]
fn CloseButton(panel: Panel) -> impl IntoView {
    view! {
        <button id="mem-detail-close" class="mem-close" aria-label=t("Close the details") title=t("Close") on:click=move |_| panel.close()>
            "×"
        </button>
    }
}

fn detail_view(panel: Panel, m: Memory) -> impl IntoView {
    let id = m.id;
    let text = m.text.clone();
    let start_edit = move |_: leptos::ev::MouseEvent| {
        panel.confirming.set(false);
        panel.notice.set(None);
        panel.editing.set(Some(text.clone()));
        focus_soon("mem-edit-text");
    };
    let layer_name = layer_info(m.layer.as_str())
        .map_or_else(|| m.layer.as_str().to_owned(), |l| l.singular.to_owned());
    let field = |label: &'static str, value: Option<String>| {
        value.map(|value| view! { <dt>{label}</dt><dd>{value}</dd> })
    };
    let updated = (m.updated_at != m.created_at).then(|| long_date(m.updated_at));
    // A short memory is its own summary: no need to say it twice.
    let show_summary = !m.summary.trim().is_empty() && m.summary.trim() != m.text.trim();
    let summary_by = if m.summary_source == "model" {
        t("written by the summary model")
    } else {
        t("first sentences, until the summary model rewrites it")
    };
    let metadata = match &m.metadata {
        serde_json::Value::Object(map) if !map.is_empty() => {
            serde_json::to_string_pretty(&m.metadata).ok()
        }
        serde_json::Value::Null | serde_json::Value::Object(_) => None,
        other => Some(other.to_string()),
    };
    view! {
        <div class="mem-detail-head">
            <LayerBadge layer=m.layer.as_str().to_owned() />
            <h2 id="mem-detail-title">{tf("Memory #{id}", &[("id", &id.to_string())])}</h2>
            {(m.status != Status::Activated).then(|| view! { <span class="mem-status">{m.status.as_str()}</span> })}
            <CloseButton panel />
        </div>
        <Show
            when=move || panel.editing.with(Option::is_some)
            fallback=move || view! { <p id="mem-detail-text" class="mem-text">{m.text.clone()}</p> }
        >
            <label for="mem-edit-text" class="sr-only">{t("Memory text")}</label>
            <textarea
                id="mem-edit-text"
                class="mem-editor"
                rows="8"
                prop:value=panel.editing.get_untracked().unwrap_or_default()
                on:input=move |ev| panel.editing.set(Some(event_target_value(&ev)))
                on:keydown=move |ev: web_sys::KeyboardEvent| {
                    if ev.key() == "Enter" && (ev.ctrl_key() || ev.meta_key()) {
                        ev.prevent_default();
                        panel.save();
                    } else if ev.key() == "Escape" {
                        panel.editing.set(None);
                    }
                }
            ></textarea>
        </Show>
        <Show
            when=move || panel.editing.with(Option::is_some)
            fallback=move || {
                let start_edit = start_edit.clone();
                view! {
                    <div class="mem-actions">
                        <button id="mem-edit" class="secondary" on:click=start_edit disabled=move || panel.busy.get()>
                            {t("Edit")}
                        </button>
                        <button
                            id="mem-delete"
                            class="mem-danger-quiet"
                            disabled=move || panel.busy.get()
                            on:click=move |_| {
                                panel.confirming.set(true);
                                focus_soon("mem-delete-cancel");
                            }
                        >
                            {t("Delete…")}
                        </button>
                    </div>
                }
            }
        >
            <div class="mem-actions">
                <button id="mem-save" class="primary" disabled=move || panel.busy.get() on:click=move |_| panel.save()>
                    {move || if panel.busy.get() { t("Saving…") } else { t("Save") }}
                </button>
                <button id="mem-cancel" class="secondary" on:click=move |_| panel.editing.set(None)>
                    {t("Cancel")}
                </button>
                <span class="hint mem-keys">{t("Ctrl+Enter saves · Esc cancels")}</span>
            </div>
        </Show>
        <Show when=move || panel.confirming.get()>
            <div id="mem-confirm" class="mem-confirm" role="alertdialog" aria-labelledby="mem-confirm-text">
                <p id="mem-confirm-text">
                    {tf("Delete memory #{id}? Its text leaves the database and recall forgets it. This cannot be undone.", &[("id", &id.to_string())])}
                </p>
                <div class="mem-actions">
                    <button id="mem-delete-confirm" class="mem-danger" disabled=move || panel.busy.get() on:click=move |_| panel.delete()>
                        {t("Delete memory")}
                    </button>
                    <button id="mem-delete-cancel" class="secondary" on:click=move |_| panel.confirming.set(false)>
                        {t("Keep it")}
                    </button>
                </div>
            </div>
        </Show>
        <dl class="mem-fields">
            {field(t("Layer"), Some(layer_name))}
            {field(t("Source"), Some(m.source.clone()))}
            {field(t("Session"), Some(m.session.clone().unwrap_or_else(|| t("none").to_owned())))}
            {field(t("Created"), Some(long_date(m.created_at)))}
            {field(t("Edited"), updated)}
            {field(t("Status"), Some(m.status.as_str().to_owned()))}
            {field(t("Turn"), m.turn_id.map(|t| format!("#{t}")))}
            {field(t("Episode"), m.episode_id.map(|e| format!("#{e}")))}
            {field(t("External id"), m.external_id.clone())}
        </dl>
        {show_summary.then(|| view! {
            <div class="mem-summary">
                <h3>{t("Summary")}</h3>
                <p>{m.summary.clone()}</p>
                <p class="hint">{summary_by}</p>
            </div>
        })}
        {metadata.map(|json| view! {
            <details class="mem-meta">
                <summary>{t("Metadata")}</summary>
                <pre>{json}</pre>
            </details>
        })}
    }
}

// --- Analytics ---------------------------------------------------------------------------------

#[component]
fn AnalyticsTab(panel: Panel) -> impl IntoView {
    view! {
        <section id="mem-analytics" class="mem-section" role="tabpanel" aria-labelledby="mem-tab-analytics">
            {move || match panel.analysis.get() {
                None => view! { <Loading /> }.into_any(),
                Some(Err(error)) => view! { <Failure error /> }.into_any(),
                Some(Ok(analysis)) => analytics_view(panel, analysis).into_any(),
            }}
        </section>
    }
}

fn analytics_view(panel: Panel, a: Analysis) -> impl IntoView {
    let (rate, rate_note, mean) = if a.searches == 0 {
        ("—".to_owned(), None, "—".to_owned())
    } else {
        (
            format!("{:.0}%", a.hit_rate),
            Some(t("of searches found something").to_owned()),
            crate::format::duration_ms(a.mean_search_ms),
        )
    };
    let chart = match chart(&a.memories_per_day) {
        None => view! {
            <p class="hint mem-chart-empty">
                {t("No memories yet. The chart fills as tasks, your other agents' history and explicit notes are remembered.")}
            </p>
        }
        .into_any(),
        Some(chart) => chart_view(chart).into_any(),
    };
    let searches = if a.recent_searches.is_empty() {
        view! {
            <p class="hint">
                {t("No searches yet. Each recall, from a Cairn task, an agent's hook or this page, is logged here with what it found and how long it took.")}
            </p>
        }
        .into_any()
    } else {
        let rows = a
            .recent_searches
            .into_iter()
            .take(RECENT_SEARCHES)
            .map(|s| {
                let query = s.query.clone();
                view! {
                    <tr class={if s.hits == 0 { "mem-miss" } else { "" }}>
                        <td class="mem-when">{short_date(s.at)}</td>
                        <td>
                            <button class="mem-link" title=t("Run it again, explained") on:click=move |_| panel.replay(query.clone())>
                                {s.query.clone()}
                            </button>
                        </td>
                        <td class="num">{s.hits}</td>
                        <td class="num">{crate::format::duration_ms(s.took_ms)}</td>
                    </tr>
                }
            })
            .collect_view();
        view! {
            <table id="mem-search-log" class="mem-table">
                <thead>
                    <tr>
                        <th scope="col">{t("When")}</th>
                        <th scope="col">{t("Query")}</th>
                        <th scope="col" class="num">{t("Hits")}</th>
                        <th scope="col" class="num">{t("Took")}</th>
                    </tr>
                </thead>
                <tbody>{rows}</tbody>
            </table>
        }
        .into_any()
    };
    view! {
        <div class="mem-stats">
            <Stat id="mem-stat-searches" label=t("Searches") value=a.searches.to_string() />
            <Stat id="mem-stat-hit-rate" label=t("Recall hit rate") value=rate note=rate_note />
            <Stat id="mem-stat-mean" label=t("Mean search time") value=mean />
        </div>
        <div class="card mem-card" id="mem-per-day">
            <h3>{t("Memories added per day, by source")}</h3>
            {chart}
        </div>
        <div class="card mem-card" id="mem-recent-searches">
            <h3>{t("Recent searches")}</h3>
            {searches}
        </div>
    }
}

fn chart_view(chart: Chart) -> impl IntoView {
    let label = tf(
        "Memories added per day from {from} to {to}, at most {n} a day",
        &[
            ("from", &chart.first_day),
            ("to", &chart.last_day),
            ("n", &chart.peak.to_string()),
        ],
    );
    let grid = chart
        .y_ticks
        .iter()
        .map(|(y, value)| {
            view! {
                <line class="mem-grid" x1=fmt(PLOT_LEFT) x2=fmt(CHART_W - PLOT_RIGHT) y1=fmt(*y) y2=fmt(*y)></line>
                <text class="mem-axis" x=fmt(PLOT_LEFT - 6.0) y=fmt(y + 4.0) text-anchor="end">{value.to_string()}</text>
            }
        })
        .collect_view();
    let x_labels = chart
        .x_ticks
        .iter()
        .map(|(x, text)| {
            view! {
                <text class="mem-axis" x=fmt(*x) y=fmt(CHART_H - 6.0) text-anchor="middle">{text.clone()}</text>
            }
        })
        .collect_view();
    let bars = chart
        .segments
        .iter()
        .map(|s| {
            let tip = format!("{} · {}: {}", s.day, chart.sources[s.source], s.count);
            view! {
                <rect
                    class=format!("mem-src-{}", source_colour(&chart.sources[s.source]))
                    x=fmt(s.x)
                    y=fmt(s.y)
                    width=fmt(s.w)
                    height=fmt(s.h)
                    rx="1.5"
                >
                    <title>{tip}</title>
                </rect>
            }
        })
        .collect_view();
    let legend = chart
        .sources
        .iter()
        .map(|source| {
            view! {
                <li>
                    <span class=format!("mem-swatch mem-src-{}", source_colour(source))></span>
                    {source.clone()}
                </li>
            }
        })
        .collect_view();
    view! {
        <svg
            id="mem-chart"
            class="mem-chart"
            viewBox=format!("0 0 {CHART_W} {CHART_H}")
            role="img"
            aria-label=label
        >
            {grid}
            {bars}
            {x_labels}
        </svg>
        <ul class="mem-legend" aria-label=t("Sources")>{legend}</ul>
    }
}

fn fmt(v: f64) -> String {
    format!("{v:.1}")
}

// ---------------------------------------------------------------------------------------------
// Plain functions: what the page shows, from the data (unit-tested on the host).

/// A memory layer as the page names it.
#[derive(Clone, Copy)]
struct LayerInfo {
    key: &'static str,
    short: &'static str,
    singular: &'static str,
    plural: &'static str,
    blurb: &'static str,
    origin: &'static str,
}

/// The layers, named in the current language.
fn layers() -> [LayerInfo; 4] {
    [
        LayerInfo {
            key: "L1",
            short: "L1",
            singular: t("L1 trace"),
            plural: t("Traces"),
            blurb: t("What happened in a turn"),
            origin: t("They are captured from every task in Cairn and from your other agents' history."),
        },
        LayerInfo {
            key: "L2",
            short: "L2",
            singular: t("L2 policy"),
            plural: t("Policies"),
            blurb: t("Guidance learned from traces"),
            origin: t("They are induced from valuable traces, or written with cairn memory add --layer L2."),
        },
        LayerInfo {
            key: "L3",
            short: "L3",
            singular: t("L3 world model"),
            plural: t("World models"),
            blurb: t("Stable facts about projects"),
            origin: t("They abstract policies, or are written with cairn memory add --layer L3."),
        },
        LayerInfo {
            key: "skill",
            short: t("Skill"),
            singular: t("Skill"),
            plural: t("Skills"),
            blurb: t("Callable procedures"),
            origin: t("They crystallise from proven policies, or are written with cairn memory add --layer skill."),
        },
    ]
}

fn layer_info(key: &str) -> Option<LayerInfo> {
    layers()
        .into_iter()
        .find(|l| l.key.eq_ignore_ascii_case(key))
}

/// How many colours the source palette has (styles.css `.mem-src-N`).
const PALETTE: usize = 8;

/// A source's colour (`.mem-src-N`), the same on every view: the known agents have their own, any
/// other source one picked by its name.
fn source_colour(source: &str) -> usize {
    const KNOWN: [&str; PALETTE] = [
        "cairn",
        "claude-code",
        "codex",
        "cursor",
        "opencode",
        "gemini",
        "openclaw",
        "hermes",
    ];
    KNOWN.iter().position(|k| *k == source).unwrap_or_else(|| {
        let hash = source.bytes().fold(2_166_136_261u32, |h, b| {
            (h ^ u32::from(b)).wrapping_mul(16_777_619)
        });
        hash as usize % PALETTE
    })
}

fn count_of(counts: &[(String, i64)], key: &str) -> i64 {
    counts
        .iter()
        .filter(|(k, _)| k.eq_ignore_ascii_case(key))
        .map(|(_, n)| n)
        .sum()
}

/// `n` as a percentage of `max`, for a bar.
fn share(n: i64, max: i64) -> f64 {
    if max <= 0 {
        0.0
    } else {
        (n.max(0) as f64 * 100.0 / max as f64).clamp(0.0, 100.0)
    }
}

/// "1–20 of 57", or "21–25" when the total is unknown.
fn page_range(offset: usize, shown: usize, total: Option<i64>) -> String {
    if shown == 0 {
        return match total {
            Some(total) => tf("None here (of {total})", &[("total", &total.to_string())]),
            None => t("None here").to_owned(),
        };
    }
    let range = format!("{}–{}", offset + 1, offset + shown);
    match total {
        Some(total) => tf(
            "{range} of {total}",
            &[("range", &range), ("total", &total.to_string())],
        ),
        None => range,
    }
}

/// What a list shows of a memory: its summary, or the start of its text, on one line.
fn preview(memory: &Memory) -> String {
    let text = if memory.summary.trim().is_empty() {
        memory.text.as_str()
    } else {
        memory.summary.as_str()
    };
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut out: String = line.chars().take(220).collect();
    if line.chars().count() > 220 {
        out = out.trim_end().to_owned();
        out.push('…');
    }
    out
}

/// Kept hits and dropped candidates together, best fused score first.
fn candidates(answer: &SearchAnswer) -> Vec<Hit> {
    let mut all: Vec<Hit> = answer
        .hits
        .iter()
        .chain(answer.dropped.iter())
        .cloned()
        .collect();
    all.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then(b.kept.cmp(&a.kept))
            .then(a.memory.id.cmp(&b.memory.id))
    });
    all
}

fn search_summary(query: &str, answer: &SearchAnswer) -> String {
    let kept = answer.hits.len();
    let found = match kept {
        0 => t("No memory recalled").to_owned(),
        1 => t("1 memory recalled").to_owned(),
        n => tf("{n} memories recalled", &[("n", &n.to_string())]),
    };
    let dropped = match answer.dropped.len() {
        0 => String::new(),
        n => format!(" · {}", tf("{n} dropped", &[("n", &n.to_string())])),
    };
    // The query last: what it holds is not a placeholder.
    tf(
        "{found} for “{query}”{dropped} · {took}",
        &[
            ("found", &found),
            ("dropped", &dropped),
            ("took", &crate::format::duration_ms(answer.took_ms)),
            ("query", query),
        ],
    )
}

/// The reason without its "kept:"/"dropped:" prefix (the outcome badge says it), capitalised.
fn reason_text(reason: &str) -> String {
    let rest = reason
        .strip_prefix("kept:")
        .or_else(|| reason.strip_prefix("dropped:"))
        .unwrap_or(reason)
        .trim();
    let mut chars = rest.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

fn channel_title(channel: &Channel) -> String {
    let what = match channel.channel.as_str() {
        "fts" => t("Keywords (full-text BM25 over the memory and its neighbourhood)"),
        "structural" => t("Identifiers (paths, names, error codes)"),
        "vec" => t("Meaning (embedding similarity)"),
        other => other,
    };
    tf(
        "{what}: rank {rank} in this channel, raw score {score}",
        &[
            ("rank", &(channel.rank + 1).to_string()),
            ("score", &raw_score(channel.score)),
            ("what", what),
        ],
    )
}

fn raw_score(score: f64) -> String {
    if score != 0.0 && score.abs() < 0.001 {
        format!("{score:.1e}")
    } else if score.abs() >= 100.0 {
        format!("{score:.0}")
    } else if score.abs() >= 1.0 {
        format!("{score:.2}")
    } else {
        format!("{score:.3}")
    }
}

/// A moment in local time, as the page shows it.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Moment {
    year: i32,
    /// 1–12.
    month: u32,
    day: u32,
    hour: u32,
    minute: u32,
}

/// `ms` (Unix) in the local time zone, through the webview's clock.
fn local(ms: i64) -> Moment {
    let date = js_sys::Date::new(&wasm_bindgen::JsValue::from_f64(ms as f64));
    Moment {
        year: date.get_full_year() as i32,
        month: date.get_month() + 1,
        day: date.get_date(),
        hour: date.get_hours(),
        minute: date.get_minutes(),
    }
}

fn month(m: u32) -> &'static str {
    match m.max(1) {
        1 => t("Jan"),
        2 => t("Feb"),
        3 => t("Mar"),
        4 => t("Apr"),
        5 => t("May"),
        6 => t("Jun"),
        7 => t("Jul"),
        8 => t("Aug"),
        9 => t("Sep"),
        10 => t("Oct"),
        11 => t("Nov"),
        12 => t("Dec"),
        _ => "?",
    }
}

/// "14:05" today, "3 Mar" this year, "3 Mar 2024" before.
fn short_moment(at: Moment, now: Moment) -> String {
    let time = format!("{:02}:{:02}", at.hour, at.minute);
    let day = at.day.to_string();
    if (at.year, at.month, at.day) == (now.year, now.month, now.day) {
        tf("Today {time}", &[("time", &time)])
    } else if at.year == now.year {
        tf(
            "{day} {month}",
            &[("day", &day), ("month", month(at.month))],
        )
    } else {
        tf(
            "{day} {month} {year}",
            &[
                ("day", &day),
                ("month", month(at.month)),
                ("year", &at.year.to_string()),
            ],
        )
    }
}

fn long_moment(at: Moment) -> String {
    tf(
        "{day} {month} {year}, {time}",
        &[
            ("day", &at.day.to_string()),
            ("month", month(at.month)),
            ("year", &at.year.to_string()),
            ("time", &format!("{:02}:{:02}", at.hour, at.minute)),
        ],
    )
}

fn short_date(ms: i64) -> String {
    short_moment(local(ms), local(js_sys::Date::now() as i64))
}

fn long_date(ms: i64) -> String {
    long_moment(local(ms))
}

/// `YYYY-MM-DD` as a day number.
fn parse_day(day: &str) -> Option<i64> {
    let mut parts = day.trim().splitn(3, '-');
    let year = parts.next()?.parse::<i64>().ok()?;
    let month = parts.next()?.parse::<i64>().ok()?;
    let day = parts.next()?.parse::<i64>().ok()?;
    ((1..=12).contains(&month) && (1..=31).contains(&day))
        .then(|| days_from_civil(year, month, day))
}

fn day_label(days: i64) -> String {
    let (_, m, d) = civil_from_days(days);
    tf(
        "{day} {month}",
        &[("day", &d.to_string()), ("month", month(m as u32))],
    )
}

const CHART_W: f64 = 640.0;
const CHART_H: f64 = 190.0;
const PLOT_LEFT: f64 = 34.0;
const PLOT_RIGHT: f64 = 6.0;
const PLOT_TOP: f64 = 10.0;
const PLOT_BOTTOM: f64 = 24.0;
/// The chart shows at least this many days, so one busy day is not one huge bar.
const MIN_DAYS: i64 = 14;

/// A stacked bar chart of memories per day and source, laid out in the SVG's coordinates.
#[derive(Debug, Clone, PartialEq)]
struct Chart {
    /// Sources, most memories first (their colour is their index).
    sources: Vec<String>,
    segments: Vec<Segment>,
    peak: i64,
    first_day: String,
    last_day: String,
    /// (y, value) of the horizontal grid lines.
    y_ticks: Vec<(f64, i64)>,
    /// (x, label) under the bars.
    x_ticks: Vec<(f64, String)>,
}

#[derive(Debug, Clone, PartialEq)]
struct Segment {
    day: String,
    source: usize,
    count: i64,
    x: f64,
    y: f64,
    w: f64,
    h: f64,
}

/// The smallest of 1, 2, 5 × 10ⁿ at or above `n` (at least 1).
fn nice_top(n: i64) -> i64 {
    let mut step = 1;
    loop {
        for m in [1, 2, 5] {
            if m * step >= n.max(1) {
                return m * step;
            }
        }
        step *= 10;
    }
}

fn chart(per_day: &[(String, String, i64)]) -> Option<Chart> {
    let rows: Vec<(i64, &str, i64)> = per_day
        .iter()
        .filter(|(_, _, n)| *n > 0)
        .filter_map(|(day, source, n)| Some((parse_day(day)?, source.as_str(), *n)))
        .collect();
    let last = rows.iter().map(|r| r.0).max()?;
    let first = rows.iter().map(|r| r.0).min()?.min(last - (MIN_DAYS - 1));
    let days = (last - first + 1) as usize;

    let mut totals: Vec<(String, i64)> = Vec::new();
    for (_, source, n) in &rows {
        match totals.iter_mut().find(|(s, _)| s == source) {
            Some(entry) => entry.1 += n,
            None => totals.push(((*source).to_owned(), *n)),
        }
    }
    totals.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let sources: Vec<String> = totals.into_iter().map(|(s, _)| s).collect();

    let mut per: Vec<Vec<i64>> = vec![vec![0; sources.len()]; days];
    for (day, source, n) in &rows {
        if let Some(s) = sources.iter().position(|x| x == source) {
            per[(day - first) as usize][s] += n;
        }
    }
    let peak = per.iter().map(|d| d.iter().sum::<i64>()).max().unwrap_or(0);
    let top = nice_top(peak);

    let plot_w = CHART_W - PLOT_LEFT - PLOT_RIGHT;
    let plot_h = CHART_H - PLOT_TOP - PLOT_BOTTOM;
    let slot = plot_w / days as f64;
    let bar = (slot * 0.72).max(1.0);
    let unit = plot_h / top as f64;
    let base = PLOT_TOP + plot_h;

    let mut segments = Vec::new();
    for (i, counts) in per.iter().enumerate() {
        let x = PLOT_LEFT + slot * i as f64 + (slot - bar) / 2.0;
        let mut y = base;
        for (s, &count) in counts.iter().enumerate() {
            if count == 0 {
                continue;
            }
            let h = count as f64 * unit;
            y -= h;
            segments.push(Segment {
                day: day_name(first + i as i64),
                source: s,
                count,
                x,
                y,
                w: bar,
                h,
            });
        }
    }

    let mut y_ticks = vec![(base, 0), (PLOT_TOP, top)];
    if top >= 2 && top % 2 == 0 {
        y_ticks.insert(1, (PLOT_TOP + plot_h / 2.0, top / 2));
    }
    let center = |i: i64| PLOT_LEFT + slot * (i as f64 + 0.5);
    let mut x_ticks = vec![(center(0), day_label(first))];
    if days >= 5 {
        let mid = (days as i64 - 1) / 2;
        x_ticks.push((center(mid), day_label(first + mid)));
    }
    x_ticks.push((center(days as i64 - 1), day_label(last)));

    Some(Chart {
        sources,
        segments,
        peak,
        first_day: day_name(first),
        last_day: day_name(last),
        y_ticks,
        x_ticks,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn memory(text: &str, summary: &str) -> Memory {
        Memory {
            id: 1,
            layer: cairn_protocol::memory::Layer::Trace,
            status: Status::Activated,
            text: text.into(),
            source: "cairn".into(),
            external_id: None,
            session: None,
            episode_id: None,
            turn_id: None,
            created_at: 0,
            updated_at: 0,
            metadata: serde_json::json!({}),
            summary: summary.into(),
            summary_source: "heuristic".into(),
        }
    }

    fn hit(id: i64, score: f64, kept: bool) -> Hit {
        let mut memory = memory("text", "");
        memory.id = id;
        Hit {
            memory,
            score,
            channels: vec![Channel {
                channel: "fts".into(),
                rank: 0,
                score: 3.2,
            }],
            kept,
            reason: if kept {
                "above the relative threshold".into()
            } else {
                "dropped: relevance 0.010 is under 20% of the best (0.900)".into()
            },
        }
    }

    #[test]
    fn the_command_answers_read_back() {
        let answer: SearchAnswer = serde_json::from_value(serde_json::json!({
            "hits": [{
                "memory": {
                    "id": 4, "layer": "L3", "status": "activated", "text": "Deploys on Thursdays.",
                    "source": "cairn", "external_id": null, "session": null, "episode_id": null,
                    "turn_id": null, "created_at": 1, "updated_at": 1, "metadata": {},
                    "summary": "Deploys on Thursdays.", "summary_source": "heuristic"
                },
                "score": 0.9,
                "channels": [{ "channel": "fts", "rank": 0, "score": 2.5 }],
                "kept": true,
                "reason": "above the relative threshold"
            }],
            "took_ms": 0.4,
            "injection": "..."
        }))
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(answer.hits[0].memory.layer.as_str(), "L3");
        assert!(answer.dropped.is_empty());
        let overview: Overview = serde_json::from_value(serde_json::json!({
            "total": 3, "by_layer": [["L1", 2], ["L3", 1]], "by_source": [["codex", 3]],
            "sessions": 1, "turns": 2, "skipped_turns": 0, "storage_bytes": 4096
        }))
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(count_of(&overview.by_layer, "L1"), 2);
        assert_eq!(count_of(&overview.by_layer, "skill"), 0);
    }

    #[test]
    fn sizes_times_and_ranges_read_well() {
        assert_eq!(crate::format::duration_ms(0.42), "0.4 ms");
        assert_eq!(crate::format::duration_ms(42.0), "42 ms");
        assert_eq!(crate::format::duration_ms(1500.0), "1.5 s");
        assert_eq!(page_range(0, 20, Some(57)), "1–20 of 57");
        assert_eq!(page_range(40, 17, Some(57)), "41–57 of 57");
        assert_eq!(page_range(20, 5, None), "21–25");
        assert_eq!(share(5, 10), 50.0);
        assert_eq!(share(3, 0), 0.0);
    }

    #[test]
    fn dates_are_local_and_short() {
        let now = Moment {
            year: 2025,
            month: 3,
            day: 4,
            hour: 15,
            minute: 0,
        };
        let at = Moment {
            hour: 9,
            minute: 5,
            ..now
        };
        assert_eq!(short_moment(at, now), "Today 09:05");
        assert_eq!(short_moment(Moment { day: 1, ..at }, now), "1 Mar");
        assert_eq!(short_moment(Moment { year: 2024, ..at }, now), "4 Mar 2024");
        assert_eq!(long_moment(at), "4 Mar 2025, 09:05");
    }

    #[test]
    fn days_parse() {
        assert_eq!(parse_day("2024-02-29"), Some(19_782));
        assert_eq!(parse_day("2024-13-01"), None);
        assert_eq!(parse_day("soon"), None);
    }

    #[test]
    fn previews_prefer_the_summary_and_stay_short() {
        assert_eq!(
            preview(&memory("User: a\n  long   text", "")),
            "User: a long text"
        );
        assert_eq!(
            preview(&memory("full text", "The summary.")),
            "The summary."
        );
        let long = "word ".repeat(100);
        let shown = preview(&memory(&long, ""));
        assert!(shown.ends_with('…'));
        assert!(shown.chars().count() <= 221);
    }

    #[test]
    fn the_explanation_lists_every_candidate_best_first() {
        let answer = SearchAnswer {
            hits: vec![hit(1, 0.9, true), hit(2, 0.5, true)],
            dropped: vec![hit(3, 0.7, false), hit(4, 0.01, false)],
            took_ms: 1.25,
        };
        let ids: Vec<i64> = candidates(&answer).iter().map(|h| h.memory.id).collect();
        assert_eq!(ids, [1, 3, 2, 4]);
        assert_eq!(
            search_summary("nightly build", &answer),
            "2 memories recalled for “nightly build” · 2 dropped · 1.2 ms"
        );
        assert_eq!(
            reason_text("dropped: relevance 0.010 is under 20% of the best (0.900)"),
            "Relevance 0.010 is under 20% of the best (0.900)"
        );
        assert_eq!(
            reason_text("kept: episode rollup of 3 steps, 2 of them matched"),
            "Episode rollup of 3 steps, 2 of them matched"
        );
        assert_eq!(
            reason_text("above the relative threshold"),
            "Above the relative threshold"
        );
        let title = channel_title(&Channel {
            channel: "structural".into(),
            rank: 2,
            score: 7.4,
        });
        assert!(title.starts_with("Identifiers"), "{title}");
        assert_eq!(raw_score(0.000_001_23), "1.2e-6");
        assert_eq!(raw_score(0.0), "0.000");
        assert_eq!(raw_score(0.25), "0.250");
        assert_eq!(raw_score(123.4), "123");
        assert!(
            title.contains("rank 3") && title.contains("7.40"),
            "{title}"
        );
    }

    #[test]
    fn the_chart_stacks_sources_per_day_over_at_least_two_weeks() {
        let per_day = vec![
            ("2025-03-01".to_owned(), "codex".to_owned(), 2),
            ("2025-03-04".to_owned(), "cairn".to_owned(), 1),
            ("2025-03-04".to_owned(), "codex".to_owned(), 3),
        ];
        let chart = chart(&per_day).unwrap_or_else(|| panic!("no chart"));
        assert_eq!(chart.sources, ["codex", "cairn"]);
        assert_eq!(chart.peak, 4);
        assert_eq!(chart.last_day, "2025-03-04");
        assert_eq!(chart.first_day, "2025-02-19");
        assert_eq!(chart.segments.len(), 3);
        // The busiest day's stack: codex at the bottom, cairn on top, together 4/5 of the plot.
        let day: Vec<&Segment> = chart
            .segments
            .iter()
            .filter(|s| s.day == "2025-03-04")
            .collect();
        assert_eq!(day.len(), 2);
        assert_eq!((day[0].source, day[1].source), (0, 1));
        let base = CHART_H - PLOT_BOTTOM;
        assert!((day[0].y + day[0].h - base).abs() < 1e-9);
        assert!((day[1].y + day[1].h - day[0].y).abs() < 1e-9);
        let plot_h = CHART_H - PLOT_TOP - PLOT_BOTTOM;
        assert!((day[0].h + day[1].h - plot_h * 0.8).abs() < 1e-9);
        // Every bar inside the plot, and the last day at the right edge.
        for s in &chart.segments {
            assert!(s.x >= PLOT_LEFT && s.x + s.w <= CHART_W - PLOT_RIGHT + 1e-9);
            assert!(s.y >= PLOT_TOP - 1e-9);
        }
        assert_eq!(chart.x_ticks.last().map(|t| t.1.as_str()), Some("4 Mar"));
        assert_eq!(
            chart.y_ticks.iter().map(|t| t.1).collect::<Vec<_>>(),
            [0, 5]
        );
        assert!(super::chart(&[]).is_none());
        assert_eq!(nice_top(0), 1);
        assert_eq!(nice_top(7), 10);
        assert_eq!(nice_top(12), 20);
        assert_eq!(nice_top(200), 200);
    }
}

//! The Memories tab: entries browsed by layer a page at a time, or searched with every candidate
//! explained (channels, ranks, scores, kept or dropped and why).

use super::*;

#[component]
pub(super) fn EntriesTab(panel: Panel) -> impl IntoView {
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
/// A memory in a list; a search hit also says in plain words why it was recalled (`why`).
pub(super) fn entry_button(
    panel: Panel,
    memory: &Memory,
    score: Option<f64>,
    why: Option<String>,
) -> impl IntoView {
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
                {why.map(|why| view! { <span class="mem-item-why">{why}</span> })}
            </button>
        </li>
    }
}

#[component]
pub(super) fn EntryList(panel: Panel) -> impl IntoView {
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
                .map(|m| entry_button(panel, m, None, None))
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
pub(super) fn SearchResults(panel: Panel) -> impl IntoView {
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
                        .map(|h| entry_button(panel, &h.memory, Some(h.score), Some(hit_why(h))))
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

pub(super) fn explain_view(panel: Panel, candidates: Vec<Hit>) -> impl IntoView {
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
                        <span class="mem-why">{hit_why(&hit)}</span>
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

/// A search hit's plain "why" and where it comes from: "Matches your words “staging database” ·
/// From Claude Code, 3 days ago" (the numbers are in the explanation).
fn hit_why(hit: &Hit) -> String {
    let day = |ms: i64| cairn_protocol::calendar::day_name(ms.div_euclid(86_400_000));
    format!(
        "{} · {}",
        crate::present::recall_why(&hit.words, hit.close_in_meaning),
        crate::present::recall_origin(
            &hit.memory.source,
            &day(hit.memory.created_at),
            &day(js_sys::Date::now() as i64)
        )
    )
}

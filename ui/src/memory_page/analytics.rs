//! The Analytics tab: memories per day by source, and how recall has been doing (the search log).

use super::*;

#[component]
pub(super) fn AnalyticsTab(panel: Panel) -> impl IntoView {
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

pub(super) fn analytics_view(panel: Panel, a: Analysis) -> impl IntoView {
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

pub(super) fn chart_view(chart: Chart) -> impl IntoView {
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

pub(super) fn fmt(v: f64) -> String {
    format!("{v:.1}")
}

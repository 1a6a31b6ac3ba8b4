//! The Overview tab: the memory counted by layer and by source, each layer a way into the entries.

use super::*;

#[component]
pub(super) fn OverviewTab(panel: Panel) -> impl IntoView {
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

pub(super) fn overview_view(panel: Panel, o: Overview) -> impl IntoView {
    let turns_note =
        (o.skipped_turns > 0).then(|| tf("{n} skipped", &[("n", &o.skipped_turns.to_string())]));
    let stats = view! {
        <div class="mem-stats">
            <Stat id="mem-stat-total" label=t("Memories") value=o.total.to_string() note=backlog_note(&o.backlog) />
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
pub(super) fn Stat(
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
pub(super) fn LayerBadge(layer: String) -> impl IntoView {
    let info = layer_info(&layer);
    let class = format!("mem-badge layer-{}", info.map_or("other", |l| l.key));
    let title = info.map_or_else(|| layer.clone(), |l| l.singular.to_owned());
    let short = info.map_or(layer, |l| l.short.to_owned());
    view! { <span class=class title=title>{short}</span> }
}

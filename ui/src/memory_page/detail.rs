//! One entry in full, beside the list: its text, source and dates, to edit or to delete.

use super::*;

#[component]
pub(super) fn Detail(panel: Panel) -> impl IntoView {
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
pub(super) fn CloseButton(panel: Panel) -> impl IntoView {
    view! {
        <button id="mem-detail-close" class="mem-close" aria-label=t("Close the details") title=t("Close") on:click=move |_| panel.close()>
            "×"
        </button>
    }
}

pub(super) fn detail_view(panel: Panel, m: Memory) -> impl IntoView {
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
    let summary_by = if m.summary_source == SummarySource::Model {
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
    let changed =
        m.metadata.get("superseded_by").is_some() || m.metadata.get("supersedes").is_some();
    let learned = lineage_view(panel, &m);
    let superseded = m.metadata.get("superseded_by").and_then(serde_json::Value::as_i64).map(|by| {
        let on = m
            .metadata
            .get("superseded_on")
            .and_then(serde_json::Value::as_i64)
            .map(long_date)
            .unwrap_or_default();
        view! {
            <p id="mem-superseded" class="mem-superseded">
                {tf("Outdated: replaced on {date} by memory #{id}.", &[("date", &on), ("id", &by.to_string())])}
                " "
                <button class="link" on:click=move |_| panel.open(by)>{t("Show the current version")}</button>
            </p>
        }
    });
    view! {
        <div class="mem-detail-head">
            <LayerBadge layer=m.layer.as_str().to_owned() />
            <h2 id="mem-detail-title">{tf("Memory #{id}", &[("id", &id.to_string())])}</h2>
            {(m.status != Status::Activated).then(|| view! { <span class="mem-status">{m.status.as_str()}</span> })}
            <CloseButton panel />
        </div>
        {superseded}
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
        {changed.then(|| view! { <History panel id /> })}
        {learned}
        {metadata.map(|json| view! {
            <details class="mem-meta">
                <summary>{t("Metadata")}</summary>
                <pre>{json}</pre>
            </details>
        })}
    }
}

/// The versions of the fact a memory states, oldest first, the one shown marked; each opens.
#[component]
fn History(panel: Panel, id: i64) -> impl IntoView {
    let versions: RwSignal<Loaded<Vec<Memory>>> = RwSignal::new(None);
    spawn_local(async move {
        versions.set(Some(ipc::memory_versions(id).await));
    });
    view! {
        <div id="mem-history" class="mem-history">
            <h3>{t("History of this fact")}</h3>
            {move || match versions.get() {
                None => view! { <Loading /> }.into_any(),
                Some(Err(error)) => view! { <p class="error-text">{error.message}</p> }.into_any(),
                Some(Ok(list)) => {
                    let last = list.len().saturating_sub(1);
                    view! {
                        <ol class="mem-versions">
                            {list.into_iter().enumerate().map(|(i, v)| {
                                let this = v.id == id;
                                let other = v.id;
                                let label = if i == last { t("current") } else { t("replaced") };
                                view! {
                                    <li class:this=this>
                                        <span class="mem-version-date">{long_date(v.created_at)}</span>
                                        <span class="mem-version-state">{label}</span>
                                        {if this {
                                            view! { <span class="mem-version-text">{v.text.clone()}</span> }.into_any()
                                        } else {
                                            view! {
                                                <button class="link mem-version-text" on:click=move |_| panel.open(other)>
                                                    {v.text.clone()}
                                                </button>
                                            }.into_any()
                                        }}
                                    </li>
                                }
                            }).collect_view()}
                        </ol>
                    }.into_any()
                }
            }}
        </div>
    }
}

/// What a learned memory rests on and how it fared, read from its metadata: a policy's gain, its
/// tasks and traces; a world model's policies; a skill's policy and trials; a trace's reward.
pub(super) struct Lineage {
    /// (label, value) lines.
    pub(super) facts: Vec<(&'static str, String)>,
    /// (label, memory ids) lines, each id opening its memory.
    pub(super) links: Vec<(&'static str, Vec<i64>)>,
}

pub(super) fn lineage(m: &Memory) -> Option<Lineage> {
    let meta = &m.metadata;
    let number = |key: &str| meta.get(key).and_then(serde_json::Value::as_f64);
    let count = |key: &str| meta.get(key).and_then(serde_json::Value::as_u64);
    let ids = |key: &str| -> Vec<i64> {
        match meta.get(key) {
            Some(serde_json::Value::Array(list)) => {
                list.iter().filter_map(serde_json::Value::as_i64).collect()
            }
            Some(value) => value.as_i64().into_iter().collect(),
            None => Vec::new(),
        }
    };
    let mut facts = Vec::new();
    if let Some(gain) = number("gain") {
        facts.push((t("Gain"), format!("{gain:.2}")));
    }
    if let (Some(good), Some(bad)) = (count("support"), count("failures")) {
        facts.push((
            t("Tasks"),
            tf(
                "{good} went well, {bad} went badly",
                &[("good", &good.to_string()), ("bad", &bad.to_string())],
            ),
        ));
    }
    if let (Some(n), Some(won)) = (count("trials"), count("trials_won")) {
        facts.push((
            t("Trials"),
            tf(
                "{won} of {n} went well",
                &[("won", &won.to_string()), ("n", &n.to_string())],
            ),
        ));
    }
    if let Some(reward) = number("reward") {
        facts.push((t("Reward of its episode"), format!("{reward:.2}")));
    }
    let mut links = Vec::new();
    for (key, label) in [
        ("policy", t("Policy")),
        ("policies", t("Policies")),
        ("sources", t("Traces")),
    ] {
        let list = ids(key);
        if !list.is_empty() {
            links.push((label, list));
        }
    }
    (!facts.is_empty() || !links.is_empty()).then_some(Lineage { facts, links })
}

fn lineage_view(panel: Panel, m: &Memory) -> Option<impl IntoView> {
    let Lineage { facts, links } = lineage(m)?;
    Some(view! {
        <div id="mem-lineage" class="mem-history">
            <h3>{t("Lineage and outcomes")}</h3>
            <dl class="mem-fields">
                {facts.into_iter().map(|(label, value)| view! { <dt>{label}</dt><dd>{value}</dd> }).collect_view()}
                {links.into_iter().map(|(label, ids)| view! {
                    <dt>{label}</dt>
                    <dd>
                        {ids.into_iter().map(|id| view! {
                            <button class="link mem-lineage-link" on:click=move |_| panel.open(id)>
                                {format!("#{id}")}
                            </button>
                            " "
                        }).collect_view()}
                    </dd>
                }).collect_view()}
            </dl>
        </div>
    })
}

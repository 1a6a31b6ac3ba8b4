//! A card per agent whose history is on this machine (what was imported and when, with its scan
//! buttons), and the list of those not found.

use cairn_protocol::SourceInfo as Source;
use leptos::prelude::*;

use super::state::Ctx;
use crate::format::{ago, date};
use crate::i18n::{t, tf};

#[component]
pub(super) fn SourceCards(ctx: Ctx) -> impl IntoView {
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

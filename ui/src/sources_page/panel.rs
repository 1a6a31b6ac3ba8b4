//! The scan's panel: a progress bar per source, pause/resume/stop while it runs, and the summary
//! table when it ends.

use leptos::prelude::*;

use super::scan::{count, Phase};
use super::state::Ctx;
use crate::i18n::{t, tf};

#[component]
pub(super) fn ScanPanel(ctx: Ctx) -> impl IntoView {
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

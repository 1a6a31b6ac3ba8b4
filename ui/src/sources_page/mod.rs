//! The Sources page: the other agents whose history is on this machine (a card each, with what
//! was imported and when), scans with live progress (pause, resume, stop) and their summary, and
//! Cairn's live hooks in Claude Code, Codex and Cursor.

mod cards;
mod hooks;
mod panel;
mod scan;
mod state;

use leptos::prelude::*;

use crate::dom::focus_soon;
use crate::i18n::{t, tf};
use cards::SourceCards;
use hooks::HooksSection;
use panel::ScanPanel;
use state::{Ctx, SCAN};

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
    Effect::new(move |_| {
        if ctx.confirm.get().is_some() {
            focus_soon("deep-scan-start");
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
                        on:click=move |_| ctx.start_scan(target.clone(), true)
                    >
                        {t("Start deep scan")}
                    </button>
                </div>
            </div>
        })
    }
}

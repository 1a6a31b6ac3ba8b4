//! Cairn's live hooks in Claude Code, Codex and Cursor: installed or not, with install/remove
//! and the note each change leaves.

use cairn_protocol::HookStatus as Hook;
use leptos::prelude::*;

use super::state::{hook_agent, Ctx};
use crate::i18n::{t, tf};

#[component]
pub(super) fn HooksSection(ctx: Ctx) -> impl IntoView {
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

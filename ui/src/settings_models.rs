//! Settings' "Models on this device": Cairn's own models — language models, the memory's embedder
//! and the voice models; size, licence, whether each is installed, whole and loaded — with install
//! (progress shown), remove, and, for a language model, use as default.

use cairn_protocol::{InstallProgress, LocalModelInfo, ModelKind};
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::i18n::{t, tf};
use crate::setup::install_label;

/// What a model's row says about its file.
fn state_label(m: &LocalModelInfo) -> &'static str {
    if m.whole && m.cannot_run.is_some() {
        return t("installed · cannot run here");
    }
    match (m.installed, m.whole, m.loaded) {
        (true, true, true) => t("installed · loaded"),
        (true, true, false) => t("installed"),
        (true, false, _) => t("damaged: install it again"),
        _ => t("not installed"),
    }
}

/// The section. `use_model` makes `local/<name>` the chat's default.
#[component]
pub fn LocalModels(use_model: impl Fn(String) + Copy + Send + Sync + 'static) -> impl IntoView {
    let models = RwSignal::new(Vec::<LocalModelInfo>::new());
    let busy = RwSignal::new(None::<(String, Option<InstallProgress>)>);
    let failure = RwSignal::new(None::<String>);
    let reload = move || {
        spawn_local(async move {
            match crate::ipc::models_list().await {
                Ok(found) => models.set(found),
                Err(e) => failure.set(Some(e.message)),
            }
        })
    };
    reload();
    let install = move |name: String| {
        failure.set(None);
        busy.set(Some((name.clone(), None)));
        spawn_local(async move {
            let shown = name.clone();
            let outcome = crate::ipc::models_install(&name, move |p| {
                busy.set(Some((shown.clone(), Some(p))));
            })
            .await;
            busy.set(None);
            match outcome {
                Ok(found) => models.set(found),
                Err(e) => failure.set(Some(e.message)),
            }
        });
    };
    let remove = move |name: String| {
        failure.set(None);
        busy.set(Some((name.clone(), None)));
        spawn_local(async move {
            let outcome = crate::ipc::models_remove(&name).await;
            busy.set(None);
            match outcome {
                Ok(found) => models.set(found),
                Err(e) => failure.set(Some(e.message)),
            }
        });
    };
    let row = move |m: LocalModelInfo| {
        let name = m.name.clone();
        let (install_name, remove_name, use_name) = (name.clone(), name.clone(), name.clone());
        let working =
            move |name: String| move || busy.with(|b| b.as_ref().is_some_and(|(n, _)| *n == name));
        let progress = {
            let name = name.clone();
            move || {
                busy.with(|b| match b {
                    Some((n, Some(p))) if *n == name => Some(*p),
                    _ => None,
                })
            }
        };
        view! {
            <li class="set-provider local-model" data-model=name.clone()>
                <div class="set-provider-head">
                    <div class="set-provider-id">
                        <span class="set-provider-name">{name.clone()}</span>
                        <span class="set-muted">
                            {format!("{} · {} · {}", m.label, crate::format::bytes(m.bytes), m.licence)}
                        </span>
                    </div>
                    <span class="pill local-model-state" title=m.cannot_run.clone()>{state_label(&m)}</span>
                </div>
                <p class="set-muted">
                    {m.note.clone()}
                    {m.default.then(|| match m.kind {
                        ModelKind::Language => t(" · used when no model is configured"),
                        ModelKind::Embedding => t(" · used by memory search"),
                        ModelKind::Speech => t(" · used by the microphone"),
                    })}
                </p>
                {move || progress().map(|p| view! {
                    <progress max=p.total.max(1) value=p.done></progress>
                    <span class="set-muted" role="status">{install_label(&p)}</span>
                })}
                <div class="set-actions">
                    <Show when=move || !m.whole>
                        <button
                            class="secondary local-model-install"
                            disabled=working(install_name.clone())
                            on:click={
                                let name = install_name.clone();
                                move |_| install(name.clone())
                            }
                        >
                            {tf("Install ({size})", &[("size", &crate::format::bytes(m.bytes))])}
                        </button>
                    </Show>
                    <Show when=move || m.whole && m.kind == ModelKind::Language>
                        <button
                            class="secondary local-model-use"
                            on:click={
                                let name = use_name.clone();
                                move |_| use_model(name.clone())
                            }
                        >
                            {t("Use as default")}
                        </button>
                    </Show>
                    <Show when=move || m.installed>
                        <button
                            class="secondary local-model-remove"
                            disabled=working(remove_name.clone())
                            on:click={
                                let name = remove_name.clone();
                                move |_| remove(name.clone())
                            }
                        >
                            {t("Remove")}
                        </button>
                    </Show>
                </div>
            </li>
        }
    };
    view! {
        <section class="set-section" aria-labelledby="set-local-title">
            <h2 id="set-local-title">{t("Models on this device")}</h2>
            <p class="set-muted">
                {t("Cairn's own models run inside the app: private, offline, no account. One is in memory at a time, loaded when first needed and unloaded after five idle minutes.")}
            </p>
            {[
                (ModelKind::Language, t("Language models"), "settings-local-models"),
                (ModelKind::Embedding, t("Memory search"), "settings-memory-models"),
                (ModelKind::Speech, t("Voice input"), "settings-voice-models"),
            ]
                .into_iter()
                .map(|(kind, title, id)| view! {
                    <h3 class="set-subtitle">{title}</h3>
                    <ul id=id class="set-providers">
                        {move || {
                            models
                                .get()
                                .into_iter()
                                .filter(|m| m.kind == kind)
                                .map(row)
                                .collect_view()
                        }}
                    </ul>
                })
                .collect_view()}
            {move || failure.get().map(|e| view! {
                <p class="set-notice error" id="settings-local-notice" role="alert">{e}</p>
            })}
        </section>
    }
}

//! Settings' "Models on this device": Cairn's own models — language models, the memory's embedder
//! and the voice models; size, licence, whether each is installed, whole and loaded — with install
//! (progress shown), remove, and, for a language model, use as default.

use cairn_protocol::{InstallProgress, LocalModelInfo, ModelKind};
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::i18n::{t, tf};
use crate::setup::local_models::install_label;

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

/// `/model`'s list (`listed`, what the providers offer) with Cairn's own language models added:
/// each as `local/<name>`, the one in use marked (and no longer on a line of its own above), one
/// not installed saying where to install it.
pub fn with_on_device(listed: &str, models: &[LocalModelInfo], in_use: Option<&str>) -> String {
    let own: Vec<&LocalModelInfo> = models
        .iter()
        .filter(|m| m.kind == ModelKind::Language)
        .collect();
    if own.is_empty() {
        return listed.to_owned();
    }
    let mut section = format!("\n{}\n", t("On this device (Cairn's own models):"));
    let mut shown_in_use = false;
    for m in own {
        let name = format!("local/{}", m.name);
        let mark = if in_use == Some(name.as_str()) {
            shown_in_use = true;
            t("in use")
        } else if !m.whole {
            t("not installed: Settings → Models on this device")
        } else if m.cannot_run.is_some() {
            t("installed, cannot run here")
        } else {
            ""
        };
        if mark.is_empty() {
            section.push_str(&format!("{name}\n"));
        } else {
            section.push_str(&format!("{name}  ({mark})\n"));
        }
    }
    let mut out = listed.to_owned();
    if shown_in_use {
        let alone = format!("{}  ({})\n", in_use.unwrap_or_default(), t("in use"));
        if let Some(rest) = out.strip_prefix(&alone) {
            out = rest.to_owned();
        }
    }
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(&section);
    out.trim_end().to_owned()
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
                    {crate::i18n::t_known(&m.note)}
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

#[cfg(test)]
mod tests {
    use super::*;

    fn model(name: &str, kind: ModelKind, whole: bool) -> LocalModelInfo {
        LocalModelInfo {
            name: name.into(),
            kind,
            label: String::new(),
            licence: String::new(),
            note: String::new(),
            bytes: 0,
            default: false,
            installed: whole,
            whole,
            loaded: false,
            path: String::new(),
            cannot_run: None,
        }
    }

    /// Issue #48: `/model` listed only the providers' models, not Cairn's own.
    #[test]
    fn model_lists_cairns_own_language_models() {
        let models = [
            model("qwen2.5-coder-1.5b", ModelKind::Language, true),
            model("smollm2-135m", ModelKind::Language, false),
            model("all-MiniLM-L6-v2", ModelKind::Embedding, true),
        ];
        let listed = "local/qwen2.5-coder-1.5b  (in use)\nmock/long-model\n";
        assert_eq!(
            with_on_device(listed, &models, Some("local/qwen2.5-coder-1.5b")),
            "mock/long-model\n\nOn this device (Cairn's own models):\nlocal/qwen2.5-coder-1.5b  (in use)\nlocal/smollm2-135m  (not installed: Settings → Models on this device)"
        );
        assert_eq!(
            with_on_device("mock/long-model  (in use)", &models, Some("mock/long-model")),
            "mock/long-model  (in use)\n\nOn this device (Cairn's own models):\nlocal/qwen2.5-coder-1.5b\nlocal/smollm2-135m  (not installed: Settings → Models on this device)"
        );
        assert_eq!(with_on_device("a/b\n", &models[2..], None), "a/b\n");
    }

    /// Issue #48: the catalogue's descriptions stayed English in a Chinese app.
    #[test]
    fn every_catalogue_description_is_translated() -> std::io::Result<()> {
        let catalog = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../crates/models/src/catalog.rs");
        let code = std::fs::read_to_string(catalog)?;
        let notes: Vec<&str> = code
            .lines()
            .filter_map(|l| l.trim().strip_prefix("note: \""))
            .filter_map(|l| l.strip_suffix("\","))
            .collect();
        assert!(notes.len() >= 5, "{notes:?}");
        crate::i18n::set_language("zh-CN");
        let untranslated: Vec<&&str> = notes
            .iter()
            .filter(|n| crate::i18n::t_known(n) == **n)
            .collect();
        crate::i18n::set_language("en");
        assert!(untranslated.is_empty(), "{untranslated:?}");
        Ok(())
    }
}

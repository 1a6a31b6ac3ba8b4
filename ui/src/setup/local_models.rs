//! Cairn's own models in the first run: the default language model for "On this device" with its
//! install, and the memory and voice models installed in one go.

use cairn_protocol::{InstallPhase, InstallProgress, LocalModelInfo, ModelKind};
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::i18n::{t, tf};

/// The default one of Cairn's own language models.
pub(super) fn default_local(models: &[LocalModelInfo]) -> Option<&LocalModelInfo> {
    models
        .iter()
        .find(|m| m.default && m.kind == ModelKind::Language)
}

/// The default memory and voice models that are not whole yet.
fn missing_helpers(models: &[LocalModelInfo]) -> Vec<LocalModelInfo> {
    models
        .iter()
        .filter(|m| m.default && m.kind != ModelKind::Language && !m.whole)
        .cloned()
        .collect()
}

/// How far an install is, for people: "Downloading… 120 MB of 469 MB (24 %)".
pub fn install_label(p: &InstallProgress) -> String {
    let size = crate::format::bytes;
    let percent = (p.done * 100).checked_div(p.total).unwrap_or(0);
    match p.phase {
        InstallPhase::Download if p.total == 0 => t("Looking the model up…").to_owned(),
        InstallPhase::Download => tf(
            "Downloading… {done} of {total} ({percent} %)",
            &[
                ("done", &size(p.done)),
                ("total", &size(p.total)),
                ("percent", &percent.to_string()),
            ],
        ),
        InstallPhase::Assemble => tf(
            "Checking the model… {percent} %",
            &[("percent", &percent.to_string())],
        ),
        InstallPhase::Done => t("Installed.").to_owned(),
    }
}

/// The "On this device" choice: the default model, whether it is here, and its install.
#[component]
pub(super) fn DeviceModel(
    local: RwSignal<Vec<LocalModelInfo>>,
    installing: RwSignal<Option<InstallProgress>>,
    install: impl Fn() + Copy + Send + Sync + 'static,
) -> impl IntoView {
    view! {
        <div id="first-run-device" class="device-model">
            {move || local.with(|models| default_local(models).cloned()).map(|m| {
                let size = crate::format::bytes(m.bytes);
                let state = if m.whole { t("installed") } else { t("not installed yet") };
                view! {
                    <p class="device-model-name">
                        <strong>{m.label.clone()}</strong>
                        " · " {size.clone()} " · " {m.licence.clone()} " · "
                        <span id="first-run-device-state">{state}</span>
                    </p>
                    <p class="hint">{t("Private and offline: what you write never leaves this computer, and no account is needed. Its answers are slower and simpler than a large hosted model's; you can add a model server later in Settings.")}</p>
                    <Show when=move || !m.whole>
                        <button
                            id="first-run-install"
                            type="button"
                            class="primary"
                            disabled=move || installing.get().is_some()
                            on:click=move |_| install()
                        >
                            {tf("Install the model ({size})", &[("size", &size)])}
                        </button>
                    </Show>
                }
            })}
            {move || installing.get().map(|p| view! {
                <progress id="first-run-progress" max=p.total.max(1) value=p.done></progress>
                <p class="hint" role="status">{install_label(&p)}</p>
            })}
        </div>
    }
}

/// Memory search by meaning and voice input: their models, when missing, installed in one go
/// (whichever model answers the chat).
#[component]
pub(super) fn HelperModels(local: RwSignal<Vec<LocalModelInfo>>) -> impl IntoView {
    let installing = RwSignal::new(None::<(String, InstallProgress)>);
    let failure = RwSignal::new(None::<String>);
    let install = move || {
        let missing = local.with_untracked(|m| missing_helpers(m));
        failure.set(None);
        spawn_local(async move {
            for m in missing {
                let name = m.name.clone();
                installing.set(Some((
                    m.label.clone(),
                    InstallProgress {
                        phase: InstallPhase::Download,
                        done: 0,
                        total: 0,
                    },
                )));
                let label = m.label.clone();
                let outcome = crate::ipc::models_install(&name, move |p| {
                    installing.set(Some((label.clone(), p)))
                })
                .await;
                match outcome {
                    Ok(found) => local.set(found),
                    Err(e) => {
                        failure.set(Some(e.message));
                        break;
                    }
                }
            }
            installing.set(None);
        });
    };
    view! {
        {move || {
            let missing = local.with(|m| missing_helpers(m));
            (!missing.is_empty() || installing.get().is_some()).then(|| {
                let bytes: u64 = missing.iter().map(|m| m.bytes).sum();
                let size = crate::format::bytes(bytes);
                view! {
                    <div id="first-run-helpers" class="device-model">
                        <p class="hint">
                            {tf("Memory search by meaning and voice input use two small models of their own ({size}), also private and offline. Without them Cairn recalls by words only and the microphone is off.", &[("size", &size)])}
                        </p>
                        <Show when=move || installing.get().is_none()>
                            <button
                                id="first-run-helpers-install"
                                type="button"
                                class="secondary"
                                on:click=move |_| install()
                            >
                                {tf("Install them ({size})", &[("size", &size)])}
                            </button>
                        </Show>
                        {move || installing.get().map(|(label, p)| view! {
                            <progress id="first-run-helpers-progress" max=p.total.max(1) value=p.done></progress>
                            <p class="hint" role="status">{format!("{label}: {}", install_label(&p))}</p>
                        })}
                        {move || failure.get().map(|message| view! {
                            <p class="error-text" id="first-run-helpers-error" role="alert">{message}</p>
                        })}
                    </div>
                }
            })
        }}
    }
}

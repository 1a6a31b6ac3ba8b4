//! First run: when no model is configured, the welcome screen is a short setup that ends with the
//! composer ready for the first message. "On this device" comes first: Cairn's own model, installed
//! here with a progress bar if it is not yet, private and offline. The remote kinds take an
//! address and a key and get a real connection test. Both write the same `config.toml` entries the
//! Settings page does.

use leptos::prelude::*;
use leptos::task::spawn_local;

use cairn_protocol::{ConnectionTest, InstallPhase, InstallProgress, LocalModelInfo, ModelKind};

use crate::i18n::{t, tf};
use crate::ipc::{self, SettingsChange};
use crate::segmented::Segmented;
use cairn_protocol::settings::ProviderInput;

/// The kind of provider that runs Cairn's own model on this device.
pub const LOCAL_KIND: &str = "local";

/// Where the test stands.
#[derive(Debug, Clone, PartialEq)]
enum Check {
    NotYet,
    Testing,
    Passed(ConnectionTest),
    Failed(String),
}

/// The provider name the setup writes for `kind`: the kind itself, or `custom` for an
/// OpenAI-compatible server at its own address.
pub fn provider_name(kind: &str, base_url: &str) -> String {
    match kind {
        "openai" if !base_url.trim().is_empty() => "custom".to_owned(),
        other => other.to_owned(),
    }
}

/// A model to suggest from what the server lists: the one typed if listed, else the first.
pub fn suggested_model(typed: &str, listed: &[String]) -> String {
    let typed = typed.trim();
    if !typed.is_empty() || listed.is_empty() {
        typed.to_owned()
    } else {
        listed[0].clone()
    }
}

/// The setup card. `on_ready` runs once the default model is saved (the workbench re-reads its
/// status, which then lets the person chat).
#[component]
pub fn FirstRun(on_ready: impl Fn() + Copy + Send + Sync + 'static) -> impl IntoView {
    let kind = RwSignal::new(LOCAL_KIND.to_owned());
    let base_url = RwSignal::new(String::new());
    let api_key = RwSignal::new(String::new());
    let model = RwSignal::new(String::new());
    let check = RwSignal::new(Check::NotYet);
    let saving = RwSignal::new(false);
    let failure = RwSignal::new(None::<String>);
    let sources = RwSignal::new(Vec::<cairn_protocol::SourceInfo>::new());
    // Cairn's own models, and an install under way.
    let local = RwSignal::new(Vec::<LocalModelInfo>::new());
    let installing = RwSignal::new(None::<InstallProgress>);
    let local_check = move |models: &[LocalModelInfo]| match default_local(models) {
        Some(LocalModelInfo {
            whole: true,
            cannot_run: Some(problem),
            ..
        }) => check.set(Check::Failed(tf(
            "Cairn's own model cannot run here: {problem}",
            &[("problem", problem)],
        ))),
        Some(m) if m.whole => {
            model.set(m.name.clone());
            check.set(Check::Passed(ConnectionTest {
                ok: true,
                models: vec![m.name.clone()],
                message: String::new(),
            }));
        }
        Some(m) if m.installed => check.set(Check::Failed(tf(
            "The model file {path} is damaged: install it again.",
            &[("path", &m.path)],
        ))),
        _ => check.set(Check::NotYet),
    };
    spawn_local(async move {
        if let Ok(found) = crate::ipc::models_list().await {
            if kind.get_untracked() == LOCAL_KIND {
                local_check(&found);
            }
            local.set(found);
        }
    });
    let install = move || {
        let Some(name) = local.with_untracked(|m| default_local(m).map(|m| m.name.clone())) else {
            return;
        };
        failure.set(None);
        installing.set(Some(InstallProgress {
            phase: InstallPhase::Download,
            done: 0,
            total: 0,
        }));
        spawn_local(async move {
            let outcome = crate::ipc::models_install(&name, move |p| installing.set(Some(p))).await;
            installing.set(None);
            match outcome {
                Ok(found) => {
                    local_check(&found);
                    local.set(found);
                }
                Err(e) => failure.set(Some(e.message)),
            }
        });
    };
    spawn_local(async move {
        if let Ok(found) = crate::ipc::list_sources().await {
            sources.set(
                found
                    .into_iter()
                    .filter(|s| s.detected && s.conversations > 0)
                    .collect(),
            );
        }
    });

    let provider = move || provider_name(&kind.get_untracked(), &base_url.get_untracked());
    let save_provider = move || {
        let typed = model.get_untracked();
        SettingsChange::SaveProvider(ProviderInput {
            name: provider(),
            kind: kind.get_untracked(),
            base_url: base_url.get_untracked().trim().to_owned(),
            api_key: api_key.get_untracked().trim().to_owned(),
            clear_key: false,
            models: if typed.trim().is_empty() {
                vec![]
            } else {
                vec![typed.trim().to_owned()]
            },
        })
    };
    // Saves what was typed, then calls the server for real.
    let test = move || {
        if kind.get_untracked() == LOCAL_KIND {
            local.with_untracked(|m| local_check(m));
            return;
        }
        if let Some(problem) = cairn_protocol::base_url_problem(&base_url.get_untracked()) {
            check.set(Check::Failed(t(problem).to_owned()));
            return;
        }
        check.set(Check::Testing);
        failure.set(None);
        let change = save_provider();
        spawn_local(async move {
            if let Err(e) = ipc::change_settings(change).await {
                check.set(Check::Failed(e.message));
                return;
            }
            let name = provider();
            match crate::ipc::test_provider(&name).await {
                Ok(found) if found.ok => {
                    model.set(suggested_model(&model.get_untracked(), &found.models));
                    check.set(Check::Passed(found));
                }
                Ok(found) => check.set(Check::Failed(found.message)),
                Err(e) => check.set(Check::Failed(e.message)),
            }
        });
    };
    // Keeps the chosen model as the default: the chat can start.
    let finish = move || {
        let chosen = model.get_untracked().trim().to_owned();
        if chosen.is_empty() {
            failure.set(Some(t("Choose the model to chat with.").to_owned()));
            return;
        }
        saving.set(true);
        let change = save_provider();
        let on_device = kind.get_untracked() == LOCAL_KIND;
        spawn_local(async move {
            let saved = async {
                if !on_device {
                    ipc::change_settings(change).await?;
                }
                ipc::change_settings(SettingsChange::DefaultModel {
                    provider: provider(),
                    model: chosen,
                })
                .await
            }
            .await;
            saving.set(false);
            match saved {
                Ok(_) => on_ready(),
                Err(e) => failure.set(Some(e.message)),
            }
        });
    };
    let passed = move || matches!(check.get(), Check::Passed(_));

    view! {
        <form
            id="first-run"
            class="card setup-card first-run"
            aria-labelledby="first-run-title"
            on:submit=move |ev| {
                ev.prevent_default();
                if passed() { finish() } else { test() }
            }
        >
            <h3 id="first-run-title">{t("Connect a model to start")}</h3>
            <p class="hint">{t("Cairn works with the model you choose: its own, on this device, or a model server. A key stays in your config file or in an environment variable.")}</p>
            <Segmented
                prefix="first-run-kind"
                label=t("Kind of provider")
                options=vec![(LOCAL_KIND, t("On this device")), ("openai", t("OpenAI-compatible")), ("anthropic", "Anthropic"), ("ollama", "Ollama")]
                chosen=kind
                on_pick=move |value, _| {
                    kind.set(value.to_owned());
                    check.set(Check::NotYet);
                    if value == LOCAL_KIND {
                        local.with_untracked(|m| local_check(m));
                    }
                }
            />
            <Show when=move || kind.get() == LOCAL_KIND>
                <DeviceModel local installing install />
            </Show>
            <Show when=move || kind.get() != LOCAL_KIND>
            <label for="first-run-url">{t("Address")}</label>
            <input
                id="first-run-url"
                type="url"
                autocomplete="off"
                placeholder=move || crate::settings_page::placeholder_url(&kind.get())
                prop:value=move || base_url.get()
                on:input=move |ev| {
                    base_url.set(event_target_value(&ev));
                    check.set(Check::NotYet);
                }
            />
            <Show when=move || kind.get() != "ollama" && kind.get() != LOCAL_KIND>
                <label for="first-run-key">{t("API key")}</label>
                <input
                    id="first-run-key"
                    type="password"
                    autocomplete="off"
                    placeholder=t("sk-…, or ${OPENAI_API_KEY} to read it from the environment")
                    prop:value=move || api_key.get()
                    on:input=move |ev| {
                        api_key.set(event_target_value(&ev));
                        check.set(Check::NotYet);
                    }
                />
            </Show>
            <label for="first-run-model">{t("Model")}</label>
            <input
                id="first-run-model"
                type="text"
                list="first-run-models"
                autocomplete="off"
                placeholder=t("e.g. gpt-4o; the test lists what the server offers")
                prop:value=move || model.get()
                on:input=move |ev| model.set(event_target_value(&ev))
            />
            <datalist id="first-run-models">
                {move || match check.get() {
                    Check::Passed(found) => found
                        .models
                        .into_iter()
                        .map(|m| view! { <option value=m.clone()></option> })
                        .collect_view()
                        .into_any(),
                    _ => ().into_any(),
                }}
            </datalist>
            </Show>
            <p id="first-run-check" class="first-run-check" role="status">
                {move || match check.get() {
                    Check::NotYet => String::new(),
                    Check::Testing => t("Calling the server…").to_owned(),
                    Check::Passed(_) if kind.get() == LOCAL_KIND => t("Ready: the model runs on this device.").to_owned(),
                    Check::Passed(found) if found.models.is_empty() => tf("Connected. {message}", &[("message", &found.message)]),
                    Check::Passed(found) => tf("Connected: the server offers {n} models. Pick one and start.", &[("n", &found.models.len().to_string())]),
                    Check::Failed(message) => message,
                }}
            </p>
            {move || failure.get().map(|message| view! { <p class="error-text" role="alert">{message}</p> })}
            <div class="set-actions">
                <Show when=move || kind.get() != LOCAL_KIND>
                <button
                    id="first-run-test"
                    type="button"
                    class=move || if passed() { "secondary" } else { "primary" }
                    disabled=move || check.get() == Check::Testing
                    on:click=move |_| test()
                >
                    {t("Test connection")}
                </button>
                </Show>
                <button
                    id="first-run-start"
                    type="button"
                    class="primary"
                    disabled=move || !passed() || saving.get()
                    on:click=move |_| finish()
                >
                    {t("Start chatting")}
                </button>
            </div>
            <HelperModels local />
            {move || {
                let found = sources.get();
                (!found.is_empty()).then(|| {
                    let names = found
                        .iter()
                        .map(|s| format!("{} ({})", s.label, s.conversations))
                        .collect::<Vec<_>>()
                        .join(", ");
                    view! {
                        <p id="first-run-sources" class="hint">
                            {tf("Found the history of other agents on this machine: {names}. Import it from Sources to have Cairn remember it.", &[("names", &names)])}
                        </p>
                    }
                })
            }}
        </form>
    }
}

/// The default one of Cairn's own language models.
fn default_local(models: &[LocalModelInfo]) -> Option<&LocalModelInfo> {
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
fn DeviceModel(
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
fn HelperModels(local: RwSignal<Vec<LocalModelInfo>>) -> impl IntoView {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_custom_address_gets_its_own_provider_name() {
        assert_eq!(provider_name("openai", ""), "openai");
        assert_eq!(
            provider_name("openai", "http://127.0.0.1:8080/v1"),
            "custom"
        );
        assert_eq!(provider_name("anthropic", "https://proxy"), "anthropic");
        assert_eq!(provider_name("ollama", ""), "ollama");
    }

    #[test]
    fn the_typed_model_wins_else_the_first_listed() {
        let listed = vec!["a".to_owned(), "b".to_owned()];
        assert_eq!(suggested_model("", &listed), "a");
        assert_eq!(suggested_model(" b ", &listed), "b");
        assert_eq!(suggested_model("", &[]), "");
    }
}

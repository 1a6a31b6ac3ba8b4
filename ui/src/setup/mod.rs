//! First run: when no model is configured, the welcome screen is a short setup that ends with the
//! composer ready for the first message. "On this device" comes first: Cairn's own model, installed
//! here with a progress bar if it is not yet, private and offline. The remote kinds take an
//! address and a key and get a real connection test. Both write the same `config.toml` entries the
//! Settings page does.

pub mod local_models;

use leptos::prelude::*;
use leptos::task::spawn_local;

use cairn_protocol::{ConnectionTest, InstallPhase, InstallProgress, LocalModelInfo};

use crate::i18n::{t, tf};
use crate::ipc::{self, SettingsChange};
use crate::segmented::Segmented;
use cairn_protocol::settings::{ProviderInput, ProviderKind};
use local_models::{default_local, DeviceModel, HelperModels};

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

/// What the setup card's parts share: the provider being set up, its test, and Cairn's own
/// models with an install under way.
#[derive(Clone, Copy)]
struct Setup {
    kind: RwSignal<String>,
    base_url: RwSignal<String>,
    api_key: RwSignal<String>,
    model: RwSignal<String>,
    check: RwSignal<Check>,
    saving: RwSignal<bool>,
    failure: RwSignal<Option<String>>,
    /// Cairn's own models, and an install under way.
    local: RwSignal<Vec<LocalModelInfo>>,
    installing: RwSignal<Option<InstallProgress>>,
}

impl Setup {
    fn new() -> Self {
        Self {
            kind: RwSignal::new(LOCAL_KIND.to_owned()),
            base_url: RwSignal::new(String::new()),
            api_key: RwSignal::new(String::new()),
            model: RwSignal::new(String::new()),
            check: RwSignal::new(Check::NotYet),
            saving: RwSignal::new(false),
            failure: RwSignal::new(None),
            local: RwSignal::new(Vec::new()),
            installing: RwSignal::new(None),
        }
    }

    /// The check of "On this device": whether Cairn's own model is here and can run.
    fn local_check(self, models: &[LocalModelInfo]) {
        let Setup { model, check, .. } = self;
        match default_local(models) {
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
        }
    }

    /// Lists Cairn's own models (and checks the default one while "On this device" is chosen).
    fn load_local(self) {
        spawn_local(async move {
            if let Ok(found) = crate::ipc::models_list().await {
                if self.kind.get_untracked() == LOCAL_KIND {
                    self.local_check(&found);
                }
                self.local.set(found);
            }
        });
    }

    /// Installs Cairn's own default model.
    fn install(self) {
        let Setup {
            failure,
            local,
            installing,
            ..
        } = self;
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
                    self.local_check(&found);
                    local.set(found);
                }
                Err(e) => failure.set(Some(e.message)),
            }
        });
    }

    fn provider(self) -> String {
        provider_name(&self.kind.get_untracked(), &self.base_url.get_untracked())
    }

    fn save_provider(self) -> SettingsChange {
        let typed = self.model.get_untracked();
        SettingsChange::SaveProvider(ProviderInput {
            name: self.provider(),
            kind: self
                .kind
                .get_untracked()
                .parse()
                .unwrap_or(ProviderKind::Openai),
            base_url: self.base_url.get_untracked().trim().to_owned(),
            api_key: self.api_key.get_untracked().trim().to_owned(),
            clear_key: false,
            models: if typed.trim().is_empty() {
                vec![]
            } else {
                vec![typed.trim().to_owned()]
            },
        })
    }

    /// Saves what was typed, then calls the server for real.
    fn test(self) {
        let Setup {
            kind,
            base_url,
            model,
            check,
            failure,
            local,
            ..
        } = self;
        if kind.get_untracked() == LOCAL_KIND {
            local.with_untracked(|m| self.local_check(m));
            return;
        }
        if let Some(problem) = cairn_protocol::base_url_problem(&base_url.get_untracked()) {
            check.set(Check::Failed(t(problem).to_owned()));
            return;
        }
        check.set(Check::Testing);
        failure.set(None);
        let change = self.save_provider();
        spawn_local(async move {
            if let Err(e) = ipc::change_settings(change).await {
                check.set(Check::Failed(e.message));
                return;
            }
            let name = self.provider();
            match crate::ipc::test_provider(&name).await {
                Ok(found) if found.ok => {
                    model.set(suggested_model(&model.get_untracked(), &found.models));
                    check.set(Check::Passed(found));
                }
                Ok(found) => check.set(Check::Failed(found.message)),
                Err(e) => check.set(Check::Failed(e.message)),
            }
        });
    }

    /// Keeps the chosen model as the default: the chat can start.
    fn finish(self, on_ready: impl Fn() + 'static) {
        let Setup {
            kind,
            model,
            saving,
            failure,
            ..
        } = self;
        let chosen = model.get_untracked().trim().to_owned();
        if chosen.is_empty() {
            failure.set(Some(t("Choose the model to chat with.").to_owned()));
            return;
        }
        saving.set(true);
        let change = self.save_provider();
        let on_device = kind.get_untracked() == LOCAL_KIND;
        spawn_local(async move {
            let saved = async {
                if !on_device {
                    ipc::change_settings(change).await?;
                }
                ipc::change_settings(SettingsChange::DefaultModel {
                    provider: self.provider(),
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
    }

    fn passed(self) -> bool {
        matches!(self.check.get(), Check::Passed(_))
    }
}

/// The setup card. `on_ready` runs once the default model is saved (the workbench re-reads its
/// status, which then lets the person chat).
#[component]
pub fn FirstRun(on_ready: impl Fn() + Copy + Send + Sync + 'static) -> impl IntoView {
    let setup = Setup::new();
    let Setup {
        kind,
        check,
        saving,
        failure,
        local,
        installing,
        ..
    } = setup;
    let sources = RwSignal::new(Vec::<cairn_protocol::SourceInfo>::new());
    setup.load_local();
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
    let install = move || setup.install();
    let test = move || setup.test();
    let finish = move || setup.finish(on_ready);
    let passed = move || setup.passed();

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
                        local.with_untracked(|m| setup.local_check(m));
                    }
                }
            />
            <Show when=move || kind.get() == LOCAL_KIND>
                <DeviceModel local installing install />
            </Show>
            <RemoteFields setup />
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
            <FoundSources sources />
        </form>
    }
}

/// A model server's address, key and model (with the models its test listed).
#[component]
fn RemoteFields(setup: Setup) -> impl IntoView {
    let Setup {
        kind,
        base_url,
        api_key,
        model,
        check,
        ..
    } = setup;
    view! {
        <Show when=move || kind.get() != LOCAL_KIND>
        <label for="first-run-url">{t("Address")}</label>
        <input
            id="first-run-url"
            type="url"
            autocomplete="off"
            placeholder=move || {
                crate::settings_page::placeholder_url(kind.get().parse().unwrap_or(ProviderKind::Openai))
            }
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
    }
}

/// The other agents whose history is here, to import from Sources.
#[component]
fn FoundSources(sources: RwSignal<Vec<cairn_protocol::SourceInfo>>) -> impl IntoView {
    move || {
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

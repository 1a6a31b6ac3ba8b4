//! The Settings page: the model providers (added, edited, removed, tested against the real server)
//! and the default model; voice input (whisper model, language, microphone or a WAV file); the
//! theme, the pet's shortcut and the log level; and a redacted diagnostic report. Every change is
//! written into `config.toml` by the backend, which keeps the rest of the file as written.

use std::collections::BTreeMap;

use cairn_protocol::{ApiError, ConnectionTest};
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::i18n::{t, tf};
use crate::ipc::{self, SettingsChange};
use crate::segmented::Segmented;

/// Languages offered for speech (whisper's codes, and the names shown); `auto` detects it.
fn languages() -> [(&'static str, &'static str); 10] {
    [
        ("auto", t("Detect automatically")),
        ("en", t("English")),
        ("fr", t("French")),
        ("de", t("German")),
        ("es", t("Spanish")),
        ("it", t("Italian")),
        ("pt", t("Portuguese")),
        ("nl", t("Dutch")),
        ("ja", t("Japanese")),
        ("zh", t("Chinese")),
    ]
}

const LOG_LEVELS: &[&str] = &["error", "warn", "info", "debug", "trace"];

// ---------------------------------------------------------------------------------------------
// What the commands answer.

use cairn_protocol::settings::{
    AppearanceInput, ProviderInput, ProviderSettings as Provider, Settings, VoiceInput,
};

/// A section's last outcome: a confirmation, or an error to show.
#[derive(Debug, Clone, PartialEq)]
enum Notice {
    Done(String),
    Failed(String),
}

fn notice_view(notice: RwSignal<Option<Notice>>, id: &'static str) -> impl IntoView {
    move || {
        notice.get().map(|n| match n {
            Notice::Done(text) => view! { <p class="set-notice ok" id=id role="status">{text}</p> },
            Notice::Failed(text) => {
                view! { <p class="set-notice error" id=id role="alert">{text}</p> }
            }
        })
    }
}

/// Sets `data-theme` on `<html>` (the stylesheet honours it); `system` leaves it to the system.
pub fn apply_theme(theme: &str) {
    if let Some(root) = document().document_element() {
        let _ = match theme {
            "light" | "dark" => root.set_attribute("data-theme", theme),
            _ => root.remove_attribute("data-theme"),
        };
    }
}

/// The provider form's fields.
#[derive(Clone, Copy)]
struct ProviderForm {
    /// `Some(name)` when editing that provider; `None` when adding.
    editing: RwSignal<Option<String>>,
    open: RwSignal<bool>,
    name: RwSignal<String>,
    kind: RwSignal<String>,
    base_url: RwSignal<String>,
    api_key: RwSignal<String>,
    clear_key: RwSignal<bool>,
    models: RwSignal<String>,
    /// Why the form was not saved, shown inside it (next to the address when that is the cause).
    error: RwSignal<Option<String>>,
}

impl ProviderForm {
    fn new() -> Self {
        Self {
            editing: RwSignal::new(None),
            open: RwSignal::new(false),
            name: RwSignal::new(String::new()),
            kind: RwSignal::new("openai".into()),
            base_url: RwSignal::new(String::new()),
            api_key: RwSignal::new(String::new()),
            clear_key: RwSignal::new(false),
            models: RwSignal::new(String::new()),
            error: RwSignal::new(None),
        }
    }

    fn start(self, provider: Option<&Provider>) {
        self.editing.set(provider.map(|p| p.name.clone()));
        self.name
            .set(provider.map(|p| p.name.clone()).unwrap_or_default());
        self.kind
            .set(provider.map_or_else(|| "openai".into(), |p| p.kind.clone()));
        self.base_url
            .set(provider.map(|p| p.base_url.clone()).unwrap_or_default());
        self.api_key.set(String::new());
        self.clear_key.set(false);
        self.models
            .set(provider.map(|p| p.models.join(", ")).unwrap_or_default());
        self.open.set(true);
    }
}

/// The address a provider of `kind` has when none is given.
pub fn placeholder_url(kind: &str) -> &'static str {
    match kind {
        "anthropic" => "https://api.anthropic.com",
        "ollama" => "http://127.0.0.1:11434",
        _ => "https://api.openai.com/v1",
    }
}

#[component]
pub fn SettingsPage() -> impl IntoView {
    let settings: RwSignal<Option<Result<Settings, ApiError>>> = RwSignal::new(None);
    let provider_notice = RwSignal::new(None::<Notice>);
    let voice_notice = RwSignal::new(None::<Notice>);
    let appearance_notice = RwSignal::new(None::<Notice>);
    let diagnostics_notice = RwSignal::new(None::<Notice>);
    let tests: RwSignal<BTreeMap<String, Option<ConnectionTest>>> = RwSignal::new(BTreeMap::new());
    let form = ProviderForm::new();

    // Voice and appearance drafts, filled from the settings when they load.
    let voice_model = RwSignal::new(String::new());
    let voice_language = RwSignal::new("auto".to_owned());
    let voice_file = RwSignal::new(false);
    let voice_path = RwSignal::new(String::new());
    let theme = RwSignal::new("system".to_owned());
    let shortcut = RwSignal::new(String::new());
    let log_level = RwSignal::new("info".to_owned());
    let language = RwSignal::new("en".to_owned());
    let launch = RwSignal::new("full".to_owned());
    let start_at_login = RwSignal::new(false);
    let default_choice = RwSignal::new(String::new());

    let adopt = move |loaded: Settings| {
        voice_model.set(loaded.voice_model.clone());
        voice_language.set(loaded.voice_language.clone());
        let file = loaded.voice_input != "microphone";
        voice_file.set(file);
        voice_path.set(if file {
            loaded.voice_input.clone()
        } else {
            String::new()
        });
        theme.set(loaded.theme.clone());
        apply_theme(&loaded.theme);
        shortcut.set(loaded.pet_shortcut.clone());
        log_level.set(loaded.log_level.clone());
        language.set(loaded.language.clone());
        launch.set(loaded.launch.clone());
        start_at_login.set(loaded.start_at_login);
        default_choice.set(loaded.default_model.clone().unwrap_or_default());
        settings.set(Some(Ok(loaded)));
    };

    spawn_local(async move {
        match ipc::settings_get().await {
            Ok(loaded) => adopt(loaded),
            Err(e) => settings.set(Some(Err(e))),
        }
    });

    // Makes a change answering the new settings; reports to `notice`.
    let save = move |change: SettingsChange, notice: RwSignal<Option<Notice>>, done: String| {
        notice.set(None);
        spawn_local(async move {
            match ipc::change_settings(change).await {
                Ok(loaded) => {
                    adopt(loaded);
                    notice.set(Some(Notice::Done(done)));
                }
                Err(e) => notice.set(Some(Notice::Failed(e.message))),
            }
        });
    };

    let save_provider = move || {
        let models: Vec<String> = form
            .models
            .get_untracked()
            .split([',', '\n'])
            .map(|m| m.trim().to_owned())
            .filter(|m| !m.is_empty())
            .collect();
        let name = form.name.get_untracked().trim().to_owned();
        let input = ProviderInput {
            name: name.clone(),
            kind: form.kind.get_untracked(),
            base_url: form.base_url.get_untracked(),
            api_key: form.api_key.get_untracked(),
            clear_key: form.clear_key.get_untracked(),
            models,
        };
        provider_notice.set(None);
        form.error.set(None);
        // A bad address is said next to its field, before anything is written.
        if cairn_protocol::base_url_problem(&form.base_url.get_untracked()).is_some() {
            crate::workbench::focus_by_id("provider-base-url");
            return;
        }
        spawn_local(async move {
            match ipc::change_settings(SettingsChange::SaveProvider(input)).await {
                Ok(loaded) => {
                    adopt(loaded);
                    form.open.set(false);
                    form.api_key.set(String::new());
                    // A connection test of the old settings says nothing about the new ones.
                    tests.update(|t| {
                        t.remove(&name);
                    });
                    provider_notice.set(Some(Notice::Done(tf(
                        "Saved provider {name} to config.toml.",
                        &[("name", &name)],
                    ))));
                }
                Err(e) => form.error.set(Some(e.message)),
            }
        });
    };

    let test_provider = move |name: String| {
        tests.update(|t| {
            t.insert(name.clone(), None);
        });
        spawn_local(async move {
            let outcome = match crate::ipc::test_provider(&name).await {
                Ok(test) => test,
                Err(e) => ConnectionTest {
                    ok: false,
                    models: Vec::new(),
                    message: e.message,
                },
            };
            tests.update(|t| {
                t.insert(name, Some(outcome));
            });
        });
    };

    let set_default = move |provider: String, model: String| {
        let label = format!("{provider}/{model}");
        save(
            SettingsChange::DefaultModel { provider, model },
            provider_notice,
            tf("The chat now uses {model}.", &[("model", &label)]),
        );
    };

    // The appearance section as the command takes it.
    let appearance = move || AppearanceInput {
        theme: theme.get_untracked(),
        pet_shortcut: shortcut.get_untracked(),
        log_level: log_level.get_untracked(),
        language: Some(language.get_untracked()),
        launch: Some(launch.get_untracked()),
    };
    let save_appearance = move |done: String| {
        save(
            SettingsChange::Appearance(appearance()),
            appearance_notice,
            done,
        );
    };
    // A new language: saved, then both windows load again in it.
    let change_language = move |code: String| {
        language.set(code);
        let change = SettingsChange::Appearance(appearance());
        spawn_local(async move {
            match ipc::change_settings(change).await {
                Ok(_) => {
                    let _ = ipc::reload_windows().await;
                }
                Err(e) => appearance_notice.set(Some(Notice::Failed(e.message))),
            }
        });
    };

    let loaded = move || settings.get().and_then(Result::ok);

    let provider_list = move || {
        let Some(current) = loaded() else {
            return ().into_any();
        };
        if current.providers.is_empty() {
            return view! {
                <p class="set-empty" id="settings-no-providers">
                    {t("No model provider yet. Add one to chat: an OpenAI-compatible server (OpenAI, vLLM, llama.cpp, LM Studio), Anthropic, or Ollama.")}
                </p>
            }
            .into_any();
        }
        let default_model = current.default_model.clone().unwrap_or_default();
        current
            .providers
            .into_iter()
            .map(|p| {
                let name = p.name.clone();
                let edit_with = p.clone();
                let test_name = name.clone();
                let remove_name = name.clone();
                let result_name = name.clone();
                let default_model = default_model.clone();
                let configured = p.models.clone();
                let models_view = if configured.is_empty() {
                    view! { <span class="set-muted">{t("No models listed in the config")}</span> }
                        .into_any()
                } else {
                    configured
                        .iter()
                        .map(|m| {
                            let is_default = default_model == format!("{name}/{m}");
                            view! {
                                <span class="set-chip" class:default=is_default>
                                    {m.clone()}
                                    {is_default.then(|| view! { <span class="set-chip-tag">{t("default")}</span> })}
                                </span>
                            }
                        })
                        .collect_view()
                        .into_any()
                };
                view! {
                    <li class="set-provider" data-provider=name.clone()>
                        <div class="set-provider-head">
                            <div class="set-provider-id">
                                <span class="set-provider-name">{name.clone()}</span>
                                <span class="set-kind">{p.kind.clone()}</span>
                            </div>
                            <div class="set-actions">
                                <button
                                    class="secondary provider-test"
                                    on:click=move |_| test_provider(test_name.clone())
                                >
                                    {t("Test connection")}
                                </button>
                                <button
                                    class="secondary provider-edit"
                                    on:click=move |_| form.start(Some(&edit_with))
                                >
                                    {t("Edit")}
                                </button>
                                <button
                                    class="secondary danger provider-remove"
                                    on:click=move |_| {
                                        let name = remove_name.clone();
                                        save(
                                            SettingsChange::RemoveProvider(name.clone()),
                                            provider_notice,
                                            tf("Removed provider {name}.", &[("name", &name)]),
                                        )
                                    }
                                >
                                    {t("Remove")}
                                </button>
                            </div>
                        </div>
                        <dl class="set-facts">
                            <dt>{t("Base URL")}</dt>
                            <dd class="set-mono">{p.base_url.clone()}</dd>
                            <dt>{t("API key")}</dt>
                            <dd class="provider-key">
                                {if p.api_key_set { t("Set") } else { t("Not set") }}
                            </dd>
                            <dt>{t("Models")}</dt>
                            <dd class="set-chips">{models_view}</dd>
                        </dl>
                        {move || {
                            let result = tests.get().get(&result_name).cloned()?;
                            let provider = result_name.clone();
                            Some(match result {
                                None => view! {
                                    <div class="provider-test-result pending" role="status">
                                        {t("Calling the server…")}
                                    </div>
                                }
                                .into_any(),
                                Some(test) => {
                                    let listed = test
                                        .models
                                        .iter()
                                        .map(|m| {
                                            let provider = provider.clone();
                                            let model = m.clone();
                                            view! {
                                                <li>
                                                    <span class="set-mono">{m.clone()}</span>
                                                    <button
                                                        class="link use-default"
                                                        data-model=m.clone()
                                                        on:click=move |_| set_default(provider.clone(), model.clone())
                                                    >
                                                        {t("Use as default")}
                                                    </button>
                                                </li>
                                            }
                                        })
                                        .collect_view();
                                    view! {
                                        <div
                                            class="provider-test-result"
                                            class:ok=test.ok
                                            class:error=!test.ok
                                            role="status"
                                        >
                                            <p class="set-test-line">
                                                <strong>{if test.ok { t("OK") } else { t("Failed") }}</strong>
                                                " — "
                                                {test.message.clone()}
                                            </p>
                                            <ul class="set-listed">{listed}</ul>
                                        </div>
                                    }
                                    .into_any()
                                }
                            })
                        }}
                    </li>
                }
            })
            .collect_view()
            .into_any()
    };

    let default_options = move || {
        let current = loaded()?;
        let mut options: Vec<String> = current
            .providers
            .iter()
            .flat_map(|p| p.models.iter().map(move |m| format!("{}/{m}", p.name)))
            .collect();
        if let Some(default) = current.default_model.clone() {
            if !options.contains(&default) {
                options.insert(0, default);
            }
        }
        Some(options)
    };

    let provider_form = move || {
        form.open.get().then(|| {
            let title = match form.editing.get() {
                Some(name) => tf("Edit provider {name}", &[("name", &name)]),
                None => t("Add a provider").to_owned(),
            };
            let editing = form.editing.get().is_some();
            view! {
                <form
                    class="set-form"
                    id="provider-form"
                    on:submit=move |ev| {
                        ev.prevent_default();
                        save_provider();
                    }
                >
                    <h3>{title}</h3>
                    <div class="set-grid">
                        <label for="provider-name">{t("Name")}</label>
                        <input
                            id="provider-name"
                            type="text"
                            placeholder="local"
                            autocomplete="off"
                            disabled=editing
                            prop:value=move || form.name.get()
                            on:input=move |ev| form.name.set(event_target_value(&ev))
                        />
                        <label for="provider-kind">{t("Kind")}</label>
                        <select
                            id="provider-kind"
                            prop:value=move || form.kind.get()
                            on:change=move |ev| form.kind.set(event_target_value(&ev))
                        >
                            <option value="openai">{t("OpenAI-compatible")}</option>
                            <option value="anthropic">"Anthropic"</option>
                            <option value="ollama">"Ollama"</option>
                        </select>
                        <label for="provider-base-url">{t("Base URL")}</label>
                        <input
                            id="provider-base-url"
                            type="url"
                            autocomplete="off"
                            placeholder=move || placeholder_url(&form.kind.get())
                            prop:value=move || form.base_url.get()
                            on:input=move |ev| form.base_url.set(event_target_value(&ev))
                            aria-invalid=move || cairn_protocol::base_url_problem(&form.base_url.get()).is_some().to_string()
                            aria-describedby="provider-base-url-error"
                        />
                        <span id="provider-base-url-error" class="set-field-error" role="alert">
                            {move || cairn_protocol::base_url_problem(&form.base_url.get()).map(t)}
                        </span>
                        <label for="provider-api-key">{t("API key")}</label>
                        <div class="set-field">
                            <input
                                id="provider-api-key"
                                type="password"
                                autocomplete="off"
                                placeholder=move || {
                                    if editing { t("Leave empty to keep the current key") } else { "${OPENAI_API_KEY}" }
                                }
                                prop:value=move || form.api_key.get()
                                on:input=move |ev| form.api_key.set(event_target_value(&ev))
                            />
                            <span class="set-hint">
                                {t("Written to config.toml as given. Prefer a reference such as ${OPENAI_API_KEY}: the key then stays in your environment.")}
                            </span>
                            {editing.then(|| view! {
                                <label class="set-check">
                                    <input
                                        type="checkbox"
                                        prop:checked=move || form.clear_key.get()
                                        on:change=move |ev| form.clear_key.set(event_target_checked(&ev))
                                    />
                                    {t("Remove the key")}
                                </label>
                            })}
                        </div>
                        <label for="provider-models">{t("Models")}</label>
                        <div class="set-field">
                            <input
                                id="provider-models"
                                type="text"
                                autocomplete="off"
                                placeholder="gpt-4o, gpt-4o-mini"
                                prop:value=move || form.models.get()
                                on:input=move |ev| form.models.set(event_target_value(&ev))
                            />
                            <span class="set-hint">{t("Comma-separated. Test connection lists what the server offers.")}</span>
                        </div>
                    </div>
                    {move || form.error.get().map(|e| view! { <p class="set-notice error" id="provider-form-error" role="alert">{e}</p> })}
                    <div class="set-actions end">
                        <button type="button" class="secondary" on:click=move |_| form.open.set(false)>
                            {t("Cancel")}
                        </button>
                        <button type="submit" class="primary" id="provider-save">
                            {t("Save provider")}
                        </button>
                    </div>
                </form>
            }
        })
    };

    let voice_models = move || loaded().map(|s| s.voice_models).unwrap_or_default();

    view! {
        <div class="settings-page">
            <header class="set-head">
                <h1 class="page-title">{t("Settings")}</h1>
                <p class="set-muted">
                    {t("Saved to ")}
                    <code id="settings-config-file">
                        {move || loaded().map(|s| s.config_file).unwrap_or_default()}
                    </code>
                    {t(", keeping the rest of the file as you wrote it.")}
                </p>
            </header>
            {move || match settings.get() {
                None => Some(view! { <p class="set-muted">{t("Loading…")}</p> }.into_any()),
                Some(Err(e)) => Some(
                    view! { <p class="set-notice error" role="alert">{e.message}</p> }.into_any(),
                ),
                Some(Ok(s)) => s.config_error.map(|e| {
                    view! {
                        <p class="set-notice error" role="alert" id="settings-config-error">
                            {t("The config file has an error; the values below are the defaults until it is fixed: ")}
                            {e}
                        </p>
                    }
                    .into_any()
                }),
            }}

            <section class="set-section" aria-labelledby="set-models-title">
                <div class="set-section-head">
                    <div>
                        <h2 id="set-models-title">{t("Providers and models")}</h2>
                        <p class="set-muted">{t("The servers the chat talks to, and the model it uses by default.")}</p>
                    </div>
                    <button
                        class="primary"
                        id="settings-add-provider"
                        on:click=move |_| form.start(None)
                    >
                        {t("Add a provider")}
                    </button>
                </div>
                {provider_form}
                <ul class="set-providers">{provider_list}</ul>
                <div class="set-row">
                    <label for="settings-default-select">{t("Default model")}</label>
                    <select
                        id="settings-default-select"
                        prop:value=move || default_choice.get()
                        on:change=move |ev| default_choice.set(event_target_value(&ev))
                    >
                        <option value="">{t("None")}</option>
                        {move || {
                            default_options()
                                .unwrap_or_default()
                                .into_iter()
                                .map(|o| view! { <option value=o.clone()>{o.clone()}</option> })
                                .collect_view()
                        }}
                    </select>
                    <button
                        class="secondary"
                        id="settings-default-save"
                        disabled=move || default_choice.get().is_empty()
                        on:click=move |_| {
                            let choice = default_choice.get_untracked();
                            if let Some((provider, model)) = choice.split_once('/') {
                                set_default(provider.to_owned(), model.to_owned());
                            }
                        }
                    >
                        {t("Set as default")}
                    </button>
                    <span class="set-muted">
                        {t("Now: ")}
                        <strong id="settings-default-model">
                            {move || {
                                loaded()
                                    .and_then(|s| s.default_model)
                                    .unwrap_or_else(|| t("none").into())
                            }}
                        </strong>
                    </span>
                </div>
                <p id="settings-embedding" class="set-muted">
                    {move || loaded().map(|s| if s.embedding_installed {
                        tf("Memory search: {model} on this device (loaded when first needed).", &[("model", &s.embedding_model)])
                    } else {
                        tf("Memory search: {model} is not installed, so recall matches words only. ./run setup installs it.", &[("model", &s.embedding_model)])
                    })}
                </p>
                {notice_view(provider_notice, "settings-provider-notice")}
            </section>

            <crate::settings_models::LocalModels use_model=move |name| set_default("local".to_owned(), name) />

            <section class="set-section" aria-labelledby="set-voice-title">
                <h2 id="set-voice-title">{t("Voice")}</h2>
                <p class="set-muted">{t("Speech is transcribed on this machine with whisper.")}</p>
                <div class="set-grid">
                    <label for="voice-model">{t("Model")}</label>
                    <div class="set-field">
                        <select
                            id="voice-model"
                            prop:value=move || voice_model.get()
                            on:change=move |ev| voice_model.set(event_target_value(&ev))
                        >
                            {move || {
                                let mut models = voice_models();
                                let chosen = voice_model.get();
                                let known = models.iter().any(|m| m.name == chosen);
                                let missing = (!known && !chosen.is_empty()).then(|| {
                                    view! { <option value=chosen.clone()>{tf("{name} (not installed)", &[("name", &chosen)])}</option> }
                                });
                                models.sort_by(|a, b| a.name.cmp(&b.name));
                                view! {
                                    {missing}
                                    {models
                                        .into_iter()
                                        .map(|m| {
                                            let size = crate::format::bytes(m.bytes);
                                            let args = [("name", m.name.as_str()), ("size", size.as_str())];
                                            let label = if m.multilingual {
                                                tf("{name} — {size}, multilingual", &args)
                                            } else {
                                                tf("{name} — {size}, English only", &args)
                                            };
                                            view! { <option value=m.name.clone()>{label}</option> }
                                        })
                                        .collect_view()}
                                }
                            }}
                        </select>
                        {move || voice_models().is_empty().then(|| view! {
                            <span class="set-hint">{t("No voice model is installed: install one under Models on this device, above.")}</span>
                        })}
                    </div>
                    <label for="voice-language">{t("Language")}</label>
                    <select
                        id="voice-language"
                        prop:value=move || voice_language.get()
                        on:change=move |ev| voice_language.set(event_target_value(&ev))
                    >
                        {languages()
                            .iter()
                            .map(|(code, name)| view! { <option value=*code>{*name}</option> })
                            .collect_view()}
                    </select>
                    <span class="set-label" id="voice-input-label">{t("Input")}</span>
                    <div class="set-field" role="radiogroup" aria-labelledby="voice-input-label">
                        <label class="set-check">
                            <input
                                type="radio"
                                name="voice-input"
                                id="voice-input-mic"
                                prop:checked=move || !voice_file.get()
                                on:change=move |_| voice_file.set(false)
                            />
                            {t("Microphone")}
                        </label>
                        <label class="set-check">
                            <input
                                type="radio"
                                name="voice-input"
                                id="voice-input-file"
                                prop:checked=move || voice_file.get()
                                on:change=move |_| voice_file.set(true)
                            />
                            {t("A WAV file (for machines without a microphone)")}
                        </label>
                        <label for="voice-path" class="sr-only">{t("WAV file path")}</label>
                        <input
                            id="voice-path"
                            type="text"
                            placeholder="/path/to/speech.wav"
                            disabled=move || !voice_file.get()
                            prop:value=move || voice_path.get()
                            on:input=move |ev| voice_path.set(event_target_value(&ev))
                        />
                    </div>
                </div>
                <div class="set-actions">
                    <button
                        class="primary"
                        id="voice-save"
                        on:click=move |_| {
                            let input = if voice_file.get_untracked() {
                                voice_path.get_untracked()
                            } else {
                                "microphone".to_owned()
                            };
                            save(
                                SettingsChange::Voice(VoiceInput {
                                    model: voice_model.get_untracked(),
                                    language: voice_language.get_untracked(),
                                    input,
                                }),
                                voice_notice,
                                t("Voice settings saved.").into(),
                            )
                        }
                    >
                        {t("Save voice settings")}
                    </button>
                </div>
                {notice_view(voice_notice, "settings-voice-notice")}
            </section>

            <section class="set-section" aria-labelledby="set-appearance-title">
                <h2 id="set-appearance-title">{t("Appearance and behaviour")}</h2>
                <div class="set-grid">
                    <span class="set-label" id="theme-label">{t("Theme")}</span>
                    <Segmented
                        prefix="theme"
                        labelled_by="theme-label"
                        options=vec![("system", t("System")), ("light", t("Light")), ("dark", t("Dark"))]
                        chosen=theme
                        on_pick=move |option, label| {
                            theme.set(option.to_owned());
                            apply_theme(option);
                            save_appearance(tf("Theme: {name}.", &[("name", label)]));
                        }
                    />
                    <label for="ui-language">{t("Language")}</label>
                    <div class="set-field">
                        <select
                            id="ui-language"
                            prop:value=move || language.get()
                            on:change=move |ev| change_language(event_target_value(&ev))
                        >
                            {crate::i18n::LANGUAGES
                                .iter()
                                .map(|(code, name)| view! { <option value=*code>{*name}</option> })
                                .collect_view()}
                        </select>
                        <span class="set-hint">{t("Both windows reload in the new language.")}</span>
                    </div>
                    <span class="set-label" id="launch-label">{t("At start, open")}</span>
                    <Segmented
                        prefix="launch"
                        labelled_by="launch-label"
                        options=vec![("full", t("The workbench")), ("pet", t("The pet only")), ("last", t("What I used last"))]
                        chosen=launch
                        on_pick=move |option, label| {
                            launch.set(option.to_owned());
                            save_appearance(tf("At start, open: {choice}.", &[("choice", label)]));
                        }
                    />
                    <span class="set-label">{t("At login")}</span>
                    <div class="set-field">
                        <label class="set-check">
                            <input
                                id="start-at-login"
                                type="checkbox"
                                prop:checked=move || start_at_login.get()
                                on:change=move |ev| {
                                    let on = event_target_checked(&ev);
                                    save(
                                        SettingsChange::StartAtLogin(on),
                                        appearance_notice,
                                        if on {
                                            t("Cairn starts when you log in.").to_owned()
                                        } else {
                                            t("Cairn no longer starts when you log in.").to_owned()
                                        },
                                    );
                                }
                            />
                            {t("Start Cairn when I log in")}
                        </label>
                    </div>
                    <label for="pet-shortcut">{t("Pet shortcut")}</label>
                    <div class="set-field">
                        <input
                            id="pet-shortcut"
                            type="text"
                            autocomplete="off"
                            prop:value=move || shortcut.get()
                            on:input=move |ev| shortcut.set(event_target_value(&ev))
                        />
                        <span class="set-hint">{t("Shows and hides the pet, e.g. CommandOrControl+Shift+Space. Applies at the next start.")}</span>
                    </div>
                    <label for="log-level">{t("Log level")}</label>
                    <div class="set-field">
                        <select
                            id="log-level"
                            prop:value=move || log_level.get()
                            on:change=move |ev| log_level.set(event_target_value(&ev))
                        >
                            {LOG_LEVELS
                                .iter()
                                .map(|l| view! { <option value=*l>{*l}</option> })
                                .collect_view()}
                        </select>
                        <span class="set-hint">{t("Applies at the next start.")}</span>
                    </div>
                </div>
                <div class="set-actions">
                    <button
                        class="primary"
                        id="appearance-save"
                        on:click=move |_| save_appearance(t("Saved. The shortcut and log level apply at the next start.").into())
                    >
                        {t("Save")}
                    </button>
                </div>
                {notice_view(appearance_notice, "settings-appearance-notice")}
            </section>

            <section class="set-section" aria-labelledby="set-diagnostics-title">
                <h2 id="set-diagnostics-title">{t("Diagnostics")}</h2>
                <p class="set-muted">
                    {t("A report to attach to a bug: the version, the status, your config with its keys removed, the sources and the memory's health. Nothing is sent anywhere.")}
                </p>
                <div class="set-actions">
                    <button
                        class="secondary"
                        id="diagnostics-export"
                        on:click=move |_| {
                            diagnostics_notice.set(Some(Notice::Done(t("Writing the report…").into())));
                            spawn_local(async move {
                                let answer = ipc::export_diagnostics().await;
                                diagnostics_notice.set(Some(match answer {
                                    Ok(path) => Notice::Done(tf("Report written to {path}", &[("path", &path)])),
                                    Err(e) => Notice::Failed(e.message),
                                }));
                            });
                        }
                    >
                        {t("Export a diagnostic report")}
                    </button>
                </div>
                {notice_view(diagnostics_notice, "diagnostics-path")}
            </section>
        </div>
    }
}

//! The Settings page: the model providers (added, edited, removed, tested against the real server)
//! and the default model; voice input (whisper model, language, microphone or a WAV file); the
//! theme, the pet's shortcut and the log level; and a redacted diagnostic report. Every change is
//! written into `config.toml` by the backend, which keeps the rest of the file as written.

use std::collections::BTreeMap;

use cairn_protocol::settings::ModelSlot;
use cairn_protocol::{ApiError, ConnectionTest};
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::i18n::{t, tf};
use crate::ipc::{self, SettingsChange};
use crate::segmented::Segmented;

mod agent;
mod appearance;
mod devices;
mod diagnostics;
mod mcp;
mod mcp_form;
mod providers;
mod voice;

use agent::*;
use appearance::*;
use devices::*;
use diagnostics::*;
use mcp::*;
use providers::*;
use voice::*;

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

// ---------------------------------------------------------------------------------------------
// What the commands answer.

use cairn_protocol::settings::{
    AppearanceInput, Language, LaunchMode, LogLevel, ProviderInput, ProviderKind,
    ProviderSettings as Provider, Settings, Theme, VoiceInput,
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
pub fn apply_theme(theme: Theme) {
    if let Some(root) = document().document_element() {
        let _ = match theme {
            Theme::Light | Theme::Dark => root.set_attribute("data-theme", theme.as_str()),
            Theme::System => root.remove_attribute("data-theme"),
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
    kind: RwSignal<ProviderKind>,
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
            kind: RwSignal::new(ProviderKind::Openai),
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
            .set(provider.map_or(ProviderKind::Openai, |p| p.kind));
        self.base_url
            .set(provider.map(|p| p.base_url.clone()).unwrap_or_default());
        self.api_key.set(String::new());
        self.clear_key.set(false);
        self.models
            .set(provider.map(|p| p.models.join(", ")).unwrap_or_default());
        self.open.set(true);
    }
}

/// The address a provider of `kind` has when none is given (an OpenAI-compatible server's for
/// Cairn's own, which has none).
pub fn placeholder_url(kind: ProviderKind) -> &'static str {
    match kind {
        ProviderKind::Local => ProviderKind::Openai.default_base_url(),
        kind => kind.default_base_url(),
    }
}

/// Every signal of the page, copied into each section.
#[derive(Clone, Copy)]
struct Page {
    settings: RwSignal<Option<Result<Settings, ApiError>>>,
    provider_notice: RwSignal<Option<Notice>>,
    voice_notice: RwSignal<Option<Notice>>,
    appearance_notice: RwSignal<Option<Notice>>,
    diagnostics_notice: RwSignal<Option<Notice>>,
    /// The last connection test of each provider (`None` while it runs).
    tests: RwSignal<BTreeMap<String, Option<ConnectionTest>>>,
    form: ProviderForm,
    // Voice and appearance drafts, filled from the settings when they load.
    voice_model: RwSignal<String>,
    voice_language: RwSignal<String>,
    voice_file: RwSignal<bool>,
    voice_path: RwSignal<String>,
    theme: RwSignal<Theme>,
    shortcut: RwSignal<String>,
    log_level: RwSignal<LogLevel>,
    language: RwSignal<Language>,
    launch: RwSignal<LaunchMode>,
    start_at_login: RwSignal<bool>,
    default_choice: RwSignal<String>,
}

impl Page {
    fn new() -> Self {
        Self {
            settings: RwSignal::new(None),
            provider_notice: RwSignal::new(None),
            voice_notice: RwSignal::new(None),
            appearance_notice: RwSignal::new(None),
            diagnostics_notice: RwSignal::new(None),
            tests: RwSignal::new(BTreeMap::new()),
            form: ProviderForm::new(),
            voice_model: RwSignal::new(String::new()),
            voice_language: RwSignal::new("auto".to_owned()),
            voice_file: RwSignal::new(false),
            voice_path: RwSignal::new(String::new()),
            theme: RwSignal::new(Theme::default()),
            shortcut: RwSignal::new(String::new()),
            log_level: RwSignal::new(LogLevel::default()),
            language: RwSignal::new(Language::default()),
            launch: RwSignal::new(LaunchMode::default()),
            start_at_login: RwSignal::new(false),
            default_choice: RwSignal::new(String::new()),
        }
    }
    /// Shows the settings as loaded (the drafts filled from them).
    fn adopt(self, loaded: Settings) {
        let Self {
            voice_model,
            voice_language,
            voice_file,
            voice_path,
            theme,
            shortcut,
            log_level,
            language,
            launch,
            start_at_login,
            default_choice,
            ..
        } = self;
        voice_model.set(loaded.voice_model.clone());
        voice_language.set(loaded.voice_language.clone());
        let file = loaded.voice_input != "microphone";
        voice_file.set(file);
        voice_path.set(if file {
            loaded.voice_input.clone()
        } else {
            String::new()
        });
        theme.set(loaded.theme);
        apply_theme(loaded.theme);
        shortcut.set(loaded.pet_shortcut.clone());
        log_level.set(loaded.log_level);
        language.set(loaded.language);
        launch.set(loaded.launch);
        start_at_login.set(loaded.start_at_login);
        default_choice.set(loaded.default_model.clone().unwrap_or_default());
        self.settings.set(Some(Ok(loaded)));
    }

    /// Makes a change answering the new settings; reports to `notice`.
    fn save(self, change: SettingsChange, notice: RwSignal<Option<Notice>>, done: String) {
        notice.set(None);
        spawn_local(async move {
            match ipc::change_settings(change).await {
                Ok(loaded) => {
                    self.adopt(loaded);
                    notice.set(Some(Notice::Done(done)));
                }
                Err(e) => notice.set(Some(Notice::Failed(e.message))),
            }
        });
    }

    /// Saves the provider form (a bad address is said next to its field first).
    fn save_provider(self) {
        let Self {
            provider_notice,
            tests,
            form,
            ..
        } = self;
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
            crate::dom::focus_by_id("provider-base-url");
            return;
        }
        spawn_local(async move {
            match ipc::change_settings(SettingsChange::SaveProvider(input)).await {
                Ok(loaded) => {
                    self.adopt(loaded);
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
    }

    /// Calls the provider's server for real; the result shows under it.
    fn test_provider(self, name: String) {
        let Self { tests, .. } = self;
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
    }

    /// Makes `provider/model` the chat's default.
    fn set_default(self, provider: String, model: String) {
        let Self {
            provider_notice, ..
        } = self;
        let label = format!("{provider}/{model}");
        self.save(
            SettingsChange::DefaultModel { provider, model },
            provider_notice,
            tf("The chat now uses {model}.", &[("model", &label)]),
        );
    }

    /// The appearance section as the command takes it.
    fn appearance(self) -> AppearanceInput {
        let Self {
            theme,
            shortcut,
            log_level,
            language,
            launch,
            ..
        } = self;
        AppearanceInput {
            theme: theme.get_untracked(),
            pet_shortcut: shortcut.get_untracked(),
            log_level: log_level.get_untracked(),
            language: Some(language.get_untracked()),
            launch: Some(launch.get_untracked()),
        }
    }

    /// Saves the appearance section.
    fn save_appearance(self, done: String) {
        let Self {
            appearance_notice, ..
        } = self;
        self.save(
            SettingsChange::Appearance(self.appearance()),
            appearance_notice,
            done,
        );
    }

    /// A new language: saved, then both windows load again in it.
    fn change_language(self, code: Language) {
        let Self {
            appearance_notice,
            language,
            ..
        } = self;
        language.set(code);
        let change = SettingsChange::Appearance(self.appearance());
        spawn_local(async move {
            match ipc::change_settings(change).await {
                Ok(_) => {
                    let _ = ipc::reload_windows().await;
                }
                Err(e) => appearance_notice.set(Some(Notice::Failed(e.message))),
            }
        });
    }

    /// The settings when they have loaded.
    fn loaded(self) -> Option<Settings> {
        self.settings.get().and_then(Result::ok)
    }

    /// Reads the settings.
    fn load(self) {
        let Self { settings, .. } = self;
        spawn_local(async move {
            match ipc::settings_get().await {
                Ok(loaded) => self.adopt(loaded),
                Err(e) => settings.set(Some(Err(e))),
            }
        });
    }
}

#[component]
pub fn SettingsPage() -> impl IntoView {
    let page = Page::new();
    page.load();
    let Page { settings, .. } = page;
    let loaded = move || page.loaded();
    let set_default = move |provider: String, model: String| page.set_default(provider, model);

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

            <ProvidersSection page />
            <crate::settings_models::LocalModels use_model=move |name| set_default("local".to_owned(), name) />
            <AgentSection page />
            <McpSection page />
            <DevicesSection />
            <VoiceSection page />
            <AppearanceSection page />
            <DiagnosticsSection page />
        </div>
    }
}

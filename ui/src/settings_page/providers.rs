//! Settings' providers and models: the servers the chat talks to (added, edited, removed, tested
//! against the real server) and the default model.

use super::*;

#[component]
pub(super) fn ProvidersSection(page: Page) -> impl IntoView {
    let Page {
        provider_notice,
        form,
        ..
    } = page;
    let loaded = move || page.loaded();
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
            .map(|provider| {
                view! { <ProviderItem page provider default_model=default_model.clone() /> }
            })
            .collect_view()
            .into_any()
    };
    // Read here, so the form shows the provider being edited when another's Edit is pressed.
    let provider_form = move || {
        form.open
            .get()
            .then(|| view! { <ProviderFormView page editing=form.editing.get() /> })
    };

    view! {
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
        <DefaultModelRow page />
        <SlotRows page />
        <p id="settings-embedding" class="set-muted">
            {move || loaded().map(|s| if s.embedding_installed {
                tf("Memory search: {model} on this device (loaded when first needed).", &[("model", &s.embedding_model)])
            } else {
                tf("Memory search: {model} is not installed, so recall matches words only. Install it under Models on this device, below.", &[("model", &s.embedding_model)])
            })}
        </p>
        {notice_view(provider_notice, "settings-provider-notice")}
    </section>
    }
}

/// One configured provider: its kind, address, key and models, its buttons and its last test.
#[component]
fn ProviderItem(page: Page, provider: Provider, default_model: String) -> impl IntoView {
    let Page {
        provider_notice,
        form,
        ..
    } = page;
    let save = move |change, notice, done| page.save(change, notice, done);
    let test_provider = move |name: String| page.test_provider(name);
    let name = provider.name.clone();
    let edit_with = provider.clone();
    let test_name = name.clone();
    let remove_name = name.clone();
    let configured = provider.models.clone();
    let models_view = if configured.is_empty() {
        view! { <span class="set-muted">{t("No models listed in the config")}</span> }.into_any()
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
                    <span class="set-kind">{provider.kind.as_str()}</span>
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
                <dd class="set-mono">{provider.base_url.clone()}</dd>
                <dt>{t("API key")}</dt>
                <dd class="provider-key">
                    {if provider.api_key_set { t("Set") } else { t("Not set") }}
                </dd>
                <dt>{t("Models")}</dt>
                <dd class="set-chips">{models_view}</dd>
            </dl>
            <ProviderTestResult page name=name.clone() />
        </li>
    }
}

/// The last connection test of provider `name`: under way, or what the server said and the
/// models it offers, each to make the default.
#[component]
fn ProviderTestResult(page: Page, name: String) -> impl IntoView {
    let Page { tests, .. } = page;
    let set_default = move |provider: String, model: String| page.set_default(provider, model);
    move || {
        let result = tests.get().get(&name).cloned()?;
        let provider = name.clone();
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
    }
}

/// The form that adds a provider (`editing` is `None`) or edits provider `editing`.
#[component]
fn ProviderFormView(page: Page, editing: Option<String>) -> impl IntoView {
    let Page { form, .. } = page;
    let save_provider = move || page.save_provider();
    let title = match &editing {
        Some(name) => tf("Edit provider {name}", &[("name", name)]),
        None => t("Add a provider").to_owned(),
    };
    let editing = editing.is_some();
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
                    prop:value=move || form.kind.get().as_str()
                    on:change=move |ev| {
                        if let Ok(kind) = event_target_value(&ev).parse::<ProviderKind>() {
                            form.kind.set(kind);
                        }
                    }
                >
                    <option value=ProviderKind::Openai.as_str()>{t("OpenAI-compatible")}</option>
                    <option value=ProviderKind::Anthropic.as_str()>"Anthropic"</option>
                    <option value=ProviderKind::Ollama.as_str()>"Ollama"</option>
                </select>
                <label for="provider-base-url">{t("Base URL")}</label>
                <input
                    id="provider-base-url"
                    type="url"
                    autocomplete="off"
                    placeholder=move || placeholder_url(form.kind.get())
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
}

/// Every configured provider's models, as `provider/model`.
fn provider_models(settings: &cairn_protocol::settings::Settings) -> Vec<String> {
    settings
        .providers
        .iter()
        .flat_map(|p| p.models.iter().map(move |m| format!("{}/{m}", p.name)))
        .collect()
}

/// The default model: chosen among the providers' models, and the one in use now.
#[component]
fn DefaultModelRow(page: Page) -> impl IntoView {
    let Page { default_choice, .. } = page;
    let set_default = move |provider: String, model: String| page.set_default(provider, model);
    let loaded = move || page.loaded();
    let default_options = move || {
        let current = loaded()?;
        let mut options = provider_models(&current);
        if let Some(default) = current.default_model.clone() {
            if !options.contains(&default) {
                options.insert(0, default);
            }
        }
        Some(options)
    };
    view! {
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
    }
}

/// The memory's background models: one row per slot, its model chosen among the providers' (or
/// the slot's default), saved as it is picked.
#[component]
fn SlotRows(page: Page) -> impl IntoView {
    let Page {
        provider_notice, ..
    } = page;
    let loaded = move || page.loaded();
    move || {
        let current = loaded()?;
        let mut options = provider_models(&current);
        for slot in &current.slots {
            for model in slot.model.iter().chain(&slot.in_use) {
                if !options.contains(model) {
                    options.push(model.clone());
                }
            }
        }
        let rows = current
            .slots
            .into_iter()
            .map(|slot| {
                let (label, id) = match slot.slot {
                    ModelSlot::Summary => (t("Memory summaries and notes"), "settings-slot-summary"),
                    ModelSlot::Evolution => (t("Learned policies, reworded"), "settings-slot-evolution"),
                };
                let chosen = slot.model.clone().unwrap_or_default();
                let options = options.clone();
                let which = slot.slot;
                view! {
                    <div class="set-row">
                        <label for=id>{label}</label>
                        <select
                            id=id
                            prop:value=chosen
                            on:change=move |ev| {
                                let picked = event_target_value(&ev);
                                let model = (!picked.is_empty()).then_some(picked);
                                let said = model.clone().unwrap_or_else(|| t("its default").into());
                                page.save(
                                    SettingsChange::SlotModel { slot: which, model },
                                    provider_notice,
                                    tf("{slot} now uses {model}.", &[("slot", label), ("model", &said)]),
                                );
                            }
                        >
                            <option value="">{t("Default")}</option>
                            {options
                                .into_iter()
                                .map(|o| view! { <option value=o.clone()>{o.clone()}</option> })
                                .collect_view()}
                        </select>
                        <span class="set-muted">
                            {t("Now: ")}
                            <strong>{slot.in_use.unwrap_or_else(|| t("the default model").into())}</strong>
                        </span>
                    </div>
                }
            })
            .collect_view();
        Some(view! {
            <h3 class="set-subtitle">{t("Models that write in the memory's background")}</h3>
            {rows}
        })
    }
}

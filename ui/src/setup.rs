//! First run: when no model is configured, the welcome screen is a short setup — the kind of
//! provider, its address and key, a real connection test, the model — that ends with the composer
//! ready for the first message. It writes the same `config.toml` entries the Settings page does.

use leptos::prelude::*;
use leptos::task::spawn_local;
use serde::Deserialize;
use serde_json::json;

use crate::i18n::{t, tf};
use crate::ipc::invoke_with;

/// What `settings_test_provider` answers.
#[derive(Debug, Clone, PartialEq, Deserialize)]
struct ConnectionTest {
    ok: bool,
    models: Vec<String>,
    message: String,
}

/// The part of `sources_list`'s answer the setup shows.
#[derive(Debug, Clone, PartialEq, Deserialize)]
struct Source {
    label: String,
    detected: bool,
    conversations: usize,
}

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
    let kind = RwSignal::new("openai".to_owned());
    let base_url = RwSignal::new(String::new());
    let api_key = RwSignal::new(String::new());
    let model = RwSignal::new(String::new());
    let check = RwSignal::new(Check::NotYet);
    let saving = RwSignal::new(false);
    let failure = RwSignal::new(None::<String>);
    let sources = RwSignal::new(Vec::<Source>::new());
    spawn_local(async move {
        if let Ok(found) = invoke_with::<Vec<Source>, _>("sources_list", &json!({})).await {
            sources.set(found.into_iter().filter(|s| s.detected).collect());
        }
    });

    let provider = move || provider_name(&kind.get_untracked(), &base_url.get_untracked());
    let save_provider = move || {
        let typed = model.get_untracked();
        json!({ "provider": {
            "name": provider(),
            "kind": kind.get_untracked(),
            "base_url": base_url.get_untracked().trim(),
            "api_key": api_key.get_untracked().trim(),
            "clear_key": false,
            "models": if typed.trim().is_empty() { vec![] } else { vec![typed.trim().to_owned()] },
        }})
    };
    // Saves what was typed, then calls the server for real.
    let test = move || {
        check.set(Check::Testing);
        failure.set(None);
        let args = save_provider();
        spawn_local(async move {
            if let Err(e) =
                invoke_with::<serde_json::Value, _>("settings_save_provider", &args).await
            {
                check.set(Check::Failed(e.message));
                return;
            }
            let name = provider();
            match invoke_with::<ConnectionTest, _>(
                "settings_test_provider",
                &json!({ "name": name }),
            )
            .await
            {
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
        let args = save_provider();
        spawn_local(async move {
            let saved = async {
                invoke_with::<serde_json::Value, _>("settings_save_provider", &args).await?;
                invoke_with::<serde_json::Value, _>(
                    "settings_set_default_model",
                    &json!({ "provider": provider(), "model": chosen }),
                )
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
            <p class="hint">{t("Cairn works with the model you choose. Your key stays in your config file or in an environment variable.")}</p>
            <div class="set-segmented" role="radiogroup" aria-label=t("Kind of provider")>
                {[("openai", t("OpenAI-compatible")), ("anthropic", "Anthropic"), ("ollama", "Ollama")]
                    .into_iter()
                    .map(|(value, label)| view! {
                        <button
                            type="button"
                            role="radio"
                            id=format!("first-run-kind-{value}")
                            aria-checked=move || (kind.get() == value).to_string()
                            on:click=move |_| {
                                kind.set(value.to_owned());
                                check.set(Check::NotYet);
                            }
                        >
                            {label}
                        </button>
                    })
                    .collect_view()}
            </div>
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
            <Show when=move || kind.get() != "ollama">
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
            <p id="first-run-check" class="first-run-check" role="status">
                {move || match check.get() {
                    Check::NotYet => String::new(),
                    Check::Testing => t("Calling the server…").to_owned(),
                    Check::Passed(found) if found.models.is_empty() => tf("Connected. {message}", &[("message", &found.message)]),
                    Check::Passed(found) => tf("Connected: the server offers {n} models. Pick one and start.", &[("n", &found.models.len().to_string())]),
                    Check::Failed(message) => message,
                }}
            </p>
            {move || failure.get().map(|message| view! { <p class="error-text" role="alert">{message}</p> })}
            <div class="set-actions">
                <button
                    id="first-run-test"
                    type="button"
                    class=move || if passed() { "secondary" } else { "primary" }
                    disabled=move || check.get() == Check::Testing
                    on:click=move |_| test()
                >
                    {t("Test connection")}
                </button>
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

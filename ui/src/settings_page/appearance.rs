//! Settings' appearance and behaviour: theme, language, what opens at start, start at login, the
//! pet's shortcut, the log level.

use super::*;

#[component]
pub(super) fn AppearanceSection(page: Page) -> impl IntoView {
    let Page {
        appearance_notice,
        theme,
        shortcut,
        log_level,
        language,
        launch,
        start_at_login,
        ..
    } = page;
    let save = move |change, notice, done| page.save(change, notice, done);
    let save_appearance = move |done: String| page.save_appearance(done);
    let change_language = move |code: Language| page.change_language(code);

    view! {
    <section class="set-section" aria-labelledby="set-appearance-title">
        <h2 id="set-appearance-title">{t("Appearance and behaviour")}</h2>
        <div class="set-grid">
            <span class="set-label" id="theme-label">{t("Theme")}</span>
            <Segmented
                prefix="theme"
                labelled_by="theme-label"
                options=vec![
                    (Theme::System.as_str(), t("System")),
                    (Theme::Light.as_str(), t("Light")),
                    (Theme::Dark.as_str(), t("Dark")),
                ]
                chosen=Signal::derive(move || theme.get().as_str().to_owned())
                on_pick=move |option, label| {
                    if let Ok(picked) = option.parse::<Theme>() {
                        theme.set(picked);
                        apply_theme(picked);
                        save_appearance(tf("Theme: {name}.", &[("name", label)]));
                    }
                }
            />
            <label for="ui-language">{t("Language")}</label>
            <div class="set-field">
                <select
                    id="ui-language"
                    prop:value=move || language.get().as_str()
                    on:change=move |ev| {
                        if let Ok(picked) = event_target_value(&ev).parse::<Language>() {
                            change_language(picked);
                        }
                    }
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
                options=vec![
                    (LaunchMode::Full.as_str(), t("The workbench")),
                    (LaunchMode::Pet.as_str(), t("The pet only")),
                    (LaunchMode::Last.as_str(), t("What I used last")),
                ]
                chosen=Signal::derive(move || launch.get().as_str().to_owned())
                on_pick=move |option, label| {
                    if let Ok(picked) = option.parse::<LaunchMode>() {
                        launch.set(picked);
                        save_appearance(tf("At start, open: {choice}.", &[("choice", label)]));
                    }
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
                    prop:value=move || log_level.get().as_str()
                    on:change=move |ev| {
                        if let Ok(picked) = event_target_value(&ev).parse::<LogLevel>() {
                            log_level.set(picked);
                        }
                    }
                >
                    {LogLevel::ALL
                        .iter()
                        .map(|l| view! { <option value=l.as_str()>{l.as_str()}</option> })
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
    }
}

//! Settings' voice input: the whisper model, the language, the microphone or a WAV file.

use super::*;

#[component]
pub(super) fn VoiceSection(page: Page) -> impl IntoView {
    let Page {
        voice_notice,
        voice_model,
        voice_language,
        voice_file,
        voice_path,
        ..
    } = page;
    let save = move |change, notice, done| page.save(change, notice, done);
    let loaded = move || page.loaded();
    let voice_models = move || loaded().map(|s| s.voice_models).unwrap_or_default();

    view! {
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
    }
}

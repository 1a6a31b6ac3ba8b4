//! The welcome of an empty task: the first-run setup, or what to ask.

use super::*;

#[component]
pub(super) fn Welcome(
    status: RwSignal<StatusState>,
    checking: RwSignal<bool>,
    refresh: impl Fn() + Copy + Send + Sync + 'static,
    page: RwSignal<Page>,
) -> impl IntoView {
    // The first-run setup just finished: say so until the first message.
    let connected = RwSignal::new(false);
    view! {
        <div class="welcome">
            <img src="cairn-mark.svg" alt="" class="welcome-mark" />
            <h2>{t("What should we work on?")}</h2>
            <p class="hint">
                {t("Cairn remembers what you and your other agents did, and brings the relevant past into every task.")}
            </p>
            <p id="folder-default" class="hint">
                {t("Each task works in its own folder (📁 above: a workspace in Cairn's home until you choose another). Cairn asks before overwriting a file or working outside that folder; Settings → Agent changes that.")}
            </p>
            {move || match status.get() {
                // A config that does not load: say why, and where the file is.
                Some(Ok(report)) if !report.can_chat() && report.config.error.is_some() => {
                    let problem = report.config.error.clone().unwrap_or_default();
                    view! {
                        <div class="card setup-card">
                            <h3>{t("The config file has an error")}</h3>
                            <p class="error-text">{problem}</p>
                            <pre class="snippet">{present::setup_snippet(&report.paths.config)}</pre>
                            <button id="open-settings" class="primary" on:click=move |_| page.set(Page::Settings)>
                                {t("Open Settings")}
                            </button>
                        </div>
                    }
                        .into_any()
                }
                // No model yet: the first-run setup.
                Some(Ok(report)) if !report.can_chat() => view! {
                    <crate::setup::FirstRun on_ready=move || {
                        connected.set(true);
                        refresh();
                        focus_composer();
                    } />
                }
                    .into_any(),
                Some(Ok(report)) if connected.get() => view! {
                    <p id="first-run-done" class="card ready-card" role="status">
                        {tf("Connected to {model}. Write your first message below: Enter sends.", &[("model", &report.default_model.clone().unwrap_or_default())])}
                    </p>
                }
                    .into_any(),
                _ => ().into_any(),
            }}
            // Only while something is missing: once Cairn can chat there is nothing to check.
            <Show when=move || !matches!(status.get(), Some(Ok(report)) if report.can_chat())>
                <button id="check-status" class="secondary" disabled=move || checking.get() on:click=move |_| refresh()>
                    {move || if checking.get() { t("Checking…") } else { t("Check again") }}
                </button>
            </Show>
        </div>
    }
}

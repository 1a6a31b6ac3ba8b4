//! Settings' agent section: how far the agent goes without asking (overwrites and work outside
//! the task's folder; every command and file change) and the workspace new tasks start in.

use cairn_protocol::settings::AgentInput;

use super::*;

#[component]
pub(super) fn AgentSection(page: Page) -> impl IntoView {
    let notice = RwSignal::new(None::<Notice>);
    let guard = RwSignal::new(true);
    let ask_always = RwSignal::new(false);
    let workspace = RwSignal::new(String::new());
    // The drafts follow the settings whenever they load.
    Effect::new(move |_| {
        if let Some(Ok(loaded)) = page.settings.get() {
            guard.set(loaded.agent.guard_folder);
            ask_always.set(loaded.agent.ask_always);
            workspace.set(loaded.agent.workspace);
        }
    });
    let save = move |done: String| {
        let input = AgentInput {
            guard_folder: guard.get_untracked(),
            ask_always: ask_always.get_untracked(),
            workspace: workspace.get_untracked(),
        };
        page.save(SettingsChange::Agent(input), notice, done);
    };

    view! {
    <section class="set-section" aria-labelledby="set-agent-title">
        <h2 id="set-agent-title">{t("Agent")}</h2>
        <div class="set-grid">
            <span class="set-label">{t("Task folder")}</span>
            <div class="set-field">
                <label class="set-check">
                    <input
                        id="guard-folder"
                        type="checkbox"
                        prop:checked=move || guard.get()
                        on:change=move |ev| {
                            guard.set(event_target_checked(&ev));
                            save(if guard.get_untracked() {
                                t("Cairn asks before overwriting a file or working outside the task's folder.").to_owned()
                            } else {
                                t("Cairn no longer asks before overwriting files or working outside the task's folder.").to_owned()
                            });
                        }
                    />
                    {t("Ask before overwriting a file or working outside the task's folder")}
                </label>
            </div>
            <span class="set-label">{t("Every change")}</span>
            <div class="set-field">
                <label class="set-check">
                    <input
                        id="ask-always"
                        type="checkbox"
                        prop:checked=move || ask_always.get()
                        on:change=move |ev| {
                            ask_always.set(event_target_checked(&ev));
                            save(if ask_always.get_untracked() {
                                t("Cairn asks before every command and file change.").to_owned()
                            } else {
                                t("Commands and file changes in the task's folder run without asking.").to_owned()
                            });
                        }
                    />
                    {t("Ask before every command and file change")}
                </label>
            </div>
            <label for="workspace">{t("Workspace")}</label>
            <div class="set-field">
                <input
                    id="workspace"
                    type="text"
                    autocomplete="off"
                    spellcheck="false"
                    prop:value=move || workspace.get()
                    on:input=move |ev| workspace.set(event_target_value(&ev))
                />
                <span class="set-hint">{t("Where a new task works until you choose its folder (📁 above the messages). Tasks remember their folder.")}</span>
            </div>
        </div>
        <div class="set-actions">
            <button
                class="primary"
                id="agent-save"
                on:click=move |_| save(t("Saved. New tasks start in the workspace.").into())
            >
                {t("Save")}
            </button>
        </div>
        {notice_view(notice, "settings-agent-notice")}
    </section>
    }
}

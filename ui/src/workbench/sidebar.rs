//! The workbench's sidebar: the brand, New task, the task search and list, the pages, the pet's
//! switch, and the status line.

use super::bench::Bench;
use super::*;

#[component]
pub(super) fn Sidebar(bench: Bench) -> impl IntoView {
    let Bench {
        status,
        tasks,
        page,
        current,
        query,
        ..
    } = bench;
    let page_link = move |id: &'static str, label: &'static str, target: Page| {
        view! {
            <button
                id=id
                class=move || if page.get() == target { "page-link active" } else { "page-link" }
                on:click=move |_| page.set(target)
            >
                {label}
            </button>
        }
    };
    view! {
        <aside class="sidebar">
            <div class="brand">
                <img src="cairn-mark.svg" alt="" class="brand-mark" />
                <span class="brand-name">"Cairn"</span>
            </div>
            <button id="new-task" class="new-task" on:click=move |_| {
                current.set(None);
                page.set(Page::Tasks);
                // Once the stream shows again (from another page): what is typed goes there.
                request_animation_frame(focus_composer);
            }>
                <span class="plus">"+"</span>
                {t("New task")}
            </button>
            <input
                id="task-search"
                class="search"
                type="search"
                placeholder=t("Search tasks")
                prop:value=move || query.get()
                on:input=move |ev| query.set(event_target_value(&ev))
                on:keydown=move |ev: web_sys::KeyboardEvent| {
                    // ↓ goes from the search box into the tasks it found.
                    if ev.key() == "ArrowDown" {
                        ev.prevent_default();
                        move_task_focus(1);
                    }
                }
            />
            <TaskList tasks current query page />
            <nav class="pages" aria-label=t("Pages")>
                {page_link("page-memory", t("Memory"), Page::Memory)}
                {page_link("page-sources", t("Sources"), Page::Sources)}
                {page_link("page-schedules", t("Schedules"), Page::Schedules)}
                {page_link("page-settings", t("Settings"), Page::Settings)}
            </nav>
            <button
                id="toggle-pet"
                class="page-link"
                title=t("Show or hide the pet (Ctrl+Shift+Space)")
                on:click=move |_| {
                    spawn_local(async {
                        let _ = ipc::toggle_pet().await;
                    });
                }
            >
                {t("Pet")}
            </button>
            <footer class="sidebar-foot">
                <span class=move || {
                    if matches!(status.get(), Some(Ok(ref r)) if r.api.running) {
                        "dot dot-ok"
                    } else {
                        "dot dot-off"
                    }
                }></span>
                <span id="status-line" class="status-line">
                    {move || match status.get() {
                        None => t("Checking…").to_owned(),
                        Some(Ok(report)) => present::status_line(&report),
                        Some(Err(e)) => tf("Status unavailable: {error}", &[("error", &e.message)]),
                    }}
                </span>
            </footer>
        </aside>
    }
}

//! The task list: tasks grouped by when they were last used, search, rename in place, pin,
//! archive, restore and delete, and ↑/↓ from the keyboard.

use super::*;

/// The rename box of task `id`: it takes the caret, its text selected, when it appears.
pub(super) fn rename_input(
    id: usize,
    renaming: RwSignal<Option<usize>>,
) -> NodeRef<leptos::html::Input> {
    let input = NodeRef::<leptos::html::Input>::new();
    input.on_load(move |element| {
        request_animation_frame(move || {
            if renaming.get_untracked() == Some(id) {
                let _ = element.focus();
                element.select();
            }
        });
    });
    input
}

#[component]
pub(super) fn TaskList(
    tasks: RwSignal<Vec<Task>>,
    current: RwSignal<Option<usize>>,
    query: RwSignal<String>,
    page: RwSignal<Page>,
) -> impl IntoView {
    let renaming = RwSignal::new(None::<usize>);
    let confirming = RwSignal::new(None::<usize>);
    // Stored tasks whose content matches (they are not all loaded here): asked of the backend a
    // moment after the typing stops.
    let found = RwSignal::new(Vec::<String>::new());
    Effect::new(move |_| {
        let q = query.get();
        if q.trim().is_empty() {
            found.set(Vec::new());
            return;
        }
        spawn_local(async move {
            crate::dom::sleep(200).await;
            if query.get_untracked() != q {
                return;
            }
            if let Ok(sessions) = ipc::tasks_search(&q).await {
                if query.get_untracked() == q {
                    found.set(sessions);
                }
            }
        });
    });
    let groups = move || {
        let q = query.get().to_lowercase();
        let now = js_sys::Date::now();
        let offset = js_sys::Date::new_0().get_timezone_offset();
        tasks.with(|all| {
            let mut matching: Vec<&Task> = all
                .iter()
                .filter(|t| {
                    q.is_empty()
                        || t.title.to_lowercase().contains(&q)
                        || found.with(|f| f.contains(&t.session))
                        || t.messages.iter().any(|e| {
                            e.message
                                .with_untracked(|m| m.text().to_lowercase().contains(&q))
                        })
                })
                .collect();
            matching.sort_by(|a, b| b.updated_at.total_cmp(&a.updated_at));
            present::TASK_GROUPS
                .iter()
                .map(|group| {
                    let rows: Vec<Row> = matching
                        .iter()
                        .filter(|t| {
                            present::task_group(t.updated_at, now, offset, t.pinned, t.archived)
                                == *group
                        })
                        .map(|t| {
                            (
                                t.id,
                                t.title.clone(),
                                t.pinned,
                                t.archived,
                                t.running(),
                                t.unread,
                            )
                        })
                        .collect();
                    (*group, rows)
                })
                .filter(|(_, rows)| !rows.is_empty())
                .collect::<Vec<_>>()
        })
    };
    let rows = RowCtx {
        tasks,
        current,
        page,
        renaming,
        confirming,
    };
    view! {
        <nav
            id="task-list"
            class="task-list"
            on:keydown=move |ev: web_sys::KeyboardEvent| {
                // ↑/↓ walk the tasks (Enter opens one); ↑ from the first goes back to the search.
                let step = match ev.key().as_str() {
                    "ArrowDown" => 1,
                    "ArrowUp" => -1,
                    _ => return,
                };
                if renaming.get_untracked().is_some() {
                    return;
                }
                ev.prevent_default();
                move_task_focus(step);
            }
        >
            <Show
                when=move || !groups().is_empty()
                fallback=move || {
                    view! {
                        <div class="task-empty">
                            {move || {
                                if tasks.with(Vec::is_empty) {
                                    view! {
                                        <p class="task-empty-title">{t("No tasks yet")}</p>
                                        <p class="hint">{t("Tasks you start appear here, newest first.")}</p>
                                    }
                                        .into_any()
                                } else {
                                    view! { <p class="hint">{t("No task matches your search.")}</p> }.into_any()
                                }
                            }}
                        </div>
                    }
                }
            >
                <For each=groups key=|(group, rows)| (*group, rows.clone()) let:item>
                    <p class="group-label">{present::group_label(item.0)}</p>
                    <For each=move || item.1.clone() key=|row| row.clone() let:row>
                        {task_row(rows, row)}
                    </For>
                </For>
            </Show>
        </nav>
    }
}

/// One row as the list shows it: id, title, pinned, archived, running, unread.
type Row = (usize, String, bool, bool, bool, bool);

/// What a row reaches: the tasks, the open one, the page, and which row is being renamed or
/// asked to confirm its deletion.
#[derive(Clone, Copy)]
struct RowCtx {
    tasks: RwSignal<Vec<Task>>,
    current: RwSignal<Option<usize>>,
    page: RwSignal<Page>,
    renaming: RwSignal<Option<usize>>,
    confirming: RwSignal<Option<usize>>,
}

impl RowCtx {
    fn session_of(self, id: usize) -> Option<String> {
        self.tasks
            .with_untracked(|all| all.iter().find(|t| t.id == id).map(|t| t.session.clone()))
    }

    /// Renames, pins or archives task `id` (`change`: the fields that change).
    fn change(self, id: usize, change: serde_json::Value) {
        let Some(session) = self.session_of(id) else {
            return;
        };
        let tasks = self.tasks;
        spawn_local(async move {
            if let Ok(summary) = ipc::task_update(&session, &change).await {
                tasks.update(|all| {
                    if let Some(task) = all.iter_mut().find(|t| t.id == id) {
                        task.title = summary.title;
                        task.pinned = summary.pinned;
                        task.archived = summary.archived;
                    }
                });
            }
        });
    }

    /// Deletes task `id` for good.
    fn delete(self, id: usize) {
        let Some(session) = self.session_of(id) else {
            return;
        };
        let (tasks, current) = (self.tasks, self.current);
        spawn_local(async move {
            if ipc::task_delete(&session).await.is_ok() {
                tasks.update(|all| all.retain(|t| t.id != id));
                if current.get_untracked() == Some(id) {
                    current.set(None);
                }
            }
        });
    }
}

/// A task's row: its title (a rename box while renamed) and its actions.
fn task_row(ctx: RowCtx, row: Row) -> impl IntoView {
    let RowCtx {
        current,
        page,
        renaming,
        confirming,
        ..
    } = ctx;
    let (id, title, pinned, archived, running, unread) = row;
    let row_title = title.clone();
    let input_title = StoredValue::new(title.clone());
    view! {
        <div
            class=move || match (current.get() == Some(id), renaming.get() == Some(id)) {
                (_, true) => "task-row renaming",
                (true, false) => "task-row active",
                (false, false) => "task-row",
            }
            data-title=row_title
        >
            <Show
                when=move || renaming.get() == Some(id)
                fallback={
                    let title = title.clone();
                    move || view! {
                        <button
                            class="task"
                            on:click=move |_| {
                                current.set(Some(id));
                                page.set(Page::Tasks);
                            }
                            on:dblclick=move |_| renaming.set(Some(id))
                        >
                            {running.then(|| view! { <span class="spinner" aria-label=t("running")></span> })}
                            <span class="task-title">{title.clone()}</span>
                            {unread.then(|| view! { <span class="unread-dot" aria-label=t("unread")></span> })}
                        </button>
                    }
                }
            >
                <input
                    class="task-rename"
                    node_ref=rename_input(id, renaming)
                    aria-label=t("Task title")
                    prop:value=move || input_title.get_value()
                    on:keydown=move |ev: web_sys::KeyboardEvent| {
                        if ev.key() == "Enter" {
                            let value = event_target_value(&ev);
                            renaming.set(None);
                            ctx.change(id, serde_json::json!({"title": value}));
                        } else if ev.key() == "Escape" {
                            ev.prevent_default();
                            renaming.set(None);
                        }
                    }
                    on:blur=move |_| renaming.set(None)
                />
            </Show>
            <span class="task-actions">
                <button
                    class="icon"
                    title=if pinned { t("Unpin") } else { t("Pin") }
                    aria-label=if pinned { t("Unpin") } else { t("Pin") }
                    on:click=move |_| ctx.change(id, serde_json::json!({"pinned": !pinned}))
                >
                    {if pinned { "★" } else { "☆" }}
                </button>
                <button class="icon" title=t("Rename") aria-label=t("Rename") on:click=move |_| renaming.set(Some(id))>"✎"</button>
                <button
                    class="icon"
                    title=if archived { t("Restore") } else { t("Archive") }
                    aria-label=if archived { t("Restore") } else { t("Archive") }
                    on:click=move |_| ctx.change(id, serde_json::json!({"archived": !archived}))
                >
                    {if archived { "↺" } else { "⤓" }}
                </button>
                <Show
                    when=move || confirming.get() == Some(id)
                    fallback=move || view! {
                        <button class="icon" title=t("Delete") aria-label=t("Delete") on:click=move |_| confirming.set(Some(id))>"✕"</button>
                    }
                >
                    <button class="icon danger" title=t("Delete for good") on:click=move |_| {
                        confirming.set(None);
                        ctx.delete(id);
                    }>{t("Delete?")}</button>
                </Show>
            </span>
        </div>
    }
}

/// Moves the keyboard focus `step` tasks down (or up) the task list from the focused one (from
/// the search box: to the first); up from the first task goes back to the search box.
pub(super) fn move_task_focus(step: i32) {
    use wasm_bindgen::JsCast;
    let Some(document) = web_sys::window().and_then(|w| w.document()) else {
        return;
    };
    let Ok(rows) = document.query_selector_all("#task-list .task") else {
        return;
    };
    let tasks: Vec<web_sys::HtmlElement> = (0..rows.length())
        .filter_map(|i| rows.item(i))
        .filter_map(|node| node.dyn_into::<web_sys::HtmlElement>().ok())
        .collect();
    let active = document.active_element();
    let at = tasks
        .iter()
        .position(|t| active.as_ref().is_some_and(|a| a.is_same_node(Some(t))));
    let next = match at {
        None if step > 0 => Some(0),
        None => None,
        Some(i) => usize::try_from(i as i32 + step).ok(),
    };
    match next.and_then(|n| tasks.get(n)) {
        Some(task) => {
            let _ = task.focus();
        }
        None if step < 0 => focus_by_id("task-search"),
        None => {}
    }
}

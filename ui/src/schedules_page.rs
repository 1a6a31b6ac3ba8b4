//! The Schedules page: tasks that run on a schedule — each with when it runs (and in words), its
//! next run and how its last went; added here in plain English, run now, paused, resumed,
//! edited, removed. Each run is a task in the task list.

use cairn_protocol::schedule::ScheduleView;
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::format::{local, long_moment};
use crate::i18n::{t, tf};
use crate::ipc;

#[derive(Clone, Copy)]
struct Ctx {
    list: RwSignal<Option<Result<Vec<ScheduleView>, String>>>,
    notice: RwSignal<Option<String>>,
    /// The form's fields, and the schedule it edits (`None`: it adds one).
    when: RwSignal<String>,
    message: RwSignal<String>,
    name: RwSignal<String>,
    editing: RwSignal<Option<String>>,
}

impl Ctx {
    fn load(self) {
        spawn_local(async move {
            self.list
                .set(Some(ipc::schedules_list().await.map_err(|e| e.message)));
        });
    }

    /// Runs `op`, says `done` (or the error), and reads the list again.
    fn act<T: 'static>(
        self,
        op: impl std::future::Future<Output = Result<T, cairn_protocol::ApiError>> + 'static,
        done: impl FnOnce(T) -> String + 'static,
    ) {
        spawn_local(async move {
            self.notice.set(Some(match op.await {
                Ok(value) => done(value),
                Err(e) => e.message,
            }));
            self.load();
        });
    }
}

#[component]
pub fn SchedulesPage() -> impl IntoView {
    let ctx = Ctx {
        list: RwSignal::new(None),
        notice: RwSignal::new(None),
        when: RwSignal::new(String::new()),
        message: RwSignal::new(String::new()),
        name: RwSignal::new(String::new()),
        editing: RwSignal::new(None),
    };
    ctx.load();
    let Ctx {
        when,
        message,
        name,
        editing,
        ..
    } = ctx;
    let clear = move || {
        when.set(String::new());
        message.set(String::new());
        name.set(String::new());
        editing.set(None);
    };
    let save = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let (w, m, n) = (
            when.get_untracked(),
            message.get_untracked(),
            name.get_untracked(),
        );
        match editing.get_untracked() {
            None => ctx.act(
                async move { ipc::schedule_add(&w, &m, &n).await },
                move |s| {
                    clear();
                    tf("Added “{name}”.", &[("name", &s.name)])
                },
            ),
            Some(id) => ctx.act(
                async move { ipc::schedule_edit(&id, &w, &m, &n).await },
                move |s| {
                    clear();
                    tf("Saved “{name}”.", &[("name", &s.name)])
                },
            ),
        }
    };
    view! {
        <div id="schedules-page" class="schedules-page">
            <header class="sources-head">
                <div>
                    <h1 class="page-title">{t("Schedules")}</h1>
                    <p class="hint">
                        {t("Tasks that run on their own while Cairn runs: each run sends the message to a new task. A run missed while the computer slept runs once when it wakes.")}
                    </p>
                </div>
            </header>
            <form id="schedule-form" class="card schedule-form" on:submit=save>
                <div class="set-row">
                    <label for="schedule-when">{t("When")}</label>
                    <input
                        id="schedule-when"
                        placeholder=t("every weekday at 9")
                        prop:value=move || when.get()
                        on:input=move |ev| when.set(event_target_value(&ev))
                    />
                </div>
                <div class="set-row">
                    <label for="schedule-message">{t("Task")}</label>
                    <input
                        id="schedule-message"
                        placeholder=t("Summarise what changed in ~/notes")
                        prop:value=move || message.get()
                        on:input=move |ev| message.set(event_target_value(&ev))
                    />
                </div>
                <div class="set-row">
                    <label for="schedule-name">{t("Name (optional)")}</label>
                    <input
                        id="schedule-name"
                        prop:value=move || name.get()
                        on:input=move |ev| name.set(event_target_value(&ev))
                    />
                    <button id="schedule-add" class="primary" type="submit">
                        {move || if editing.get().is_some() { t("Save") } else { t("Add") }}
                    </button>
                    <button
                        id="schedule-cancel"
                        class="secondary"
                        type="button"
                        hidden=move || editing.get().is_none()
                        on:click=move |_| clear()
                    >
                        {t("Cancel")}
                    </button>
                </div>
            </form>
            <p id="schedules-notice" class="set-notice ok" hidden=move || ctx.notice.get().is_none()>
                {move || ctx.notice.get()}
            </p>
            <ul class="schedule-list">
                {move || match ctx.list.get() {
                    None => view! { <li class="hint">{t("Loading…")}</li> }.into_any(),
                    Some(Err(e)) => view! { <li class="error-text">{e}</li> }.into_any(),
                    Some(Ok(list)) if list.is_empty() => view! {
                        <li id="schedules-empty" class="hint">
                            {t("No schedules yet. Add one above, or ask the agent (“every Monday at 10, …”).")}
                        </li>
                    }
                    .into_any(),
                    Some(Ok(list)) => list
                        .into_iter()
                        .map(|view| view! { <ScheduleItem ctx view /> })
                        .collect_view()
                        .into_any(),
                }}
            </ul>
        </div>
    }
}

#[component]
fn ScheduleItem(ctx: Ctx, view: ScheduleView) -> impl IntoView {
    let ScheduleView {
        schedule,
        next,
        described,
    } = view;
    let id = schedule.id.clone();
    let paused = schedule.paused;
    let next_text = match next {
        _ if paused => t("paused").to_owned(),
        Some(at) => long_moment(local(at)),
        None => t("never").to_owned(),
    };
    let last = schedule.last_run.as_ref().map(|run| {
        let when = long_moment(local(run.due_at));
        match (&run.task, &run.skipped) {
            (Some(_), _) if run.missed => tf(
                "{when}: ran late (the computer was asleep or Cairn closed)",
                &[("when", &when)],
            ),
            (Some(_), _) => tf("{when}: ran", &[("when", &when)]),
            (None, Some(why)) => tf("{when}: let pass — {why}", &[("when", &when), ("why", why)]),
            (None, None) => when,
        }
    });
    let (run_id, pause_id, remove_id) = (id.clone(), id.clone(), id.clone());
    let edit = {
        let (id, when, message, name) = (
            id.clone(),
            schedule.when.clone(),
            schedule.message.clone(),
            schedule.name.clone(),
        );
        move |_| {
            ctx.when.set(when.clone());
            ctx.message.set(message.clone());
            ctx.name.set(name.clone());
            ctx.editing.set(Some(id.clone()));
            crate::dom::focus_soon("schedule-when");
        }
    };
    view! {
        <li class="card schedule-item" id=format!("schedule-{id}")>
            <div class="schedule-main">
                <strong>{schedule.name.clone()}</strong>
                <span class="set-muted">{format!(" · {} — {described}", schedule.when)}</span>
                <p class="schedule-message">{schedule.message.clone()}</p>
                <p class="set-muted schedule-next">{tf("Next: {next}", &[("next", &next_text)])}</p>
                {last.map(|l| view! { <p class="set-muted schedule-last">{tf("Last: {last}", &[("last", &l)])}</p> })}
            </div>
            <div class="schedule-actions">
                <button class="secondary schedule-run" on:click=move |_| {
                    let id = run_id.clone();
                    ctx.act(async move { ipc::schedule_run(&id).await }, |_| t("It runs now: see the task list.").into());
                }>{t("Run now")}</button>
                <button class="secondary schedule-edit" on:click=edit>{t("Edit")}</button>
                <button class="secondary schedule-pause" on:click=move |_| {
                    let id = pause_id.clone();
                    ctx.act(async move { ipc::schedule_pause(&id, !paused).await }, move |s| {
                        if s.paused { tf("Paused “{name}”.", &[("name", &s.name)]) } else { tf("“{name}” runs again.", &[("name", &s.name)]) }
                    });
                }>{if paused { t("Resume") } else { t("Pause") }}</button>
                <button class="secondary danger schedule-remove" on:click=move |_| {
                    let id = remove_id.clone();
                    ctx.act(async move { ipc::schedule_remove(&id).await }, |_| t("Removed. Its past tasks stay.").into());
                }>{t("Remove")}</button>
            </div>
        </li>
    }
}

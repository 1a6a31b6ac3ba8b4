//! The workbench window: the task list, the message stream and the composer.

use cairn_protocol::memory::Rating;
use cairn_protocol::{
    ApiError, AskQuestion, ChatEvent, FailureKind, RecalledMemory, ReplyPart, StatusReport,
    TaskSummary, TranscriptMessage,
};
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::composer::{focus_composer, Composer};
use crate::dom::focus_by_id;
use crate::forms::{ApprovalCard, QuestionForm};
use crate::i18n::{t, tf};
use crate::slash::{self, SlashCommand};
use crate::{ipc, present};

mod bench;
mod commands;
mod folder;
mod jobs_strip;
mod live;
mod messages;
mod model;
mod sidebar;
mod task_book;
mod task_list;
mod team_room;
mod welcome;

use bench::Bench;

use jobs_strip::*;
use messages::*;
use model::*;
use task_list::*;
use team_room::*;
use welcome::*;

type StatusState = Option<Result<StatusReport, ApiError>>;

/// What the main area shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Page {
    Tasks,
    Memory,
    Sources,
    Schedules,
    Settings,
}

#[component]
pub fn Workbench() -> impl IntoView {
    let bench = Bench::new();
    bench.refresh();
    live::follow(bench);
    // A failed reply's Retry runs the task's last message again; its Settings opens the page.
    provide_context(FailureActions {
        retry: Callback::new(move |()| {
            if let Some(id) = bench.current.get_untracked() {
                if let Err(why) = bench.restart(id) {
                    bench.notice.set(Some(why.into()));
                }
            }
        }),
        open_settings: Callback::new(move |()| bench.page.set(Page::Settings)),
    });
    let page = bench.page;
    view! {
        <div class="workbench">
            <sidebar::Sidebar bench />
            <Show when=move || page.get() == Page::Memory>
                <main class="page">
                    <crate::memory_page::MemoryPage />
                </main>
            </Show>
            <Show when=move || page.get() == Page::Sources>
                <main class="page">
                    <crate::sources_page::SourcesPage />
                </main>
            </Show>
            <Show when=move || page.get() == Page::Schedules>
                <main class="page">
                    <crate::schedules_page::SchedulesPage />
                </main>
            </Show>
            <Show when=move || page.get() == Page::Settings>
                <main class="page">
                    <crate::settings_page::SettingsPage />
                </main>
            </Show>
            <Stream bench />
        </div>
    }
}

/// The open task (or a new one): its header, its messages, what the page says, its team and
/// jobs, and the composer.
#[component]
fn Stream(bench: Bench) -> impl IntoView {
    let Bench {
        status,
        checking,
        tasks,
        page,
        current,
        notice,
        draft,
        confirm_quit,
        ..
    } = bench;
    let refresh = move || bench.refresh();
    let on_scroll = live::follow_the_end(bench);
    // The open task's session, changing only when another task opens (not on every update).
    let open_session = Signal::from(Memo::new(move |_| {
        let id = current.get()?;
        tasks.with(|all| all.iter().find(|t| t.id == id).map(|t| t.session.clone()))
    }));
    let running = Signal::derive(move || bench.running());
    view! {
        <main class="stream" style:display=move || if page.get() == Page::Tasks { "" } else { "none" }>
            <StreamHead bench />
            <section id="messages" class="messages" on:scroll=on_scroll>
                {move || match current.get() {
                    None => view! { <Welcome status checking refresh page /> }.into_any(),
                    Some(id) => view! { <MessageList tasks id /> }.into_any(),
                }}
            </section>
            <Show when=move || confirm_quit.get()>
                <div id="confirm-quit" class="notice confirm-quit" role="alertdialog" aria-labelledby="confirm-quit-text">
                    <p id="confirm-quit-text">{t("Background jobs are still running. Quitting Cairn stops them.")}</p>
                    <div class="set-actions">
                        <button class="secondary" id="confirm-quit-cancel" on:click=move |_| confirm_quit.set(false)>
                            {t("Keep Cairn running")}
                        </button>
                        <button class="primary danger" id="confirm-quit-yes" on:click=move |_| {
                            spawn_local(async { let _ = ipc::quit_app().await; });
                        }>
                            {t("Stop them and quit")}
                        </button>
                    </div>
                </div>
            </Show>
            <Show when=move || notice.get().is_some()>
                <div id="notice" class="notice" role="status">
                    <pre>{move || {
                        let text = notice.get().unwrap_or_default();
                        if crate::notice::fades(&text) {
                            view! { <crate::notice::SaidView said=crate::notice::said("", &text) /> }.into_any()
                        } else {
                            text.into_any()
                        }
                    }}</pre>
                    <button class="icon" aria-label=t("Dismiss") on:click=move |_| notice.set(None)>"✕"</button>
                </div>
            </Show>
            <TeamRoom session=open_session />
            <JobsStrip session=open_session />
            <Composer
                draft
                on_send=move |text, attachments| bench.send(text, attachments)
                running
                on_stop=move || bench.stop()
                on_command=move |command, arg| bench.command(command, arg)
            />
        </main>
    }
}

/// The stream's header: the task's title, its goal, its folder and the model.
#[component]
fn StreamHead(bench: Bench) -> impl IntoView {
    let Bench {
        status,
        tasks,
        current,
        ..
    } = bench;
    let shown_session = Signal::derive(move || bench.shown_session());
    view! {
        <header class="stream-head">
            <h1 class="stream-title">
                {move || {
                    current
                        .get()
                        .and_then(|id| {
                            tasks.with(|all| all.iter().find(|t| t.id == id).map(|t| t.title.clone()))
                        })
                        .unwrap_or_else(|| t("New task").to_owned())
                }}
            </h1>
            {move || {
                current
                    .get()
                    .and_then(|id| tasks.with(|all| all.iter().find(|t| t.id == id).and_then(|t| t.goal.clone())))
                    .map(|goal| {
                        let text = goal.clone();
                        view! { <span id="goal-chip" class="pill goal-chip" title=goal>{text}</span> }
                    })
            }}
            <folder::FolderChip session=shown_session />
            <span id="model-pill" class="pill">
                {move || match status.get() {
                    Some(Ok(report)) => present::model_label(&report),
                    Some(Err(_)) => t("Status unavailable").to_owned(),
                    None => "…".to_owned(),
                }}
            </span>
        </header>
    }
}

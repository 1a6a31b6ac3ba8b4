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

mod folder;
mod jobs_strip;
mod messages;
mod model;
mod task_list;
mod team_room;
mod welcome;

use jobs_strip::*;
use messages::*;
use model::*;
use task_list::*;
use team_room::*;
use welcome::*;

type StatusState = Option<Result<StatusReport, ApiError>>;

/// What a streamed turn runs.
enum Turn {
    Send {
        text: String,
        attachments: Vec<ipc::Attachment>,
    },
    Restart,
}

/// What the main area shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Page {
    Tasks,
    Memory,
    Sources,
    Settings,
}

#[component]
pub fn Workbench() -> impl IntoView {
    let status = RwSignal::new(None::<Result<StatusReport, ApiError>>);
    let checking = RwSignal::new(false);
    let refresh = move || {
        checking.set(true);
        spawn_local(async move {
            status.set(Some(ipc::app_status().await));
            checking.set(false);
        });
    };
    refresh();

    let tasks = RwSignal::new(Vec::<Task>::new());
    let page = RwSignal::new(Page::Tasks);
    let current = RwSignal::new(None::<usize>);
    let query = RwSignal::new(String::new());

    // Streams a turn's events into the last reply of task `id`, then marks the task read or not.
    let stream = move |id: usize, turn: Turn| {
        let session = tasks
            .with_untracked(|all| all.iter().find(|t| t.id == id).map(|t| t.session.clone()))
            .unwrap_or_default();
        spawn_local(async move {
            let on_event = move |event| {
                update_reply(tasks, id, |reply| reply.apply(event, js_sys::Date::now()))
            };
            let outcome = match turn {
                Turn::Send { text, attachments } => {
                    ipc::send_message(&session, &text, &attachments, on_event).await
                }
                Turn::Restart => ipc::restart_task(&session, on_event).await,
            };
            match outcome {
                Ok(()) => update_reply(tasks, id, |reply| {
                    if reply.progress == Progress::Streaming && !reply.parts.is_empty() {
                        reply.progress = Progress::Done;
                    }
                }),
                Err(e) => update_reply(tasks, id, |reply| {
                    reply.apply(
                        ChatEvent::Failed {
                            message: e.message,
                            class: FailureKind::Other,
                        },
                        js_sys::Date::now(),
                    )
                }),
            }
            // A reply that finished while another task was open is unread; the task moves up.
            tasks.update(|all| {
                if let Some(task) = all.iter_mut().find(|t| t.id == id) {
                    task.updated_at = js_sys::Date::now();
                    task.unread = current.get_untracked() != Some(id);
                }
            });
            // The config may have changed since the last look (a model added): show it.
            refresh();
        });
    };

    // What a slash command (or a refused message) says back, shown above the composer until
    // dismissed.
    let notice = RwSignal::new(None::<String>);
    // A notice belongs where it was said: opening another task or page puts it away; a one-line
    // note fades by itself.
    Effect::new(move |before: Option<(Page, Option<usize>)>| {
        let here = (page.get(), current.get());
        if before.is_some_and(|before| before != here) {
            notice.set(None);
        }
        here
    });
    crate::notice::fade_in_time(notice, String::as_str);
    // Back on the tasks, the header shows the model Settings (or anything else) made the default.
    Effect::new(move |before: Option<Page>| {
        let now = page.get();
        if before.is_some_and(|before| before != now) && now == Page::Tasks {
            refresh();
        }
        now
    });
    // The composer's text: the page puts a message back when it cannot be sent yet.
    let draft = RwSignal::new(String::new());
    // The session a new task will have: minted ahead, so its folder can be chosen first.
    let next_session = RwSignal::new(mint_session());
    let shown_session = Signal::derive(move || {
        current
            .get()
            .and_then(|id| {
                tasks.with(|all| all.iter().find(|t| t.id == id).map(|t| t.session.clone()))
            })
            .unwrap_or_else(|| next_session.get())
    });

    // A task made here, not stored yet (the runtime stores it with its first step): opened, first
    // in the list; its id and session.
    let make_task = move |title: String, messages: Vec<Entry>| -> (usize, String) {
        let id = tasks.with_untracked(|all| all.iter().map(|t| t.id).max().unwrap_or(0)) + 1;
        // The session the new-task screen chose a folder for; the next one is minted.
        let session = next_session.get_untracked();
        next_session.set(mint_session());
        let task = Task {
            id,
            session: session.clone(),
            title,
            messages,
            pinned: false,
            archived: false,
            updated_at: js_sys::Date::now(),
            loaded: true,
            unread: false,
            goal: None,
        };
        tasks.update(|all| all.insert(0, task));
        current.set(Some(id));
        (id, session)
    };
    let new_task = move || make_task(t("New task").to_owned(), Vec::new());

    let start_turn = move |text: String, attachments: Vec<ipc::Attachment>| {
        let mut said = Message::person(text.clone());
        said.attachments = attachments.iter().map(|a| a.name.clone()).collect();
        let title = match attachments.first() {
            Some(first) if text.is_empty() => present::task_title(&first.name),
            _ => present::task_title(&text),
        };
        let id = match current.get_untracked() {
            Some(id) => {
                tasks.update(|all| {
                    if let Some(task) = all.iter_mut().find(|t| t.id == id) {
                        // A task made for its goal is named by its first message.
                        if task.loaded && task.messages.is_empty() {
                            task.title = title;
                        }
                        task.messages.push(Entry::new(said));
                        task.messages.push(Entry::new(Message::reply()));
                    }
                });
                id
            }
            None => make_task(title, vec![Entry::new(said), Entry::new(Message::reply())]).0,
        };
        stream(id, Turn::Send { text, attachments });
    };
    // A message needs a model. With none set up the message is not sent (no task is made): it
    // goes back into the composer, the setup stays in view and says what to do. The config may
    // have changed behind the page's back, so the status is read again before refusing.
    let send = move |text: String, attachments: Vec<ipc::Attachment>| {
        let text = text.trim().to_owned();
        if text.is_empty() && attachments.is_empty() {
            return;
        }
        if !matches!(status.get_untracked(), Some(Ok(report)) if !report.can_chat()) {
            start_turn(text, attachments);
            return;
        }
        spawn_local(async move {
            let report = ipc::app_status().await;
            let ready = matches!(&report, Ok(r) if r.can_chat());
            status.set(Some(report));
            if ready {
                start_turn(text, attachments);
            } else {
                draft.set(text);
                notice.set(Some(
                    t("Connect a model first (above): your message is kept here.").into(),
                ));
            }
        });
    };

    // `/restart`: the answers after the last message go; the message runs again.
    let restart = move |id: usize| -> Result<(), &'static str> {
        let mut found = false;
        tasks.update(|all| {
            if let Some(task) = all.iter_mut().find(|t| t.id == id) {
                if let Some(at) = task
                    .messages
                    .iter()
                    .rposition(|e| e.message.with_untracked(|m| m.author == Author::Person))
                {
                    task.messages.truncate(at + 1);
                    task.messages.push(Entry::new(Message::reply()));
                    found = true;
                }
            }
        });
        if !found {
            return Err(t("This task has no message to run again."));
        }
        stream(id, Turn::Restart);
        Ok(())
    };

    // The stored tasks, loaded at start and then every few seconds: a task the pet started or
    // continued shows up here, unread, and reloads when opened. `then_open`: a session to show
    // once the list is up to date (the pet asked for it).
    let sync_tasks_then = move |then_open: Option<String>| {
        spawn_local(async move {
            let Ok(stored) = ipc::tasks_list().await else {
                return;
            };
            let open = current.get_untracked();
            let mut reopen = false;
            tasks.update(|all| {
                let mut next = all.iter().map(|t| t.id).max().unwrap_or(0);
                for summary in stored {
                    let Some(task) = all.iter_mut().find(|t| t.session == summary.session) else {
                        next += 1;
                        all.push(Task::stored(next, summary));
                        continue;
                    };
                    // A goal changes without touching the task's time.
                    task.goal = summary.goal;
                    if !task.running() && summary.updated_at as f64 > task.updated_at + 1_000.0 {
                        task.updated_at = summary.updated_at as f64;
                        task.title = summary.title;
                        task.messages.clear();
                        task.loaded = false;
                        if open == Some(task.id) {
                            reopen = true;
                        } else {
                            task.unread = true;
                        }
                    }
                }
            });
            if reopen {
                current.set(open);
            }
            if let Some(session) = then_open {
                let wanted = tasks
                    .with_untracked(|all| all.iter().find(|t| t.session == session).map(|t| t.id));
                if let Some(id) = wanted {
                    current.set(Some(id));
                    page.set(Page::Tasks);
                }
            }
        });
    };
    let sync_tasks = move || sync_tasks_then(None);
    // A task picked in the pet opens here: asked now (the workbench was open) or at start.
    let open_asked_task = move || {
        spawn_local(async move {
            if let Ok(Some(session)) = ipc::take_task_to_open().await {
                sync_tasks_then(Some(session));
            }
        })
    };
    open_asked_task();
    spawn_local(async move {
        let _ = ipc::on_app_event("open-task", open_asked_task).await;
    });
    // A turn nobody here started (a job's wake-up, a task created over the API) streams into its
    // task as it happens; a task not loaded yet is only marked, and loads whole when opened.
    spawn_local(async move {
        let _ = ipc::on_unattended_turn(move |e: cairn_protocol::TaskEvent| {
            let now = js_sys::Date::now();
            let ends = matches!(
                e.event,
                ChatEvent::Done { .. } | ChatEvent::Failed { .. } | ChatEvent::Stopped { .. }
            );
            let open = current.get_untracked();
            tasks.update(|all| {
                let Some(task) = all.iter_mut().find(|t| t.session == e.task) else {
                    return;
                };
                if open != Some(task.id) {
                    task.unread = true;
                }
                if !task.loaded {
                    return;
                }
                if !task.running() {
                    task.messages.push(Entry::new(Message::reply()));
                }
                if let Some(last) = task.messages.last() {
                    last.message.update(|m| m.apply(e.event, now));
                }
                // What streamed is what was stored: the periodic sync need not reload it.
                if ends {
                    task.updated_at = now;
                }
            });
        })
        .await;
    });
    // Quitting while background jobs run asks here first.
    let confirm_quit = RwSignal::new(false);
    spawn_local(async move {
        let _ = ipc::on_app_event("confirm-quit", move || confirm_quit.set(true)).await;
    });
    sync_tasks();
    let _ = set_interval_with_handle(sync_tasks, std::time::Duration::from_secs(5));
    // Opening a stored task loads its transcript; opening any task reads it.
    Effect::new(move |_| {
        let Some(id) = current.get() else { return };
        let mut load = None;
        tasks.update(|all| {
            if let Some(task) = all.iter_mut().find(|t| t.id == id) {
                task.unread = false;
                if !task.loaded {
                    task.loaded = true;
                    load = Some(task.session.clone());
                }
            }
        });
        if let Some(session) = load {
            spawn_local(async move {
                match ipc::task_transcript(&session).await {
                    Ok(transcript) => tasks.update(|all| {
                        if let Some(task) = all.iter_mut().find(|t| t.id == id) {
                            let mut loaded = messages_of(transcript);
                            loaded.append(&mut task.messages);
                            task.messages = loaded;
                        }
                    }),
                    Err(e) => tasks.update(|all| {
                        if let Some(task) = all.iter_mut().find(|t| t.id == id) {
                            let mut failed = Message::reply();
                            failed.apply(
                                ChatEvent::Failed {
                                    message: e.message,
                                    class: FailureKind::Other,
                                },
                                js_sys::Date::now(),
                            );
                            task.messages.push(Entry::new(failed));
                        }
                    }),
                }
            });
        }
    });
    // The stream follows new content while the person is at its end; scrolling up stops that.
    let at_end = StoredValue::new(true);
    Effect::new(move |_| {
        let open = current.get();
        tasks.with(|all| {
            if let Some(last) = all
                .iter()
                .find(|t| Some(t.id) == open)
                .and_then(|t| t.messages.last())
            {
                last.message.track();
            }
        });
        // The welcome (no task open) reads from its top; a task from its end.
        let to_end = open.is_some() && at_end.get_value();
        request_animation_frame(move || {
            if to_end {
                crate::dom::scroll_to_end("messages");
            } else if open.is_none() {
                crate::dom::scroll_to_top("messages");
            }
        });
    });
    let on_scroll = move |ev: web_sys::Event| {
        if let Some(near) = crate::dom::scrolled_near_end(&ev, 80) {
            at_end.set_value(near);
        }
    };

    // The open task's session, changing only when another task opens (not on every update).
    let open_session = Signal::from(Memo::new(move |_| {
        let id = current.get()?;
        tasks.with(|all| all.iter().find(|t| t.id == id).map(|t| t.session.clone()))
    }));

    let current_session = move || {
        current.get_untracked().and_then(|id| {
            tasks.with_untracked(|all| all.iter().find(|t| t.id == id).map(|t| t.session.clone()))
        })
    };

    // The current task's turn is running: Send becomes Stop.
    let running = Signal::derive(move || {
        current
            .get()
            .is_some_and(|id| tasks.with(|all| all.iter().any(|t| t.id == id && t.running())))
    });
    let stop = move || {
        let session = current.get_untracked().and_then(|id| {
            tasks.with_untracked(|all| all.iter().find(|t| t.id == id).map(|t| t.session.clone()))
        });
        if let Some(session) = session {
            spawn_local(async move {
                let _ = ipc::stop_turn(&session).await;
            });
        }
    };

    // Ctrl/Cmd+K: search the tasks. Ctrl/Cmd+N: a new task. Esc: close what a command said, else
    // stop the running turn.
    let _ = window_event_listener(leptos::ev::keydown, move |ev| {
        let with_control = ev.ctrl_key() || ev.meta_key();
        match ev.key().as_str() {
            "k" | "K" if with_control => {
                ev.prevent_default();
                page.set(Page::Tasks);
                focus_by_id("task-search");
            }
            "n" | "N" if with_control && !ev.shift_key() => {
                ev.prevent_default();
                current.set(None);
                page.set(Page::Tasks);
                // Now, and once the stream shows again: a hidden composer takes no focus.
                focus_composer();
                request_animation_frame(focus_composer);
            }
            "Escape" if notice.get_untracked().is_some() && !ev.default_prevented() => {
                notice.set(None);
            }
            "Escape" if running.get_untracked() && !ev.default_prevented() => {
                ev.prevent_default();
                stop();
            }
            _ => {}
        }
    });

    let command = move |command: SlashCommand, arg: String| {
        notice.set(None);
        match command {
            SlashCommand::New => {
                current.set(None);
                page.set(Page::Tasks);
            }
            SlashCommand::Restart => match current.get_untracked() {
                None => notice.set(Some(t("Open a task to run its last message again.").into())),
                Some(id) => {
                    if let Err(why) = restart(id) {
                        notice.set(Some(why.into()));
                    }
                }
            },
            SlashCommand::Goal => {
                // In a new task, a goal makes the task (empty, titled by its first message).
                let (session, made) = match current_session() {
                    Some(session) => (session, None),
                    None if arg.trim().is_empty() => {
                        notice.set(Some(
                            t("There is no goal for this task. Set one: /goal <text>.").into(),
                        ));
                        return;
                    }
                    None => {
                        let (id, session) = new_task();
                        (session, Some(id))
                    }
                };
                spawn_local(async move {
                    let said = ipc::task_goal(&session, &arg).await;
                    if said.is_err() {
                        if let Some(id) = made {
                            tasks.update(|all| all.retain(|t| t.id != id));
                            current.set(None);
                        }
                    }
                    notice.set(Some(match said {
                        Ok(said) => said,
                        Err(e) => e.message,
                    }));
                    sync_tasks();
                });
            }
            SlashCommand::Resume => spawn_local(async move {
                let words = arg.trim().to_owned();
                match ipc::resume_search(&words).await {
                    // A number: the episode's context starts a new task.
                    // The episode goes along as an attached document: the message stays a line.
                    Ok(context) if words.parse::<usize>().is_ok() => {
                        let name = format!("resumed-episode-{words}.md");
                        match ipc::text_attachment(&name, "text/markdown", &context) {
                            Ok(episode) => {
                                current.set(None);
                                send(
                                    t("Let's continue this earlier work where it stopped.").into(),
                                    vec![episode],
                                );
                            }
                            Err(e) => notice.set(Some(e)),
                        }
                    }
                    Ok(list) if list.is_empty() => notice.set(Some(tf(
                        "Nothing in memory matches \"{words}\".",
                        &[("words", &words)],
                    ))),
                    Ok(list) => notice.set(Some(list)),
                    Err(e) => notice.set(Some(e.message)),
                }
            }),
            SlashCommand::Stop => {
                if running.get_untracked() {
                    stop();
                } else {
                    notice.set(Some(t("Nothing is running.").into()));
                }
            }
            SlashCommand::Compact => match current_session() {
                None => notice.set(Some(t("Open a task to compact it.").into())),
                Some(session) => {
                    notice.set(Some(t("Summarising this task's history…").into()));
                    spawn_local(async move {
                        notice.set(Some(match ipc::compact_task(&session).await {
                            Ok(summary) => {
                                let chars = summary.chars().count();
                                // The history stays in view; the mark shows where it was summarised.
                                tasks.update(|all| {
                                    if let Some(task) = all.iter_mut().find(|t| t.session == session) {
                                        task.messages.push(Entry::new(Message::compaction(summary)));
                                    }
                                });
                                tf(
                                    "The history is now a summary of {chars} characters; the next message starts from it.",
                                    &[("chars", &chars.to_string())],
                                )
                            }
                            Err(e) => e.message,
                        }));
                    });
                }
            },
            SlashCommand::Status => notice.set(Some(match status.get_untracked() {
                Some(Ok(report)) => present::status_text(&report),
                Some(Err(e)) => e.message,
                None => t("Checking…").into(),
            })),
            SlashCommand::Model if arg.is_empty() => {
                let Some(Ok(report)) = status.get_untracked() else {
                    notice.set(Some(t("The status is not known yet.").into()));
                    return;
                };
                // What is configured at once; then what each server offers, as it answers.
                // Cairn's own models are listed too.
                let in_use = report.default_model.clone();
                let configured = present::models_text(&report, &[]);
                notice.set(Some(configured.clone()));
                spawn_local(async move {
                    let own = ipc::models_list().await.unwrap_or_default();
                    let with_own = |listed: String| {
                        crate::settings_models::with_on_device(&listed, &own, in_use.as_deref())
                    };
                    // Unless the person has moved on to something else meanwhile.
                    if notice.get_untracked().as_ref() != Some(&configured) {
                        return;
                    }
                    let shown = Some(with_own(configured));
                    notice.set(shown.clone());
                    let mut offered = Vec::new();
                    for provider in &report.providers {
                        if let Ok(test) = ipc::test_provider(&provider.name).await {
                            offered.push((provider.name.clone(), test.models));
                        }
                    }
                    if notice.get_untracked() == shown {
                        notice.set(Some(with_own(present::models_text(&report, &offered))));
                    }
                });
            }
            SlashCommand::Model => spawn_local(async move {
                notice.set(Some(match ipc::set_model(&arg).await {
                    Ok(model) => {
                        // The chip, /status and Settings read the config, which now names it.
                        refresh();
                        tf(
                            "The chat now uses {model} (now the default).",
                            &[("model", &model)],
                        )
                    }
                    Err(e) => e.message,
                }));
            }),
            SlashCommand::Help if arg.is_empty() => notice.set(Some(slash::help_text())),
            SlashCommand::Help => notice.set(Some(format!("{arg}\n\n{}", slash::help_text()))),
        }
    };

    // A failed reply's Retry runs the task's last message again; its Settings opens the page.
    provide_context(FailureActions {
        retry: Callback::new(move |()| {
            if let Some(id) = current.get_untracked() {
                if let Err(why) = restart(id) {
                    notice.set(Some(why.into()));
                }
            }
        }),
        open_settings: Callback::new(move |()| page.set(Page::Settings)),
    });

    view! {
        <div class="workbench">
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
                    <button
                        id="page-memory"
                        class=move || if page.get() == Page::Memory { "page-link active" } else { "page-link" }
                        on:click=move |_| page.set(Page::Memory)
                    >
                        {t("Memory")}
                    </button>
                    <button
                        id="page-sources"
                        class=move || if page.get() == Page::Sources { "page-link active" } else { "page-link" }
                        on:click=move |_| page.set(Page::Sources)
                    >
                        {t("Sources")}
                    </button>
                    <button
                        id="page-settings"
                        class=move || if page.get() == Page::Settings { "page-link active" } else { "page-link" }
                        on:click=move |_| page.set(Page::Settings)
                    >
                        {t("Settings")}
                    </button>
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
            <Show when=move || page.get() == Page::Settings>
                <main class="page">
                    <crate::settings_page::SettingsPage />
                </main>
            </Show>
            <main class="stream" style:display=move || if page.get() == Page::Tasks { "" } else { "none" }>
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
                <Composer draft on_send=send running on_stop=stop on_command=command />
            </main>
        </div>
    }
}

/// A new task's session id: `desktop-` and the time, with a random tail (two tasks made in the
/// same millisecond stay apart).
fn mint_session() -> String {
    format!(
        "desktop-{}-{}",
        js_sys::Date::now() as u64,
        (js_sys::Math::random() * 1e9) as u64
    )
}

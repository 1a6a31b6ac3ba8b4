//! The pet window: a small cairn that floats above other windows. Click the stones (or the speech
//! button, or Enter on them) to open a bubble and talk to Cairn (Enter sends, the mic speaks);
//! drag them to move the window (it comes back there next time); double-click to open the
//! workbench. The badge counts tasks running or just finished and opens a list of them; a task
//! picked there opens in the workbench. While the bubble or the list is open the window grows
//! up and to the left of the stones, and shrinks back when they close (✕, Esc, a click outside).

use cairn_protocol::memory::Rating;
use cairn_protocol::{ChatEvent, PetState, PetTask, TurnStatus};
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::dom::{event_inside, focus_by_id, focus_soon};
use crate::i18n::{t, tf};
use crate::ipc;

fn open_in_workbench(session: String) {
    spawn_local(async move {
        let _ = ipc::open_task(&session).await;
    })
}

/// What the bubble shows while and after Cairn answers.
#[derive(Debug, Clone, PartialEq)]
enum Reply {
    None,
    Thinking,
    Text(String),
    Failed(String),
}

/// The pet's state, shared by its parts.
#[derive(Clone, Copy)]
struct PetCtx {
    state: RwSignal<Option<PetState>>,
    bubble: RwSignal<bool>,
    list: RwSignal<bool>,
    draft: RwSignal<String>,
    reply: RwSignal<Reply>,
    /// A call of the turn waiting for the person: its approval (request and what it runs), or
    /// `None`; a question (ask_user) is answered in the workbench.
    asking: RwSignal<Option<(u64, String)>>,
    question: RwSignal<Option<String>>,
    /// What the turn waits for while no words come, since when, and a clock for its counter.
    status: RwSignal<Option<(TurnStatus, f64)>>,
    now: RwSignal<f64>,
    /// The finished reply's captured turn, to rate it, and how it was rated.
    rateable: RwSignal<Option<i64>>,
    rated: RwSignal<Option<Rating>>,
    listening: RwSignal<bool>,
    /// The person chose "New task": the next message starts one instead of continuing.
    fresh: RwSignal<bool>,
    /// How many times the state was read: a timer set for an older state does nothing.
    reads: StoredValue<u64>,
}

impl PetCtx {
    fn new() -> Self {
        Self {
            state: RwSignal::new(None),
            bubble: RwSignal::new(false),
            list: RwSignal::new(false),
            draft: RwSignal::new(String::new()),
            reply: RwSignal::new(Reply::None),
            asking: RwSignal::new(None),
            question: RwSignal::new(None),
            status: RwSignal::new(None),
            now: RwSignal::new(js_sys::Date::now()),
            rateable: RwSignal::new(None),
            rated: RwSignal::new(None),
            listening: RwSignal::new(false),
            fresh: RwSignal::new(false),
            reads: StoredValue::new(0),
        }
    }

    /// Reads the badge, the list and the task the bubble continues; and reads them once more
    /// when the oldest finished task is due to leave the badge (`settles_in_ms`).
    fn read_state(self) {
        spawn_local(async move {
            let Ok(now) = ipc::pet_state().await else {
                return;
            };
            self.reads.update_value(|n| *n += 1);
            let this = self.reads.get_value();
            if let Some(wait) = now.settles_in_ms {
                spawn_local(async move {
                    // A moment after it is due, so the task is past the five minutes.
                    crate::dom::sleep(i32::try_from(wait + 500).unwrap_or(i32::MAX)).await;
                    if self.reads.get_value() == this {
                        self.read_state();
                    }
                });
            }
            self.state.set(Some(now));
        })
    }

    /// The task the next message goes to: `None` for a new one.
    fn target(self) -> Option<PetTask> {
        if self.fresh.get() {
            None
        } else {
            self.state.get().and_then(|s| s.continues)
        }
    }

    fn open_bubble(self) {
        self.bubble.set(true);
        self.list.set(false);
        // Once the bubble is shown.
        focus_soon("pet-input");
    }

    fn send(self) {
        let PetCtx {
            state,
            draft,
            reply,
            status,
            rateable,
            rated,
            fresh,
            ..
        } = self;
        let text = draft.get_untracked().trim().to_owned();
        if text.is_empty() {
            return;
        }
        draft.set(String::new());
        reply.set(Reply::Thinking);
        status.set(None);
        rateable.set(None);
        rated.set(None);
        // A running task, or one finished in the last five minutes, continues (the bubble says
        // which), unless the person asked for a new one.
        let continuing = untrack(move || self.target());
        let session = continuing
            .as_ref()
            .map(|t| t.session.clone())
            .unwrap_or_else(|| format!("pet-{}", js_sys::Date::now() as u64));
        fresh.set(false);
        if continuing.is_none() {
            // Until the next look at the tasks: the bubble names the task just started.
            let task = PetTask {
                session: session.clone(),
                title: crate::present::task_title(&text),
                running: true,
            };
            state.update(|s| {
                if let Some(s) = s {
                    s.continues = Some(task);
                }
            });
        }
        let session_asked = session.clone();
        spawn_local(async move {
            let outcome = ipc::send_message(&session, &text, &[], move |event| {
                self.follow(event, &session_asked)
            })
            .await;
            if let Err(e) = outcome {
                reply.set(Reply::Failed(e.message));
            }
            self.read_state();
        });
    }

    /// One event of the turn the bubble started (in task `session`).
    fn follow(self, event: ChatEvent, session: &str) {
        let PetCtx {
            reply,
            asking,
            question,
            status,
            rateable,
            ..
        } = self;
        match event {
            ChatEvent::Status { status: next } => status.update(|current| {
                let since = match current {
                    Some((stage, since)) if stage.same_stage(&next) => *since,
                    _ => js_sys::Date::now(),
                };
                *current = Some((next, since));
            }),
            ChatEvent::Tool { name, .. } => status.set(Some((
                TurnStatus::RunningTool { name },
                js_sys::Date::now(),
            ))),
            ChatEvent::Text { text } => reply.update(|r| match r {
                Reply::Text(so_far) => so_far.push_str(&text),
                _ => *r = Reply::Text(text),
            }),
            ChatEvent::Failed { message, .. } => {
                asking.set(None);
                reply.set(Reply::Failed(message));
            }
            ChatEvent::Done { turn_id, .. } => {
                asking.set(None);
                question.set(None);
                rateable.set(turn_id);
            }
            ChatEvent::Approval {
                request, display, ..
            } => asking.set(Some((request, display))),
            ChatEvent::Question { .. } => question.set(Some(session.to_owned())),
            ChatEvent::Stopped { .. } => {
                asking.set(None);
                question.set(None);
            }
            _ => {}
        }
    }

    /// The mic: starts listening, or stops and adds the words heard to the draft.
    fn mic(self) {
        let PetCtx {
            draft,
            reply,
            listening,
            ..
        } = self;
        if listening.get_untracked() {
            listening.set(false);
            spawn_local(async move {
                match ipc::voice_stop().await {
                    Ok(heard) => draft.update(|d| {
                        if !d.is_empty() {
                            d.push(' ');
                        }
                        d.push_str(heard.trim());
                    }),
                    Err(e) => reply.set(Reply::Failed(e.message)),
                }
            });
        } else {
            listening.set(true);
            spawn_local(async move {
                if let Err(e) = ipc::voice_start().await {
                    listening.set(false);
                    reply.set(Reply::Failed(e.message));
                }
            });
        }
    }
}

#[component]
pub fn Pet() -> impl IntoView {
    let ctx = PetCtx::new();
    let PetCtx {
        state,
        bubble,
        list,
        now,
        ..
    } = ctx;
    let _ = set_interval_with_handle(
        move || now.set(js_sys::Date::now()),
        std::time::Duration::from_secs(1),
    );

    // The badge follows the tasks (the workbench's and the pet's own): read at start, then again
    // whenever the backend says a task changed — no polling.
    ctx.read_state();
    spawn_local(async move {
        let _ = ipc::on_task_changed(move |_| ctx.read_state()).await;
    });
    // A list with nothing left in it (the tasks grew old) closes.
    Effect::new(move |_| {
        // Read first, so that the effect follows the state whether the list is open or not.
        let empty = state.with(|s| s.as_ref().is_some_and(|s| s.tasks.is_empty()));
        if empty && list.get_untracked() {
            list.set(false);
        }
    });
    // The window is as big as what is open in it.
    let open = Memo::new(move |_| bubble.get() || list.get());
    Effect::new(move |_| {
        let open = open.get();
        spawn_local(async move {
            let _ = ipc::pet_expand(open).await;
        });
    });

    view! {
        <div
            class=move || if open.get() { "pet open" } else { "pet" }
            on:pointerdown=move |ev: web_sys::PointerEvent| {
                // A click outside the list closes it.
                if list.get_untracked() && !event_inside(&ev, "pet-tasks") && !event_inside(&ev, "pet-badge") {
                    list.set(false);
                }
            }
            on:keydown=move |ev: web_sys::KeyboardEvent| {
                if ev.key() == "Escape" {
                    list.set(false);
                    bubble.set(false);
                }
            }
        >
            <div class="pet-home">
            <Stones ctx />
            <Show when=move || state.get().is_some_and(|s| s.badge > 0)>
                <button
                    id="pet-badge"
                    class="pet-badge"
                    aria-label=t("Tasks running or just finished")
                    on:click=move |_| {
                        list.update(|l| *l = !*l);
                        if list.get_untracked() {
                            bubble.set(false);
                            focus_soon("pet-tasks-close");
                        }
                    }
                >
                    {move || state.get().map(|s| s.badge).unwrap_or(0)}
                </button>
            </Show>
            <button
                id="pet-talk"
                class="pet-talk"
                aria-label=t("Talk to Cairn")
                on:click=move |_| ctx.open_bubble()
            >
                <svg viewBox="0 0 24 24" width="16" height="16" aria-hidden="true">
                    <path fill="currentColor" d="M4 4h16a2 2 0 0 1 2 2v9a2 2 0 0 1-2 2H9l-5 4v-4a2 2 0 0 1-2-2V6a2 2 0 0 1 2-2z"></path>
                </svg>
            </button>
            </div>
            <TaskPanel ctx />
            <Bubble ctx />
        </div>
    }
}

/// The stones: a press that moves drags the window; a click opens the bubble (a moment later,
/// so that a double-click can open the workbench instead).
#[component]
fn Stones(ctx: PetCtx) -> impl IntoView {
    let pressed_at = StoredValue::new(None::<(i32, i32)>);
    let dragged = StoredValue::new(false);
    let pending_click = StoredValue::new(None::<i32>);
    let cancel_click = move || {
        if let Some(handle) = pending_click.get_value() {
            crate::dom::cancel_timer(handle);
        }
        pending_click.set_value(None);
    };
    let on_click = move || {
        cancel_click();
        if let Some(handle) = crate::dom::after(250, move || {
            pending_click.set_value(None);
            ctx.open_bubble();
        }) {
            pending_click.set_value(Some(handle));
        }
    };
    let open_workbench = move || {
        spawn_local(async {
            let _ = ipc::show_workbench().await;
        })
    };
    view! {
        <div
            id="pet-stones"
            title=t("Cairn — click to talk, drag to move, double-click to open the workbench")
            class="pet-stones"
            role="button"
            tabindex="0"
            aria-label=t("Talk to Cairn")
            on:pointerdown=move |ev: web_sys::PointerEvent| {
                if ev.button() == 0 {
                    pressed_at.set_value(Some((ev.screen_x(), ev.screen_y())));
                    dragged.set_value(false);
                }
            }
            on:pointermove=move |ev: web_sys::PointerEvent| {
                let Some((x, y)) = pressed_at.get_value() else { return };
                if ev.buttons() & 1 == 0 {
                    pressed_at.set_value(None);
                } else if (ev.screen_x() - x).abs() + (ev.screen_y() - y).abs() > 4 {
                    pressed_at.set_value(None);
                    dragged.set_value(true);
                    spawn_local(async {
                        let _ = ipc::drag_pet().await;
                    });
                }
            }
            on:click=move |_| {
                pressed_at.set_value(None);
                let was_dragged = dragged.get_value();
                dragged.set_value(false);
                if !was_dragged {
                    on_click();
                }
            }
            on:dblclick=move |_| {
                cancel_click();
                open_workbench();
            }
            on:keydown=move |ev: web_sys::KeyboardEvent| {
                if ev.key() == "Enter" || ev.key() == " " {
                    ev.prevent_default();
                    ctx.open_bubble();
                }
            }
        >
            <span class="stone stone-top"></span>
            <span class="stone stone-mid"></span>
            <span class="stone stone-base"></span>
        </div>
    }
}

/// The list of tasks running or just finished, opened from the badge; a task picked opens in
/// the workbench.
#[component]
fn TaskPanel(ctx: PetCtx) -> impl IntoView {
    let PetCtx { state, list, .. } = ctx;
    view! {
        <Show when=move || list.get()>
            <div id="pet-tasks" class="pet-panel pet-tasks" role="dialog" aria-label=t("Tasks running or just finished")>
                <div class="pet-panel-head">
                    <span class="pet-panel-title">{t("Tasks running or just finished")}</span>
                    <button id="pet-tasks-close" class="pet-close" aria-label=t("Close") on:click=move |_| list.set(false)>"✕"</button>
                </div>
                <ul>
                    {move || state.get().map(|s| s.tasks).unwrap_or_default().into_iter().map(|task| {
                        let session = task.session.clone();
                        view! {
                            <li>
                                <button
                                    class="pet-task"
                                    data-session=task.session.clone()
                                    title=t("Open in the workbench")
                                    on:click=move |_| {
                                        list.set(false);
                                        open_in_workbench(session.clone());
                                    }
                                >
                                    {task.running.then(|| view! { <span class="spinner"></span> })}
                                    <span>{task.title}</span>
                                </button>
                            </li>
                        }
                    }).collect_view()}
                </ul>
            </div>
        </Show>
    }
}

/// The bubble: which task the message goes to, Cairn's reply, an approval or question waiting,
/// the rating, and the text box with its mic.
#[component]
fn Bubble(ctx: PetCtx) -> impl IntoView {
    let PetCtx {
        state,
        bubble,
        asking,
        question,
        fresh,
        draft,
        reply,
        status,
        now,
        rateable,
        rated,
        listening,
        ..
    } = ctx;
    view! {
        <Show when=move || bubble.get()>
            <div id="pet-bubble" class="pet-panel pet-bubble">
                <div class="pet-panel-head">
                    <span id="pet-target" class="pet-target">
                        {move || match ctx.target() {
                            Some(task) => tf("Continues “{title}”", &[("title", &task.title)]),
                            None => t("A new task").to_owned(),
                        }}
                    </span>
                    {move || match (ctx.target(), state.get().and_then(|s| s.continues)) {
                        (Some(task), _) => view! {
                            <button id="pet-new-task" class="pet-link" on:click=move |_| {
                                fresh.set(true);
                                reply.set(Reply::None);
                                focus_by_id("pet-input");
                            }>{t("New task")}</button>
                            <button
                                id="pet-open-task"
                                class="pet-link"
                                title=t("Open in the workbench")
                                on:click=move |_| open_in_workbench(task.session.clone())
                            >{t("Open")}</button>
                        }.into_any(),
                        (None, Some(_)) => view! {
                            <button id="pet-continue" class="pet-link" on:click=move |_| fresh.set(false)>{t("Continue instead")}</button>
                        }.into_any(),
                        (None, None) => ().into_any(),
                    }}
                    <button class="pet-close" aria-label=t("Close") on:click=move |_| bubble.set(false)>"✕"</button>
                </div>
                <div id="pet-reply" class="pet-reply">
                    {move || match reply.get() {
                        Reply::None => t("Ask me anything.").to_owned(),
                        Reply::Thinking => status.get().map_or_else(
                            || "…".to_owned(),
                            |(stage, since)| crate::present::turn_status_text(&stage, now.get() - since),
                        ),
                        Reply::Text(text) => text,
                        Reply::Failed(message) => message,
                    }}
                </div>
                {move || asking.get().map(|(request, display)| {
                    let decide = move |allow: bool| {
                        asking.set(None);
                        spawn_local(async move {
                            let _ = ipc::approve(request, allow).await;
                        });
                    };
                    view! {
                        <div id="pet-approval" class="pet-approval" role="group" aria-label=t("Permission requested")>
                            <p>{t("Cairn wants to run ")} <code>{display}</code></p>
                            <div class="pet-approval-actions">
                                <button id="pet-approve" class="primary" on:click=move |_| decide(true)>{t("Allow")}</button>
                                <button id="pet-deny" class="secondary" on:click=move |_| decide(false)>{t("Deny")}</button>
                            </div>
                        </div>
                    }
                })}
                {move || question.get().map(|session| view! {
                    <p id="pet-question" class="pet-approval">
                        {t("Cairn has a question for you.")}
                        " "
                        <button class="pet-link" on:click=move |_| open_in_workbench(session.clone())>{t("Answer in the workbench")}</button>
                    </p>
                })}
                {move || rateable.get().map(|turn_id| view! {
                    <crate::rate::Thumbs turn_id rated on_rated=Callback::new(move |r| rated.set(Some(r))) />
                })}
                <div class="pet-compose">
                    <textarea
                        id="pet-input"
                        rows="2"
                        aria-label=t("Message to Cairn")
                        placeholder=t("Message…")
                        prop:value=move || draft.get()
                        on:input=move |ev| draft.set(event_target_value(&ev))
                        on:keydown=move |ev: web_sys::KeyboardEvent| {
                            if ev.key() == "Enter" && !ev.shift_key() && !ev.is_composing() {
                                ev.prevent_default();
                                ctx.send();
                            }
                        }
                    ></textarea>
                    <button
                        id="pet-mic"
                        class=move || if listening.get() { "pet-mic listening" } else { "pet-mic" }
                        aria-label=t("Speak")
                        on:click=move |_| ctx.mic()
                    >
                        <svg viewBox="0 0 24 24" width="14" height="14" aria-hidden="true">
                            <path fill="currentColor" d="M12 14a3 3 0 0 0 3-3V5a3 3 0 0 0-6 0v6a3 3 0 0 0 3 3zm5-3a5 5 0 0 1-10 0H5a7 7 0 0 0 6 6.92V21h2v-3.08A7 7 0 0 0 19 11h-2z"></path>
                        </svg>
                    </button>
                </div>
            </div>
        </Show>
    }
}

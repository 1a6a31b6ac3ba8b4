//! What keeps the workbench current without polling: the stored tasks read once, then the
//! backend's pushed task changes, the turns nobody here started, the pet's "open this task", the
//! quit question; the keyboard shortcuts; and the effects that follow the open task (notices put
//! away, its transcript loaded, the stream following its end).

use super::bench::Bench;
use super::*;

/// Starts everything that follows the backend and the keyboard.
pub(super) fn follow(bench: Bench) {
    let Bench {
        page,
        current,
        notice,
        confirm_quit,
        ..
    } = bench;
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
    // On another page, the header and the status line show what Settings (or anything else)
    // changed: the default model, sync with other devices.
    Effect::new(move |before: Option<Page>| {
        let now = page.get();
        if before.is_some_and(|before| before != now) {
            bench.refresh();
        }
        now
    });
    // The status line's "synced 2 min ago" stays true.
    fn every_so_often(bench: Bench) {
        set_timeout(
            move || {
                if bench.status.try_get_untracked().is_some() {
                    bench.refresh();
                    every_so_often(bench);
                }
            },
            std::time::Duration::from_secs(20),
        );
    }
    every_so_often(bench);
    // The stored tasks once; from then on each change is pushed (a task the pet started or
    // continued shows up here, unread, and reloads when opened).
    bench.load_tasks_then(None);
    spawn_local(async move {
        let _ = ipc::on_task_changed(move |change| bench.apply_change(change)).await;
    });
    // A task picked in the pet opens here: asked now (the workbench was open) or at start.
    let open_asked_task = move || {
        spawn_local(async move {
            if let Ok(Some(session)) = ipc::take_task_to_open().await {
                bench.load_tasks_then(Some(session));
            }
        })
    };
    open_asked_task();
    spawn_local(async move {
        let _ = ipc::on_app_event("open-task", open_asked_task).await;
    });
    spawn_local(async move {
        let _ = ipc::on_unattended_turn(move |e| unattended_event(bench, e)).await;
    });
    spawn_local(async move {
        let _ = ipc::on_app_event("confirm-quit", move || confirm_quit.set(true)).await;
    });
    load_opened_transcripts(bench);
    shortcuts(bench);
}

/// A turn nobody here started (a job's wake-up, a task created over the API) streams into its
/// task as it happens; a task not loaded yet is only marked, and loads whole when opened.
fn unattended_event(bench: Bench, e: cairn_protocol::TaskEvent) {
    let now = js_sys::Date::now();
    let ends = matches!(
        e.event,
        ChatEvent::Done { .. } | ChatEvent::Failed { .. } | ChatEvent::Stopped { .. }
    );
    let open = bench.current.get_untracked();
    bench.tasks.update(|all| {
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
        // What streamed is what was stored: the pushed change need not reload it.
        if ends {
            task.updated_at = now;
        }
    });
}

/// Opening a stored task loads its transcript; opening any task reads it.
fn load_opened_transcripts(bench: Bench) {
    let Bench { tasks, current, .. } = bench;
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
        let Some(session) = load else { return };
        spawn_local(async move {
            let loaded = ipc::task_transcript(&session).await;
            tasks.update(|all| {
                let Some(task) = all.iter_mut().find(|t| t.id == id) else {
                    return;
                };
                match loaded {
                    Ok(transcript) => {
                        let mut loaded = messages_of(transcript);
                        loaded.append(&mut task.messages);
                        task.messages = loaded;
                    }
                    Err(e) => {
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
                }
            });
        });
    });
}

/// The stream follows new content while the person is at its end; scrolling up stops that. The
/// handler for the stream's scroll events.
pub(super) fn follow_the_end(bench: Bench) -> impl Fn(web_sys::Event) + Copy + 'static {
    let Bench { tasks, current, .. } = bench;
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
    move |ev: web_sys::Event| {
        if let Some(near) = crate::dom::scrolled_near_end(&ev, 80) {
            at_end.set_value(near);
        }
    }
}

/// Ctrl/Cmd+K: search the tasks. Ctrl/Cmd+N: a new task. Esc: close what a command said, else
/// stop the running turn.
fn shortcuts(bench: Bench) {
    let Bench {
        page,
        current,
        notice,
        ..
    } = bench;
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
            "Escape" if bench.running_now() && !ev.default_prevented() => {
                ev.prevent_default();
                bench.stop();
            }
            _ => {}
        }
    });
}

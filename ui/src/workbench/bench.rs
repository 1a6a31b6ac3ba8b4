//! The workbench's state (signals, all `Copy`) and what it does with it: streaming a turn into a
//! task, making a task, sending, running the last message again, stopping, and bringing the
//! tasks the backend pushes into the list.

use super::task_book;
use super::*;
use cairn_protocol::TaskChanged;

/// What a streamed turn runs.
pub(super) enum Turn {
    Send {
        text: String,
        attachments: Vec<ipc::Attachment>,
    },
    Restart,
}

/// The workbench's state.
#[derive(Clone, Copy)]
pub(super) struct Bench {
    pub(super) status: RwSignal<StatusState>,
    pub(super) checking: RwSignal<bool>,
    pub(super) tasks: RwSignal<Vec<Task>>,
    pub(super) page: RwSignal<Page>,
    /// The open task (`None`: a new one).
    pub(super) current: RwSignal<Option<usize>>,
    pub(super) query: RwSignal<String>,
    /// What a slash command (or a refused message) says back, shown above the composer until
    /// dismissed.
    pub(super) notice: RwSignal<Option<String>>,
    /// The composer's text: the page puts a message back when it cannot be sent yet.
    pub(super) draft: RwSignal<String>,
    /// The session a new task will have: minted ahead, so its folder can be chosen first.
    pub(super) next_session: RwSignal<String>,
    /// Quitting while background jobs run asks first.
    pub(super) confirm_quit: RwSignal<bool>,
}

/// A new task's session id (the one format every door mints: `cairn_protocol::task_id`).
pub(super) fn mint_session() -> String {
    cairn_protocol::task_id(
        js_sys::Date::now() as u64,
        (js_sys::Math::random() * f64::from(u32::MAX)) as u32,
    )
}

impl Bench {
    pub(super) fn new() -> Self {
        Self {
            status: RwSignal::new(None),
            checking: RwSignal::new(false),
            tasks: RwSignal::new(Vec::new()),
            page: RwSignal::new(Page::Tasks),
            current: RwSignal::new(None),
            query: RwSignal::new(String::new()),
            notice: RwSignal::new(None),
            draft: RwSignal::new(String::new()),
            next_session: RwSignal::new(mint_session()),
            confirm_quit: RwSignal::new(false),
        }
    }

    /// Reads the status again (the config may have changed: a model added).
    pub(super) fn refresh(self) {
        self.checking.set(true);
        spawn_local(async move {
            self.status.set(Some(ipc::app_status().await));
            self.checking.set(false);
        });
    }

    /// Task `id`'s session (untracked).
    pub(super) fn session_of(self, id: usize) -> Option<String> {
        self.tasks
            .with_untracked(|all| all.iter().find(|t| t.id == id).map(|t| t.session.clone()))
    }

    /// The open task's session (untracked).
    pub(super) fn current_session(self) -> Option<String> {
        self.current
            .get_untracked()
            .and_then(|id| self.session_of(id))
    }

    /// The session the stream shows: the open task's, or the one a new task will have.
    pub(super) fn shown_session(self) -> String {
        self.current
            .get()
            .and_then(|id| {
                self.tasks
                    .with(|all| all.iter().find(|t| t.id == id).map(|t| t.session.clone()))
            })
            .unwrap_or_else(|| self.next_session.get())
    }

    /// Whether the open task's turn runs (tracked): Send becomes Stop.
    pub(super) fn running(self) -> bool {
        self.current.get().is_some_and(|id| {
            self.tasks
                .with(|all| all.iter().any(|t| t.id == id && t.running()))
        })
    }

    /// Whether the open task's turn runs (untracked: for a key or a command).
    pub(super) fn running_now(self) -> bool {
        self.current.get_untracked().is_some_and(|id| {
            self.tasks
                .with_untracked(|all| all.iter().any(|t| t.id == id && t.running()))
        })
    }

    /// Streams a turn's events into the last reply of task `id`, then marks the task read or not.
    pub(super) fn stream(self, id: usize, turn: Turn) {
        let session = self.session_of(id).unwrap_or_default();
        let tasks = self.tasks;
        spawn_local(async move {
            let on_event = move |event: ChatEvent| {
                let ends = matches!(
                    event,
                    ChatEvent::Done { .. } | ChatEvent::Failed { .. } | ChatEvent::Stopped { .. }
                );
                update_reply(tasks, id, |reply| reply.apply(event, js_sys::Date::now()));
                // What streamed is what is stored: the task's pushed change at the end is the
                // same activity.
                if ends {
                    self.touch(id);
                }
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
            self.touch(id);
            tasks.update(|all| {
                if let Some(task) = all.iter_mut().find(|t| t.id == id) {
                    task.unread = self.current.get_untracked() != Some(id);
                }
            });
            // The config may have changed since the last look (a model added): show it.
            self.refresh();
        });
    }

    /// Task `id` was active just now.
    fn touch(self, id: usize) {
        self.tasks.update(|all| {
            if let Some(task) = all.iter_mut().find(|t| t.id == id) {
                task.updated_at = js_sys::Date::now();
            }
        });
    }

    /// A task made here, not stored yet (the runtime stores it with its first step): opened,
    /// first in the list; its id and session.
    pub(super) fn make_task(self, title: String, messages: Vec<Entry>) -> (usize, String) {
        let id = self
            .tasks
            .with_untracked(|all| all.iter().map(|t| t.id).max().unwrap_or(0))
            + 1;
        // The session the new-task screen chose a folder for; the next one is minted.
        let session = self.next_session.get_untracked();
        self.next_session.set(mint_session());
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
        self.tasks.update(|all| all.insert(0, task));
        self.current.set(Some(id));
        (id, session)
    }

    pub(super) fn new_task(self) -> (usize, String) {
        self.make_task(t("New task").to_owned(), Vec::new())
    }

    fn start_turn(self, text: String, attachments: Vec<ipc::Attachment>) {
        let mut said = Message::person(text.clone());
        said.attachments = attachments.iter().map(|a| a.name.clone()).collect();
        let title = match attachments.first() {
            Some(first) if text.is_empty() => present::task_title(&first.name),
            _ => present::task_title(&text),
        };
        let id = match self.current.get_untracked() {
            Some(id) => {
                self.tasks.update(|all| {
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
            None => {
                self.make_task(title, vec![Entry::new(said), Entry::new(Message::reply())])
                    .0
            }
        };
        self.stream(id, Turn::Send { text, attachments });
    }

    /// A message needs a model. With none set up the message is not sent (no task is made): it
    /// goes back into the composer, the setup stays in view and says what to do. The config may
    /// have changed behind the page's back, so the status is read again before refusing.
    pub(super) fn send(self, text: String, attachments: Vec<ipc::Attachment>) {
        let text = text.trim().to_owned();
        if text.is_empty() && attachments.is_empty() {
            return;
        }
        if !matches!(self.status.get_untracked(), Some(Ok(report)) if !report.can_chat()) {
            self.start_turn(text, attachments);
            return;
        }
        spawn_local(async move {
            let report = ipc::app_status().await;
            let ready = matches!(&report, Ok(r) if r.can_chat());
            self.status.set(Some(report));
            if ready {
                self.start_turn(text, attachments);
            } else {
                self.draft.set(text);
                self.notice.set(Some(
                    t("Connect a model first (above): your message is kept here.").into(),
                ));
            }
        });
    }

    /// `/restart`: the answers after the last message go; the message runs again.
    pub(super) fn restart(self, id: usize) -> Result<(), &'static str> {
        let mut found = false;
        self.tasks.update(|all| {
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
        self.stream(id, Turn::Restart);
        Ok(())
    }

    /// Stops the open task's turn.
    pub(super) fn stop(self) {
        if let Some(session) = self.current_session() {
            spawn_local(async move {
                let _ = ipc::stop_turn(&session).await;
            });
        }
    }

    /// The stored tasks, read once at start; then `then_open` (a session the pet asked to show)
    /// opens. Later changes are pushed ([`Bench::apply_change`]).
    pub(super) fn load_tasks_then(self, then_open: Option<String>) {
        spawn_local(async move {
            let Ok(stored) = ipc::tasks_list().await else {
                return;
            };
            let open = self.current.get_untracked();
            let mut applied = task_book::Applied::default();
            self.tasks
                .update(|all| applied = task_book::merge_stored(all, stored, open));
            self.after(applied, open);
            if let Some(session) = then_open {
                self.open_session(&session);
            }
        });
    }

    /// Opens the task with `session`, if it is listed.
    pub(super) fn open_session(self, session: &str) {
        let wanted = self
            .tasks
            .with_untracked(|all| all.iter().find(|t| t.session == session).map(|t| t.id));
        if let Some(id) = wanted {
            self.current.set(Some(id));
            self.page.set(Page::Tasks);
        }
    }

    /// A change the backend pushed.
    pub(super) fn apply_change(self, change: TaskChanged) {
        let open = self.current.get_untracked();
        let mut applied = task_book::Applied::default();
        self.tasks
            .update(|all| applied = task_book::apply(all, change, open));
        self.after(applied, open);
    }

    fn after(self, applied: task_book::Applied, open: Option<usize>) {
        if applied.closed_open {
            self.current.set(None);
        } else if applied.reload_open {
            // Opening it again loads its transcript.
            self.current.set(open);
        }
    }
}

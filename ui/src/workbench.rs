//! The workbench window: the task list, the message stream and the composer.

use cairn_protocol::{
    ApiError, AskQuestion, ChatEvent, FailureKind, RecalledMemory, ReplyPart, StatusReport,
    TaskSummary, TranscriptMessage,
};
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::composer::Composer;
use crate::forms::{ApprovalCard, QuestionForm};
use crate::i18n::{t, tf};
use crate::{ipc, present};

#[derive(Debug, Clone, PartialEq)]
enum Author {
    Person,
    Cairn,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Progress {
    Streaming,
    Done,
    Failed,
}

#[derive(Debug, Clone, PartialEq)]
struct Message {
    author: Author,
    /// What was said and done, in the order it happened: texts and the tool calls between them.
    parts: Vec<Part>,
    /// Why the reply failed, shown after what it had said, and what kind of failure it was.
    failure: Option<(String, FailureKind)>,
    progress: Progress,
    /// Memories recalled before this reply, and why each.
    recalled: usize,
    recalled_items: Vec<RecalledMemory>,
    /// An approval or a question waiting for the person.
    pending: Option<Pending>,
    /// The person stopped the turn.
    stopped: bool,
    /// Why nothing comes yet: the model request failed and is being sent again.
    retrying: Option<String>,
    /// The names of the files attached to a person's message.
    attachments: Vec<String>,
}

/// A part's key in the message's list.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum PartKey {
    Text(usize),
    Tool(String),
    Compacted(usize),
}

#[derive(Debug, Clone, PartialEq)]
enum Part {
    Text(String),
    Tool(ToolLine),
    /// Where the task was compacted, with the summary the model goes on from.
    Compacted(String),
}

#[derive(Debug, Clone, PartialEq)]
struct ToolLine {
    call_id: String,
    name: String,
    display: String,
    /// `None` while it runs.
    failed: Option<bool>,
    /// What the model read back (header included).
    output: String,
    started_at: f64,
    took_ms: Option<f64>,
}

/// Something the turn waits for the person to answer.
#[derive(Debug, Clone, PartialEq)]
enum Pending {
    Approval {
        request: u64,
        tool: String,
        display: String,
    },
    Question {
        request: u64,
        questions: Vec<AskQuestion>,
    },
}

impl Message {
    fn person(text: String) -> Self {
        Self {
            author: Author::Person,
            parts: vec![Part::Text(text)],
            failure: None,
            progress: Progress::Done,
            recalled: 0,
            recalled_items: Vec::new(),
            pending: None,
            stopped: false,
            retrying: None,
            attachments: Vec::new(),
        }
    }

    fn reply() -> Self {
        Self {
            author: Author::Cairn,
            parts: Vec::new(),
            failure: None,
            progress: Progress::Streaming,
            recalled: 0,
            recalled_items: Vec::new(),
            pending: None,
            stopped: false,
            retrying: None,
            attachments: Vec::new(),
        }
    }

    /// Its texts, a paragraph each (what search and the "said something" checks read).
    fn text(&self) -> String {
        let texts: Vec<&str> = self
            .parts
            .iter()
            .filter_map(|p| match p {
                Part::Text(text) => Some(text.as_str()),
                _ => None,
            })
            .collect();
        texts.join("\n\n")
    }

    /// The mark a compaction leaves in the stream.
    fn compaction(summary: String) -> Self {
        let mut mark = Self::reply();
        mark.parts = vec![Part::Compacted(summary)];
        mark.progress = Progress::Done;
        mark
    }

    fn tool(&self, call_id: &str) -> Option<&ToolLine> {
        self.parts.iter().find_map(|p| match p {
            Part::Tool(line) if line.call_id == call_id => Some(line),
            _ => None,
        })
    }

    fn tool_mut(&mut self, call_id: &str) -> Option<&mut ToolLine> {
        self.parts.iter_mut().find_map(|p| match p {
            Part::Tool(line) if line.call_id == call_id => Some(line),
            _ => None,
        })
    }

    /// Applies one streamed event to this reply.
    fn apply(&mut self, event: ChatEvent) {
        // A retry is news only until the next thing arrives.
        self.retrying = None;
        match event {
            ChatEvent::Recalled { hits, items } => {
                self.recalled = hits;
                self.recalled_items = items;
            }
            // Text after a tool call is a new paragraph below its card.
            ChatEvent::Text { text } => match self.parts.last_mut() {
                Some(Part::Text(last)) => last.push_str(&text),
                _ => self.parts.push(Part::Text(text)),
            },
            ChatEvent::Notice { .. } => {}
            ChatEvent::Retrying { reason, after_ms } => {
                self.retrying = Some(present::retrying_text(&reason, after_ms));
            }
            ChatEvent::Tool {
                call_id,
                name,
                display,
            } => self.parts.push(Part::Tool(ToolLine {
                call_id,
                name,
                display,
                failed: None,
                output: String::new(),
                started_at: js_sys::Date::now(),
                took_ms: None,
            })),
            ChatEvent::ToolDone {
                call_id,
                output,
                failed,
            } => {
                if let Some(line) = self.tool_mut(&call_id) {
                    line.failed = Some(failed);
                    line.output = output;
                    line.took_ms = Some(js_sys::Date::now() - line.started_at);
                }
                self.pending = None;
            }
            ChatEvent::Approval {
                request,
                tool,
                display,
            } => {
                self.pending = Some(Pending::Approval {
                    request,
                    tool,
                    display,
                })
            }
            ChatEvent::Question { request, questions } => {
                self.pending = Some(Pending::Question { request, questions })
            }
            ChatEvent::Stopped => {
                self.pending = None;
                self.stopped = true;
                self.progress = Progress::Done;
            }
            ChatEvent::Done { .. } => {
                self.pending = None;
                self.progress = Progress::Done
            }
            // What the reply said before it failed stays.
            ChatEvent::Failed { message, class } => {
                self.failure = Some((message, class));
                self.progress = Progress::Failed;
            }
        }
    }
}

/// One message of a task's stream, keyed for the list: a streamed token updates only its own
/// message's signal, and the list adds or removes items by key without rebuilding the rest.
#[derive(Debug, Clone)]
struct Entry {
    key: u64,
    message: ArcRwSignal<Message>,
}

impl Entry {
    fn new(message: Message) -> Self {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        Self {
            key: NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            message: ArcRwSignal::new(message),
        }
    }
}

#[derive(Debug, Clone)]
struct Task {
    id: usize,
    /// The conversation id the runtime and the memory know this task by.
    session: String,
    title: String,
    messages: Vec<Entry>,
    pinned: bool,
    archived: bool,
    /// Last activity, unix ms.
    updated_at: f64,
    /// Its transcript is loaded (stored tasks load when opened).
    loaded: bool,
    /// A reply finished while another task was open.
    unread: bool,
    /// Its standing goal, as `/goal` describes it.
    goal: Option<String>,
}

impl Task {
    fn stored(id: usize, summary: TaskSummary) -> Self {
        Self {
            id,
            session: summary.session,
            title: summary.title,
            messages: Vec::new(),
            pinned: summary.pinned,
            archived: summary.archived,
            updated_at: summary.updated_at as f64,
            loaded: false,
            unread: false,
            goal: summary.goal,
        }
    }

    /// Whether its last reply is streaming (tracked: a view reading it follows the reply).
    fn running(&self) -> bool {
        self.messages
            .last()
            .is_some_and(|e| e.message.with(|m| m.progress == Progress::Streaming))
    }
}

/// A stored transcript as the stream's messages.
fn messages_of(transcript: Vec<TranscriptMessage>) -> Vec<Entry> {
    transcript
        .into_iter()
        .map(|m| {
            let mut message = if m.from_person {
                Message::person(String::new())
            } else {
                let mut reply = Message::reply();
                reply.progress = Progress::Done;
                reply
            };
            message.attachments = m.attachments;
            message.stopped = m.stopped;
            message.recalled = m.recalled.len();
            message.recalled_items = m.recalled;
            message.parts = m
                .parts
                .into_iter()
                .map(|part| match part {
                    ReplyPart::Text { text } => Part::Text(text),
                    ReplyPart::Compacted { summary } => Part::Compacted(summary),
                    ReplyPart::Tool(t) => Part::Tool(ToolLine {
                        call_id: t.call_id,
                        name: t.name,
                        display: t.display,
                        failed: Some(t.failed),
                        output: t.output,
                        started_at: 0.0,
                        took_ms: None,
                    }),
                })
                .collect();
            Entry::new(message)
        })
        .collect()
}

/// The rename box of task `id`: it takes the caret, its text selected, when it appears.
fn rename_input(id: usize, renaming: RwSignal<Option<usize>>) -> NodeRef<leptos::html::Input> {
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

/// Runs `f` on the last message of task `id`; only that message's view changes.
fn update_reply(tasks: RwSignal<Vec<Task>>, id: usize, f: impl FnOnce(&mut Message)) {
    let last = tasks.with_untracked(|all| {
        all.iter()
            .find(|t| t.id == id)
            .and_then(|t| t.messages.last().map(|e| e.message.clone()))
    });
    if let Some(message) = last {
        message.update(f);
    }
}

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
            let on_event = move |event| update_reply(tasks, id, |reply| reply.apply(event));
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
                    reply.apply(ChatEvent::Failed {
                        message: e.message,
                        class: FailureKind::Other,
                    })
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
    // The composer's text: the page puts a message back when it cannot be sent yet.
    let draft = RwSignal::new(String::new());

    // A task made here, not stored yet (the runtime stores it with its first step): opened, first
    // in the list; its id and session.
    let make_task = move |title: String, messages: Vec<Entry>| -> (usize, String) {
        let id = tasks.with_untracked(|all| all.iter().map(|t| t.id).max().unwrap_or(0)) + 1;
        let session = format!("desktop-{}-{id}", js_sys::Date::now() as u64);
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
                            failed.apply(ChatEvent::Failed {
                                message: e.message,
                                class: FailureKind::Other,
                            });
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
            if let Some(el) = web_sys::window()
                .and_then(|w| w.document())
                .and_then(|d| d.get_element_by_id("messages"))
            {
                if to_end {
                    el.set_scroll_top(el.scroll_height());
                } else if open.is_none() {
                    el.set_scroll_top(0);
                }
            }
        });
    });
    let on_scroll = move |ev: web_sys::Event| {
        use wasm_bindgen::JsCast;
        if let Some(el) = ev
            .target()
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
        {
            at_end.set_value(el.scroll_height() - el.scroll_top() - el.client_height() < 80);
        }
    };

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
                focus_composer();
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

    let command = move |name: &'static str, arg: String| {
        notice.set(None);
        match name {
            "/new" => {
                current.set(None);
                page.set(Page::Tasks);
            }
            "/restart" => match current.get_untracked() {
                None => notice.set(Some(t("Open a task to run its last message again.").into())),
                Some(id) => {
                    if let Err(why) = restart(id) {
                        notice.set(Some(why.into()));
                    }
                }
            },
            "/goal" => {
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
            "/resume" => spawn_local(async move {
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
            "/stop" => {
                if running.get_untracked() {
                    stop();
                } else {
                    notice.set(Some(t("Nothing is running.").into()));
                }
            }
            "/compact" => match current_session() {
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
            "/status" => notice.set(Some(match status.get_untracked() {
                Some(Ok(report)) => present::status_text(&report),
                Some(Err(e)) => e.message,
                None => t("Checking…").into(),
            })),
            "/model" if arg.is_empty() => {
                let Some(Ok(report)) = status.get_untracked() else {
                    notice.set(Some(t("The status is not known yet.").into()));
                    return;
                };
                // What is configured at once; then what each server offers, as it answers.
                let configured = present::models_text(&report, &[]);
                notice.set(Some(configured.clone()));
                spawn_local(async move {
                    let mut offered = Vec::new();
                    for provider in &report.providers {
                        if let Ok(test) = ipc::test_provider(&provider.name).await {
                            offered.push((provider.name.clone(), test.models));
                        }
                    }
                    // Unless the person has moved on to something else meanwhile.
                    if notice.get_untracked().as_ref() == Some(&configured) {
                        notice.set(Some(present::models_text(&report, &offered)));
                    }
                });
            }
            "/model" => spawn_local(async move {
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
            _ if arg.is_empty() => notice.set(Some(present::help_text())),
            _ => notice.set(Some(format!("{arg}\n\n{}", present::help_text()))),
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
                <Show when=move || notice.get().is_some()>
                    <div id="notice" class="notice" role="status">
                        <pre>{move || notice.get().unwrap_or_default()}</pre>
                        <button class="icon" aria-label=t("Dismiss") on:click=move |_| notice.set(None)>"✕"</button>
                    </div>
                </Show>
                <Composer draft on_send=send running on_stop=stop on_command=command />
            </main>
        </div>
    }
}

#[component]
fn TaskList(
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
            gloo_sleep(200).await;
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
                    let rows: Vec<(usize, String, bool, bool, bool, bool)> = matching
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
    let change = move |id: usize, change: serde_json::Value| {
        let Some(session) =
            tasks.with_untracked(|all| all.iter().find(|t| t.id == id).map(|t| t.session.clone()))
        else {
            return;
        };
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
    };
    let delete = move |id: usize| {
        let Some(session) =
            tasks.with_untracked(|all| all.iter().find(|t| t.id == id).map(|t| t.session.clone()))
        else {
            return;
        };
        spawn_local(async move {
            if ipc::task_delete(&session).await.is_ok() {
                tasks.update(|all| all.retain(|t| t.id != id));
                if current.get_untracked() == Some(id) {
                    current.set(None);
                }
            }
        });
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
                        {
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
                                                    change(id, serde_json::json!({"title": value}));
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
                                            on:click=move |_| change(id, serde_json::json!({"pinned": !pinned}))
                                        >
                                            {if pinned { "★" } else { "☆" }}
                                        </button>
                                        <button class="icon" title=t("Rename") aria-label=t("Rename") on:click=move |_| renaming.set(Some(id))>"✎"</button>
                                        <button
                                            class="icon"
                                            title=if archived { t("Restore") } else { t("Archive") }
                                            aria-label=if archived { t("Restore") } else { t("Archive") }
                                            on:click=move |_| change(id, serde_json::json!({"archived": !archived}))
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
                                                delete(id);
                                            }>{t("Delete?")}</button>
                                        </Show>
                                    </span>
                                </div>
                            }
                        }
                    </For>
                </For>
            </Show>
        </nav>
    }
}

#[component]
fn Welcome(
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

#[component]
fn MessageList(tasks: RwSignal<Vec<Task>>, id: usize) -> impl IntoView {
    // The list changes only when a message is added or removed; each item follows its own message.
    let entries = move || {
        tasks.with(|all| {
            all.iter()
                .find(|t| t.id == id)
                .map(|t| t.messages.clone())
                .unwrap_or_default()
        })
    };
    let last = Memo::new(move |_| {
        tasks.with(|all| {
            all.iter()
                .find(|t| t.id == id)
                .and_then(|t| t.messages.last().map(|e| e.key))
        })
    });
    view! {
        <ol class="message-list">
            <For each=entries key=|entry| entry.key let:entry>
                <MessageItem message=entry.message is_last=Signal::derive(move || last.get() == Some(entry.key)) />
            </For>
        </ol>
    }
}

/// What a failed reply offers: run the task's last message again, or open Settings.
#[derive(Clone, Copy)]
struct FailureActions {
    retry: Callback<()>,
    open_settings: Callback<()>,
}

/// One message of the stream. Each part follows only what it shows: a streamed token re-renders
/// the text, not the tool cards (an opened card stays open) nor an approval or a question form.
#[component]
fn MessageItem(message: ArcRwSignal<Message>, is_last: Signal<bool>) -> impl IntoView {
    let message = RwSignal::from(message);
    let clear_pending = move || message.update(|m| m.pending = None);
    let class = move || {
        message.with(|m| match (&m.author, m.progress) {
            (Author::Person, _) => "message from-person",
            (Author::Cairn, Progress::Failed) => "message from-cairn failed",
            (Author::Cairn, Progress::Streaming) => "message from-cairn streaming",
            (Author::Cairn, Progress::Done) => "message from-cairn",
        })
    };
    let from_person = message.with_untracked(|m| m.author == Author::Person);
    // A compaction's mark stands on its own, without an author.
    let is_mark = message.with_untracked(|m| matches!(m.parts.as_slice(), [Part::Compacted(_)]));
    let who = if from_person { t("You") } else { "Cairn" };
    let attachments = message.with_untracked(|m| m.attachments.clone());
    let recalled = Memo::new(move |_| message.with(|m| m.recalled));
    let recalled_items = Memo::new(move |_| message.with(|m| m.recalled_items.clone()));
    // Each part by a key that stays while the reply streams: a text by its place, a call by its id.
    let part_keys = Memo::new(move |_| {
        message.with(|m| {
            m.parts
                .iter()
                .enumerate()
                .map(|(i, p)| match p {
                    Part::Text(_) => PartKey::Text(i),
                    Part::Tool(line) => PartKey::Tool(line.call_id.clone()),
                    Part::Compacted(_) => PartKey::Compacted(i),
                })
                .collect::<Vec<_>>()
        })
    });
    let retrying = Memo::new(move |_| message.with(|m| m.retrying.clone()));
    let thinking = Memo::new(move |_| {
        message.with(|m| m.parts.is_empty() && m.progress == Progress::Streaming)
    });
    let failure = Memo::new(move |_| message.with(|m| m.failure.clone()));
    let pending = Memo::new(move |_| message.with(|m| m.pending.clone()));
    let stopped = Memo::new(move |_| message.with(|m| m.stopped));

    let recalled_label = move || {
        let n = recalled.get();
        (n > 0).then(|| {
            let label = if n == 1 {
                t("1 memory recalled").to_owned()
            } else {
                tf("{n} memories recalled", &[("n", &n.to_string())])
            };
            view! { <span class="recalled">{label}</span> }
        })
    };
    let recalled_block = move || {
        let items = recalled_items.get();
        (!items.is_empty()).then(|| {
            let label = if items.len() == 1 {
                t("1 memory recalled from memory").to_owned()
            } else {
                tf("{n} memories recalled from memory", &[("n", &items.len().to_string())])
            };
            view! {
                <details class="recalled-block">
                    <summary>{label}</summary>
                    <ol>
                        {items.into_iter().map(|i| view! {
                            <li>
                                <p class="recalled-meta">{tf("{date} · {source} · score {score} · {channels}", &[("date", &i.date), ("source", &i.source), ("score", &format!("{:.2}", i.score)), ("channels", &i.channels)])}</p>
                                <p class="recalled-text">{i.snippet}</p>
                                <p class="recalled-why">{i.reason}</p>
                            </li>
                        }).collect_view()}
                    </ol>
                </details>
            }
        })
    };
    let part_view = move |key: PartKey| match key {
        PartKey::Tool(id) => view! { <ul class="tools"><ToolCard message id /></ul> }.into_any(),
        PartKey::Compacted(index) => {
            let summary = message.with_untracked(|m| match m.parts.get(index) {
                Some(Part::Compacted(summary)) => summary.clone(),
                _ => String::new(),
            });
            view! {
                <details class="compacted">
                    <summary>{t("Compacted here: Cairn goes on from this summary")}</summary>
                    <div class="markdown" inner_html=present::markdown_html(&summary)></div>
                </details>
            }
            .into_any()
        }
        PartKey::Text(index) => {
            let text = Memo::new(move |_| {
                message.with(|m| match m.parts.get(index) {
                    Some(Part::Text(text)) => text.clone(),
                    _ => String::new(),
                })
            });
            if from_person {
                view! { <p class="text">{move || text.get()}</p> }.into_any()
            } else {
                view! { <div class="text markdown" inner_html=move || present::markdown_html(&text.get())></div> }
                    .into_any()
            }
        }
    };
    let actions = use_context::<FailureActions>();
    // The failure in plain words, what to do about it, and the way to do it: Retry (on the last
    // reply, which is what runs again), Settings when the fix is there.
    let failure_view = move || {
        failure.get().map(|(text, kind)| {
            let retry = actions.filter(|_| is_last.get());
            let settings = actions.filter(|_| kind.points_to_settings());
            view! {
                <div class="failure-block" role="alert">
                    <p class="text failure">{text}</p>
                    {present::failure_hint(kind).map(|hint| view! { <p class="failure-hint">{hint}</p> })}
                    <div class="failure-actions">
                        {retry.map(|a| view! {
                            <button class="secondary retry" on:click=move |_| a.retry.run(())>{t("Retry")}</button>
                        })}
                        {settings.map(|a| view! {
                            <button class="secondary open-settings" on:click=move |_| a.open_settings.run(())>{t("Open Settings")}</button>
                        })}
                    </div>
                </div>
            }
        })
    };
    let pending_view = move || {
        pending.get().map(|p| match p {
            Pending::Approval {
                request,
                tool,
                display,
            } => view! { <ApprovalCard request tool display on_done=clear_pending /> }.into_any(),
            Pending::Question { request, questions } => {
                view! { <QuestionForm request questions on_done=clear_pending /> }.into_any()
            }
        })
    };
    view! {
        <li class=class>
            {(!is_mark).then(|| view! { <span class="who">{who} {recalled_label}</span> })}
            {recalled_block}
            <For each=move || part_keys.get() key=|k| k.clone() let:key>
                {part_view(key)}
            </For>
            {move || match retrying.get() {
                Some(why) => Some(view! { <p class="text thinking retrying" role="status">{why}</p> }.into_any()),
                None => thinking.get().then(|| view! { <p class="text thinking">"…"</p> }.into_any()),
            }}
            {failure_view}
            {(!attachments.is_empty()).then(|| view! {
                <ul class="sent-attachments">
                    {attachments.iter().map(|name| view! { <li class="attachment">{name.clone()}</li> }).collect_view()}
                </ul>
            })}
            {pending_view}
            {move || stopped.get().then(|| view! { <p class="stopped-mark">{t("Stopped.")}</p> })}
        </li>
    }
}

/// One tool call of `message`: its line, status and time; the output folded underneath. The card
/// stays while the call runs and finishes, so a person who opened it keeps it open.
#[component]
fn ToolCard(message: RwSignal<Message>, id: String) -> impl IntoView {
    let tool = Memo::new(move |_| message.with(|m| m.tool(&id).cloned()));
    let name = tool.with_untracked(|t| t.as_ref().map(|t| t.name.clone()).unwrap_or_default());
    let is_edit = matches!(name.as_str(), "edit_file" | "write_file");
    // A call the person stopped is not a failure.
    let stopped =
        move || tool.with(|t| t.as_ref().is_some_and(|t| present::was_stopped(&t.output)));
    let state = move || match tool.with(|t| t.as_ref().and_then(|t| t.failed)) {
        _ if stopped() => "tool stopped",
        None => "tool running",
        Some(false) => "tool ok",
        Some(true) => "tool failed",
    };
    let meta = move || {
        tool.with(|line| {
            let Some(line) = line else {
                return String::new();
            };
            let label = match line.failed {
                _ if present::was_stopped(&line.output) => t("stopped"),
                None => t("running"),
                Some(false) => t("done"),
                Some(true) => t("failed"),
            };
            let time = line
                .took_ms
                .map(crate::format::duration_ms)
                .unwrap_or_default();
            format!("{label} {time}")
        })
    };
    let display = move || tool.with(|t| t.as_ref().map(|t| t.display.clone()).unwrap_or_default());
    let output = move || {
        let output = tool.with(|t| t.as_ref().map(|t| t.output.clone()).unwrap_or_default());
        (!output.is_empty()).then(|| {
            let output = present::fold_output(&output);
            if is_edit {
                // An edit's report: each line of its diff marked added, removed or a hunk.
                view! {
                    <pre class="tool-output diff">
                        {output.lines().map(|line| view! {
                            <span class=present::diff_line_class(line)>{line.to_owned()}</span>
                        }).collect_view()}
                    </pre>
                }
                .into_any()
            } else {
                view! { <pre class="tool-output">{output}</pre> }.into_any()
            }
        })
    };
    view! {
        <li class=state data-tool=name>
            <details>
                <summary>
                    <span class="tool-line">{display}</span>
                    <span class="tool-meta">{meta}</span>
                </summary>
                {output}
            </details>
        </li>
    }
}

/// Waits `ms` milliseconds.
pub(crate) async fn gloo_sleep(ms: i32) {
    let promise = js_sys::Promise::new(&mut |resolve, _| {
        if let Some(window) = web_sys::window() {
            let _ = window.set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, ms);
        }
    });
    let _ = wasm_bindgen_futures::JsFuture::from(promise).await;
}

/// Puts the caret back in the composer.
pub(crate) fn focus_composer() {
    focus_by_id("composer-input");
}

/// Moves the keyboard focus `step` tasks down (or up) the task list from the focused one (from
/// the search box: to the first); up from the first task goes back to the search box.
fn move_task_focus(step: i32) {
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

/// Focuses the element with `id`.
pub fn focus_by_id(id: &str) {
    use wasm_bindgen::JsCast;
    if let Some(input) = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.get_element_by_id(id))
        .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok())
    {
        let _ = input.focus();
    }
}

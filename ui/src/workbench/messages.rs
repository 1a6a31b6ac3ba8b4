//! The message stream: each message (Markdown, recalled memories, failures with their actions)
//! and each tool call's card.

use super::*;

#[component]
pub(super) fn MessageList(tasks: RwSignal<Vec<Task>>, id: usize) -> impl IntoView {
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
pub(super) struct FailureActions {
    pub(super) retry: Callback<()>,
    pub(super) open_settings: Callback<()>,
}

/// One message of the stream. Each part follows only what it shows: a streamed token re-renders
/// the text, not the tool cards (an opened card stays open) nor an approval or a question form.
#[component]
pub(super) fn MessageItem(message: ArcRwSignal<Message>, is_last: Signal<bool>) -> impl IntoView {
    let message = RwSignal::from(message);
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
                    Part::JobNote(_) => PartKey::JobNote(i),
                })
                .collect::<Vec<_>>()
        })
    });
    let stopped = Memo::new(move |_| message.with(|m| m.stopped));
    // A finished reply with words in it can be copied whole (its Markdown).
    let copyable = Memo::new(move |_| {
        message.with(|m| {
            m.author == Author::Cairn
                && m.progress != Progress::Streaming
                && m.parts
                    .iter()
                    .any(|p| matches!(p, Part::Text(t) if !t.trim().is_empty()))
        })
    });
    let rateable = Memo::new(move |_| {
        message.with(|m| {
            m.turn_id
                .filter(|_| m.progress == Progress::Done && !m.stopped)
        })
    });

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
    view! {
        <li class=class>
            {(!is_mark).then(|| view! { <span class="who">{who} {recalled_label}</span> })}
            <RecalledBlock message />
            <For each=move || part_keys.get() key=|k| k.clone() let:key>
                {part_view(message, from_person, key)}
            </For>
            <StatusLine message />
            <FailureBlock message is_last />
            {(!attachments.is_empty()).then(|| view! {
                <ul class="sent-attachments">
                    {attachments.iter().map(|name| view! { <li class="attachment">{name.clone()}</li> }).collect_view()}
                </ul>
            })}
            <PendingBlock message />
            {move || stopped.get().then(|| view! { <p class="stopped-mark">{t("Stopped.")}</p> })}
            {move || copyable.get().then(|| view! {
                <button type="button" class="reply-copy" title=t("Copy the reply") on:click=move |ev| {
                    let text = message.with_untracked(reply_text);
                    if crate::dom::copy_to_clipboard(&text) {
                        if let Some(button) = crate::dom::event_element(&ev) {
                            crate::dom::flash_copied(&button);
                        }
                    }
                }>{t("Copy")}</button>
            })}
            {move || rateable.get().map(|turn_id| view! {
                <crate::rate::Thumbs
                    turn_id
                    rated=Signal::derive(move || message.with(|m| m.rating))
                    on_rated=Callback::new(move |r| message.update(|m| m.rating = Some(r)))
                />
            })}
        </li>
    }
}

/// A reply's words, as its Markdown: its texts, trimmed, a blank line between them.
fn reply_text(m: &Message) -> String {
    m.parts
        .iter()
        .filter_map(|p| match p {
            Part::Text(text) => Some(text.trim()),
            _ => None,
        })
        .filter(|text| !text.is_empty())
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// What was recalled for a message, and why: plain words first, the ranking's numbers behind
/// their own disclosure.
#[component]
fn RecalledBlock(message: RwSignal<Message>) -> impl IntoView {
    let recalled_items = Memo::new(move |_| message.with(|m| m.recalled_items.clone()));
    move || {
        let items = recalled_items.get();
        (!items.is_empty()).then(|| {
            // The pill beside the name says how many; this opens what they were.
            let label = t("What was recalled, and why");
            view! {
                <details class="recalled-block">
                    <summary>{label}</summary>
                    <ol>
                        {items.into_iter().map(|i| {
                            // Plain words first; the ranking's numbers behind their own disclosure.
                            let today = cairn_protocol::calendar::day_name(js_sys::Date::now() as i64 / 86_400_000);
                            let why = format!(
                                "{} · {}",
                                present::recall_why(&i.words, i.close_in_meaning),
                                present::recall_origin(&i.source, &i.date, &today)
                            );
                            view! {
                                <li>
                                    <p class="recalled-text">{i.snippet}</p>
                                    <p class="recalled-why">{why}</p>
                                    <details class="recalled-numbers">
                                        <summary>{t("Ranking details")}</summary>
                                        <p class="recalled-meta">{tf("{date} · {source} · score {score} · {channels}", &[("date", &i.date), ("source", &i.source), ("score", &format!("{:.2}", i.score)), ("channels", &i.channels)])}</p>
                                        <p class="recalled-reason">{i.reason}</p>
                                    </details>
                                </li>
                            }
                        }).collect_view()}
                    </ol>
                </details>
            }
        })
    }
}

/// One part of a message, by its key: a tool card, a compaction's summary, a job's note or a text
/// (the person's plain, Cairn's as Markdown).
fn part_view(message: RwSignal<Message>, from_person: bool, key: PartKey) -> AnyView {
    match key {
        PartKey::Tool(id) => view! { <ul class="tools"><ToolCard message id /></ul> }.into_any(),
        PartKey::Compacted(index) => {
            let summary = message.with_untracked(|m| match m.parts.get(index) {
                Some(Part::Compacted(summary)) => summary.clone(),
                _ => String::new(),
            });
            view! {
                <details class="compacted">
                    <summary>{t("Compacted here: Cairn goes on from this summary")}</summary>
                    <div class="markdown" inner_html=crate::markdown::html(&summary)></div>
                </details>
            }
            .into_any()
        }
        PartKey::JobNote(index) => {
            let text = message.with_untracked(|m| match m.parts.get(index) {
                Some(Part::JobNote(text)) => text.clone(),
                _ => String::new(),
            });
            let (mark, rest) = match text.split_once('\n') {
                Some((mark, rest)) => (mark.to_owned(), rest.to_owned()),
                None => (text.clone(), String::new()),
            };
            // The harness's words to the model, not the person's: a note of its own style.
            view! {
                <details class="job-note" open>
                    <summary><span class="job-note-from">"Cairn"</span>{mark}</summary>
                    <pre class="job-note-text">{rest}</pre>
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
                view! { <div class="text markdown" inner_html=move || crate::markdown::html(&text.get())></div> }
                    .into_any()
            }
        }
    }
}

/// What the reply is doing while no words come: a retry, the turn's status with its counter, or
/// an ellipsis.
#[component]
fn StatusLine(message: RwSignal<Message>) -> impl IntoView {
    let retrying = Memo::new(move |_| message.with(|m| m.retrying.clone()));
    let status = Memo::new(move |_| message.with(|m| m.status.clone()));
    // A clock that ticks each second while the reply streams: the status line's counter.
    let now = RwSignal::new(js_sys::Date::now());
    if message.with_untracked(|m| m.progress == Progress::Streaming) {
        if let Ok(tick) = set_interval_with_handle(
            move || now.set(js_sys::Date::now()),
            std::time::Duration::from_secs(1),
        ) {
            Effect::new(move |_| {
                if message.with(|m| m.progress != Progress::Streaming) {
                    tick.clear();
                }
            });
            on_cleanup(move || tick.clear());
        }
    }
    let thinking = Memo::new(move |_| {
        message.with(|m| m.parts.is_empty() && m.progress == Progress::Streaming)
    });
    move || match (retrying.get(), status.get()) {
        (Some(why), _) => {
            Some(view! { <p class="text thinking retrying" role="status">{why}</p> }.into_any())
        }
        (None, Some((status, since))) => Some(
            view! {
                <p class="text thinking turn-status" role="status">
                    {move || present::turn_status_text(&status, now.get() - since)}
                </p>
            }
            .into_any(),
        ),
        (None, None) => thinking
            .get()
            .then(|| view! { <p class="text thinking">"…"</p> }.into_any()),
    }
}

/// The failure in plain words, what to do about it, and the way to do it: Retry (on the last
/// reply, which is what runs again), Settings when the fix is there.
#[component]
fn FailureBlock(message: RwSignal<Message>, is_last: Signal<bool>) -> impl IntoView {
    let failure = Memo::new(move |_| message.with(|m| m.failure.clone()));
    let actions = use_context::<FailureActions>();
    move || {
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
    }
}

/// A call waiting for the person: its approval card or ask_user's form.
#[component]
fn PendingBlock(message: RwSignal<Message>) -> impl IntoView {
    let clear_pending = move || message.update(|m| m.pending = None);
    let pending = Memo::new(move |_| message.with(|m| m.pending.clone()));
    move || {
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
    }
}

/// One tool call of `message`: its line, status and time; the output folded underneath. The card
/// stays while the call runs and finishes, so a person who opened it keeps it open.
#[component]
pub(super) fn ToolCard(message: RwSignal<Message>, id: String) -> impl IntoView {
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

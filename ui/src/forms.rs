//! What a turn asks of the person while it waits: permission for a call (Allow or Deny), and
//! ask_user's questions (choices, yes or no, text), every one answered before they are sent.

use cairn_protocol::{AskQuestion, QuestionKind};
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::i18n::t;
use crate::ipc;

/// A call waiting for permission: Allow or Deny.
#[component]
pub(crate) fn ApprovalCard(
    request: u64,
    tool: String,
    display: String,
    on_done: impl Fn() + Copy + Send + Sync + 'static,
) -> impl IntoView {
    let decide = move |allow: bool| {
        on_done();
        spawn_local(async move {
            let _ = ipc::approve(request, allow).await;
        });
    };
    view! {
        <div class="approval" role="group" aria-label=t("Permission requested")>
            <p class="approval-title">{t("Cairn wants to run ")} <code>{tool}</code></p>
            <pre class="approval-call">{display}</pre>
            <div class="approval-actions">
                <button id="approve" class="primary" on:click=move |_| decide(true)>{t("Allow")}</button>
                <button id="deny" class="secondary" on:click=move |_| decide(false)>{t("Deny")}</button>
            </div>
        </div>
    }
}

/// ask_user's questions as a form: one control per question, Send or Decline.
#[component]
pub(crate) fn QuestionForm(
    request: u64,
    questions: Vec<AskQuestion>,
    on_done: impl Fn() + Copy + Send + Sync + 'static,
) -> impl IntoView {
    let answers = RwSignal::new(
        questions
            .iter()
            .map(|q| q.default.clone().map(|d| vec![d]).unwrap_or_default())
            .collect::<Vec<Vec<String>>>(),
    );
    let complete =
        move || answers.with(|all| all.iter().all(|a| a.iter().any(|v| !v.trim().is_empty())));
    let send = move || {
        let chosen: Vec<String> = answers
            .get_untracked()
            .into_iter()
            .map(|a| a.join(", "))
            .collect();
        on_done();
        spawn_local(async move {
            let _ = ipc::answer_question(request, Some(chosen)).await;
        });
    };
    let decline = move || {
        on_done();
        spawn_local(async move {
            let _ = ipc::answer_question(request, None).await;
        });
    };
    let set = move |i: usize, value: Vec<String>| {
        answers.update(|all| {
            if let Some(slot) = all.get_mut(i) {
                *slot = value;
            }
        })
    };
    let fields = questions
        .into_iter()
        .enumerate()
        .map(|(i, q)| {
            let name = format!("q{request}-{i}");
            let control = match q.kind {
                QuestionKind::Choice | QuestionKind::Multi => {
                    let multi = q.kind == QuestionKind::Multi;
                    q.options
                        .iter()
                        .cloned()
                        .map(|option| {
                            let value = option.clone();
                            let checked = {
                                let option = option.clone();
                                move || answers.with(|all| all.get(i).is_some_and(|a| a.contains(&option)))
                            };
                            view! {
                                <label class="option">
                                    <input
                                        type=if multi { "checkbox" } else { "radio" }
                                        name=name.clone()
                                        prop:checked=checked
                                        on:change=move |_| {
                                            let value = value.clone();
                                            if multi {
                                                answers.update(|all| {
                                                    if let Some(slot) = all.get_mut(i) {
                                                        if let Some(at) = slot.iter().position(|v| *v == value) {
                                                            slot.remove(at);
                                                        } else {
                                                            slot.push(value);
                                                        }
                                                    }
                                                });
                                            } else {
                                                set(i, vec![value]);
                                            }
                                        }
                                    />
                                    {option}
                                </label>
                            }
                        })
                        .collect_view()
                        .into_any()
                }
                QuestionKind::Confirm => view! {
                    <label class="option">
                        <input type="radio" name=name.clone() on:change=move |_| set(i, vec!["yes".into()]) />
                        {t("Yes")}
                    </label>
                    <label class="option">
                        <input type="radio" name=name.clone() on:change=move |_| set(i, vec!["no".into()]) />
                        {t("No")}
                    </label>
                }
                .into_any(),
                QuestionKind::Text => view! {
                    <input
                        class="answer-text"
                        type="text"
                        required=true
                        aria-label=q.question.clone()
                        prop:value=move || answers.with(|all| all.get(i).and_then(|a| a.first().cloned()).unwrap_or_default())
                        on:input=move |ev| set(i, vec![event_target_value(&ev)])
                        on:keydown=move |ev: web_sys::KeyboardEvent| {
                            if ev.key() == "Enter" && complete() {
                                ev.prevent_default();
                                send();
                            }
                        }
                    />
                }
                .into_any(),
            };
            view! {
                <fieldset class="question" aria-required="true">
                    <legend>{q.question.clone()}<span class="required-mark" aria-hidden="true">" *"</span></legend>
                    {control}
                </fieldset>
            }
        })
        .collect_view();
    view! {
        <form class="question-form" on:submit=move |ev| {
            ev.prevent_default();
            if complete() {
                send();
            }
        }>
            <p class="question-title">{t("Cairn asks:")}</p>
            <p class="question-hint">
                {move || if complete() {
                    t("Every question has an answer: send them, or decline.")
                } else {
                    t("Each question needs an answer (marked *); or decline them all.")
                }}
            </p>
            {fields}
            <div class="question-actions">
                <button id="answer" class="primary" type="submit" disabled=move || !complete()>{t("Send answer")}</button>
                <button id="decline" class="secondary" type="button" on:click=move |_| decline()>{t("Decline")}</button>
            </div>
        </form>
    }
}

//! The open task's background jobs, above the composer: each job's id, command, state and time,
//! its output on demand (the end of it, read without taking it from the model) and a stop button.
//! Read every two seconds while the task is open; nothing shows for a task without jobs.

use cairn_protocol::{JobState, TaskJob};

use super::*;

/// "running · 12 s", "exit 2 · 3 s", …
fn job_state(job: &TaskJob) -> String {
    let seconds = (job.elapsed_ms / 1000).to_string();
    let state = match (job.state, job.exit_code) {
        (JobState::Running, _) => t("running").to_owned(),
        (JobState::Exited, Some(code)) => tf("exit {code}", &[("code", &code.to_string())]),
        (JobState::Stopped, _) => t("stopped").to_owned(),
        (JobState::Finished, _) => t("done").to_owned(),
        (JobState::Failed, _) => t("failed").to_owned(),
        (JobState::Killed | JobState::Exited, _) => t("killed").to_owned(),
    };
    format!("{state} · {}", tf("{n} s", &[("n", &seconds)]))
}

/// Puts `output` in the open panel when it is still job `id`'s.
fn show(shown: RwSignal<Option<(String, String)>>, id: &str, output: String) {
    shown.update(|s| {
        if let Some((_, text)) = s.as_mut().filter(|(open, _)| open == id) {
            *text = output;
        }
    });
}

#[component]
pub(super) fn JobsStrip(session: Signal<Option<String>>) -> impl IntoView {
    let jobs = RwSignal::new(Vec::<TaskJob>::new());
    // The job whose output is open, and that output.
    let shown = RwSignal::new(None::<(String, String)>);
    let refresh = move || {
        let Some(open_task) = session.get_untracked() else {
            jobs.set(Vec::new());
            return;
        };
        spawn_local(async move {
            let still_open = || session.get_untracked().as_deref() == Some(open_task.as_str());
            if let Ok(listed) = ipc::task_jobs(&open_task).await {
                if still_open() {
                    jobs.set(listed);
                }
            }
            let Some(id) = shown.get_untracked().map(|(id, _)| id) else {
                return;
            };
            if let Ok(output) = ipc::job_output(&open_task, &id).await {
                if still_open() {
                    show(shown, &id, output);
                }
            }
        });
    };
    Effect::new(move |_| {
        session.track();
        shown.set(None);
        refresh();
    });
    let _ = set_interval_with_handle(refresh, std::time::Duration::from_secs(2));
    let toggle = move |id: String| {
        if shown.with_untracked(|s| s.as_ref().is_some_and(|(open, _)| *open == id)) {
            shown.set(None);
            return;
        }
        shown.set(Some((id.clone(), String::new())));
        let Some(session) = session.get_untracked() else {
            return;
        };
        spawn_local(async move {
            let output = ipc::job_output(&session, &id)
                .await
                .unwrap_or_else(|e| e.message);
            show(shown, &id, output);
        });
    };
    let stop = move |id: String| {
        let Some(session) = session.get_untracked() else {
            return;
        };
        spawn_local(async move {
            let _ = ipc::job_stop(&session, &id).await;
            refresh();
        });
    };

    view! {
        <Show when=move || jobs.with(|j| !j.is_empty())>
            <section class="jobs-strip" id="jobs-strip" aria-label=t("Background jobs")>
                <ul>
                    {move || {
                        jobs.get()
                            .into_iter()
                            .map(|job| {
                                let running = job.state == JobState::Running;
                                let (toggle_id, stop_id) = (job.id.clone(), job.id.clone());
                                let label = job_state(&job);
                                view! {
                                    <li class="job" class:running=running data-job=job.id.clone()>
                                        <span class="job-id">{job.id.clone()}</span>
                                        <code class="job-command" title=job.command.clone()>{job.command.clone()}</code>
                                        <span class="job-state">{label}</span>
                                        <button class="link job-output-toggle" on:click=move |_| toggle(toggle_id.clone())>
                                            {t("Output")}
                                        </button>
                                        {running.then(|| view! {
                                            <button class="link danger job-stop" on:click=move |_| stop(stop_id.clone())>
                                                {t("Stop")}
                                            </button>
                                        })}
                                    </li>
                                }
                            })
                            .collect_view()
                    }}
                </ul>
                {move || shown.get().map(|(id, text)| view! {
                    <pre class="job-output" data-job=id>
                        {if text.is_empty() { t("(no output yet)").to_owned() } else { text }}
                    </pre>
                })}
            </section>
        </Show>
    }
}

//! The open task's team, above the composer: its members (name, role, state, who added them) and
//! its room as a conversation — messages and reports between the lead and the members, oldest
//! first. Read every two seconds while the task is open; nothing shows for a task without a team.

use cairn_protocol::{TaskTeam, TeamMemberState};

use super::*;

#[component]
pub(super) fn TeamRoom(session: Signal<Option<String>>) -> impl IntoView {
    let team = RwSignal::new(None::<TaskTeam>);
    // The member whose stream is open.
    let open = RwSignal::new(None::<String>);
    let refresh = move || {
        let Some(open_task) = session.get_untracked() else {
            team.set(None);
            return;
        };
        spawn_local(async move {
            let read = ipc::task_team(&open_task).await.ok().flatten();
            if session.get_untracked().as_deref() == Some(open_task.as_str())
                && team.get_untracked() != read
            {
                team.set(read);
            }
        });
    };
    Effect::new(move |_| {
        session.track();
        team.set(None);
        refresh();
    });
    let _ = set_interval_with_handle(refresh, std::time::Duration::from_secs(2));

    view! {
        <Show when=move || team.with(|t| t.as_ref().is_some_and(|t| !t.members.is_empty() || !t.room.is_empty()))>
            <details class="team-room" id="team-room" open>
                <summary>
                    {move || {
                        let size = team.with(|t| t.as_ref().map_or(0, |t| t.members.len()) + 1);
                        tf("Team · {n} agents", &[("n", &size.to_string())])
                    }}
                </summary>
                <ul class="team-members">
                    {move || {
                        team.get()
                            .map(|t| t.members)
                            .unwrap_or_default()
                            .into_iter()
                            .map(|m| {
                                let working = m.state == TeamMemberState::Working;
                                let state = match m.state {
                                    TeamMemberState::Working => t("working"),
                                    TeamMemberState::Finished => t("finished"),
                                    TeamMemberState::WaitingForSlot => t("waiting for a slot"),
                                    TeamMemberState::Idle => t("idle"),
                                };
                                let name = m.name.clone();
                                let toggle = move |_| {
                                    open.update(|o| {
                                        *o = if o.as_deref() == Some(name.as_str()) { None } else { Some(name.clone()) };
                                    })
                                };
                                view! {
                                    <li class="team-member" class:working=working data-member=m.name.clone()>
                                        <button class="link team-member-name" title=t("Show what it said and did") on:click=toggle>{m.name.clone()}</button>
                                        <span class="team-member-role">{m.role.clone()}</span>
                                        <span class="team-member-state">{state}</span>
                                        <span class="team-member-parent">{tf("added by {name}", &[("name", &m.parent)])}</span>
                                    </li>
                                }
                            })
                            .collect_view()
                    }}
                </ul>
                {move || {
                    let name = open.get()?;
                    let output = team.with(|t| {
                        t.as_ref()?.members.iter().find(|m| m.name == name).map(|m| m.output.clone())
                    })?;
                    Some(view! {
                        <pre class="team-member-output" data-member=name>
                            {if output.is_empty() { t("(no output yet)").to_owned() } else { output }}
                        </pre>
                    })
                }}
                <ol class="team-messages">
                    {move || {
                        team.get()
                            .map(|t| t.room)
                            .unwrap_or_default()
                            .into_iter()
                            .map(|m| {
                                let to_lead = m.to == "lead";
                                view! {
                                    <li class="team-message" class:report=m.report class:to-lead=to_lead>
                                        <div class="team-message-head">
                                            <span class="team-from">{m.from.clone()}</span>
                                            " → "
                                            <span class="team-to">{m.to.clone()}</span>
                                            {m.report.then(|| view! { <span class="team-report-tag">{t("report")}</span> })}
                                        </div>
                                        <p class="team-message-text">{m.text.clone()}</p>
                                    </li>
                                }
                            })
                            .collect_view()
                    }}
                </ol>
            </details>
        </Show>
    }
}

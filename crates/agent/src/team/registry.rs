//! The teams of one process and what each holds: its members (who added whom, who works,
//! their output), its room's messages, and the rule that an agent with members manages rather
//! than writes or executes.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use cairn_protocol::{TaskTeam, TeamMember, TeamMemberState, TeamMessage};
use cairn_tools::{field, reading_command, CancellationToken, Jobs, Tool, ToolContext};
use serde_json::Value;

use super::texts;
use crate::{AgentError, Capacity, Runtime};

/// The agents a team may have, the lead included (`team.agents.max`).
pub const TEAM_MAX: usize = 4;
pub(super) const LEAD: &str = "lead";
/// Of a member's stream, how much the workbench can read (the end of it).
const OUTPUT_KEPT: usize = 8 * 1024;

/// Starts a member's runtime (its calls refused when they would need approval: nobody can
/// approve inside a team), or says why it cannot start ([`AgentError::Start`]).
pub type MemberStarter = Arc<dyn Fn(MemberSeat) -> Result<Runtime, AgentError> + Send + Sync>;

/// A member's place in its team, for the team tools of its own runtime.
#[derive(Clone)]
pub struct MemberSeat {
    pub team: Arc<Team>,
    pub name: String,
}

/// The teams of one process, by the lead's session.
#[derive(Default)]
pub struct Teams {
    by_session: Mutex<HashMap<String, Arc<Team>>>,
}

pub(super) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

impl Teams {
    /// The team `session` leads, made on first use (its reports go to `jobs`).
    pub(super) fn team(
        &self,
        session: &str,
        jobs: &Arc<Jobs>,
        model: &str,
        capacity: &Option<Capacity>,
    ) -> Arc<Team> {
        lock(&self.by_session)
            .entry(session.to_owned())
            .or_insert_with(|| {
                Arc::new(Team {
                    lead_session: session.to_owned(),
                    lead_jobs: jobs.clone(),
                    lead_model: model.to_owned(),
                    max: TEAM_MAX,
                    capacity: capacity.clone(),
                    state: Mutex::default(),
                })
            })
            .clone()
    }

    /// Whether the agent of `session` leads members now.
    pub fn is_manager(&self, session: &str) -> bool {
        lock(&self.by_session)
            .get(session)
            .is_some_and(|team| team.manages(LEAD))
    }

    /// The team `session` leads, as the workbench shows it (`None`: it has none).
    pub fn view(&self, session: &str) -> Option<TaskTeam> {
        let team = lock(&self.by_session).get(session).cloned()?;
        let state = lock(&team.state);
        let members = Team::tree(&state)
            .into_iter()
            .filter_map(|(_, m)| m)
            .map(|m| TeamMember {
                name: m.name.clone(),
                role: m.role.clone(),
                parent: m.parent.clone(),
                state: m.state(),
                output: m.output.clone(),
            })
            .collect();
        let room = state
            .room
            .iter()
            .map(|m| TeamMessage {
                from: m.from.clone(),
                to: m.to.clone(),
                text: m.text.clone(),
                report: m.report,
            })
            .collect();
        Some(TaskTeam { members, room })
    }

    /// Stops every member of the team `session` leads (the task was deleted).
    pub fn end(&self, session: &str) {
        if let Some(team) = lock(&self.by_session).remove(session) {
            for member in &lock(&team.state).members {
                member.stop.cancel();
            }
        }
    }
}

/// One team: its lead, its members and its room.
pub struct Team {
    pub(super) lead_session: String,
    pub(super) lead_jobs: Arc<Jobs>,
    pub(super) lead_model: String,
    pub(super) max: usize,
    /// The model's slots beside the lead's own; `None`: as many as are needed.
    pub(super) capacity: Option<Capacity>,
    pub(super) state: Mutex<TeamState>,
}

#[derive(Default)]
pub(super) struct TeamState {
    pub(super) goal: Option<String>,
    pub(super) members: Vec<Member>,
    pub(super) room: Vec<RoomMessage>,
}

pub(super) struct Member {
    pub(super) name: String,
    pub(super) role: String,
    /// Who added it.
    pub(super) parent: String,
    pub(super) model: String,
    pub(super) working: bool,
    /// Waiting for a free slot of the model.
    pub(super) waiting: bool,
    /// The end of what it said and did (its words, its calls), for the workbench.
    pub(super) output: String,
    pub(super) reported: bool,
    pub(super) last_end: Option<Instant>,
    pub(super) runtime: Arc<Runtime>,
    pub(super) session: String,
    pub(super) stop: CancellationToken,
}

impl Member {
    pub(super) fn state(&self) -> TeamMemberState {
        if self.waiting {
            TeamMemberState::WaitingForSlot
        } else if self.working {
            TeamMemberState::Working
        } else if self.reported {
            TeamMemberState::Finished
        } else {
            TeamMemberState::Idle
        }
    }
}

pub(super) struct RoomMessage {
    pub(super) from: String,
    pub(super) to: String,
    pub(super) text: String,
    pub(super) report: bool,
}

impl Team {
    /// What every team tool answers while there can be no team (agent-loop.json
    /// `team.unavailable`).
    pub(super) fn unavailable(&self) -> Option<&'static str> {
        if self.max <= 1 {
            Some(texts::ONE_AGENT)
        } else if self.capacity.as_ref().is_some_and(|c| c.parallel <= 1) {
            Some(texts::ONE_REQUEST)
        } else {
            None
        }
    }

    /// Adds to what member `name` has said and done, as its card shows it (the end of it).
    pub(super) fn log(&self, name: &str, text: &str) {
        if let Some(member) = lock(&self.state)
            .members
            .iter_mut()
            .find(|m| m.name == name)
        {
            member.output.push_str(text);
            if member.output.len() > OUTPUT_KEPT {
                let mut cut = member.output.len() - OUTPUT_KEPT;
                while !member.output.is_char_boundary(cut) {
                    cut += 1;
                }
                member.output.drain(..cut);
            }
        }
    }

    pub(super) fn set_waiting(&self, name: &str, waiting: bool) {
        if let Some(member) = lock(&self.state)
            .members
            .iter_mut()
            .find(|m| m.name == name)
        {
            member.waiting = waiting;
        }
    }

    /// Whether `name` has members under it now.
    pub fn manages(&self, name: &str) -> bool {
        lock(&self.state).members.iter().any(|m| m.parent == name)
    }

    /// The lead and the members, in tree order, with their depth.
    pub(super) fn tree(state: &TeamState) -> Vec<(usize, Option<&Member>)> {
        fn under<'a>(
            state: &'a TeamState,
            parent: &str,
            depth: usize,
            out: &mut Vec<(usize, Option<&'a Member>)>,
        ) {
            for member in state.members.iter().filter(|m| m.parent == parent) {
                out.push((depth, Some(member)));
                under(state, &member.name, depth + 1, out);
            }
        }
        let mut out = vec![(0, None)];
        under(state, LEAD, 1, &mut out);
        out
    }

    pub(super) fn names(state: &TeamState) -> String {
        Self::tree(state)
            .iter()
            .map(|(_, m)| m.map_or(LEAD, |m| m.name.as_str()))
            .collect::<Vec<_>>()
            .join(", ")
    }

    pub(super) fn size(state: &TeamState) -> String {
        (1 + state.members.len()).to_string()
    }

    pub(super) fn set_working(&self, name: &str, working: bool, reported: bool) {
        let mut state = lock(&self.state);
        if let Some(member) = state.members.iter_mut().find(|m| m.name == name) {
            member.working = working;
            if !working {
                member.last_end = Some(Instant::now());
                member.reported |= reported;
            }
        }
    }

    /// Whether `name` is `caller` or one of the members under it.
    pub(super) fn is_under(state: &TeamState, name: &str, caller: &str) -> bool {
        let mut at = name.to_owned();
        loop {
            let Some(member) = state.members.iter().find(|m| m.name == at) else {
                return false;
            };
            if member.parent == caller {
                return true;
            }
            at = member.parent.clone();
        }
    }
}

/// Whether a manager may not make this call itself: every call that writes or executes (those
/// that ask first) but job_stop and a bash command that only reads.
pub(crate) fn manager_may_not(tool: &dyn Tool, input: &Value, ctx: &ToolContext) -> bool {
    match tool.name() {
        "job_stop" => false,
        "bash" => !reading_command(field(input, "command")),
        _ => tool.needs_permission(input, ctx),
    }
}

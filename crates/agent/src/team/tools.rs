//! The four team tools (`team_add`, `team_send`, `team_stop`, `team_read`) and the seat they
//! act from: the lead's, or a member's.

use std::sync::Arc;

use cairn_tools::texts::fill;
use cairn_tools::{
    field, CancellationToken, Declaration, Tool, ToolContext, ToolFuture, ToolOutput,
};
use serde_json::{json, Value};

use super::registry::{lock, Member, MemberSeat, MemberStarter, Team, Teams, LEAD, TEAM_MAX};
use super::room::run_member;
use super::texts;
use crate::Capacity;

/// Whose team tools these are: the person's agent (the lead of its session's team) or a member.
#[derive(Clone)]
pub enum Seat {
    Lead {
        teams: Arc<Teams>,
        model: String,
        capacity: Option<Capacity>,
    },
    Member(MemberSeat),
}

impl Seat {
    fn resolve(&self, ctx: &ToolContext) -> (Arc<Team>, String) {
        match self {
            Self::Lead {
                teams,
                model,
                capacity,
            } => (
                teams.team(&ctx.session, &ctx.jobs, model, capacity),
                LEAD.to_owned(),
            ),
            Self::Member(seat) => (seat.team.clone(), seat.name.clone()),
        }
    }

    /// Whether the agent in this seat manages members now (in `session`, for a lead).
    pub fn manages(&self, session: &str) -> bool {
        match self {
            Self::Lead { teams, .. } => teams.is_manager(session),
            Self::Member(seat) => seat.team.manages(&seat.name),
        }
    }
}

/// The four team tools for `seat`; `start` starts members.
pub fn team_tools(seat: Seat, start: MemberStarter) -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(TeamAdd {
            seat: seat.clone(),
            start,
        }),
        Arc::new(TeamSend { seat: seat.clone() }),
        Arc::new(TeamStop { seat: seat.clone() }),
        Arc::new(TeamRead { seat }),
    ]
}

pub(super) fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && name.len() <= 32
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

pub struct TeamAdd {
    seat: Seat,
    start: MemberStarter,
}

impl Tool for TeamAdd {
    fn name(&self) -> &str {
        "team_add"
    }

    fn declaration(&self) -> Declaration {
        Declaration {
            name: "team_add".into(),
            description: format!("Add a member to your team: an agent on your model, with your tools, that works on what you give it and reports back to you when it finishes (its report comes to you as a message). Members talk in the team's room (team_send, team_read). A team has at most {TEAM_MAX} agents, you included. Once you have members you manage: you give work away rather than doing it yourself."),
            parameters: json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string", "description": "Its name: lowercase letters, digits and hyphens, beginning with a letter."},
                    "role": {"type": "string", "description": "Its role, in a few words (e.g. \"writes the tests\")."},
                    "prompt": {"type": "string", "description": "Its work, complete and self-contained."},
                    "goal": {"type": "string", "description": "The team's goal, in one line: needed with the first member."}
                },
                "required": ["name", "role", "prompt"]
            }),
        }
    }

    fn display(&self, input: &Value) -> String {
        format!(
            "👥 team_add: {} — {}",
            field(input, "name"),
            field(input, "role")
        )
    }

    fn run<'a>(&'a self, input: Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let (team, caller) = self.seat.resolve(ctx);
            if let Some(unavailable) = team.unavailable() {
                return ToolOutput::failed(unavailable);
            }
            let name = field(&input, "name").trim().to_owned();
            let role = field(&input, "role").trim().to_owned();
            let prompt = field(&input, "prompt").trim().to_owned();
            let goal = field(&input, "goal").trim().to_owned();
            let max = team.max.to_string();
            let (goal, names) = {
                let mut state = lock(&team.state);
                if name == "all" {
                    return ToolOutput::failed(texts::ALL_NAME);
                }
                if name == LEAD || state.members.iter().any(|m| m.name == name) {
                    return ToolOutput::failed(fill(texts::TAKEN, &[("name", &name)]));
                }
                if !valid_name(&name) {
                    return ToolOutput::failed(fill(texts::BAD_NAME, &[("name", &name)]));
                }
                if state.goal.is_none() {
                    if goal.is_empty() {
                        return ToolOutput::failed(texts::NO_GOAL);
                    }
                    state.goal = Some(goal.lines().next().unwrap_or_default().to_owned());
                }
                if 1 + state.members.len() >= team.max {
                    return ToolOutput::failed(fill(texts::FULL, &[("max", &max)]));
                }
                (state.goal.clone().unwrap_or_default(), Team::names(&state))
            };
            let seat = MemberSeat {
                team: team.clone(),
                name: name.clone(),
            };
            let runtime = match (self.start)(seat) {
                Ok(runtime) => Arc::new(runtime),
                Err(reason) => {
                    return ToolOutput::failed(format!("[team_add: {name} cannot start: {reason}]"))
                }
            };
            let session = format!("team-{}-{name}", team.lead_session);
            // Members work in the lead's task folder.
            runtime.set_folder(&session, ctx.cwd.clone());
            let stop = CancellationToken::new();
            let slot = team.capacity.as_ref().and_then(Capacity::try_take);
            let waiting = team.capacity.is_some() && slot.is_none();
            let first = format!(
                "You are {name}, a member of a team (the team so far: {names}, {name}). The team's goal: {goal}\nYour role: {role}. {caller} added you and gives you this work:\n{prompt}\n\nWhen you are done, answer with your report: it goes to {caller}. Talk to the team with team_send and read its room with team_read."
            );
            let size = {
                let mut state = lock(&team.state);
                state.members.push(Member {
                    name: name.clone(),
                    role: role.clone(),
                    parent: caller.clone(),
                    model: team.lead_model.clone(),
                    working: !waiting,
                    waiting,
                    output: String::new(),
                    reported: false,
                    last_end: None,
                    runtime: runtime.clone(),
                    session: session.clone(),
                    stop: stop.clone(),
                });
                Team::size(&state)
            };
            tokio::spawn(run_member(
                team.clone(),
                name.clone(),
                caller,
                runtime,
                session,
                first,
                stop,
                slot,
            ));
            let parallel = team
                .capacity
                .as_ref()
                .map_or(String::new(), |c| c.parallel.to_string());
            let template = if waiting {
                texts::ADDED_WAITING
            } else {
                texts::ADDED
            };
            ToolOutput::ok(fill(
                template,
                &[
                    ("parallel", &parallel),
                    ("name", &name),
                    ("role", &role),
                    ("size", &size),
                    ("max", &max),
                ],
            ))
        })
    }
}

pub struct TeamSend {
    seat: Seat,
}

impl Tool for TeamSend {
    fn name(&self) -> &str {
        "team_send"
    }

    fn declaration(&self) -> Declaration {
        Declaration {
            name: "team_send".into(),
            description: "Send a message to an agent of your team by name (`lead` is the lead), or to `all`. It reads it at its next step; an idle member starts working on it.".into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "to": {"type": "string", "description": "A name, `lead`, or `all`."},
                    "message": {"type": "string", "description": "The message."}
                },
                "required": ["to", "message"]
            }),
        }
    }

    fn display(&self, input: &Value) -> String {
        format!("👥 team_send: {}", field(input, "to"))
    }

    fn run<'a>(&'a self, input: Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let (team, caller) = self.seat.resolve(ctx);
            if let Some(unavailable) = team.unavailable() {
                return ToolOutput::failed(unavailable);
            }
            let to = field(&input, "to").trim().to_owned();
            let message = field(&input, "message").trim().to_owned();
            {
                let state = lock(&team.state);
                if state.members.is_empty() && caller == LEAD {
                    return ToolOutput::failed(texts::NOBODY);
                }
                if to == caller {
                    return ToolOutput::failed(texts::SELF);
                }
                let known = to == "all" || to == LEAD || state.members.iter().any(|m| m.name == to);
                if !known {
                    return ToolOutput::failed(fill(
                        texts::UNKNOWN,
                        &[("name", &to), ("names", &Team::names(&state))],
                    ));
                }
            }
            team.say(&caller, &to, &message, false);
            ToolOutput::ok(fill(texts::SENT, &[("to", &to)]))
        })
    }
}

pub struct TeamStop {
    seat: Seat,
}

impl Tool for TeamStop {
    fn name(&self) -> &str {
        "team_stop"
    }

    fn declaration(&self) -> Declaration {
        Declaration {
            name: "team_stop".into(),
            description: "Stop a member you lead (directly or through your members), and the members under it: they leave the team.".into(),
            parameters: json!({
                "type": "object",
                "properties": {"name": {"type": "string", "description": "The member's name."}},
                "required": ["name"]
            }),
        }
    }

    fn display(&self, input: &Value) -> String {
        format!("👥 team_stop: {}", field(input, "name"))
    }

    fn run<'a>(&'a self, input: Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let (team, caller) = self.seat.resolve(ctx);
            if let Some(unavailable) = team.unavailable() {
                return ToolOutput::failed(unavailable);
            }
            let name = field(&input, "name").trim().to_owned();
            let mut state = lock(&team.state);
            if !state.members.iter().any(|m| m.parent == caller) {
                return ToolOutput::failed(texts::NOBODY_TO_STOP);
            }
            if !state.members.iter().any(|m| m.name == name) {
                return ToolOutput::failed(fill(
                    texts::UNKNOWN,
                    &[("name", &name), ("names", &Team::names(&state))],
                ));
            }
            if !Team::is_under(&state, &name, &caller) {
                return ToolOutput::failed(fill(texts::NOT_YOURS, &[("name", &name)]));
            }
            // The member and everyone under it, in tree order.
            let gone: Vec<String> = Team::tree(&state)
                .iter()
                .filter_map(|(_, m)| *m)
                .filter(|m| m.name == name || Team::is_under(&state, &m.name, &name))
                .map(|m| m.name.clone())
                .collect();
            for member in state.members.iter().filter(|m| gone.contains(&m.name)) {
                member.stop.cancel();
            }
            state.members.retain(|m| !gone.contains(&m.name));
            let size = Team::size(&state);
            ToolOutput::ok(fill(
                texts::STOPPED,
                &[
                    ("names", &gone.join(", ")),
                    ("size", &size),
                    ("max", &team.max.to_string()),
                ],
            ))
        })
    }
}

pub struct TeamRead {
    seat: Seat,
}

impl Tool for TeamRead {
    fn name(&self) -> &str {
        "team_read"
    }

    fn declaration(&self) -> Declaration {
        Declaration {
            name: "team_read".into(),
            description: "Read your team: who is on it and how each is doing, then the room's messages you may see since message #since.".into(),
            parameters: json!({
                "type": "object",
                "properties": {"since": {"type": "integer", "description": "Show messages after this number (default 0: from the start)."}}
            }),
        }
    }

    fn display(&self, _input: &Value) -> String {
        "👥 team_read".into()
    }

    fn run<'a>(&'a self, input: Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let (team, caller) = self.seat.resolve(ctx);
            if let Some(unavailable) = team.unavailable() {
                return ToolOutput::failed(unavailable);
            }
            let since = input.get("since").and_then(Value::as_u64).unwrap_or(0) as usize;
            ToolOutput::ok(team.read(&caller, since))
        })
    }
}

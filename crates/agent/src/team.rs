//! Teams (agent-loop.json `team`): the person's agent leads, adds members (`team_add`) — Cairn
//! agents on the same model, run in-process — who may add their own; everyone talks in the
//! team's room (`team_send`, `team_read`), a member's last answer is its report to whoever added
//! it, and `team_stop` ends members under the caller. An agent with members is a manager: it
//! gives work away rather than doing it (its writing and executing calls are refused). Every text
//! is the spec's, word for word.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use cairn_tools::{
    field, CancellationToken, Declaration, Jobs, Tool, ToolContext, ToolFuture, ToolOutput,
};
use serde_json::{json, Value};

use cairn_protocol::{TaskTeam, TeamMember, TeamMessage};

use crate::{Capacity, Event, Op, Runtime, Slot};

/// The agents a team may have, the lead included (`team.agents.max`).
pub const TEAM_MAX: usize = 4;
/// Messages team_read shows at most (`team.read_max`).
const READ_MAX: usize = 50;
const LEAD: &str = "lead";
/// Of a member's stream, how much the workbench can read (the end of it).
const OUTPUT_KEPT: usize = 8 * 1024;

/// `team.texts`, `team.read`, `team.marks`.
pub mod texts {
    pub const ADDED: &str = "Added {{name}} ({{role}}): it is working. Its report comes to you when it finishes. The team is {{size}} of {{max}} agents.";
    pub const ADDED_WAITING: &str = "Added {{name}} ({{role}}): it waits for a free slot — the model serves {{parallel}} requests at once and all are busy — and starts when one frees. Its report comes to you when it finishes. The team is {{size}} of {{max}} agents.";
    pub const ONE_REQUEST: &str =
        "This model serves one request at a time now, so there is no team. Do the work yourself.";
    pub const WAITING: &str = "waiting for a slot";
    pub const SENT: &str = "Sent to {{to}}.";
    pub const STOPPED: &str = "Stopped {{names}}. The team is {{size}} of {{max}} agents.";
    pub const MANAGER: &str = "You lead a team: give this to a member (team_add or team_send).";
    pub const FULL: &str = "The team is full: it has as many agents as the person allows ({{max}}). Give the work to a member already on it (team_send), or stop one (team_stop) first.";
    pub const BAD_NAME: &str = "{{name}} cannot be a name: use lowercase letters, digits and hyphens, beginning with a letter, at most 32 characters.";
    pub const ALL_NAME: &str = "all addresses the whole team; it cannot be a name.";
    pub const TAKEN: &str =
        "There is already an agent called {{name}} in this team. Choose another name.";
    pub const NO_GOAL: &str = "Say the team's goal in `goal`, in one line, with your first member: every member is told it.";
    pub const UNKNOWN: &str = "No agent called {{name}} in this team. The team: {{names}}.";
    pub const SELF: &str = "That is you: send it to someone else.";
    pub const NOBODY: &str = "Nobody else is on the team yet: add a member with team_add.";
    pub const NOT_YOURS: &str = "{{name}} is not under you: you can stop only the members you lead, directly or through your members.";
    pub const NOBODY_TO_STOP: &str = "No member is under you: there is nobody to stop.";
    pub const NO_REPORT: &str = "(no report)";
    pub const ENDED: &str = "[ended: {{reason}}]";
    pub const ONE_AGENT: &str =
        "The person allows one agent in this chat: there is no team. Do the work yourself.";
    pub const TREE: &str = "Team ({{size}} of {{max}} agents):";
    pub const AGENT: &str = "{{indent}}- {{name}} — {{role}} · {{state}} · {{model}} · {{last}}";
    pub const LEAD_ROLE: &str = "leads the team";
    pub const ACTIVE: &str = "active now";
    pub const ROOM: &str = "Room since #{{since}}:";
    pub const MESSAGE: &str = "#{{n}} {{from}} → {{to}}: {{text}}";
    pub const REPORT: &str = "#{{n}} {{from}} → {{to}} (report): {{text}}";
    pub const NONE: &str = "No messages since #{{since}}.";
    pub const MORE: &str = "More after #{{last}}: team_read with since {{last}}.";
    pub const MARK_MESSAGE: &str = "[Team message from {{from}} to {{to}}:]";
    pub const MARK_REPORT: &str = "[Team report from {{from}} to {{to}}:]";
}

use cairn_tools::texts::fill;

/// Starts a member's runtime (its calls refused when they would need approval: nobody can
/// approve inside a team), or says why it cannot start.
pub type MemberStarter = Arc<dyn Fn(MemberSeat) -> Result<Runtime, String> + Send + Sync>;

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

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

impl Teams {
    /// The team `session` leads, made on first use (its reports go to `jobs`).
    fn team(
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
                state: m.state_word().to_owned(),
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

pub struct Team {
    lead_session: String,
    lead_jobs: Arc<Jobs>,
    lead_model: String,
    max: usize,
    /// The model's slots beside the lead's own; `None`: as many as are needed.
    capacity: Option<Capacity>,
    state: Mutex<TeamState>,
}

#[derive(Default)]
struct TeamState {
    goal: Option<String>,
    members: Vec<Member>,
    room: Vec<RoomMessage>,
}

struct Member {
    name: String,
    role: String,
    /// Who added it.
    parent: String,
    model: String,
    working: bool,
    /// Waiting for a free slot of the model.
    waiting: bool,
    /// The end of what it said and did (its words, its calls), for the workbench.
    output: String,
    reported: bool,
    last_end: Option<Instant>,
    runtime: Arc<Runtime>,
    session: String,
    stop: CancellationToken,
}

impl Member {
    fn state_word(&self) -> &'static str {
        if self.waiting {
            texts::WAITING
        } else if self.working {
            "working"
        } else if self.reported {
            "finished"
        } else {
            "idle"
        }
    }
}

struct RoomMessage {
    from: String,
    to: String,
    text: String,
    report: bool,
}

impl Team {
    /// What every team tool answers while there can be no team (agent-loop.json
    /// `team.unavailable`).
    fn unavailable(&self) -> Option<&'static str> {
        if self.max <= 1 {
            Some(texts::ONE_AGENT)
        } else if self.capacity.as_ref().is_some_and(|c| c.parallel <= 1) {
            Some(texts::ONE_REQUEST)
        } else {
            None
        }
    }

    /// Adds to what member `name` has said and done, as its card shows it (the end of it).
    fn log(&self, name: &str, text: &str) {
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

    fn set_waiting(&self, name: &str, waiting: bool) {
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
    fn tree(state: &TeamState) -> Vec<(usize, Option<&Member>)> {
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

    fn names(state: &TeamState) -> String {
        Self::tree(state)
            .iter()
            .map(|(_, m)| m.map_or(LEAD, |m| m.name.as_str()))
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn size(state: &TeamState) -> String {
        (1 + state.members.len()).to_string()
    }

    /// Says `text` from `from` to `to` (a name, or `all`) in the room and to its readers.
    fn say(&self, from: &str, to: &str, text: &str, report: bool) {
        let mark = if report {
            texts::MARK_REPORT
        } else {
            texts::MARK_MESSAGE
        };
        let note = format!("{}\n{text}", fill(mark, &[("from", from), ("to", to)]));
        let mut state = lock(&self.state);
        state.room.push(RoomMessage {
            from: from.to_owned(),
            to: to.to_owned(),
            text: text.to_owned(),
            report,
        });
        let readers: Vec<String> = if to == "all" {
            Self::tree(&state)
                .iter()
                .map(|(_, m)| m.map_or(LEAD, |m| m.name.as_str()).to_owned())
                .filter(|name| name != from)
                .collect()
        } else {
            vec![to.to_owned()]
        };
        for reader in readers {
            if reader == LEAD {
                self.lead_jobs.deliver(&self.lead_session, note.clone());
            } else if let Some(member) = state.members.iter().find(|m| m.name == reader) {
                member.runtime.jobs().deliver(&member.session, note.clone());
            }
        }
    }

    fn set_working(&self, name: &str, working: bool, reported: bool) {
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
    fn is_under(state: &TeamState, name: &str, caller: &str) -> bool {
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

/// Runs member `name`: its first turn on `first`, then a turn for every message that reaches it
/// while it is idle, each turn's answer reported to whoever added it, until it is stopped.
#[allow(clippy::too_many_arguments)]
async fn run_member(
    team: Arc<Team>,
    name: String,
    parent: String,
    runtime: Arc<Runtime>,
    session: String,
    first: String,
    stop: CancellationToken,
    mut slot: Option<Slot>,
) {
    let mut wakeups = runtime.jobs().wakeups();
    let mut op = Some(Op::UserMessage {
        session: session.clone(),
        text: first,
        images: Vec::new(),
    });
    loop {
        if let Some(op) = op.take() {
            // A turn needs a slot of the model: it waits for one when all are busy.
            let held = match (&team.capacity, slot.take()) {
                (Some(capacity), None) => {
                    team.set_waiting(&name, true);
                    let taken = tokio::select! {
                        taken = capacity.take() => taken,
                        _ = stop.cancelled() => None,
                    };
                    team.set_waiting(&name, false);
                    if stop.is_cancelled() {
                        runtime.jobs().end_session(&session);
                        return;
                    }
                    taken
                }
                (_, given) => given,
            };
            team.set_working(&name, true, false);
            let report = follow(&team, &name, &runtime, &session, op, &stop).await;
            let reported = report.is_some();
            team.set_working(&name, false, reported);
            // Idle, it gives its slot back.
            drop(held);
            if let Some(report) = report {
                team.say(&name, &parent, &report, true);
            }
            if stop.is_cancelled() {
                runtime.jobs().end_session(&session);
                return;
            }
        }
        let woken = match wakeups.as_mut() {
            Some(wakeups) => tokio::select! {
                woken = wakeups.recv() => woken.is_some(),
                _ = stop.cancelled() => false,
            },
            None => {
                stop.cancelled().await;
                false
            }
        };
        if !woken {
            runtime.jobs().end_session(&session);
            return;
        }
        if runtime.jobs().has_notes(&session) {
            op = Some(Op::Wake {
                session: session.clone(),
            });
        }
    }
}

/// One turn of a member; its report (`None` when the turn had nothing to do).
async fn follow(
    team: &Team,
    name: &str,
    runtime: &Runtime,
    session: &str,
    op: Op,
    stop: &CancellationToken,
) -> Option<String> {
    let mut events = runtime.submit(op);
    let show = |text: &str| team.log(name, text);
    loop {
        let event = tokio::select! {
            event = events.recv() => event,
            _ = stop.cancelled() => {
                runtime.submit(Op::Stop { session: session.to_owned() });
                return Some(fill(texts::ENDED, &[("reason", "stopped by the team")]));
            }
        };
        match event? {
            Event::TurnComplete { answer, .. } => {
                let answer = answer.trim();
                return Some(if answer.is_empty() {
                    texts::NO_REPORT.to_owned()
                } else {
                    answer.to_owned()
                });
            }
            Event::Stopped { .. } => {
                return Some(fill(texts::ENDED, &[("reason", "stopped")]));
            }
            Event::Error { message, .. } => {
                return Some(fill(texts::ENDED, &[("reason", &message)]));
            }
            Event::Text(text) => show(&text),
            Event::ToolCall { display, .. } => show(&format!("\n{display}\n")),
            Event::ToolProgress { text, .. } => show(&text),
            Event::JobNote { text } => show(&format!("\n{text}\n")),
            _ => {}
        }
    }
}

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

fn valid_name(name: &str) -> bool {
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
            let state = lock(&team.state);
            let max = team.max.to_string();
            let mut out = vec![fill(
                texts::TREE,
                &[("size", &Team::size(&state)), ("max", &max)],
            )];
            for (depth, member) in Team::tree(&state) {
                let indent = "  ".repeat(depth);
                let line = match member {
                    None => fill(
                        texts::AGENT,
                        &[
                            ("indent", &indent),
                            ("name", LEAD),
                            ("role", texts::LEAD_ROLE),
                            ("state", "working"),
                            ("model", &team.lead_model),
                            ("last", texts::ACTIVE),
                        ],
                    ),
                    Some(m) => {
                        let state_word = m.state_word();
                        let last = match (m.working, m.last_end) {
                            (true, _) => texts::ACTIVE.to_owned(),
                            (false, Some(ended)) => ago(ended.elapsed().as_secs()),
                            (false, None) => "not started yet".to_owned(),
                        };
                        fill(
                            texts::AGENT,
                            &[
                                ("indent", &indent),
                                ("name", &m.name),
                                ("role", &m.role),
                                ("state", state_word),
                                ("model", &m.model),
                                ("last", &last),
                            ],
                        )
                    }
                };
                out.push(line);
            }
            let visible: Vec<(usize, &RoomMessage)> = state
                .room
                .iter()
                .enumerate()
                .map(|(i, m)| (i + 1, m))
                .filter(|(n, m)| {
                    *n > since
                        && (caller == LEAD || m.from == caller || m.to == caller || m.to == "all")
                })
                .collect();
            let since_text = since.to_string();
            if visible.is_empty() {
                out.push(fill(texts::NONE, &[("since", &since_text)]));
            } else {
                out.push(fill(texts::ROOM, &[("since", &since_text)]));
                for (n, message) in visible.iter().take(READ_MAX) {
                    let text = message.text.lines().collect::<Vec<_>>().join("\n  ");
                    let template = if message.report {
                        texts::REPORT
                    } else {
                        texts::MESSAGE
                    };
                    out.push(fill(
                        template,
                        &[
                            ("n", &n.to_string()),
                            ("from", &message.from),
                            ("to", &message.to),
                            ("text", &text),
                        ],
                    ));
                }
                if visible.len() > READ_MAX {
                    let last = visible[READ_MAX - 1].0.to_string();
                    out.push(fill(texts::MORE, &[("last", &last)]));
                }
            }
            ToolOutput::ok(out.join("\n"))
        })
    }
}

/// "5s ago", "1m 05s ago", "2h 03m ago", as jobs write durations.
fn ago(seconds: u64) -> String {
    match seconds {
        s if s < 60 => format!("{s}s ago"),
        s if s < 3600 => format!("{}m {:02}s ago", s / 60, s % 60),
        s => format!("{}h {:02}m ago", s / 3600, (s % 3600) / 60),
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

/// Whether a bash command only reads (what the default rules allow in manual mode): each part of
/// a pipeline or list starts with a reading command, and nothing is written to a file.
pub fn reading_command(command: &str) -> bool {
    const READERS: &[&str] = &[
        "ls", "cat", "head", "tail", "wc", "grep", "rg", "find", "pwd", "echo", "tree", "file",
        "stat", "du", "df", "which", "diff", "sort", "uniq", "less", "git",
    ];
    const GIT_READERS: &[&str] = &[
        "status", "log", "diff", "show", "branch", "blame", "ls-files",
    ];
    if command.contains('>') || command.contains("-delete") || command.contains("-exec") {
        return false;
    }
    command
        .split(['|', ';', '&'])
        .map(str::trim)
        .filter(|part| !part.is_empty())
        .all(|part| {
            let mut words = part.split_whitespace();
            match words.next() {
                Some("git") => words.next().is_some_and(|sub| GIT_READERS.contains(&sub)),
                Some(first) => READERS.contains(&first),
                None => true,
            }
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_durations_and_reading_commands() {
        assert!(valid_name("alice") && valid_name("test-writer-2"));
        assert!(!valid_name("Alice") && !valid_name("2bob") && !valid_name(""));
        assert_eq!(ago(5), "5s ago");
        assert_eq!(ago(65), "1m 05s ago");
        assert!(reading_command("ls -la | grep rs && git status"));
        assert!(!reading_command("cargo build"));
        assert!(!reading_command("cat a > b"));
        assert!(!reading_command("find . -delete"));
    }
}

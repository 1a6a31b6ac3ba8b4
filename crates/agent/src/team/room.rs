//! The team's room and its members' turns: a message said to one agent or to all, a member run
//! turn after turn with each answer reported to whoever added it, and the room as team_read
//! shows it.

use std::sync::Arc;

use cairn_tools::texts::fill;
use cairn_tools::CancellationToken;

use super::registry::{lock, RoomMessage, Team, LEAD};
use super::texts;
use crate::{Event, Op, Runtime, Slot};

/// Messages team_read shows at most (`team.read_max`).
const READ_MAX: usize = 50;

impl Team {
    /// Says `text` from `from` to `to` (a name, or `all`) in the room and to its readers.
    pub(super) fn say(&self, from: &str, to: &str, text: &str, report: bool) {
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

    /// The team as `caller` reads it: who is on it and how each is doing, then the room's
    /// messages it may see after #`since`.
    pub(super) fn read(&self, caller: &str, since: usize) -> String {
        let state = lock(&self.state);
        let max = self.max.to_string();
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
                        ("model", &self.lead_model),
                        ("last", texts::ACTIVE),
                    ],
                ),
                Some(m) => {
                    let state_word = m.state().as_str();
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
        out.join("\n")
    }
}

/// Runs member `name`: its first turn on `first`, then a turn for every message that reaches it
/// while it is idle, each turn's answer reported to whoever added it, until it is stopped.
#[allow(clippy::too_many_arguments)]
pub(super) async fn run_member(
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

/// "5s ago", "1m 05s ago", "2h 03m ago", as jobs write durations.
pub(super) fn ago(seconds: u64) -> String {
    match seconds {
        s if s < 60 => format!("{s}s ago"),
        s if s < 3600 => format!("{}m {:02}s ago", s / 60, s % 60),
        s => format!("{}h {:02}m ago", s / 3600, (s % 3600) / 60),
    }
}

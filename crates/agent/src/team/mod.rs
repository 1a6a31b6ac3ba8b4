//! Teams (agent-loop.json `team`): the person's agent leads, adds members (`team_add`) — Cairn
//! agents on the same model, run in-process — who may add their own; everyone talks in the
//! team's room (`team_send`, `team_read`), a member's last answer is its report to whoever added
//! it, and `team_stop` ends members under the caller. An agent with members is a manager: it
//! gives work away rather than doing it (its writing and executing calls are refused). Every text
//! is the spec's, word for word.

mod registry;
mod room;
pub(crate) mod texts;
mod tools;

pub(crate) use registry::manager_may_not;
pub use registry::{MemberSeat, MemberStarter, Team, Teams, TEAM_MAX};
pub use tools::{team_tools, Seat};

#[cfg(test)]
mod tests {
    use super::room::ago;
    use super::tools::valid_name;

    #[test]
    fn names_and_durations() {
        assert!(valid_name("alice") && valid_name("test-writer-2"));
        assert!(!valid_name("Alice") && !valid_name("2bob") && !valid_name(""));
        assert_eq!(ago(5), "5s ago");
        assert_eq!(ago(65), "1m 05s ago");
    }
}

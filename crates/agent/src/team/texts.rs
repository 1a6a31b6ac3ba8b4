//! Every text of the team tools, word for word as the spec has them (`team.texts`,
//! `team.read`, `team.marks`).

pub const ADDED: &str = "Added {{name}} ({{role}}): it is working. Its report comes to you when it finishes. The team is {{size}} of {{max}} agents.";
pub const ADDED_WAITING: &str = "Added {{name}} ({{role}}): it waits for a free slot — the model serves {{parallel}} requests at once and all are busy — and starts when one frees. Its report comes to you when it finishes. The team is {{size}} of {{max}} agents.";
pub const ONE_REQUEST: &str =
    "This model serves one request at a time now, so there is no team. Do the work yourself.";
pub const SENT: &str = "Sent to {{to}}.";
pub const STOPPED: &str = "Stopped {{names}}. The team is {{size}} of {{max}} agents.";
pub const MANAGER: &str = "You lead a team: give this to a member (team_add or team_send).";
pub const FULL: &str = "The team is full: it has as many agents as the person allows ({{max}}). Give the work to a member already on it (team_send), or stop one (team_stop) first.";
pub const BAD_NAME: &str = "{{name}} cannot be a name: use lowercase letters, digits and hyphens, beginning with a letter, at most 32 characters.";
pub const ALL_NAME: &str = "all addresses the whole team; it cannot be a name.";
pub const TAKEN: &str =
    "There is already an agent called {{name}} in this team. Choose another name.";
pub const NO_GOAL: &str =
    "Say the team's goal in `goal`, in one line, with your first member: every member is told it.";
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

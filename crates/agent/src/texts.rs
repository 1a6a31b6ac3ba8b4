//! Every text the runtime says to the model, in one place (agent-loop.json where it gives them).

/// agent-loop.json `wrap_up.message`; `{{limit}}` names the limit reached.
pub const WRAP_UP: &str = "The {{limit}} for this prompt has been reached and the tools have been withdrawn. Answer now from what you have: what is done, what is not, and what would come next.";

/// Asked after a reply that held only thinking.
pub const NUDGE_THINKING_ONLY: &str =
    "Your last reply held only thinking and no answer. Give your answer now.";

/// Asked after a reply cut off at the output limit.
pub const NUDGE_CUT_OFF: &str =
    "Your last reply was cut off at the output limit. Continue exactly where it stopped.";

/// agent-loop.json `context.env.project`.
pub const ENV_PROJECT: &str = "Project: {{name}} (paths are relative to its root)";

/// agent-loop.json `context.env.started`.
pub const ENV_STARTED: &str = "Started in: {{path}} (relative to the project root)";

/// agent-loop.json `context.note.date`.
pub const NOTE_DATE: &str = "Today is {{date}}.";

/// The limit named in the wrap-up when the step backstop is reached.
pub const STEP_LIMIT: &str = "step limit";

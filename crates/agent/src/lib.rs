//! The agent runtime. [`Runtime::submit`] takes an [`Op`] and returns a stream of [`Event`]s; it
//! knows nothing of Tauri or HTTP. Each turn recalls relevant memories before the request, runs the
//! model step by step with its tools (agent-loop.json: backstop, budgets, wrap-up, nudges,
//! parallel calls, context hygiene), and captures the turn into memory when it ends.

mod ask_tool;
mod capacity;
mod context;
mod error;
mod execute;
mod goal;
mod honesty;
mod prompt;
mod runtime;
mod search_tool;
mod sessions;
mod spent;
mod task_tool;
mod team;
mod texts;
mod tool_need;
mod turn;

pub use ask_tool::{AgentStarter, AskAgent, AskableAgent, ASK_WATCHDOG, MAX_ASK_DEPTH};
pub use capacity::{Capacity, Slot};
pub use context::{cap, result_id, ContextState};
pub use error::{AgentError, FailureKind};
pub use goal::{describe as describe_goal, Goal, GoalCommand, GOAL_HELP};
pub use runtime::{AgentSettings, Budgets, Event, Op, RecalledMemory, Runtime};
pub use search_tool::SearchMemory;
pub use sessions::{
    id_problem as session_id_problem, person_words, title_of, words_of, Session, SessionError,
    SessionHeader, SessionMark, SessionRecall, SessionStore,
};
pub use task_tool::{SubagentStarter, Task, SUBAGENT_STEPS};
pub use team::{team_tools, MemberSeat, MemberStarter, Seat, Team, Teams, TEAM_MAX};
pub use texts::{
    compaction_summary, is_compaction_ack, is_job_note, is_runtime_text, CUT_OFF_ERROR,
    EMPTY_ERROR, NUDGE_CUT_OFF, NUDGE_EMPTY, NUDGE_THINKING_ONLY, WRAP_UP,
};

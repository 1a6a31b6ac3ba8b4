//! Tasks as the workbench and the pet show them: the list, the events of every task, background
//! jobs and teams.

use serde::{Deserialize, Serialize};

use crate::ChatEvent;

/// A task's background job, as its jobs strip shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskJob {
    /// `job1`, `job2`, … (the task's one sequence).
    pub id: String,
    pub command: String,
    pub state: JobState,
    pub exit_code: Option<i32>,
    pub elapsed_ms: u64,
}

wire_enum! {
    /// Where a background job is.
    pub enum JobState {
        Running = "running",
        /// Ended by itself, with `exit_code`.
        Exited = "exited",
        /// Ended by a signal (or its status could not be read).
        Killed = "killed",
        /// Stopped with job_stop or with its task.
        Stopped = "stopped",
        /// A subagent that gave its report.
        Finished = "finished",
        /// A subagent whose run failed.
        Failed = "failed",
    }
}

/// A task's team, as the workbench shows it: who is on it, and its room as a conversation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskTeam {
    /// The members in tree order (the lead is not listed).
    pub members: Vec<TeamMember>,
    /// The room's messages, oldest first.
    pub room: Vec<TeamMessage>,
}

/// A member of a task's team.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TeamMember {
    pub name: String,
    pub role: String,
    /// Who added it (`lead`, or a member's name).
    pub parent: String,
    pub state: TeamMemberState,
    /// The end of its stream: its words and its calls, as they came.
    pub output: String,
}

wire_enum! {
    /// What a team member is doing.
    pub enum TeamMemberState {
        Working = "working",
        /// Added while the model's slots are all busy: it starts when one frees.
        WaitingForSlot = "waiting for a slot",
        /// It gave its report.
        Finished = "finished",
        Idle = "idle",
    }
}

/// A message of a team's room.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TeamMessage {
    pub from: String,
    /// A name, or `all`.
    pub to: String,
    pub text: String,
    /// A member's report to whoever added it.
    pub report: bool,
}

/// One event of one task, as `GET /api/v1/events` streams it: every task's, whoever started it
/// (the workbench, the pet, the local API).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskEvent {
    pub task: String,
    #[serde(flatten)]
    pub event: ChatEvent,
}

/// A task (a stored conversation) as the task list shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskSummary {
    pub session: String,
    pub title: String,
    pub created_at: i64,
    pub updated_at: i64,
    pub archived: bool,
    pub pinned: bool,
    /// The task's standing goal as `/goal` describes it ("Goal (active): …"), if it has one.
    #[serde(default)]
    pub goal: Option<String>,
    /// Where the task works (a full path); empty until it is kept with the task.
    #[serde(default)]
    pub folder: String,
}

/// A change to the task list, pushed to every window and to the local API's event stream as it
/// happens (a turn starts or ends, a task is renamed, pinned, archived, given a goal, moved to
/// another folder, or deleted), so no front end polls for tasks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "change", rename_all = "snake_case")]
pub enum TaskChanged {
    /// The task as it is now; `running`: a turn runs in it.
    Updated { task: TaskSummary, running: bool },
    /// The task was deleted.
    Removed { session: String },
}

impl TaskChanged {
    /// The task it is about.
    pub fn session(&self) -> &str {
        match self {
            Self::Updated { task, .. } => &task.session,
            Self::Removed { session } => session,
        }
    }
}

/// A new task's id, the one format every door mints (the workbench, the pet, the CLI, the local
/// API): `task-`, the time in unix milliseconds, and a random tail, so two tasks made in the
/// same millisecond stay apart. The caller brings the clock and the randomness (the wasm UI and
/// the native doors have different ones).
pub fn task_id(unix_ms: u64, random: u32) -> String {
    format!("task-{unix_ms}-{random:08x}")
}

/// What the pet shows: a badge (tasks running, or finished in the last five minutes), up to six
/// of them, and the task a message typed into the pet continues (`None`: a new one), named so
/// the bubble can say which.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PetState {
    pub badge: usize,
    pub tasks: Vec<PetTask>,
    pub continues: Option<PetTask>,
    /// In how many milliseconds the oldest finished task leaves the badge (then the pet reads
    /// its state again); `None` when no finished task is on it.
    #[serde(default)]
    pub settles_in_ms: Option<u64>,
}

/// A task in the pet's list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PetTask {
    pub session: String,
    pub title: String,
    pub running: bool,
}

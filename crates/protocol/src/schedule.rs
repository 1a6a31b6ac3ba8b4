//! Scheduled tasks as every front end sees them: what runs, when, and how its last run went.

use serde::{Deserialize, Serialize};

/// A task that runs on a schedule: its message is sent to the agent as a new task each time.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Schedule {
    /// Short and stable: `s1`, `s2`…
    pub id: String,
    /// What the person calls it (the message's first words when not named).
    pub name: String,
    /// When it runs, as the person wrote it ("every weekday at 9", "0 9 * * 1-5").
    pub when: String,
    /// The same as a cron expression (minute hour day month weekday), in the person's time zone.
    pub cron: String,
    /// What the agent is asked each time.
    pub message: String,
    /// Where the task works (`None`: the workspace).
    #[serde(default)]
    pub folder: Option<String>,
    #[serde(default)]
    pub paused: bool,
    /// A run missed while the machine slept or Cairn was closed runs once when it is back.
    #[serde(default = "yes")]
    pub catch_up: bool,
    pub created_at: i64,
    /// The last run, or the last occurrence let pass.
    #[serde(default)]
    pub last_run: Option<ScheduleRun>,
}

fn yes() -> bool {
    true
}

/// One occurrence of a schedule: run (as task `task`), or let pass (`skipped` says why).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScheduleRun {
    /// The occurrence (unix ms), and when it was acted on.
    pub due_at: i64,
    pub at: i64,
    /// The task the run is (its session id); `None` when skipped.
    #[serde(default)]
    pub task: Option<String>,
    /// It ran late: the machine slept or Cairn was closed at its time.
    #[serde(default)]
    pub missed: bool,
    #[serde(default)]
    pub skipped: Option<String>,
}

/// A schedule as the Schedules page shows it: with its next run and its cron in words.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScheduleView {
    pub schedule: Schedule,
    /// The next run (unix ms); `None` when paused or never.
    pub next: Option<i64>,
    /// The cron expression in words ("At 09:00, on Monday … Friday").
    pub described: String,
}

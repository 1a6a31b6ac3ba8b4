//! Cairn's scheduled tasks: when each runs, written as cron or in plain English ("every weekday
//! at 9"); whether a run is due now, in the person's time zone, or was missed while the machine
//! slept; and the file they are kept in. Running them is the app's and `cairn serve`'s (see
//! `cairn-api`).

mod due;
mod error;
mod store;
mod when;

pub use cairn_protocol::schedule::{Schedule, ScheduleRun};
pub use due::{due, next_run, Due, GRACE_MS};
pub use error::ScheduleError;
pub use store::{NewSchedule, ScheduleEdit, Schedules};
pub use when::{describe, to_cron};

/// The person's time zone, as the system says it.
pub use chrono::Local;

/// `ms` as a moment in the person's time zone, e.g. `Tue 2026-12-08 09:00`.
pub fn local_time(ms: i64) -> String {
    use chrono::TimeZone as _;
    Local.timestamp_millis_opt(ms).earliest().map_or_else(
        || ms.to_string(),
        |t| t.format("%a %Y-%m-%d %H:%M").to_string(),
    )
}

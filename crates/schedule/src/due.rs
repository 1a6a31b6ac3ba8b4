//! Whether a schedule runs now: its next occurrence after the last one acted on, in a time zone;
//! a run late by more than [`GRACE_MS`] was missed (the machine slept, Cairn was closed), and
//! runs once on return when the schedule catches up, or is let pass.

use std::str::FromStr;

use chrono::{DateTime, TimeZone};
use croner::Cron;

use crate::{Schedule, ScheduleError};

/// A run this late is a missed one.
pub const GRACE_MS: i64 = 5 * 60 * 1000;

/// What a schedule does now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Due {
    /// Paused: nothing runs.
    Paused,
    /// Its next run (unix ms), when there is one.
    NotYet { next: Option<i64> },
    /// Runs now, for the occurrence `due_at` (the latest that has come: several missed run once).
    Run { due_at: i64, missed: bool },
    /// Missed, and it does not catch up: the occurrence is let pass.
    Pass { due_at: i64 },
}

/// `ms` in `tz`, to the whole second (occurrences fall on whole minutes).
fn at<Tz: TimeZone>(ms: i64, tz: &Tz) -> Result<DateTime<Tz>, ScheduleError> {
    tz.timestamp_millis_opt(ms.div_euclid(1000) * 1000)
        .earliest()
        .ok_or_else(|| ScheduleError::When(format!("{ms} is not a time")))
}

fn cron(expression: &str) -> Result<Cron, ScheduleError> {
    Cron::from_str(expression).map_err(|e| ScheduleError::When(format!("{expression:?}: {e}")))
}

/// The first occurrence of `expression` strictly after `after_ms`, in `tz`.
pub fn next_run<Tz: TimeZone>(
    expression: &str,
    after_ms: i64,
    tz: &Tz,
) -> Result<Option<i64>, ScheduleError> {
    Ok(cron(expression)?
        .find_next_occurrence(&at(after_ms, tz)?, false)
        .ok()
        .map(|next| next.timestamp_millis()))
}

/// What `schedule` does at `now_ms` in `tz`.
pub fn due<Tz: TimeZone>(schedule: &Schedule, now_ms: i64, tz: &Tz) -> Result<Due, ScheduleError> {
    if schedule.paused {
        return Ok(Due::Paused);
    }
    let from = schedule
        .last_run
        .as_ref()
        .map_or(schedule.created_at, |run| run.due_at);
    let Some(next) = next_run(&schedule.cron, from, tz)? else {
        return Ok(Due::NotYet { next: None });
    };
    if next > now_ms {
        return Ok(Due::NotYet { next: Some(next) });
    }
    let latest = cron(&schedule.cron)?
        .find_previous_occurrence(&at(now_ms, tz)?, true)
        .map_or(next, |previous| previous.timestamp_millis().max(next));
    let missed = now_ms - latest > GRACE_MS;
    Ok(if missed && !schedule.catch_up {
        Due::Pass { due_at: latest }
    } else {
        Due::Run {
            due_at: latest,
            missed,
        }
    })
}

#[cfg(test)]
mod tests {
    use chrono::{FixedOffset, Utc};

    use super::*;
    use crate::ScheduleRun;

    const MINUTE: i64 = 60_000;
    /// Monday 2026-12-07 08:00 UTC.
    const MONDAY_8: i64 = 1_796_630_400_000;

    fn weekdays_at_9(catch_up: bool) -> Schedule {
        Schedule {
            id: "s1".into(),
            name: "standup notes".into(),
            when: "every weekday at 9".into(),
            cron: "0 9 * * 1-5".into(),
            message: "Summarise what changed in ~/notes".into(),
            folder: None,
            paused: false,
            catch_up,
            created_at: MONDAY_8,
            last_run: None,
        }
    }

    fn ran(mut schedule: Schedule, due_at: i64) -> Schedule {
        schedule.last_run = Some(ScheduleRun {
            due_at,
            at: due_at,
            task: Some("t".into()),
            missed: false,
            skipped: None,
        });
        schedule
    }

    #[test]
    fn a_schedule_runs_at_its_time_once() -> Result<(), ScheduleError> {
        let s = weekdays_at_9(true);
        let nine = MONDAY_8 + 60 * MINUTE;
        assert_eq!(
            due(&s, nine - MINUTE, &Utc)?,
            Due::NotYet { next: Some(nine) }
        );
        assert_eq!(
            due(&s, nine + 10_000, &Utc)?,
            Due::Run {
                due_at: nine,
                missed: false
            }
        );
        // Once run, the next is Tuesday's.
        let s = ran(s, nine);
        assert_eq!(
            due(&s, nine + 30 * MINUTE, &Utc)?,
            Due::NotYet {
                next: Some(nine + 24 * 60 * MINUTE)
            }
        );
        Ok(())
    }

    #[test]
    fn runs_missed_while_asleep_run_once_on_wake_or_pass() -> Result<(), ScheduleError> {
        // Asleep from Monday 8:00 to Wednesday 11:00: Monday's, Tuesday's and Wednesday's runs
        // were missed; one run, for Wednesday's.
        let wednesday_9 = MONDAY_8 + (2 * 24 * 60 + 60) * MINUTE;
        let wake = wednesday_9 + 2 * 60 * MINUTE;
        assert_eq!(
            due(&weekdays_at_9(true), wake, &Utc)?,
            Due::Run {
                due_at: wednesday_9,
                missed: true
            }
        );
        assert_eq!(
            due(&weekdays_at_9(false), wake, &Utc)?,
            Due::Pass {
                due_at: wednesday_9
            }
        );
        // Not on the weekend.
        let saturday_10 = MONDAY_8 + (5 * 24 * 60 + 120) * MINUTE;
        let friday_9 = MONDAY_8 + (4 * 24 * 60 + 60) * MINUTE;
        let s = ran(weekdays_at_9(true), friday_9);
        assert_eq!(
            due(&s, saturday_10, &Utc)?,
            Due::NotYet {
                next: Some(friday_9 + 3 * 24 * 60 * MINUTE)
            }
        );
        Ok(())
    }

    #[test]
    fn the_time_is_the_persons_own() -> Result<(), ScheduleError> {
        // 9:00 in UTC+2 is 7:00 UTC, an hour before Monday 8:00 UTC: Tuesday's is next.
        let tz = FixedOffset::east_opt(2 * 3600).ok_or_else(|| ScheduleError::When("tz".into()))?;
        let s = weekdays_at_9(true);
        assert_eq!(
            due(&s, MONDAY_8, &tz)?,
            Due::NotYet {
                next: Some(MONDAY_8 - 60 * MINUTE + 24 * 60 * MINUTE)
            }
        );
        let mut paused = s;
        paused.paused = true;
        assert_eq!(due(&paused, MONDAY_8, &tz)?, Due::Paused);
        Ok(())
    }
}

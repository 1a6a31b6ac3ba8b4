//! Scheduled tasks, run by the app and `cairn serve`: every few seconds each schedule that is due
//! starts a task with its message (a task like any other, in the task list), never while its
//! previous run still goes; a run missed while the machine slept or Cairn was closed runs once
//! when it is back (or is let pass, as the schedule says). What was done with each occurrence
//! is kept with the schedule.

use std::sync::Arc;
use std::time::Duration;

use cairn_protocol::schedule::{Schedule, ScheduleRun, ScheduleView};
use cairn_schedule::{due, Due, Schedules};

use crate::background::{self, Background};
use crate::chat::Chat;
use crate::{Cairn, Error};

/// How often the schedules are looked at.
const LOOK_EVERY: Duration = Duration::from_secs(15);

impl Cairn {
    /// The schedules of this data home.
    pub fn schedules(&self) -> Schedules {
        Schedules::at(self.home.data_dir().join("schedules.json"))
    }

    /// Every schedule with its next run in this machine's time zone and its cron in words.
    pub fn schedule_views(&self) -> Result<Vec<ScheduleView>, Error> {
        let now = cairn_memory::now_ms();
        Ok(self
            .schedules()
            .list()?
            .into_iter()
            .map(|schedule| ScheduleView {
                next: match due(&schedule, now, &cairn_schedule::Local) {
                    Ok(Due::NotYet { next }) => next,
                    Ok(Due::Run { .. } | Due::Pass { .. }) => Some(now),
                    Ok(Due::Paused) | Err(_) => None,
                },
                described: cairn_schedule::describe(&schedule.cron),
                schedule,
            })
            .collect())
    }
}

impl Chat {
    /// Runs the schedules until the handle is dropped — in one process per data home: the app
    /// and `cairn serve` may both run, and a schedule runs once. The one that holds the runner's
    /// lock runs them; another takes over when it quits.
    pub fn run_schedules(self: &Arc<Self>) -> Background {
        self.run_schedules_every(LOOK_EVERY)
    }

    /// [`Chat::run_schedules`], looking every `period` (tests look often). Call it within the
    /// async runtime the tasks are to run on.
    pub fn run_schedules_every(self: &Arc<Self>, period: Duration) -> Background {
        let chat = self.clone();
        let runtime = tokio::runtime::Handle::try_current();
        if let Err(e) = &runtime {
            tracing::error!("schedules cannot run here: {e}");
        }
        let mut runner =
            background::OneRunner::new(self.cairn().home().data_dir().join("schedules.runner"));
        let mut said: Option<String> = None;
        background::every(period, move || {
            if !runner.here() {
                return;
            }
            // A run is a task, which runs on the async runtime.
            let Ok(runtime) = &runtime else {
                return;
            };
            let _entered = runtime.enter();
            match chat.run_due_schedules(cairn_memory::now_ms(), &cairn_schedule::Local) {
                Ok(_) => said = None,
                // A damaged file is said once, not every few seconds.
                Err(e) => {
                    let message = e.to_string();
                    if said.as_deref() != Some(message.as_str()) {
                        tracing::warn!("schedules do not run: {message}");
                        said = Some(message);
                    }
                }
            }
        })
    }

    /// Acts on every schedule due at `now` in `tz`: the schedules that started a task, with it.
    pub fn run_due_schedules<Tz: chrono::TimeZone>(
        &self,
        now: i64,
        tz: &Tz,
    ) -> Result<Vec<(String, String)>, Error> {
        let store = self.cairn().schedules();
        let mut started = Vec::new();
        for schedule in store.list()? {
            let run = |due_at, missed, task: Option<String>, skipped: Option<String>| ScheduleRun {
                due_at,
                at: now,
                task,
                missed,
                skipped,
            };
            let record = match due(&schedule, now, tz)? {
                Due::Paused | Due::NotYet { .. } => continue,
                Due::Pass { due_at } => run(
                    due_at,
                    true,
                    None,
                    Some("missed while Cairn was not running; it does not catch up".into()),
                ),
                Due::Run { due_at, missed } => match self.previous_run_going(&schedule) {
                    Some(task) => run(
                        due_at,
                        missed,
                        None,
                        Some(format!("the run before (task {task}) was still going")),
                    ),
                    None => match self.start_scheduled(&schedule) {
                        Ok(task) => {
                            tracing::info!(
                                "schedule {} ({}) started task {task}",
                                schedule.id,
                                schedule.name
                            );
                            started.push((schedule.id.clone(), task.clone()));
                            run(due_at, missed, Some(task), None)
                        }
                        Err(e) => run(
                            due_at,
                            missed,
                            None,
                            Some(format!("it could not start: {e}")),
                        ),
                    },
                },
            };
            store.record(&schedule.id, record)?;
        }
        Ok(started)
    }

    /// Runs schedule `id` now, whatever its time; the task it started.
    pub fn run_schedule_now(&self, id: &str) -> Result<String, Error> {
        let schedule = self
            .cairn()
            .schedules()
            .list()?
            .into_iter()
            .find(|s| s.id == id)
            .ok_or_else(|| Error::NotFound(format!("no schedule {id}")))?;
        if let Some(task) = self.previous_run_going(&schedule) {
            return Err(Error::Busy(format!(
                "schedule {id}'s last run (task {task}) is still going"
            )));
        }
        self.start_scheduled(&schedule)
    }

    /// The task of the schedule's last run, when it still runs.
    fn previous_run_going(&self, schedule: &Schedule) -> Option<String> {
        let task = schedule.last_run.as_ref()?.task.clone()?;
        self.running().contains(&task).then_some(task)
    }

    fn start_scheduled(&self, schedule: &Schedule) -> Result<String, Error> {
        self.new_task(&schedule.message, schedule.folder.as_deref())
    }
}

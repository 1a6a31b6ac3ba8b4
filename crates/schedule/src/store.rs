//! The schedules file (`data/schedules.json`): read whole, changed under a lock (the app, `cairn
//! serve` and the CLI may all write it), written atomically. A damaged file is refused, never
//! overwritten.

use std::fs::File;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::{to_cron, Schedule, ScheduleError, ScheduleRun};

/// The schedules of one data home.
pub struct Schedules {
    path: PathBuf,
}

#[derive(Default, Serialize, Deserialize)]
struct File_ {
    schedules: Vec<Schedule>,
}

/// What an edit changes (`None`: as it was).
#[derive(Debug, Clone, Default)]
pub struct ScheduleEdit {
    pub when: Option<String>,
    pub message: Option<String>,
    pub name: Option<String>,
}

/// What `cairn schedule add`, the app and the agent give for a new schedule.
#[derive(Debug, Clone, Default)]
pub struct NewSchedule {
    pub when: String,
    pub message: String,
    pub name: Option<String>,
    pub folder: Option<String>,
    pub catch_up: bool,
}

impl Schedules {
    pub fn at(path: impl Into<PathBuf>) -> Self {
        Self { path: path.into() }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Every schedule, in the order they were added (none when there is no file yet).
    pub fn list(&self) -> Result<Vec<Schedule>, ScheduleError> {
        Ok(self.read()?.schedules)
    }

    fn read(&self) -> Result<File_, ScheduleError> {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(File_::default()),
            Err(source) => {
                return Err(ScheduleError::Io {
                    path: self.path.clone(),
                    source,
                })
            }
        };
        serde_json::from_str(&text).map_err(|e| ScheduleError::Corrupt {
            path: self.path.clone(),
            message: e.to_string(),
        })
    }

    /// Changes the schedules under the file's lock and writes them back; what `change` answered.
    pub fn update<T>(
        &self,
        change: impl FnOnce(&mut Vec<Schedule>) -> Result<T, ScheduleError>,
    ) -> Result<T, ScheduleError> {
        let io = |path: &Path, source| ScheduleError::Io {
            path: path.to_owned(),
            source,
        };
        let lock_path = self.path.with_extension("lock");
        if let Some(dir) = lock_path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
        }
        let lock = File::create(&lock_path).map_err(|e| io(&lock_path, e))?;
        lock.lock().map_err(|e| io(&lock_path, e))?;
        let mut file = self.read()?;
        let answer = change(&mut file.schedules)?;
        let text = serde_json::to_string_pretty(&file).map_err(|e| ScheduleError::Corrupt {
            path: self.path.clone(),
            message: e.to_string(),
        })?;
        cairn_config::write_private_atomically(&self.path, text.as_bytes())?;
        Ok(answer)
    }

    /// Adds a schedule made at `now`; it, with its id.
    pub fn add(&self, new: NewSchedule, now: i64) -> Result<Schedule, ScheduleError> {
        let message = new.message.trim();
        if message.is_empty() {
            return Err(ScheduleError::When(
                "say what the task is: the message the agent is sent each time".into(),
            ));
        }
        let cron = to_cron(&new.when)?;
        let name = new
            .name
            .map(|n| n.trim().to_owned())
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| {
                message
                    .split_whitespace()
                    .take(6)
                    .collect::<Vec<_>>()
                    .join(" ")
            });
        self.update(|all| {
            let number = all
                .iter()
                .filter_map(|s| s.id.strip_prefix('s')?.parse::<u32>().ok())
                .max()
                .unwrap_or(0)
                + 1;
            let schedule = Schedule {
                id: format!("s{number}"),
                name,
                when: new.when.trim().to_owned(),
                cron,
                message: message.to_owned(),
                folder: new.folder,
                paused: false,
                catch_up: new.catch_up,
                created_at: now,
                last_run: None,
            };
            all.push(schedule.clone());
            Ok(schedule)
        })
    }

    /// Changes schedule `id`'s when, message or name. A new "when" counts from `now`: nothing
    /// it would have run before is run.
    pub fn edit(&self, id: &str, edit: ScheduleEdit, now: i64) -> Result<Schedule, ScheduleError> {
        let cron = edit.when.as_deref().map(to_cron).transpose()?;
        let message = edit.message.map(|m| m.trim().to_owned());
        if message.as_deref() == Some("") {
            return Err(ScheduleError::When(
                "say what the task is: the message the agent is sent each time".into(),
            ));
        }
        self.update(|all| {
            let schedule = all
                .iter_mut()
                .find(|s| s.id == id)
                .ok_or_else(|| ScheduleError::NotFound(id.to_owned()))?;
            if let (Some(when), Some(cron)) = (edit.when, cron) {
                if cron != schedule.cron {
                    schedule.created_at = now;
                    schedule.last_run = None;
                }
                schedule.when = when.trim().to_owned();
                schedule.cron = cron;
            }
            if let Some(message) = message {
                schedule.message = message;
            }
            if let Some(name) = edit
                .name
                .map(|n| n.trim().to_owned())
                .filter(|n| !n.is_empty())
            {
                schedule.name = name;
            }
            Ok(schedule.clone())
        })
    }

    /// Removes schedule `id`; whether there was one.
    pub fn remove(&self, id: &str) -> Result<bool, ScheduleError> {
        self.update(|all| {
            let before = all.len();
            all.retain(|s| s.id != id);
            Ok(all.len() < before)
        })
    }

    /// Pauses or resumes schedule `id`. Resumed, it runs from now on: what it missed while
    /// paused is not run.
    pub fn pause(&self, id: &str, paused: bool, now: i64) -> Result<Schedule, ScheduleError> {
        self.update(|all| {
            let schedule = all
                .iter_mut()
                .find(|s| s.id == id)
                .ok_or_else(|| ScheduleError::NotFound(id.to_owned()))?;
            if schedule.paused && !paused {
                schedule.created_at = now;
                schedule.last_run = None;
            }
            schedule.paused = paused;
            Ok(schedule.clone())
        })
    }

    /// Records what was done with an occurrence of schedule `id`.
    pub fn record(&self, id: &str, run: ScheduleRun) -> Result<(), ScheduleError> {
        self.update(|all| {
            if let Some(schedule) = all.iter_mut().find(|s| s.id == id) {
                schedule.last_run = Some(run);
            }
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn new(when: &str, message: &str) -> NewSchedule {
        NewSchedule {
            when: when.into(),
            message: message.into(),
            catch_up: true,
            ..NewSchedule::default()
        }
    }

    #[test]
    fn schedules_are_added_listed_paused_and_removed() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let store = Schedules::at(dir.path().join("data/schedules.json"));
        assert!(store.list()?.is_empty());
        let first = store.add(
            new(
                "every weekday at 9",
                "Summarise what changed in ~/notes today",
            ),
            5,
        )?;
        assert_eq!(
            (first.id.as_str(), first.cron.as_str()),
            ("s1", "0 9 * * 1-5")
        );
        assert_eq!(first.name, "Summarise what changed in ~/notes today");
        let second = store.add(new("every 15 minutes", "Check the build"), 6)?;
        assert_eq!(second.id, "s2");
        assert!(store.add(new("whenever", "x"), 7).is_err());
        assert!(store.add(new("every hour", "  "), 7).is_err());
        assert!(store.pause("s1", true, 8)?.paused);
        let resumed = store.pause("s1", false, 9)?;
        assert!(!resumed.paused && resumed.created_at == 9);
        assert!(store.remove("s1")?);
        assert!(!store.remove("s1")?);
        assert_eq!(store.add(new("every hour", "Again"), 10)?.id, "s3");
        assert!(matches!(
            store.pause("s9", true, 1),
            Err(ScheduleError::NotFound(_))
        ));
        Ok(())
    }

    #[test]
    fn a_damaged_file_is_refused_and_kept() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("schedules.json");
        std::fs::write(&path, "{\"schedules\": [ {\"id\": ")?;
        let store = Schedules::at(&path);
        let error = store.list().err().ok_or("read")?;
        assert!(
            error.to_string().contains("not a schedules file"),
            "{error}"
        );
        assert!(store.add(new("every hour", "x"), 1).is_err());
        assert_eq!(
            std::fs::read_to_string(&path)?,
            "{\"schedules\": [ {\"id\": "
        );
        Ok(())
    }
}

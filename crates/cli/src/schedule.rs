//! `cairn schedule …`: tasks that run on a schedule — listed with their next and last runs,
//! added ("every weekday at 9" or cron), changed, paused, resumed, removed, and run now. The app and `cairn
//! serve` run them; the file they are kept in is changed here directly, under its lock.

use std::fmt::Write;

use anyhow::bail;
use cairn_api::schedule::{
    describe, due, local_time, now_ms, Due, Local, NewSchedule, ScheduleEdit,
};
use cairn_api::Cairn;
use cairn_protocol::schedule::Schedule;
use clap::Subcommand;

use crate::memory::Backend;

#[derive(Debug, Subcommand)]
pub enum ScheduleCommand {
    /// The schedules, with their next and last runs.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Add a task that runs on a schedule: WHEN as "every weekday at 9", "every monday and
    /// thursday at 14:30", "every 15 minutes", or cron ("0 9 * * 1-5"), in this machine's time zone.
    Add {
        when: String,
        /// What the agent is asked each time.
        message: String,
        #[arg(long)]
        name: Option<String>,
        /// Where the task works (default: where new tasks work).
        #[arg(long)]
        folder: Option<String>,
        /// A run missed while the machine slept or Cairn was closed is let pass (by default it
        /// runs once when Cairn is back).
        #[arg(long)]
        no_catch_up: bool,
    },
    /// Change a schedule's when, message or name (a new when counts from now).
    Edit {
        id: String,
        #[arg(long)]
        when: Option<String>,
        #[arg(long)]
        message: Option<String>,
        #[arg(long)]
        name: Option<String>,
    },
    /// Remove a schedule (its past tasks stay).
    Remove { id: String },
    /// Stop a schedule running until it is resumed.
    Pause { id: String },
    /// Run a paused schedule again, from now on.
    Resume { id: String },
    /// Run a schedule now: as a task of the running app, or else here, in the terminal.
    Run { id: String },
}

pub async fn run(
    cairn: &Cairn,
    command: ScheduleCommand,
) -> anyhow::Result<std::process::ExitCode> {
    let store = cairn.schedules();
    let now = now_ms();
    match command {
        ScheduleCommand::List { json } => {
            let list = store.list()?;
            if json {
                println!("{}", serde_json::to_string_pretty(&list)?);
            } else if list.is_empty() {
                println!(
                    "no schedules: `cairn schedule add \"every weekday at 9\" \"…\"` adds one"
                );
            } else {
                for schedule in &list {
                    print!("{}", schedule_text(schedule, now));
                }
            }
        }
        ScheduleCommand::Add {
            when,
            message,
            name,
            folder,
            no_catch_up,
        } => {
            let folder = folder
                .map(|f| std::path::absolute(&f).map(|p| p.display().to_string()))
                .transpose()?;
            let schedule = store.add(
                NewSchedule {
                    when,
                    message,
                    name,
                    folder,
                    catch_up: !no_catch_up,
                },
                now,
            )?;
            print!("added {}", schedule_text(&schedule, now));
            if cairn.running_api().await.is_none() {
                println!("(schedules run while the app or `cairn serve` runs)");
            }
        }
        ScheduleCommand::Edit {
            id,
            when,
            message,
            name,
        } => {
            let schedule = store.edit(
                &id,
                ScheduleEdit {
                    when,
                    message,
                    name,
                },
                now,
            )?;
            print!("changed {}", schedule_text(&schedule, now));
        }
        ScheduleCommand::Remove { id } => {
            if !store.remove(&id)? {
                bail!("no schedule {id}: `cairn schedule list` shows them");
            }
            println!("removed schedule {id}");
        }
        ScheduleCommand::Pause { id } => {
            store.pause(&id, true, now)?;
            println!("paused schedule {id}");
        }
        ScheduleCommand::Resume { id } => {
            let schedule = store.pause(&id, false, now)?;
            print!("resumed {}", schedule_text(&schedule, now));
        }
        ScheduleCommand::Run { id } => {
            let Some(schedule) = store.list()?.into_iter().find(|s| s.id == id) else {
                bail!("no schedule {id}: `cairn schedule list` shows them");
            };
            if let Backend::Remote { info, http } = Backend::connect(cairn).await {
                let path = format!("/api/v1/schedules/{id}/run");
                let none: Option<&()> = None;
                let started: serde_json::Value =
                    Backend::call(&info, &http, reqwest::Method::POST, &path, none).await?;
                println!(
                    "schedule {id} runs now as task {} in the app",
                    started["task"].as_str().unwrap_or_default()
                );
                return Ok(std::process::ExitCode::SUCCESS);
            }
            if let Some(folder) = &schedule.folder {
                std::env::set_current_dir(folder)?;
            }
            return crate::agent::run(
                cairn,
                crate::agent::AgentArgs {
                    message: Some(schedule.message),
                    ..crate::agent::AgentArgs::default()
                },
            )
            .await;
        }
    }
    Ok(std::process::ExitCode::SUCCESS)
}

/// A schedule in a few lines: id, name, when (and in words), next and last run.
fn schedule_text(schedule: &Schedule, now: i64) -> String {
    let time = local_time;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} · {}{}",
        schedule.id,
        schedule.name,
        if schedule.paused { " (paused)" } else { "" }
    );
    let _ = writeln!(
        out,
        "  when: {} — {} ({})",
        schedule.when,
        describe(&schedule.cron),
        schedule.cron
    );
    let next = match due(schedule, now, &Local) {
        Ok(Due::Paused) => "paused".to_owned(),
        Ok(Due::NotYet { next: Some(next) }) => time(next),
        Ok(Due::NotYet { next: None }) => "never".to_owned(),
        Ok(Due::Run { .. } | Due::Pass { .. }) => "now".to_owned(),
        Err(e) => e.to_string(),
    };
    let _ = writeln!(out, "  next: {next}");
    if let Some(run) = &schedule.last_run {
        let what = match (&run.task, &run.skipped) {
            (Some(task), _) => {
                format!("task {task}{}", if run.missed { " (ran late)" } else { "" })
            }
            (None, Some(why)) => format!("skipped: {why}"),
            (None, None) => "—".to_owned(),
        };
        let _ = writeln!(out, "  last: {} — {what}", time(run.due_at));
    }
    out
}

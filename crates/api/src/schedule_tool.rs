//! The `schedule` tool: the agent sets up the person's scheduled tasks ("every weekday at 9,
//! summarise what changed in ~/notes"), lists them and removes one. A new schedule works in the
//! task's folder. It asks first when the agent must ask before changes.

use cairn_schedule::{describe, local_time, next_run, Local, NewSchedule, Schedules};
use cairn_tools::{field, Declaration, Tool, ToolContext, ToolFuture, ToolOutput};
use serde_json::{json, Value};

pub(crate) struct ScheduleTool {
    pub(crate) store: Schedules,
}

impl ScheduleTool {
    fn act(&self, input: &Value, folder: String) -> Result<String, String> {
        let now = cairn_memory::now_ms();
        let fail = |e: cairn_schedule::ScheduleError| format!("[schedule: {e}]");
        match field(input, "action") {
            "add" => {
                let schedule = self
                    .store
                    .add(
                        NewSchedule {
                            when: field(input, "when").to_owned(),
                            message: field(input, "message").to_owned(),
                            name: Some(field(input, "name").to_owned()).filter(|n| !n.is_empty()),
                            folder: Some(folder),
                            catch_up: true,
                        },
                        now,
                    )
                    .map_err(fail)?;
                let next = next_run(&schedule.cron, now, &Local)
                    .map_err(fail)?
                    .map_or_else(|| "never".to_owned(), local_time);
                Ok(format!(
                    "Scheduled {} ({}): {} — {}. Next run: {next}. Each run is a new task with the message; schedules run while Cairn (the app or `cairn serve`) runs.",
                    schedule.id,
                    schedule.name,
                    schedule.when,
                    describe(&schedule.cron)
                ))
            }
            "list" => {
                let list = self.store.list().map_err(fail)?;
                if list.is_empty() {
                    return Ok("There are no schedules.".into());
                }
                Ok(list
                    .iter()
                    .map(|s| {
                        format!(
                            "{} · {}{}: {} ({}) — {}",
                            s.id,
                            s.name,
                            if s.paused { " (paused)" } else { "" },
                            s.when,
                            s.cron,
                            s.message
                        )
                    })
                    .collect::<Vec<_>>()
                    .join("\n"))
            }
            "remove" => {
                let id = field(input, "id");
                if self.store.remove(id).map_err(fail)? {
                    Ok(format!("Removed schedule {id}."))
                } else {
                    Err(format!(
                        "[schedule: there is no schedule {id:?}; list shows them]"
                    ))
                }
            }
            other => Err(format!(
                "[schedule: action must be add, list or remove, got {other:?}]"
            )),
        }
    }
}

impl Tool for ScheduleTool {
    fn name(&self) -> &str {
        "schedule"
    }

    fn declaration(&self) -> Declaration {
        Declaration {
            name: "schedule".into(),
            description: "Set up a task that runs on a schedule (each run sends `message` to a \
new task, in this folder), list the schedules, or remove one. `when` is plain English (\"every \
weekday at 9\", \"every monday and thursday at 14:30\", \"every 15 minutes\") or cron, in the \
person's time zone."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "action": {"type": "string", "enum": ["add", "list", "remove"]},
                    "when": {"type": "string", "description": "For add: when it runs."},
                    "message": {"type": "string", "description": "For add: what the task is asked each time."},
                    "name": {"type": "string", "description": "For add: a short name (optional)."},
                    "id": {"type": "string", "description": "For remove: the schedule's id (s1, s2…)."}
                },
                "required": ["action"]
            }),
        }
    }

    fn needs_permission(&self, input: &Value, _ctx: &ToolContext) -> bool {
        field(input, "action") != "list"
    }

    fn display(&self, input: &Value) -> String {
        match field(input, "action") {
            "add" => format!(
                "⏰ schedule: {} — {}",
                field(input, "when"),
                field(input, "message")
            ),
            "remove" => format!("⏰ schedule: remove {}", field(input, "id")),
            _ => "⏰ schedule: list".into(),
        }
    }

    fn run<'a>(&'a self, input: Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            match self.act(&input, ctx.cwd.display().to_string()) {
                Ok(text) => ToolOutput::ok(text),
                Err(text) => ToolOutput::failed(text),
            }
        })
    }
}

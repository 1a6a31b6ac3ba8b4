//! A task's standing goal (`/goal`): what the person wants the task to reach, told to the model
//! with every message while it is active; paused, resumed, edited, cleared; optionally limited to
//! a number of turns, after which it pauses itself.

use serde::{Deserialize, Serialize};

/// The goal as the session stores it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Goal {
    pub text: String,
    #[serde(default)]
    pub paused: bool,
    /// At most this many turns with the goal active, then it pauses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<u32>,
    /// Turns run with the goal active.
    #[serde(default)]
    pub turns: u32,
}

/// What `/goal …` asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GoalCommand {
    Show,
    Help,
    Create(String),
    Edit(String),
    Pause,
    Resume,
    Budget(Option<u32>),
    Clear,
}

/// What `/goal` says when the task has none.
const NO_GOAL: &str = "There is no goal for this task. Set one: /goal <text>.";

/// The subcommands, for `/goal help`.
pub const GOAL_HELP: &str = "/goal — show the goal\n\
/goal <text> or /goal create <text> — set it\n\
/goal edit <text> — change its words\n\
/goal pause, /goal resume — stop or start telling the model\n\
/goal budget <turns>|none — pause it after that many turns\n\
/goal clear — remove it";

impl GoalCommand {
    /// Reads the words after `/goal`.
    pub fn parse(words: &str) -> Result<Self, String> {
        let words = words.trim();
        let (head, rest) = match words.split_once(char::is_whitespace) {
            Some((head, rest)) => (head, rest.trim()),
            None => (words, ""),
        };
        let needs_text = |command: fn(String) -> Self, name: &str| {
            if rest.is_empty() {
                Err(format!("Say the goal: /goal {name} <text>."))
            } else {
                Ok(command(rest.to_owned()))
            }
        };
        match head.to_ascii_lowercase().as_str() {
            "" | "status" | "show" => Ok(Self::Show),
            "help" => Ok(Self::Help),
            "create" | "set" => needs_text(Self::Create, "create"),
            "edit" => needs_text(Self::Edit, "edit"),
            "pause" if rest.is_empty() => Ok(Self::Pause),
            "resume" if rest.is_empty() => Ok(Self::Resume),
            "clear" if rest.is_empty() => Ok(Self::Clear),
            "budget" => match rest.to_ascii_lowercase().as_str() {
                "none" | "off" => Ok(Self::Budget(None)),
                n => n
                    .parse::<u32>()
                    .ok()
                    .filter(|n| *n > 0)
                    .map(|n| Self::Budget(Some(n)))
                    .ok_or_else(|| {
                        "The budget is a number of turns (1 or more), or none.".to_owned()
                    }),
            },
            _ => Ok(Self::Create(words.to_owned())),
        }
    }

    /// Applies the command to `goal`; what to tell the person.
    pub fn apply(self, goal: &mut Option<Goal>) -> Result<String, String> {
        let no_goal = || NO_GOAL.to_owned();
        match self {
            Self::Show => Ok(describe(goal.as_ref())),
            Self::Help => Ok(GOAL_HELP.to_owned()),
            Self::Create(text) => {
                *goal = Some(Goal {
                    text,
                    paused: false,
                    budget: None,
                    turns: 0,
                });
                Ok(format!("Goal set. {}", describe(goal.as_ref())))
            }
            Self::Edit(text) => {
                let goal = goal.as_mut().ok_or_else(no_goal)?;
                goal.text = text;
                Ok(format!("Goal changed. {}", describe(Some(goal))))
            }
            Self::Pause => {
                let goal = goal.as_mut().ok_or_else(no_goal)?;
                goal.paused = true;
                Ok("Goal paused: the model is not told of it until /goal resume.".to_owned())
            }
            Self::Resume => {
                let goal = goal.as_mut().ok_or_else(no_goal)?;
                goal.paused = false;
                if goal.budget.is_some_and(|b| goal.turns >= b) {
                    goal.turns = 0;
                }
                Ok(format!("Goal resumed. {}", describe(Some(goal))))
            }
            Self::Budget(budget) => {
                let goal = goal.as_mut().ok_or_else(no_goal)?;
                goal.budget = budget;
                goal.turns = 0;
                Ok(match budget {
                    Some(n) => format!("The goal pauses itself after {n} more turn{}.", plural(n)),
                    None => "The goal has no turn budget now.".to_owned(),
                })
            }
            Self::Clear => match goal.take() {
                Some(_) => Ok("Goal cleared.".to_owned()),
                None => Err(no_goal()),
            },
        }
    }
}

fn plural(n: u32) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// The goal in a line or two, for `/goal`.
pub fn describe(goal: Option<&Goal>) -> String {
    let Some(goal) = goal else {
        return NO_GOAL.to_owned();
    };
    let state = if goal.paused { "paused" } else { "active" };
    let budget = match goal.budget {
        Some(b) => format!(", {} of {b} turn{} used", goal.turns.min(b), plural(b)),
        None => String::new(),
    };
    format!("Goal ({state}{budget}): {}", goal.text)
}

/// The note told to the model with a message while the goal is active.
pub fn goal_note(goal: &Goal) -> String {
    format!(
        "The person's standing goal for this task (work toward it; say plainly when it is reached): {}",
        goal.text
    )
}

/// Counts a turn against an active goal; `Some(note)` when the goal applies to this turn. A goal
/// whose budget is spent pauses itself.
pub fn take_turn(goal: &mut Option<Goal>) -> Option<String> {
    let goal = goal.as_mut().filter(|g| !g.paused)?;
    let note = goal_note(goal);
    goal.turns += 1;
    if goal.budget.is_some_and(|b| goal.turns >= b) {
        goal.paused = true;
    }
    Some(note)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_subcommands_parse() {
        assert_eq!(GoalCommand::parse(""), Ok(GoalCommand::Show));
        assert_eq!(GoalCommand::parse("status"), Ok(GoalCommand::Show));
        assert_eq!(
            GoalCommand::parse("ship the release notes"),
            Ok(GoalCommand::Create("ship the release notes".into()))
        );
        assert_eq!(
            GoalCommand::parse("create  ship it "),
            Ok(GoalCommand::Create("ship it".into()))
        );
        assert_eq!(
            GoalCommand::parse("edit x"),
            Ok(GoalCommand::Edit("x".into()))
        );
        assert!(GoalCommand::parse("edit").is_err());
        assert_eq!(
            GoalCommand::parse("budget 3"),
            Ok(GoalCommand::Budget(Some(3)))
        );
        assert_eq!(
            GoalCommand::parse("budget none"),
            Ok(GoalCommand::Budget(None))
        );
        assert!(GoalCommand::parse("budget 0").is_err());
        assert!(GoalCommand::parse("budget lots").is_err());
        // "pause the build" is a goal, not the pause command.
        assert_eq!(
            GoalCommand::parse("pause the build"),
            Ok(GoalCommand::Create("pause the build".into()))
        );
    }

    #[test]
    fn a_goal_is_set_paused_resumed_and_cleared() -> Result<(), String> {
        let mut goal = None;
        assert!(GoalCommand::Pause.apply(&mut goal).is_err());
        GoalCommand::Create("migrate the tests".into()).apply(&mut goal)?;
        assert_eq!(
            GoalCommand::Show.apply(&mut goal)?,
            "Goal (active): migrate the tests"
        );
        GoalCommand::Pause.apply(&mut goal)?;
        assert_eq!(take_turn(&mut goal), None, "a paused goal is not told");
        GoalCommand::Resume.apply(&mut goal)?;
        assert!(take_turn(&mut goal).is_some_and(|n| n.ends_with("migrate the tests")));
        GoalCommand::Clear.apply(&mut goal)?;
        assert_eq!(goal, None);
        Ok(())
    }

    #[test]
    fn a_spent_budget_pauses_the_goal() -> Result<(), String> {
        let mut goal = None;
        GoalCommand::Create("finish".into()).apply(&mut goal)?;
        GoalCommand::Budget(Some(2)).apply(&mut goal)?;
        assert!(take_turn(&mut goal).is_some());
        assert_eq!(
            describe(goal.as_ref()),
            "Goal (active, 1 of 2 turns used): finish"
        );
        assert!(take_turn(&mut goal).is_some());
        assert!(goal.as_ref().is_some_and(|g| g.paused));
        assert_eq!(take_turn(&mut goal), None);
        GoalCommand::Resume.apply(&mut goal)?;
        assert!(
            take_turn(&mut goal).is_some(),
            "resuming starts the budget again"
        );
        Ok(())
    }
}

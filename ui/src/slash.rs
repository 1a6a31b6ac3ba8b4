//! The composer's slash commands: what each is called and does, the palette of those matching what
//! is typed, the parse of a typed command, and `/help`'s text.

use crate::i18n::{t, tf};

/// A command typed into the composer as `/name argument`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlashCommand {
    New,
    Stop,
    Restart,
    Goal,
    Resume,
    Compact,
    Model,
    Status,
    Dream,
    DreamLog,
    DreamRestore,
    Help,
}

impl SlashCommand {
    /// Every command, in the palette's order.
    pub const ALL: [SlashCommand; 12] = [
        Self::New,
        Self::Stop,
        Self::Restart,
        Self::Goal,
        Self::Resume,
        Self::Compact,
        Self::Model,
        Self::Status,
        Self::Dream,
        Self::DreamLog,
        Self::DreamRestore,
        Self::Help,
    ];

    /// As typed: `/new`.
    pub fn name(self) -> &'static str {
        match self {
            Self::New => "/new",
            Self::Stop => "/stop",
            Self::Restart => "/restart",
            Self::Goal => "/goal",
            Self::Resume => "/resume",
            Self::Compact => "/compact",
            Self::Model => "/model",
            Self::Status => "/status",
            Self::Dream => "/dream",
            Self::DreamLog => "/dream-log",
            Self::DreamRestore => "/dream-restore",
            Self::Help => "/help",
        }
    }

    /// Its argument, as a hint in the current language (the keywords stay as typed).
    pub fn args(self) -> &'static str {
        match self {
            Self::Goal => t("[text | pause | resume | edit <text> | budget <turns> | clear]"),
            Self::Resume => t("<words> | <number>"),
            Self::Model => t("[provider/model]"),
            Self::Dream => t("[dry]"),
            Self::DreamRestore => t("<number>"),
            _ => "",
        }
    }

    /// What it does, in the current language.
    pub fn help(self) -> &'static str {
        match self {
            Self::New => t("Start a new task"),
            Self::Stop => t("Stop the running turn"),
            Self::Restart => t("Run this task's last message again (its answer is replaced)"),
            Self::Goal => t("Show or manage this task's standing goal"),
            Self::Resume => {
                t("Find earlier work in memory (any agent), then continue one in a new task")
            }
            Self::Compact => t("Summarise this task's history to free the model's context"),
            Self::Model => t("List the models, or switch to one"),
            Self::Status => t("Show Cairn's status"),
            Self::Dream => t("Consolidate the memory now (dry: only say what would change)"),
            Self::DreamLog => t("List the memory's dreams and what each changed"),
            Self::DreamRestore => t("Put the memory back as it was before a dream"),
            Self::Help => t("List the commands"),
        }
    }
}

/// The commands whose name starts with what is typed (the palette), while only a command word
/// is typed.
pub fn palette(draft: &str) -> Vec<SlashCommand> {
    let typed = draft.trim_start();
    if !typed.starts_with('/') || typed.contains(char::is_whitespace) {
        return Vec::new();
    }
    SlashCommand::ALL
        .into_iter()
        .filter(|c| c.name().starts_with(typed))
        .collect()
}

/// `/name argument` → the command and its argument; `Err` names an unknown command; `None` when
/// the text is not a command at all.
pub fn parse(input: &str) -> Option<Result<(SlashCommand, String), String>> {
    let typed = input.trim();
    let word = typed.strip_prefix('/')?;
    let (name, arg) = match word.split_once(char::is_whitespace) {
        Some((name, arg)) => (name, arg.trim()),
        None => (word, ""),
    };
    Some(
        SlashCommand::ALL
            .into_iter()
            .find(|c| c.name().trim_start_matches('/') == name)
            .map(|c| (c, arg.to_owned()))
            .ok_or_else(|| {
                tf(
                    "There is no /{name} command. Type /help for the list.",
                    &[("name", name)],
                )
            }),
    )
}

/// `/help`: the commands, one a line.
pub fn help_text() -> String {
    let mut out = format!("{}\n", t("Commands:"));
    for command in SlashCommand::ALL {
        let call = if command.args().is_empty() {
            command.name().to_owned()
        } else {
            format!("{} {}", command.name(), command.args())
        };
        out.push_str(&format!("  {call:<28} {}\n", command.help()));
    }
    out.push_str(t("Ctrl+K searches the tasks; Ctrl+Shift+M speaks."));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slash_commands_are_offered_and_parsed() {
        assert_eq!(palette("/co"), [SlashCommand::Compact]);
        assert_eq!(palette("/").len(), SlashCommand::ALL.len());
        assert!(palette("/model x").is_empty());
        assert!(palette("hello").is_empty());
        assert_eq!(
            palette("/re"),
            [SlashCommand::Restart, SlashCommand::Resume]
        );
        assert_eq!(
            parse("/model openai/gpt-4o"),
            Some(Ok((SlashCommand::Model, "openai/gpt-4o".into())))
        );
        assert_eq!(
            parse(" /new "),
            Some(Ok((SlashCommand::New, String::new())))
        );
        assert_eq!(
            parse("/frobnicate"),
            Some(Err(
                "There is no /frobnicate command. Type /help for the list.".into()
            ))
        );
        assert_eq!(parse("plain words"), None);
        assert_eq!(
            parse("/goal ship the beta"),
            Some(Ok((SlashCommand::Goal, "ship the beta".into())))
        );
        assert_eq!(
            parse("/resume 2"),
            Some(Ok((SlashCommand::Resume, "2".into())))
        );
        assert_eq!(
            palette("/dream"),
            [
                SlashCommand::Dream,
                SlashCommand::DreamLog,
                SlashCommand::DreamRestore
            ]
        );
        assert_eq!(
            parse("/dream-restore 3"),
            Some(Ok((SlashCommand::DreamRestore, "3".into())))
        );
    }

    #[test]
    fn help_lists_every_command_with_its_argument() {
        let help = help_text();
        for command in SlashCommand::ALL {
            assert!(help.contains(command.name()), "{help}");
        }
        assert!(help.contains("/model [provider/model]"), "{help}");
    }
}

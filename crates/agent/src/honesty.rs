//! Honest endings: a turn does not end as done over a tool call that failed and that nothing
//! fixed, unless the answer itself says that something did not work, nor on an answer that says
//! a file was changed when no tool changed anything, nor on one that only announces the step it
//! is about to take, nor on one about a file of the project that no tool looked at. The model is
//! told once more (or asked for the step again, with a tool call required); an answer still given
//! over it carries a line saying what did not work, and the turn reports it as unresolved.

use cairn_tools::reading_command;
use cairn_tools::texts::fill;

use crate::texts::{
    FAILED_CALL_REASON, NOT_CHANGED, NOT_DONE, NOT_STARTED, NUDGE_FAILED_CALL, NUDGE_UNDONE_CLAIM,
    UNDONE_CLAIM_REASON,
};

/// The characters of a failure's output the model is shown again.
const RETOLD_CHARS: usize = 600;
/// The characters of a failure the person's reply line quotes.
const NOTE_CHARS: usize = 160;

/// The tools whose failure means the work asked for is not done: the files and commands of the
/// task. (A refused sub-agent, a missing job or a web page that did not load is the model's to
/// report, and it usually does.)
const WORK_TOOLS: &[&str] = &["bash", "edit_file", "write_file", "read_file"];

/// Words with which an answer says that something did not work (lowercase): such an answer is
/// honest about the failure, and ends the turn as it is.
const OWNING_UP: &[&str] = &[
    "fail",
    "could not",
    "couldn't",
    "cannot",
    "can't",
    "unable",
    "not found",
    "no such",
    "does not exist",
    "doesn't exist",
    "did not work",
    "didn't work",
    "exit code",
    "exited with",
    "exit status",
    "not able",
    "was not",
    "wasn't",
    "refused",
    "denied",
];

/// The tools that change files: one that succeeded backs an answer saying something changed.
const CHANGING_TOOLS: &[&str] = &["bash", "edit_file", "write_file"];

/// Past participles with which an answer says that it changed something.
const CHANGED: &[&str] = &[
    "updated",
    "changed",
    "replaced",
    "modified",
    "fixed",
    "renamed",
    "created",
    "added",
    "written",
    "wrote",
    "deleted",
    "removed",
    "moved",
    "corrected",
    "edited",
    "copied",
];

/// What comes before them in such a claim.
const CLAIMING: &[&str] = &[
    "i ",
    "i've ",
    "i have ",
    "has been ",
    "have been ",
    "was ",
    "were ",
    "successfully ",
];

/// How an announcement of a step begins (lowercase): "I will read notes.txt."
const ANNOUNCING: &[&str] = &[
    "i will ",
    "i'll ",
    "let me ",
    "let's ",
    "i am going to ",
    "i'm going to ",
    "i need to ",
    "now i will ",
];

/// Announcements that are no step to take: a courtesy, or a promise to remember.
const NOT_A_STEP: &[&str] = &[
    "let me know",
    "remember",
    "keep that in mind",
    "note that",
    "will not",
    "won't",
];

/// The longest answer read as a mere announcement: a longer one says more than what comes next.
const ANNOUNCEMENT_CHARS: usize = 400;

/// What a turn's calls did so far: the last failed call of a work tool that no later call of the
/// same tool got past, whether a changing tool succeeded, and whether the model was told once.
#[derive(Debug, Default)]
pub(crate) struct OpenFailure {
    failed: Option<(String, String)>,
    changed: bool,
    retold: bool,
    /// The step an answer announced was asked for once already.
    prodded: bool,
    /// The turn is a small model's.
    small: bool,
    /// The person's message names a file or folder of the project (a small model's turn).
    names_files: bool,
    /// A tool was called in the turn.
    called: bool,
}

/// What the turn does with the model's answer.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Nothing failed, or the failure was got past: the answer ends the turn.
    Done,
    /// The model is told once more: `told`, as the harness's message; `reason` completes the
    /// person's notice "the reply was …".
    Retell { told: String, reason: &'static str },
    /// The answer only announced its next step: the step is asked again with a tool call
    /// required.
    TakeStep,
    /// Told once already and still failing: the answer ends the turn with this line under it.
    Unresolved(String),
}

impl OpenFailure {
    /// For a turn whose message names files of its folder or not (`names_files`). A small
    /// model's turn (`small`) is also held to take the steps it announces and to look at the
    /// files it is asked about: those are its habits.
    pub fn new(names_files: bool, small: bool) -> Self {
        Self {
            small,
            names_files: small && names_files,
            ..Self::default()
        }
    }

    /// A call's result (`command`: a `bash` call's command line). A failure of a work tool opens;
    /// a success of the same tool closes it. A call the person refused and a question they
    /// declined are theirs to decide, not failures to fix.
    pub fn record(
        &mut self,
        tool: &str,
        command: Option<&str>,
        output: &str,
        failed: bool,
        refused: bool,
    ) {
        self.called = true;
        if refused || !WORK_TOOLS.contains(&tool) {
            return;
        }
        if !failed && CHANGING_TOOLS.contains(&tool) && !command.is_some_and(reading_command) {
            self.changed = true;
        }
        if failed {
            self.failed = Some((tool.to_owned(), output.trim().to_owned()));
        } else if self.failed.as_ref().is_some_and(|(open, _)| open == tool) {
            self.failed = None;
        }
    }

    /// The model answered `answer` (no more calls): what the turn does with it.
    pub fn on_answer(&mut self, answer: &str) -> Verdict {
        let Some((tool, output)) = &self.failed else {
            return self.on_claim(answer);
        };
        if owns_up(answer) {
            return Verdict::Done;
        }
        if !self.retold {
            self.retold = true;
            let error = tail(output, RETOLD_CHARS);
            return Verdict::Retell {
                told: fill(NUDGE_FAILED_CALL, &[("tool", tool), ("error", &error)]),
                reason: FAILED_CALL_REASON,
            };
        }
        Verdict::Unresolved(fill(
            NOT_DONE,
            &[("tool", tool), ("error", &one_line(output))],
        ))
    }

    /// No failure is open: an answer that says something changed when no changing tool
    /// succeeded is told once, then marked.
    fn on_claim(&mut self, answer: &str) -> Verdict {
        // An answer about the project's files before any tool looked at them is a guess.
        let unlooked = self.names_files && !self.called;
        if unlooked || (self.small && announces(answer)) {
            if !self.prodded {
                self.prodded = true;
                return Verdict::TakeStep;
            }
            return Verdict::Unresolved(NOT_STARTED.to_owned());
        }
        if self.changed || owns_up(answer) || !claims_change(answer) {
            return Verdict::Done;
        }
        if !self.retold {
            self.retold = true;
            return Verdict::Retell {
                told: NUDGE_UNDONE_CLAIM.to_owned(),
                reason: UNDONE_CLAIM_REASON,
            };
        }
        Verdict::Unresolved(NOT_CHANGED.to_owned())
    }
}

/// Whether `answer` says, in the first person or the passive, that it changed something.
fn claims_change(answer: &str) -> bool {
    let answer = answer.to_lowercase();
    CLAIMING.iter().any(|before| {
        CHANGED
            .iter()
            .any(|done| answer.contains(&format!("{before}{done}")))
    })
}

/// Whether `answer` only says what the model is about to do: a short answer whose last sentence
/// announces a step ("To find it, I will look at notes.txt.").
fn announces(answer: &str) -> bool {
    let answer = answer.trim().to_lowercase();
    if answer.is_empty() || answer.chars().count() > ANNOUNCEMENT_CHARS {
        return false;
    }
    let body = answer.trim_end_matches(['.', '!', ':', ' ']);
    // The last sentence: after the last full stop, mark or line break that ends one (the dot
    // of "notes.txt" does not).
    let start = body
        .char_indices()
        .zip(body.chars().skip(1))
        .filter(|((_, c), next)| *c == '\n' || (".!?".contains(*c) && next.is_whitespace()))
        .map(|((i, c), _)| i + c.len_utf8())
        .last()
        .unwrap_or(0);
    let last = format!("{} ", body[start..].trim());
    ANNOUNCING
        .iter()
        .any(|a| last.starts_with(a) || last.contains(&format!(", {a}")))
        && !NOT_A_STEP.iter().any(|n| last.contains(n))
}

/// Whether `answer` says that something did not work.
fn owns_up(answer: &str) -> bool {
    let answer = answer.to_lowercase();
    OWNING_UP.iter().any(|words| answer.contains(words))
}

/// The end of `text` within `max` characters (a failure's cause is usually last).
fn tail(text: &str, max: usize) -> String {
    let count = text.chars().count();
    if count <= max {
        return text.to_owned();
    }
    let kept: String = text.chars().skip(count - max).collect();
    format!("…{kept}")
}

/// A failure's output on one line: its first line, and its last when there are more (a command's
/// exit status), within [`NOTE_CHARS`].
fn one_line(output: &str) -> String {
    let lines: Vec<&str> = output
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let line = match lines.as_slice() {
        [] => "(no output)".to_owned(),
        [only] => (*only).to_owned(),
        [first, .., last] => format!("{first} … {last}"),
    };
    if line.chars().count() <= NOTE_CHARS {
        return line;
    }
    let cut: String = line.chars().take(NOTE_CHARS).collect();
    format!("{cut}…")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool_need::names_files;

    #[test]
    fn a_turn_without_failures_or_past_them_is_done() {
        let mut open = OpenFailure::default();
        assert_eq!(open.on_answer("Done."), Verdict::Done);
        open.record("edit_file", None, "old text not found", true, false);
        open.record("read_file", None, "1 fn main() {}", false, false);
        // Reading the file does not fix the edit; editing again does.
        assert!(matches!(open.on_answer("Done."), Verdict::Retell { .. }));
        open.record("edit_file", None, "edited", false, false);
        assert_eq!(open.on_answer("Done."), Verdict::Done);
    }

    #[test]
    fn a_failure_is_retold_once_then_the_answer_says_what_did_not_work() {
        let mut open = OpenFailure::default();
        open.record("bash", None,
            "python3: can't open file 'hello.py': [Errno 2] No such file or directory\n[exit code: exit status 2]",
            true,
            false,
        );
        let Verdict::Retell { told, reason } = open.on_answer("Done.") else {
            panic!("the failure is told again first");
        };
        assert!(told.starts_with("Your last tool call (bash) failed"));
        assert_eq!(reason, FAILED_CALL_REASON);
        assert!(told.contains("No such file or directory"));
        assert_eq!(
            open.on_answer("Done."),
            Verdict::Unresolved(
                "⚠ Unresolved: the last bash call failed (python3: can't open file 'hello.py': \
                 [Errno 2] No such file or directory … [exit code: exit status 2])."
                    .to_owned()
            )
        );
    }

    #[test]
    fn an_answer_that_says_what_failed_ends_the_turn_as_it_is() {
        let mut open = OpenFailure::default();
        open.record("bash", None, "[exit code: exit status 3]", true, false);
        assert_eq!(open.on_answer("It exited with code 3."), Verdict::Done);
        assert_eq!(
            open.on_answer("The file could not be found."),
            Verdict::Done
        );
        // A claim of success is not owning up, even about an error.
        assert!(matches!(
            open.on_answer("I fixed the error in the function."),
            Verdict::Retell { .. }
        ));
        assert_eq!(
            open.on_answer("The edit failed: the text was not in the file."),
            Verdict::Done
        );
    }

    #[test]
    fn a_change_no_tool_made_is_told_once_then_marked() {
        let mut open = OpenFailure::default();
        open.record("read_file", None, "1 old.log", false, false);
        assert_eq!(
            open.on_answer("The file `old.log` has been deleted."),
            Verdict::Retell {
                told: NUDGE_UNDONE_CLAIM.to_owned(),
                reason: UNDONE_CLAIM_REASON,
            }
        );
        assert_eq!(
            open.on_answer("I deleted old.log."),
            Verdict::Unresolved(NOT_CHANGED.to_owned())
        );
        // An answer to a question, or one a changing tool backs, is not a claim.
        let mut asked = OpenFailure::default();
        assert_eq!(
            asked.on_answer("The release is planned for 14 March."),
            Verdict::Done
        );
        let mut backed = OpenFailure::default();
        backed.record("bash", Some("rm old.log"), "", false, false);
        assert_eq!(backed.on_answer("I deleted old.log."), Verdict::Done);
        // A listing backs no change.
        let mut looked = OpenFailure::default();
        looked.record(
            "bash",
            Some("ls -la && cat old.log | wc -l"),
            "",
            false,
            false,
        );
        assert!(matches!(
            looked.on_answer("I deleted old.log."),
            Verdict::Retell { .. }
        ));
    }

    #[test]
    fn an_announced_step_is_prodded_once_then_marked() {
        let small = || OpenFailure::new(false, true);
        let mut open = small();
        assert_eq!(
            open.on_answer("To find the release planned, I will look at the notes.txt file."),
            Verdict::TakeStep
        );
        assert_eq!(
            open.on_answer("Let me read notes.txt:"),
            Verdict::Unresolved(NOT_STARTED.to_owned())
        );
        // Answers, courtesies and promises to remember are not steps.
        for answer in [
            "The release is planned for 14 March.",
            "Done. Let me know if you need anything else.",
            "I'll remember that you prefer tabs.",
            "23 multiplied by 19 is 437.",
            "I will not delete it: the file is still in use, and it failed to open.",
        ] {
            assert_eq!(small().on_answer(answer), Verdict::Done, "{answer}");
        }
        assert!(announces(
            "First I listed the folder. Now, I will count the lines."
        ));
        assert!(!announces(&format!(
            "{} I will go on.",
            "Here is the plan. ".repeat(30)
        )));
    }

    #[test]
    fn an_answer_about_a_file_no_tool_looked_at_is_asked_for_again() -> std::io::Result<()> {
        let folder = tempfile::tempdir()?;
        std::fs::write(folder.path().join("package.json"), "{}")?;
        std::fs::write(folder.path().join(".gitignore"), "")?;
        let mut guess = OpenFailure::new(
            names_files("What version is set in package.json?", folder.path()),
            true,
        );
        assert_eq!(guess.on_answer("The version is 1.0.0."), Verdict::TakeStep);
        assert_eq!(
            guess.on_answer("The version is 1.0.0."),
            Verdict::Unresolved(NOT_STARTED.to_owned())
        );
        let mut looked = OpenFailure::new(
            names_files("Add 'node_modules/' to .gitignore.", folder.path()),
            true,
        );
        looked.record("read_file", None, "", false, false);
        assert_eq!(looked.on_answer("It is there now."), Verdict::Done);
        // A file that is not in the folder, or no file at all: nothing to look at.
        for request in [
            "What is in notes.txt?",
            "What is 23 multiplied by 19?",
            "Hi.",
        ] {
            let mut open = OpenFailure::new(names_files(request, folder.path()), true);
            assert_eq!(open.on_answer("Here it is."), Verdict::Done, "{request}");
        }
        Ok(())
    }

    #[test]
    fn only_the_work_tools_failures_are_held_open() {
        let mut open = OpenFailure::default();
        open.record("job_output", None, "[no job job9]", true, false);
        open.record(
            "ask_agent",
            None,
            "[ask_agent: reviewer failed: down]",
            true,
            false,
        );
        assert_eq!(open.on_answer("Done."), Verdict::Done);
    }

    #[test]
    fn what_the_person_refused_or_declined_is_not_a_failure_to_fix() {
        let mut open = OpenFailure::default();
        open.record("bash", None, "[the command was rejected]", true, true);
        assert_eq!(open.on_answer("Done."), Verdict::Done);
    }

    #[test]
    fn long_failures_are_shortened_from_the_right_end() {
        let long = format!("{}\nthe cause", "x".repeat(2_000));
        assert!(tail(&long, 50).ends_with("the cause"));
        assert_eq!(tail(&long, 50).chars().count(), 51);
        assert!(one_line(&"y".repeat(500)).chars().count() <= NOTE_CHARS + 1);
    }
}

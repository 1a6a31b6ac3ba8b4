//! Answers typed as lines, for a front end that reads them (the CLI's line mode): yes or no to
//! an approval, and an ask_user question answered by one line, with the hint shown under it.

use cairn_protocol::AskQuestion;
use cairn_tools::{Question, QuestionKind};

pub use cairn_tools::ask::{yes_no, LineAnswer};

/// The hint shown under `question` (how to answer it, `/skip` to decline).
pub fn hint(question: &AskQuestion) -> &'static str {
    cairn_tools::ask::hint(&tool_question(question))
}

/// What one typed `line` does to `question`: an answer, a decline, or nothing (ask again).
pub fn read_line_answer(question: &AskQuestion, line: &str) -> LineAnswer {
    cairn_tools::ask::read_line_answer(&tool_question(question), line)
}

/// The question as ask_user put it (the wire's kind read back).
fn tool_question(question: &AskQuestion) -> Question {
    Question {
        question: question.question.clone(),
        kind: match question.kind.as_str() {
            "multi" => QuestionKind::Multi,
            "text" => QuestionKind::Text,
            "confirm" => QuestionKind::Confirm,
            _ => QuestionKind::Choice,
        },
        options: question.options.clone(),
        default: question.default.clone(),
    }
}

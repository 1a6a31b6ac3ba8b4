//! `ask_user`: one to four questions (choice, multi, text, confirm) put to whoever can answer
//! through an [`Asker`]; the answers, a refusal or "nobody to ask" come back as text. Also the
//! line mode's reading of a typed answer.

use std::future::Future;
use std::pin::Pin;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::texts::{
    fill, ANSWERED, BAD_QUESTION_TYPE, DECLINED, NOBODY_TO_ASK, NO_QUESTION, QUESTION_CANCELLED,
    QUESTION_WITHOUT_TEXT, TOO_FEW_OPTIONS, TOO_MANY_QUESTIONS,
};
use crate::{Declaration, Tool, ToolContext, ToolFuture, ToolOutput};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum QuestionKind {
    Choice,
    Multi,
    Text,
    Confirm,
}

/// A question as the person sees it, cleaned.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Question {
    pub question: String,
    pub kind: QuestionKind,
    pub options: Vec<String>,
    pub default: Option<String>,
}

/// What came back from the person.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Answer {
    /// One answer per question (a multi's options joined with `, `).
    Answered(Vec<String>),
    Declined,
    Cancelled,
}

/// Whoever can answer questions (a front end).
pub trait Asker: Send + Sync {
    fn ask(&self, questions: Vec<Question>) -> Pin<Box<dyn Future<Output = Answer> + Send>>;
}

#[derive(Deserialize)]
struct RawQuestion {
    #[serde(default)]
    question: Option<String>,
    #[serde(default, rename = "type")]
    kind: Option<String>,
    #[serde(default)]
    options: Vec<Value>,
    #[serde(default)]
    default: Option<Value>,
}

fn kind_of(word: &str) -> Option<QuestionKind> {
    Some(match word.trim().to_lowercase().as_str() {
        "choice" | "single" | "select" | "radio" | "enum" | "one" => QuestionKind::Choice,
        "multi" | "multiple" | "multiselect" | "checkbox" | "checkboxes" | "many" => {
            QuestionKind::Multi
        }
        "text" | "input" | "string" | "free" | "freetext" => QuestionKind::Text,
        "confirm" | "yesno" | "yes_no" | "boolean" | "bool" | "confirmation" => {
            QuestionKind::Confirm
        }
        _ => return None,
    })
}

/// A yes/no word in English or French.
pub fn yes_no(word: &str) -> Option<bool> {
    match word.trim().to_lowercase().as_str() {
        "y" | "yes" | "o" | "oui" | "true" | "1" => Some(true),
        "n" | "no" | "non" | "false" | "0" => Some(false),
        _ => None,
    }
}

fn scalar_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.trim().to_owned()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// The call's questions, or the error text.
pub fn parse_questions(input: &Value) -> Result<Vec<Question>, String> {
    let raw: Vec<Value> = match input.get("questions") {
        Some(Value::Array(list)) => list.clone(),
        Some(Value::Object(_)) => vec![input["questions"].clone()],
        _ if input.get("question").is_some() => vec![input.clone()],
        _ => Vec::new(),
    };
    if raw.is_empty() {
        return Err(NO_QUESTION.to_owned());
    }
    if raw.len() > 4 {
        return Err(fill(TOO_MANY_QUESTIONS, &[("n", &raw.len().to_string())]));
    }
    let mut questions = Vec::new();
    for (i, value) in raw.into_iter().enumerate() {
        let n = (i + 1).to_string();
        let q: RawQuestion = serde_json::from_value(value).unwrap_or(RawQuestion {
            question: None,
            kind: None,
            options: Vec::new(),
            default: None,
        });
        let text = q.question.unwrap_or_default().trim().to_owned();
        if text.is_empty() {
            return Err(fill(QUESTION_WITHOUT_TEXT, &[("n", &n)]));
        }
        let mut options: Vec<String> = Vec::new();
        for option in q.options.iter().filter_map(scalar_text) {
            if !option.is_empty() && !options.iter().any(|o| o.eq_ignore_ascii_case(&option)) {
                options.push(option);
            }
        }
        let kind = match q.kind.as_deref().map(str::trim).filter(|k| !k.is_empty()) {
            Some(word) => match kind_of(word) {
                Some(kind) => kind,
                None => return Err(fill(BAD_QUESTION_TYPE, &[("n", &n), ("type", word)])),
            },
            None if !q.options.is_empty() => QuestionKind::Choice,
            None => QuestionKind::Text,
        };
        match kind {
            QuestionKind::Choice | QuestionKind::Multi if options.len() < 2 => {
                let word = if kind == QuestionKind::Choice {
                    "choice"
                } else {
                    "multi"
                };
                return Err(fill(TOO_FEW_OPTIONS, &[("n", &n), ("type", word)]));
            }
            QuestionKind::Text | QuestionKind::Confirm => options.clear(),
            _ => {}
        }
        let default = q
            .default
            .as_ref()
            .and_then(scalar_text)
            .and_then(|d| match kind {
                QuestionKind::Choice => {
                    options.iter().find(|o| o.eq_ignore_ascii_case(&d)).cloned()
                }
                QuestionKind::Confirm => {
                    yes_no(&d).map(|yes| if yes { "yes" } else { "no" }.into())
                }
                QuestionKind::Text => (!d.is_empty()).then_some(d),
                QuestionKind::Multi => None,
            });
        questions.push(Question {
            question: text,
            kind,
            options,
            default,
        });
    }
    Ok(questions)
}

/// The tool's result for `answer` to `questions`.
pub fn result_text(questions: &[Question], answer: &Answer) -> (String, bool) {
    match answer {
        Answer::Answered(answers) => {
            let mut text = ANSWERED.to_owned();
            for (q, a) in questions.iter().zip(answers) {
                text.push_str(&format!("\n- {} → {a}", q.question));
            }
            (text, false)
        }
        Answer::Declined => (DECLINED.to_owned(), true),
        Answer::Cancelled => (QUESTION_CANCELLED.to_owned(), true),
    }
}

/// What one typed line does to a question in line mode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LineAnswer {
    Answer(String),
    /// The line does not answer: show the hint again.
    Again,
    /// `/skip`.
    Decline,
}

/// The hint shown under a question in line mode.
pub fn hint(q: &Question) -> &'static str {
    match q.kind {
        QuestionKind::Choice => "  (a number, or type your answer; /skip to decline)",
        QuestionKind::Multi => "  (numbers separated by commas or spaces; /skip to decline)",
        QuestionKind::Confirm => "  (y or n; /skip to decline)",
        QuestionKind::Text => "  (type your answer; /skip to decline)",
    }
}

/// Reads one typed line as an answer to `q` (agent-tools.md, line mode).
pub fn read_line_answer(q: &Question, line: &str) -> LineAnswer {
    let line = line.trim();
    if line == "/skip" {
        return LineAnswer::Decline;
    }
    if line.is_empty() {
        return match &q.default {
            Some(d) => LineAnswer::Answer(d.clone()),
            None => LineAnswer::Again,
        };
    }
    let pick = |n: &str| {
        n.parse::<usize>()
            .ok()
            .filter(|n| (1..=q.options.len()).contains(n))
            .map(|n| q.options[n - 1].clone())
    };
    match q.kind {
        QuestionKind::Text => LineAnswer::Answer(line.to_owned()),
        QuestionKind::Confirm => match yes_no(line) {
            Some(true) => LineAnswer::Answer("yes".into()),
            Some(false) => LineAnswer::Answer("no".into()),
            None => LineAnswer::Again,
        },
        QuestionKind::Choice => {
            if let Some(o) = pick(line) {
                return LineAnswer::Answer(o);
            }
            if let Some(o) = q.options.iter().find(|o| o.eq_ignore_ascii_case(line)) {
                return LineAnswer::Answer(o.clone());
            }
            let lower = line.to_lowercase();
            let starts: Vec<&String> = q
                .options
                .iter()
                .filter(|o| o.to_lowercase().starts_with(&lower))
                .collect();
            match starts.as_slice() {
                [one] => LineAnswer::Answer((*one).clone()),
                _ => LineAnswer::Answer(line.to_owned()),
            }
        }
        QuestionKind::Multi => {
            let picked: Option<Vec<String>> = line
                .split([',', ' ', ';'])
                .filter(|p| !p.is_empty())
                .map(pick)
                .collect();
            match picked {
                Some(p) if !p.is_empty() => LineAnswer::Answer(p.join(", ")),
                _ => LineAnswer::Again,
            }
        }
    }
}

pub struct AskUser;

impl Tool for AskUser {
    fn name(&self) -> &str {
        "ask_user"
    }

    fn declaration(&self) -> Declaration {
        Declaration {
            name: "ask_user".into(),
            description: "Ask the user one to four questions together and get the answers. Use it \
only when you cannot go on without the person's choice."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "questions": {
                        "type": "array",
                        "description": "1 to 4 questions. Each is an object with: question (the text), type (choice, multi, text or confirm), options (for choice and multi: at least two strings), default (optional).",
                        "items": {"type": "object"}
                    }
                },
                "required": ["questions"]
            }),
        }
    }

    fn waits_on_user(&self) -> bool {
        true
    }

    fn display(&self, input: &Value) -> String {
        let n = match input.get("questions") {
            Some(Value::Array(list)) => list.len(),
            _ => 1,
        };
        format!("❓ ask_user: {n} question(s)")
    }

    fn run<'a>(&'a self, input: Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let questions = match parse_questions(&input) {
                Ok(q) => q,
                Err(e) => return ToolOutput::failed(e),
            };
            let Some(asker) = &ctx.asker else {
                return ToolOutput::failed(NOBODY_TO_ASK);
            };
            let answer = tokio::select! {
                answer = asker.ask(questions.clone()) => answer,
                _ = ctx.cancel.cancelled() => Answer::Cancelled,
            };
            let (text, failed) = result_text(&questions, &answer);
            ToolOutput {
                text,
                failed,
                ..ToolOutput::default()
            }
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn synonyms_defaults_and_options_are_cleaned() {
        let q = parse_questions(&json!({"question": "Pick", "type": "radio",
            "options": [" Red ", "red", "Blue"], "default": "blue"}))
        .unwrap();
        assert_eq!(q[0].kind, QuestionKind::Choice);
        assert_eq!(q[0].options, vec!["Red", "Blue"]);
        assert_eq!(q[0].default.as_deref(), Some("Blue"));
        let q = parse_questions(
            &json!({"questions": [{"question": "Ok?", "type": "yesno", "default": "oui"}]}),
        )
        .unwrap();
        assert_eq!(q[0].default.as_deref(), Some("yes"));
    }

    #[test]
    fn errors_say_what_to_send() {
        assert_eq!(parse_questions(&json!({})).unwrap_err(), NO_QUESTION);
        let five = json!({"questions": [{"question":"a"},{"question":"b"},{"question":"c"},{"question":"d"},{"question":"e"}]});
        assert_eq!(
            parse_questions(&five).unwrap_err(),
            "[ask_user: 5 questions — ask at most 4 at a time]"
        );
        assert_eq!(
            parse_questions(&json!({"questions": [{"question": " "}]})).unwrap_err(),
            "[ask_user: question 1 has no text]"
        );
        assert_eq!(
            parse_questions(
                &json!({"questions": [{"question": "x", "type": "multi", "options": ["a"]}]})
            )
            .unwrap_err(),
            "[ask_user: question 1 is a multi question — give it at least two options]"
        );
        assert_eq!(
            parse_questions(&json!({"questions": [{"question": "x", "type": "slider"}]}))
                .unwrap_err(),
            "[ask_user: question 1 has type \"slider\" — use choice, multi, text or confirm]"
        );
    }

    #[test]
    fn typed_lines_answer_as_the_line_mode_says() {
        let q =
            parse_questions(&json!({"question": "Pick", "options": ["Apple", "Banana", "Cherry"]}))
                .unwrap()
                .remove(0);
        assert_eq!(
            read_line_answer(&q, "2"),
            LineAnswer::Answer("Banana".into())
        );
        assert_eq!(
            read_line_answer(&q, "ch"),
            LineAnswer::Answer("Cherry".into())
        );
        assert_eq!(
            read_line_answer(&q, "kiwi"),
            LineAnswer::Answer("kiwi".into())
        );
        assert_eq!(read_line_answer(&q, ""), LineAnswer::Again);
        assert_eq!(read_line_answer(&q, "/skip"), LineAnswer::Decline);
        let mut m = q.clone();
        m.kind = QuestionKind::Multi;
        assert_eq!(
            read_line_answer(&m, "1, 3"),
            LineAnswer::Answer("Apple, Cherry".into())
        );
        assert_eq!(read_line_answer(&m, "1 9"), LineAnswer::Again);
        let c = parse_questions(&json!({"question": "Sure?", "type": "confirm"}))
            .unwrap()
            .remove(0);
        assert_eq!(
            read_line_answer(&c, "oui"),
            LineAnswer::Answer("yes".into())
        );
        assert_eq!(read_line_answer(&c, "maybe"), LineAnswer::Again);
    }

    #[test]
    fn answers_are_listed_one_per_question() {
        let q = parse_questions(
            &json!({"questions": [{"question": "A?"}, {"question": "B?", "type": "confirm"}]}),
        )
        .unwrap();
        let (text, failed) = result_text(&q, &Answer::Answered(vec!["x".into(), "no".into()]));
        assert_eq!(text, "The user answered:\n- A? → x\n- B? → no");
        assert!(!failed);
        assert_eq!(result_text(&q, &Answer::Declined).0, DECLINED);
    }
}

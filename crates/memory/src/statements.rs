//! Memories read as statements: who said one (its owner) and how — asking, looking back,
//! announcing a change, or plainly; the values with digits it names; and what a question asks
//! about time ("what did she use before X?"). Plain word lists, no database.

/// How a statement is said.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stance {
    /// A question asserts nothing.
    Question,
    /// "Remember when…", "I used to…": about the past, not what holds now.
    LookingBack,
    /// "… now", "we moved to…", "my new…": announces what holds from now on.
    Change,
    /// Anything else.
    Plain,
}

impl Stance {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Question => "question",
            Self::LookingBack => "looking_back",
            Self::Change => "change",
            Self::Plain => "plain",
        }
    }
}

/// A memory read as a statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Statement {
    /// Who said it, lower-cased: the speaker of a `Name: …` line, `user` for a captured turn.
    pub owner: String,
    /// What the owner said.
    pub said: String,
    pub stance: Stance,
}

impl Statement {
    /// Whether it says something holds (a plain statement or a change), rather than asking or
    /// looking back.
    pub(crate) fn asserts(&self) -> bool {
        matches!(self.stance, Stance::Plain | Stance::Change)
    }

    pub(crate) fn announces_change(&self) -> bool {
        self.stance == Stance::Change
    }
}

/// Phrases that place a statement in the past.
const LOOKING_BACK: &[&[&str]] = &[
    &["remember"],
    &["remembered"],
    &["used", "to"],
    &["back", "when"],
    &["back", "in", "the", "day"],
    &["ago"],
    &["old"],
    &["former"],
    &["formerly"],
    &["previous"],
    &["previously"],
    &["nostalgic"],
    &["miss"],
    &["when", "i", "was"],
    &["when", "we", "were"],
    &["those", "days"],
    &["out", "of", "habit"],
];

/// Words and phrases that announce a change or what holds now.
const CHANGE: &[&[&str]] = &[
    &["now"],
    &["nowadays"],
    &["currently"],
    &["these", "days"],
    &["lately"],
    &["from", "now", "on"],
    &["new"],
    &["newly"],
    &["anymore"],
    &["no", "longer"],
    &["instead"],
    &["switched"],
    &["switching"],
    &["moved"],
    &["changed"],
    &["replaced"],
    &["renamed"],
    &["upgraded"],
    &["migrated"],
    &["became"],
    &["promoted"],
    &["joined"],
    &["started"],
    &["took", "over"],
    &["taking", "over"],
    &["took", "up"],
    &["gave", "up"],
    &["broke", "up"],
    &["quit"],
    &["finally"],
    &["recently"],
    &["as", "of"],
    &["relocated"],
    &["swapped"],
    &["adopted"],
    &["ditched"],
    &["dropped"],
    &["went", "back", "to"],
    &["transferred"],
    &["got", "a", "new"],
    &["just", "got"],
    &["just", "bought"],
    &["first", "week"],
    &["first", "day"],
    &["first", "appointment"],
];

/// Reads `text` as a statement.
pub(crate) fn statement(text: &str) -> Statement {
    let (owner, said) = owner_and_words(text);
    let words = words(&said);
    let has = |phrases: &[&[&str]]| has_phrase(&words, phrases);
    let stance = if asks(&said) {
        Stance::Question
    } else if has(LOOKING_BACK) {
        Stance::LookingBack
    } else if has(CHANGE) {
        Stance::Change
    } else {
        Stance::Plain
    };
    Statement {
        owner,
        said,
        stance,
    }
}

/// Tags that end a statement with a question mark without asking anything ("Text me at
/// 555-0142 when you land, okay?").
const TAG_QUESTIONS: &[&str] = &["okay", "ok", "right", "alright", "yeah", "yes", "ya", "no"];

/// Whether `said` asks a question: it ends with a question mark that is not a tag after a
/// statement.
fn asks(said: &str) -> bool {
    let Some(body) = said.trim_end().strip_suffix('?') else {
        return false;
    };
    let tagged = body.rsplit_once(',').is_some_and(|(before, tag)| {
        let tag = tag.trim().to_lowercase();
        !before.trim().is_empty() && TAG_QUESTIONS.contains(&tag.as_str())
    });
    !tagged
}

/// The fewest content words before a question's own sentence for the line to say something
/// besides asking ("Wow, nice pic! You both looked amazing. Where was it?" says something;
/// "Cool! What did it look like?" does not).
const LEAD_IN_WORDS: usize = 4;

/// Whether `text` only asks: a line that ends in a question (not a tag question) with fewer
/// than [`LEAD_IN_WORDS`] content words before that question's sentence. Such a line says
/// nothing that could answer. A captured turn holds the assistant's answer, so it never only
/// asks.
pub(crate) fn only_asks(text: &str) -> bool {
    let (owner, said) = owner_and_words(text);
    if owner == "user" || !asks(&said) {
        return false;
    }
    let body = said.trim_end().trim_end_matches('?');
    let lead_in = body.rfind(['.', '!', '?']).map_or("", |end| &body[..end]);
    words(lead_in)
        .iter()
        .filter(|w| !crate::text::is_stop_word(w))
        .count()
        < LEAD_IN_WORDS
}

/// Words of a query that ask about questions asked ("What did Caroline ask about the
/// exhibit?"): for it, a line that only asks is an answer.
const ABOUT_ASKING: &[&str] = &[
    "ask",
    "asked",
    "asking",
    "asks",
    "question",
    "questions",
    "wonder",
    "wondered",
    "wondering",
    "inquired",
];

/// Whether `query` asks about the questions someone asked.
pub(crate) fn about_asking(query: &str) -> bool {
    query.contains('问')
        || words(query)
            .iter()
            .any(|w| ABOUT_ASKING.contains(&w.as_str()))
}

/// `Caroline: text` → (`caroline`, `text`); a captured turn (`User: …` / `Assistant: …` lines) →
/// (`user`, the person's lines); anything else → (`someone`, the whole text).
fn owner_and_words(text: &str) -> (String, String) {
    let text = text.trim();
    if text.lines().any(|l| l.starts_with("User:")) {
        let said: Vec<&str> = text
            .lines()
            .take_while(|l| !l.starts_with("Assistant:"))
            .map(|l| l.strip_prefix("User:").unwrap_or(l).trim())
            .collect();
        return ("user".to_owned(), said.join("\n"));
    }
    if let Some((name, rest)) = text.split_once(": ") {
        let words: Vec<&str> = name.split_whitespace().collect();
        let named = !words.is_empty()
            && words.len() <= 3
            && name.chars().count() <= 40
            && words
                .iter()
                .all(|w| w.chars().next().is_some_and(char::is_uppercase));
        if named {
            return (name.trim().to_lowercase(), rest.trim().to_owned());
        }
    }
    ("someone".to_owned(), text.to_owned())
}

/// Lower-cased words; apostrophes (either kind, as `'`) stay inside them ("i'm").
pub(crate) fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '’'))
        .filter(|w| !w.is_empty())
        .map(|w| w.to_lowercase().replace('’', "'"))
        .collect()
}

/// What a question asks about time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Asked {
    /// What holds now (the default: a question that does not say otherwise wants the current
    /// version of a fact).
    Current,
    /// What holds now, said in so many words ("now", "currently", "these days"…).
    Now,
    /// What held before: "before X", "previously", "used to"…
    Earlier,
    /// Nothing about time: memories ranked as they match (the parts of a question about the
    /// past, searched on their own).
    Unordered,
}

const NOW: &[&[&str]] = &[
    &["now"],
    &["currently"],
    &["current"],
    &["these", "days"],
    &["nowadays"],
    &["at", "the", "moment"],
    &["at", "present"],
    &["latest"],
    &["still"],
];

/// Whether `words` hold one of `phrases` (word sequences).
pub(crate) fn has_phrase(words: &[String], phrases: &[&[&str]]) -> bool {
    phrases.iter().any(|p| {
        words
            .windows(p.len())
            .any(|w| w.iter().zip(*p).all(|(a, b)| a == b))
    })
}

const EARLIER: &[&[&str]] = &[
    &["before"],
    &["previously"],
    &["previous"],
    &["prior", "to"],
    &["used", "to"],
    &["formerly"],
    &["former"],
    &["originally"],
    &["at", "first"],
    &["in", "the", "past"],
    &["old"],
    &["until"],
];

/// Whether `query` asks about the past or the present.
pub(crate) fn asked(query: &str) -> Asked {
    let words = words(query);
    if has_phrase(&words, EARLIER) {
        Asked::Earlier
    } else if has_phrase(&words, NOW) {
        Asked::Now
    } else {
        Asked::Current
    }
}

/// A question about what held before a named change, split into its subject and the change:
/// "What car did she drive before getting the Corolla?" → ("What car did she drive", "getting
/// the Corolla").
pub(crate) fn split_before(query: &str) -> Option<(String, String)> {
    let lower = query.to_lowercase();
    let (at, len) = [" before ", " prior to "]
        .iter()
        .find_map(|w| lower.find(w).map(|at| (at, w.len())))?;
    // Byte offsets of the lower-cased text match the original's for ASCII markers only when
    // lower-casing kept the length; otherwise leave the question whole.
    if lower.len() != query.len() {
        return None;
    }
    let subject = query[..at].trim();
    let change = query[at + len..]
        .trim()
        .trim_end_matches(['?', '.', '!'])
        .trim();
    (words(subject).len() >= 2 && !words(change).is_empty())
        .then(|| (subject.to_owned(), change.to_owned()))
}

/// The values with digits in `text` (a phone number, an address, a version, a time), each with
/// its shape: every run of digits read as `9` and of letters as `a`, other characters kept
/// ("555-0172" and "555-0142" are both `9-9`, "10.0.3.7" is `9.9.9.9`).
pub(crate) fn values_with_digits(text: &str) -> Vec<(String, String)> {
    text.split_whitespace()
        .map(|word| word.trim_matches(|c: char| !c.is_alphanumeric()))
        .filter(|word| word.chars().count() >= 3 && word.chars().any(|c| c.is_ascii_digit()))
        .map(|word| {
            let mut shape = String::new();
            for c in word.chars() {
                let class = if c.is_ascii_digit() {
                    '9'
                } else if c.is_alphabetic() {
                    'a'
                } else {
                    c
                };
                if !(shape.ends_with(class) && (class == '9' || class == 'a')) {
                    shape.push(class);
                }
            }
            (word.to_owned(), shape)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_only_asks_when_little_comes_before_its_question() {
        for text in [
            "Caroline: Cool! What did it look like?",
            "Melanie: Wow, that rocks! What's the main idea of your art?",
            "How do I rebase onto main?",
            "Jon: Did you try version 3.5 of it?",
        ] {
            assert!(only_asks(text), "{text}");
        }
        for text in [
            "Caroline: Wow, nice pic! You both looked amazing at the parade. Where was it?",
            "Caroline: I went to a support group yesterday.",
            // A tag question states; a captured turn holds the answer.
            "Gina: Text me at 555-0142 when you land, okay?",
            "User: how do I rebase onto main?\nAssistant: git rebase main.",
            "",
        ] {
            assert!(!only_asks(text), "{text}");
        }
        assert!(about_asking(
            "What did Caroline ask about the pottery class?"
        ));
        assert!(about_asking("卡罗琳问过什么？"));
        assert!(!about_asking(
            "What did Caroline make in the pottery class?"
        ));
    }

    #[test]
    fn statements_are_read_for_owner_and_stance() {
        let s = statement("Gina: We switched the project's database to Firestore.");
        assert_eq!(s.owner, "gina");
        assert_eq!(s.stance, Stance::Change);
        assert_eq!(s.said, "We switched the project's database to Firestore.");
        assert_eq!(
            statement("Jon: Remember when you used to swear by MariaDB?").stance,
            Stance::Question
        );
        assert_eq!(
            statement("Gina: I found my old cookbook on the shelf.").stance,
            Stance::LookingBack
        );
        assert_eq!(
            statement("Gina: I spent the afternoon tuning queries in MariaDB.").stance,
            Stance::Plain
        );
        let turn = statement("User: staging is at 10.0.3.7 now\nAssistant: Noted.");
        assert_eq!(turn.owner, "user");
        assert_eq!(turn.said, "staging is at 10.0.3.7 now");
        assert_eq!(turn.stance, Stance::Change);
        for said in [
            "Gina: As of this month the team deploys on Fridays.",
            "Gina: We ditched Jenkins for Buildkite.",
            "Gina: I relocated to Lisbon in the spring.",
            "Gina: I just got a puppy called Miso.",
            "Gina: We went back to Postgres after the trial.",
        ] {
            assert_eq!(statement(said).stance, Stance::Change, "{said}");
        }
        assert_eq!(statement("no speaker here").owner, "someone");
        assert_eq!(
            statement("note: lower case is not a speaker").owner,
            "someone"
        );
    }

    #[test]
    fn a_tag_question_after_a_statement_does_not_make_it_a_question() {
        for (text, question) in [
            ("John: Text me at 555-0142 when you land, okay?", false),
            ("John: The build is green now, right?", false),
            ("John: Is the build green now?", true),
            ("John: Which one, the left or the right?", true),
            ("John: Okay?", true),
        ] {
            let said = statement(text);
            assert_eq!(said.stance == Stance::Question, question, "{text}");
        }
    }

    #[test]
    fn values_with_digits_are_read_with_their_shape() {
        let shapes = |text: &str| -> Vec<String> {
            values_with_digits(text)
                .into_iter()
                .map(|(_, s)| s)
                .collect()
        };
        assert_eq!(shapes("Text me at 555-0142 when you land, okay?"), ["9-9"]);
        assert_eq!(shapes("New number alert: 555-0172."), ["9-9"]);
        assert_eq!(shapes("staging is at 10.0.3.7 now"), ["9.9.9.9"]);
        assert_eq!(
            shapes("standup at 11:30, release v2.14 is out"),
            ["9:9", "a9.9"]
        );
        assert!(
            shapes("I had 2 coffees").is_empty(),
            "short numbers are not values"
        );
    }

    #[test]
    fn questions_say_whether_they_ask_about_the_past() {
        assert_eq!(asked("Where does Gina work now?"), Asked::Now);
        assert_eq!(
            asked("Which database does the project use?"),
            Asked::Current
        );
        assert_eq!(
            asked("Where did Gina work before joining Globex?"),
            Asked::Earlier
        );
        assert_eq!(asked("What was his previous phone number?"), Asked::Earlier);
        assert_eq!(
            split_before("What car did Caroline drive before getting the Toyota Corolla?"),
            Some((
                "What car did Caroline drive".to_owned(),
                "getting the Toyota Corolla".to_owned()
            ))
        );
        assert_eq!(split_before("What did she do before?"), None);
        assert_eq!(split_before("Where did she work"), None);
    }
}

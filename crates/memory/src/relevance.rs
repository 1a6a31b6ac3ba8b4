//! What a memory must share with a question to be recalled: small talk recalls nothing, and a
//! memory the words found must share two of the question's informative terms or carry enough of
//! its information (the matched terms' share of its IDF weight), or be close to it in meaning —
//! one shared common word is not a reason. Also which of the question's words a memory holds, for the plain "why".

use std::collections::HashSet;

use crate::text::{is_cjk, Analyzer};

/// The share of the question's information (IDF-weighted terms) a memory found by its words must
/// hold, unless it is close in meaning.
pub(crate) const COVERAGE_MIN: f64 = 0.3;
/// The (rescaled) cosine similarity from which a memory counts as close in meaning to the
/// question: it is recalled however few of the question's words it shares.
pub(crate) const CLOSE_IN_MEANING: f64 = 0.35;
/// The fewest memories the question's term weights are computed over (see [`weighted_terms`]).
const IDF_FLOOR: i64 = 100;
/// How much a term found only in a memory's conversational neighbours counts towards its
/// coverage (the full-text index weights that column the same).
const CONTEXT_SHARE: f64 = 0.35;

/// Greetings, thanks and acknowledgements: words that carry nothing to recall by (besides the
/// index's stop words, which already include "hi", "hey", "thanks"…).
const SMALL_TALK: &[&str] = &[
    "hello",
    "hallo",
    "hiya",
    "howdy",
    "yo",
    "sup",
    "greetings",
    "morning",
    "afternoon",
    "evening",
    "night",
    "good",
    "bye",
    "goodbye",
    "cya",
    "cheers",
    "thx",
    "ty",
    "please",
    "pls",
    "ok",
    "okay",
    "sure",
    "yes",
    "yep",
    "yup",
    "nope",
    "nah",
    "lol",
    "haha",
    "hmm",
    "hm",
    "going",
    "doing",
    "whats",
    "hows",
    "fine",
    "great",
    "cool",
    "nice",
    "meet",
    "welcome",
    "there",
];
/// The same in Chinese (matched as substrings: the script has no spaces).
const SMALL_TALK_CJK: &[&str] = &[
    "你好",
    "您好",
    "早上好",
    "下午好",
    "晚上好",
    "晚安",
    "谢谢",
    "再见",
    "哈喽",
    "嗨",
    "在吗",
    "好的",
    "嗯",
    "哈哈",
    "吗",
    "呢",
    "啊",
    "呀",
    "吧",
    "了",
];

/// Whether a word (lower-cased) is small talk.
fn small_talk_word(word: &str) -> bool {
    SMALL_TALK.contains(&word) || crate::text::is_stop_word(word)
}

/// Whether `query` is only greetings and small talk ("hello", "Hi there!", "good morning",
/// "你好"): such a message recalls nothing. A query naming an identifier is never small talk.
pub(crate) fn is_small_talk(query: &str) -> bool {
    let mut rest = query.to_lowercase();
    for phrase in SMALL_TALK_CJK {
        rest = rest.replace(phrase, " ");
    }
    for word in rest.split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '’')) {
        let word: String = word.chars().filter(|c| *c != '\'' && *c != '’').collect();
        if word.is_empty() {
            continue;
        }
        if word.chars().any(is_cjk) || !small_talk_word(&word) {
            return false;
        }
    }
    !query.trim().is_empty()
}

/// The question's terms with their information (BM25's IDF over `total` memories; a term no
/// memory holds weighs as one that a single memory holds), small-talk terms weighing nothing.
pub(crate) fn weighted_terms(
    analyzer: &Analyzer,
    query: &str,
    terms: &[String],
    total: i64,
    df: impl Fn(&str) -> i64,
) -> Vec<(String, f64)> {
    let small: HashSet<String> = query
        .split(|c: char| !c.is_alphanumeric())
        .map(str::to_lowercase)
        .filter(|w| SMALL_TALK.contains(&w.as_str()))
        .flat_map(|w| analyzer.terms(&w))
        .collect();
    // A store of a few memories says little about how rare a word is: there the topic of the
    // question ("basil") may be in every memory and weigh next to nothing against a word no
    // memory holds ("go"). The weights are taken as over at least `IDF_FLOOR` memories.
    let n = total.max(IDF_FLOOR) as f64;
    terms
        .iter()
        .map(|term| {
            let weight = if small.contains(term) {
                0.0
            } else {
                // A term no memory holds weighs as the rarest that one does.
                let df = df(term).clamp(1, total.max(1)) as f64;
                (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
            };
            (term.clone(), weight)
        })
        .collect()
}

/// Whether a memory shares enough of the question to be recalled by its words: two or more of
/// its informative terms, or one that carries at least [`COVERAGE_MIN`] of its information.
pub(crate) fn shares_enough(
    weighted: &[(String, f64)],
    body: &HashSet<String>,
    context: &HashSet<String>,
) -> bool {
    let held = weighted
        .iter()
        .filter(|(term, w)| *w > 0.0 && (body.contains(term) || context.contains(term)))
        .count();
    held >= 2 || coverage(weighted, body, context) >= COVERAGE_MIN
}

/// The share of the question's information a memory holds: its body's terms fully, terms only
/// its neighbours hold at the context column's weight. 1 when the question has no weight at all.
pub(crate) fn coverage(
    weighted: &[(String, f64)],
    body: &HashSet<String>,
    context: &HashSet<String>,
) -> f64 {
    let total: f64 = weighted.iter().map(|(_, w)| w).sum();
    if total <= f64::EPSILON {
        return 1.0;
    }
    let held: f64 = weighted
        .iter()
        .map(|(term, w)| {
            if body.contains(term) {
                *w
            } else if context.contains(term) {
                w * CONTEXT_SHARE
            } else {
                0.0
            }
        })
        .sum();
    held / total
}

/// The question's own words (as written, each once, in order) that `text` holds by their stems,
/// small talk left out: what "Matches your words …" names.
pub(crate) fn shared_words(analyzer: &Analyzer, query: &str, text: &str) -> Vec<String> {
    let held: HashSet<String> = analyzer.terms(text).into_iter().collect();
    let mut seen = HashSet::new();
    let mut words = Vec::new();
    for word in query.split(|c: char| !(c.is_alphanumeric() || c == '-' || c == '_')) {
        let word = word.trim_matches(|c: char| c == '-' || c == '_');
        if word.is_empty() || SMALL_TALK.contains(&word.to_lowercase().as_str()) {
            continue;
        }
        let terms = analyzer.terms(word);
        if !terms.is_empty()
            && terms.iter().all(|t| held.contains(t))
            && seen.insert(word.to_lowercase())
        {
            words.push(word.to_owned());
        }
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn greetings_and_small_talk_are_small_talk() {
        for query in [
            "hello",
            "Hello!",
            "Hi there!",
            "hey, how's it going?",
            "good morning",
            "thanks, ok",
            "你好",
            "你好！",
            "谢谢",
        ] {
            assert!(is_small_talk(query), "{query}");
        }
        for query in [
            "hello, where is the staging database?",
            "ls",
            "what did I paint",
            "staging",
            "数据库",
            "src/main.rs",
        ] {
            assert!(!is_small_talk(query), "{query}");
        }
    }

    #[test]
    fn a_common_word_carries_little_of_a_question() {
        let analyzer = Analyzer::default();
        let terms = analyzer.query_terms("project deadline for the rocket launch", 32);
        // "project" is in 90 of 100 memories, "deadline" in 2, the rest in none.
        let weighted = weighted_terms(&analyzer, "", &terms, 100, |t| match t {
            "project" => 90,
            "deadlin" => 2,
            _ => 0,
        });
        let set = |text: &str| -> HashSet<String> { analyzer.terms(text).into_iter().collect() };
        let none = HashSet::new();
        let common = coverage(&weighted, &set("the project is big"), &none);
        let rare = coverage(&weighted, &set("the deadline of the rocket"), &none);
        assert!(common < 0.05, "{common}");
        assert!(rare > COVERAGE_MIN, "{rare}");
        let neighbour = coverage(&weighted, &none, &set("the deadline of the rocket"));
        assert!(neighbour < rare && neighbour > 0.0, "{neighbour}");
        assert!(!shares_enough(&weighted, &set("the project is big"), &none));
        assert!(shares_enough(&weighted, &set("a project deadline"), &none));
        assert!(shares_enough(&weighted, &set("the rocket"), &none));
    }

    #[test]
    fn small_talk_words_weigh_nothing() {
        let analyzer = Analyzer::default();
        let query = "hello, the staging database";
        let terms = analyzer.query_terms(query, 32);
        let weighted = weighted_terms(&analyzer, query, &terms, 10, |_| 1);
        let only_hello: HashSet<String> = analyzer.terms("hello world").into_iter().collect();
        assert_eq!(coverage(&weighted, &only_hello, &HashSet::new()), 0.0);
    }

    #[test]
    fn shared_words_are_the_questions_own() {
        let analyzer = Analyzer::default();
        assert_eq!(
            shared_words(
                &analyzer,
                "Hello, which staging databases rotate passwords?",
                "The staging database password rotates every 90 days"
            ),
            ["staging", "databases", "rotate", "passwords"]
        );
    }
}

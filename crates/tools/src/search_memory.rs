//! `search_memory`'s search: words (case and accents folded, found inside longer words) over the
//! questions, answers and summaries of earlier sessions, ranked and rendered as agent-tools.md
//! says. Pure: the runtime hands over the sessions' texts.

use std::collections::BTreeSet;

use unicode_normalization::UnicodeNormalization;

use crate::texts::{fill, SEARCH_EMPTY, SEARCH_HITS, SEARCH_NO_HIT};

/// What a searched text is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    Question,
    Answer,
    Summary,
}

impl EntryKind {
    fn word(self) -> &'static str {
        match self {
            Self::Question => "question",
            Self::Answer => "answer",
            Self::Summary => "summary",
        }
    }
}

/// One searchable text of a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The turn it belongs to (1-based).
    pub turn: usize,
    pub kind: EntryKind,
    pub text: String,
    /// For a question: the answer its turn ended on.
    pub answer: Option<String>,
}

/// A stored session's searchable texts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionTexts {
    pub id: String,
    /// Its last update, as `YYYY-MM-DD`, and in milliseconds for ordering.
    pub date: String,
    pub updated_at: i64,
    pub entries: Vec<Entry>,
}

/// Case and accents folded (`Préférence` → `preference`).
fn fold(text: &str) -> String {
    text.nfd()
        .filter(|c| !unicode_normalization::char::is_combining_mark(*c))
        .flat_map(char::to_lowercase)
        .collect()
}

/// The query's words, one- and two-letter ones left out when there are longer ones.
fn words(query: &str) -> Vec<String> {
    let all: Vec<String> = fold(query)
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    if all.iter().any(|w| w.chars().count() > 2) {
        all.into_iter().filter(|w| w.chars().count() > 2).collect()
    } else {
        all
    }
}

/// How many of `words` the folded `text` holds, and the byte span from the first found to the
/// last, mapped back onto `text`.
fn found(text: &str, words: &[String]) -> (usize, Option<(usize, usize)>) {
    // Fold character by character so positions map back to the original.
    let mut folded = String::new();
    let mut origin: Vec<usize> = Vec::new();
    for (i, c) in text.char_indices() {
        for f in fold(&c.to_string()).chars() {
            folded.push(f);
            origin.extend(std::iter::repeat_n(i, f.len_utf8()));
        }
    }
    origin.push(text.len());
    let mut held = 0;
    let mut span: Option<(usize, usize)> = None;
    for w in words {
        let mut any = false;
        for (at, _) in folded.match_indices(w.as_str()) {
            any = true;
            let start = origin[at];
            let end = origin.get(at + w.len()).copied().unwrap_or(text.len());
            span = Some(match span {
                None => (start, end),
                Some((s, e)) => (s.min(start), e.max(end)),
            });
        }
        held += usize::from(any);
    }
    (held, span)
}

/// `text` on one line, its runs of whitespace made single spaces.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// From the first word found to the last in `line` (a text on one line): 80 characters before,
/// at least 160 after the first, 600 at most, `…` where cut.
fn excerpt(line: &str, span: Option<(usize, usize)>) -> String {
    let (first, last) = match span {
        Some((s, e)) => (line[..s].chars().count(), line[..e].chars().count()),
        None => (0, 0),
    };
    let chars: Vec<char> = line.chars().collect();
    let from = first.saturating_sub(80);
    let to = last.max(first + 160).min(from + 600).min(chars.len());
    let mut out = String::new();
    if from > 0 {
        out.push('…');
    }
    out.extend(&chars[from.min(to)..to]);
    if to < chars.len() {
        out.push('…');
    }
    out
}

/// The tool's whole answer.
pub fn search(query: &str, limit: usize, sessions: &[SessionTexts], dir: &str) -> String {
    let words = words(query);
    if words.is_empty() {
        return SEARCH_EMPTY.to_owned();
    }
    let limit = if limit == 0 { 10 } else { limit.min(50) };
    struct Hit<'a> {
        score: usize,
        updated_at: i64,
        session: &'a SessionTexts,
        entry: &'a Entry,
        span: Option<(usize, usize)>,
    }
    let mut hits: Vec<Hit> = Vec::new();
    for session in sessions {
        // An answer carried by a matching question is not a hit of its own.
        let mut carried: BTreeSet<usize> = BTreeSet::new();
        for entry in session
            .entries
            .iter()
            .filter(|e| e.kind == EntryKind::Question)
        {
            let (held, span) = found(&one_line(&entry.text), &words);
            if held > 0 {
                let answer = entry.answer.as_deref().unwrap_or("");
                let both = found(&format!("{} {answer}", entry.text), &words).0;
                carried.insert(entry.turn);
                hits.push(Hit {
                    score: both,
                    updated_at: session.updated_at,
                    session,
                    entry,
                    span,
                });
            }
        }
        for entry in session
            .entries
            .iter()
            .filter(|e| e.kind != EntryKind::Question)
        {
            if entry.kind == EntryKind::Answer && carried.contains(&entry.turn) {
                continue;
            }
            let (held, span) = found(&one_line(&entry.text), &words);
            if held > 0 {
                hits.push(Hit {
                    score: held,
                    updated_at: session.updated_at,
                    session,
                    entry,
                    span,
                });
            }
        }
    }
    if hits.is_empty() {
        return fill(SEARCH_NO_HIT, &[("query", query), ("dir", dir)]);
    }
    hits.sort_by(|a, b| {
        b.score
            .cmp(&a.score)
            .then(b.updated_at.cmp(&a.updated_at))
            .then(b.entry.turn.cmp(&a.entry.turn))
    });
    hits.truncate(limit);
    let mut out = fill(
        SEARCH_HITS,
        &[
            ("n", &hits.len().to_string()),
            ("query", query),
            ("dir", dir),
        ],
    );
    for hit in &hits {
        out.push_str(&format!(
            "\n{} · {} · turn {} · {}\n{}",
            hit.session.id,
            hit.session.date,
            hit.entry.turn,
            hit.entry.kind.word(),
            excerpt(&one_line(&hit.entry.text), hit.span)
        ));
        if let Some(answer) = &hit.entry.answer {
            let answer = one_line(answer);
            let span = found(&answer, &words).1;
            out.push_str(&format!("\n→ {}", excerpt(&answer, span)));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(id: &str, updated_at: i64, entries: Vec<Entry>) -> SessionTexts {
        SessionTexts {
            id: id.into(),
            date: "2026-11-20".into(),
            updated_at,
            entries,
        }
    }

    fn entry(turn: usize, kind: EntryKind, text: &str, answer: Option<&str>) -> Entry {
        Entry {
            turn,
            kind,
            text: text.into(),
            answer: answer.map(str::to_owned),
        }
    }

    #[test]
    fn accents_case_and_short_words_fold_and_questions_carry_their_answer() {
        let sessions = vec![
            session(
                "old",
                1,
                vec![
                    entry(
                        1,
                        EntryKind::Question,
                        "Quelle est ma Préférence de thé ?",
                        Some("Le thé vert."),
                    ),
                    entry(1, EntryKind::Answer, "Le thé vert.", None),
                ],
            ),
            session(
                "new",
                2,
                vec![entry(
                    3,
                    EntryKind::Answer,
                    "Your preferences are saved.",
                    None,
                )],
            ),
        ];
        let out = search("preference of thé", 0, &sessions, "sessions");
        assert_eq!(
            out,
            "🔎 2 hit(s) for \"preference of thé\" in sessions\nold · 2026-11-20 · turn 1 · question\nQuelle est ma Préférence de thé ?\n→ Le thé vert.\nnew · 2026-11-20 · turn 3 · answer\nYour preferences are saved."
        );
    }

    #[test]
    fn no_hit_and_an_empty_query_say_so() {
        assert_eq!(search("  ", 0, &[], "d"), SEARCH_EMPTY);
        assert!(search("kiwi", 0, &[], "d")
            .starts_with("🔎 no hit for \"kiwi\" in d\nThe search matches words, not meanings"));
    }

    #[test]
    fn a_long_text_is_cut_around_the_words() {
        let text = one_line(&format!("{} needle {}", "a ".repeat(200), "b ".repeat(400)));
        let out = excerpt(&text, found(&text, &["needle".to_owned()]).1);
        assert!(out.starts_with('…') && out.ends_with('…'), "{out}");
        assert!(out.contains("needle"));
        assert!(out.chars().count() <= 602);
    }
}

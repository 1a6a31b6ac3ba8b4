//! The person's vocabulary, for voice input: the names of their projects and the identifiers,
//! names and long words they use again and again, read from their recent memories. Whisper is
//! given these as its prompt, so it hears "cairn" rather than "karen".

use std::collections::HashMap;

use crate::{MemoryError, MemoryStore};

/// Recent memories read for words.
const RECENT_MEMORIES: i64 = 2_000;

/// A word must appear in this many memories to count as the person's.
const MIN_MEMORIES: usize = 1;

/// Plain words shorter than this are left out: short words are the ones any model knows.
const MIN_WORD_CHARS: usize = 4;

impl MemoryStore {
    /// Up to `max` words the person uses, most telling first: project names (the folders their
    /// sessions ran in), then words and two-word phrases ranked by how many recent memories hold
    /// them, identifiers (`snake_case`, `camelCase`, `Cargo.toml`), names and phrases first
    /// among equals. Plain words need four letters.
    pub fn vocabulary(&self, max: usize) -> Result<Vec<String>, MemoryError> {
        let conn = self.lock()?;
        let mut words: Vec<String> = Vec::new();
        let workspaces: Vec<String> = conn
            .prepare_cached(
                "SELECT workspace FROM sessions WHERE coalesce(workspace, '') != ''
                 GROUP BY workspace ORDER BY max(opened_at) DESC LIMIT 20",
            )?
            .query_map([], |row| row.get(0))?
            .collect::<Result<_, _>>()?;
        for workspace in workspaces {
            let name = workspace
                .trim_end_matches(['/', '\\'])
                .rsplit(['/', '\\'])
                .next()
                .unwrap_or_default()
                .to_owned();
            if name.chars().count() >= 3 && !words.contains(&name) {
                words.push(name);
            }
        }
        let texts: Vec<String> = conn
            .prepare_cached(
                "SELECT text FROM memories WHERE status != 'deleted'
                 ORDER BY created_at DESC LIMIT ?1",
            )?
            .query_map([RECENT_MEMORIES], |row| row.get(0))?
            .collect::<Result<_, _>>()?;
        drop(conn);

        // Per word or two-word phrase (lower-cased): memories holding it, its most common
        // spelling, and whether it is an identifier or a name.
        let mut counts: HashMap<String, (usize, HashMap<String, usize>, bool)> = HashMap::new();
        for text in &texts {
            let mut seen = std::collections::HashSet::new();
            let found = candidate_words(text);
            let phrases: Vec<(String, bool)> = found
                .windows(2)
                .filter(|pair| {
                    pair[1].2 == pair[0].2 + 1
                        && pair.iter().all(|(w, identifier, _)| {
                            !identifier && w.chars().all(|c| !c.is_uppercase())
                        })
                })
                .map(|pair| (format!("{} {}", pair[0].0, pair[1].0), true))
                .collect();
            let words = found
                .iter()
                .map(|(w, special, _)| ((*w).to_owned(), *special));
            for (word, special) in words.chain(phrases) {
                let key = word.to_lowercase();
                let entry = counts.entry(key.clone()).or_default();
                *entry.1.entry(word).or_default() += 1;
                entry.2 |= special;
                if seen.insert(key) {
                    entry.0 += 1;
                }
            }
        }
        let mut ranked: Vec<(bool, usize, String)> = counts
            .into_iter()
            .filter(|(_, (memories, _, _))| *memories >= MIN_MEMORIES)
            .filter_map(|(key, (memories, spellings, special))| {
                let spelling = spellings
                    .into_iter()
                    .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)))
                    .map(|(s, _)| s)?;
                let special = special || spelling.chars().next().is_some_and(char::is_uppercase);
                (special || key.chars().count() >= MIN_WORD_CHARS)
                    .then_some((special, memories, spelling))
            })
            .collect();
        ranked.sort_by(|a, b| b.1.cmp(&a.1).then(b.0.cmp(&a.0)).then(a.2.cmp(&b.2)));
        for (_, _, word) in ranked {
            if words.len() >= max {
                break;
            }
            if !words.iter().any(|w| w.eq_ignore_ascii_case(&word)) {
                words.push(word);
            }
        }
        words.truncate(max);
        Ok(words)
    }
}

/// Memories read for what the person said.
const RECENT_SAYINGS: i64 = 200;

/// Words kept of one thing said: a long request is mostly pasted material, not speech.
const SAYING_WORDS: usize = 40;

impl MemoryStore {
    /// What the person said lately (their requests, newest last), up to about `max_words`
    /// words: whisper primed with someone's own sentences hears their words in the way they say
    /// them (measured on synthesised technical speech, tiny.en: 17.1 % of words wrong with a
    /// glossary of their vocabulary, 10.4 % with their sentences).
    pub fn said_recently(&self, max_words: usize) -> Result<Vec<String>, MemoryError> {
        let texts: Vec<String> = self.read(|conn| {
            Ok(conn
                .prepare_cached(
                    "SELECT text FROM memories WHERE status != 'deleted' AND text LIKE 'User: %'
                     ORDER BY created_at DESC, id DESC LIMIT ?1",
                )?
                .query_map([RECENT_SAYINGS], |row| row.get(0))?
                .collect::<Result<_, _>>()?)
        })?;
        let mut said: Vec<String> = Vec::new();
        let mut words = 0;
        for text in &texts {
            let Some(first) = text.lines().next().and_then(|l| l.strip_prefix("User: ")) else {
                continue;
            };
            let kept: Vec<&str> = first.split_whitespace().take(SAYING_WORDS).collect();
            let saying = kept.join(" ");
            if kept.len() < 3 || said.contains(&saying) {
                continue;
            }
            if words + kept.len() > max_words {
                break;
            }
            words += kept.len();
            said.push(saying);
        }
        said.reverse();
        Ok(said)
    }
}

/// The words of a text worth offering, each with whether it is an identifier and its position
/// among the text's words (phrases are two neighbours). A capitalised word at the start of a
/// sentence or after a speaker's colon is not taken for a name.
fn candidate_words(text: &str) -> Vec<(&str, bool, usize)> {
    let mut out = Vec::new();
    let mut sentence_start = true;
    for (at, raw) in text.split_whitespace().enumerate() {
        let word = raw.trim_matches(|c: char| !(c.is_alphanumeric() || c == '_'));
        let ends_sentence = raw.ends_with(['.', '!', '?', ':']);
        let starts = std::mem::replace(&mut sentence_start, ends_sentence);
        if word.chars().count() < 3 || !word.chars().any(char::is_alphabetic) {
            continue;
        }
        if word.contains(['/', '\\', '@']) || word.chars().count() > 40 {
            continue;
        }
        if crate::text::is_stop_word(&word.to_lowercase()) {
            continue;
        }
        let identifier = word.contains('_')
            || word.contains('.')
            || word.chars().skip(1).any(char::is_uppercase) && word.chars().any(char::is_lowercase);
        let capitalised = word.chars().next().is_some_and(char::is_uppercase);
        if capitalised && starts && !identifier {
            continue;
        }
        out.push((word, identifier, at));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{NewMemory, TurnStart};

    fn said(store: &MemoryStore, text: &str) -> Result<i64, MemoryError> {
        Ok(store
            .add(NewMemory {
                text: text.into(),
                ..NewMemory::default()
            })?
            .id)
    }

    #[test]
    fn the_vocabulary_is_projects_then_names_and_phrases_then_words() -> Result<(), MemoryError> {
        let store = MemoryStore::open_in_memory()?;
        store.start_turn(TurnStart {
            session: "s1".into(),
            request: "hello".into(),
            source: None,
            idempotency_key: None,
            started_at: None,
            workspace: Some("/home/ana/code/lighthouse/".into()),
        })?;
        said(
            &store,
            "User: ask Priya whether the webhook handler retries",
        )?;
        said(
            &store,
            "User: the webhook handler timed out again, tell Priya",
        )?;
        said(&store, "User: the migration is slow")?;
        let gone = said(&store, "User: the zeppelin telemetry")?;
        store.delete(gone)?;
        let words = store.vocabulary(20)?;
        assert_eq!(
            words.first().map(String::as_str),
            Some("lighthouse"),
            "{words:?}"
        );
        let at = |w: &str| words.iter().position(|x| x == w);
        assert!(at("webhook handler").is_some(), "{words:?}");
        assert!(at("Priya").is_some(), "{words:?}");
        assert!(at("migration").is_some(), "{words:?}");
        assert!(at("webhook handler") < at("migration"), "{words:?}");
        assert!(!words.iter().any(|w| w.contains("zeppelin")), "{words:?}");
        assert!(
            !words.iter().any(|w| w == "User" || w == "the"),
            "{words:?}"
        );
        assert!(store.vocabulary(2)?.len() == 2);
        Ok(())
    }

    #[test]
    fn what_was_said_lately_comes_newest_last_within_the_words_asked() -> Result<(), MemoryError> {
        let store = MemoryStore::open_in_memory()?.with_clock({
            let tick = std::sync::atomic::AtomicI64::new(0);
            move || tick.fetch_add(1, std::sync::atomic::Ordering::SeqCst)
        });
        said(&store, "User: rename the tokenize function in the parser")?;
        said(&store, "User: ok")?;
        said(&store, "Assistant: the parser is renamed")?;
        said(
            &store,
            "User: run the database migration on staging\nTool bash(ls) → done",
        )?;
        let gone = said(&store, "User: the zeppelin telemetry is down")?;
        store.delete(gone)?;
        said(&store, "User: run the database migration on staging")?;
        assert_eq!(
            store.said_recently(100)?,
            [
                "rename the tokenize function in the parser",
                "run the database migration on staging"
            ]
        );
        assert_eq!(
            store.said_recently(7)?,
            ["run the database migration on staging"]
        );
        Ok(())
    }

    #[test]
    fn identifiers_and_names_are_candidates_sentence_starts_are_not() {
        let words = candidate_words(
            "User: Please open Cargo.toml and the parse_args helper. Then ask Priya about it",
        );
        let names: Vec<&str> = words.iter().map(|(w, _, _)| *w).collect();
        assert!(names.contains(&"Cargo.toml"));
        assert!(names.contains(&"parse_args"));
        assert!(names.contains(&"Priya"));
        assert!(!names.contains(&"Please"), "{names:?}");
        assert!(!names.contains(&"Then"), "{names:?}");
    }
}

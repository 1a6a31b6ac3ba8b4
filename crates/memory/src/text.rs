//! Text analysis for indexing and queries: terms (lower-cased, stop words dropped, English stems,
//! Chinese/Japanese/Korean as overlapping character pairs) and structural fragments (paths,
//! identifiers, error codes) that must match exactly; and text cut to a snippet.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

use regex::Regex;
use rust_stemmers::{Algorithm, Stemmer};

/// Turns text into index terms. Cheap to share.
pub struct Analyzer {
    stemmer: Stemmer,
}

impl Default for Analyzer {
    fn default() -> Self {
        Self {
            stemmer: Stemmer::create(Algorithm::English),
        }
    }
}

/// Distinct words whose stems a thread keeps (a few MB at most); the cache starts over beyond.
const STEM_CACHE_WORDS: usize = 50_000;

const STOP_WORDS: &[&str] = &[
    "a", "about", "after", "again", "all", "am", "an", "and", "any", "are", "as", "at", "be",
    "been", "before", "being", "both", "but", "by", "can", "could", "did", "do", "does", "doing",
    "for", "from", "had", "has", "have", "having", "he", "her", "here", "hers", "him", "his",
    "how", "i", "if", "in", "into", "is", "it", "its", "just", "me", "more", "my", "no", "nor",
    "not", "now", "of", "off", "on", "once", "only", "or", "other", "our", "ours", "out", "over",
    "own", "s", "same", "she", "should", "so", "some", "such", "t", "than", "that", "the", "their",
    "theirs", "them", "then", "there", "these", "they", "this", "those", "through", "to", "too",
    "under", "until", "up", "very", "was", "we", "were", "what", "when", "where", "which", "while",
    "who", "whom", "why", "will", "with", "would", "you", "your", "yours", "ll", "re", "ve", "d",
    "m", "don", "didn", "doesn", "isn", "wasn", "weren", "won", "let", "also", "yeah", "oh", "hey",
    "really", "thanks", "thank", "wow", "hi", "got", "get", "gonna", "lot", "much", "many", "way",
];

/// Word lookups while indexing hash with Fx: SipHash was a sixth of the analyser's time.
type FastSet<T> = HashSet<T, rustc_hash::FxBuildHasher>;
type FastMap<K, V> = HashMap<K, V, rustc_hash::FxBuildHasher>;

fn stop_words() -> &'static FastSet<&'static str> {
    static SET: OnceLock<FastSet<&'static str>> = OnceLock::new();
    SET.get_or_init(|| STOP_WORDS.iter().copied().collect())
}

/// Whether a lower-cased word is one the index leaves out.
pub(crate) fn is_stop_word(word: &str) -> bool {
    stop_words().contains(word)
}

/// Chinese, Japanese and Korean script characters, indexed as overlapping pairs.
pub fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF   // Hiragana, Katakana
        | 0x3400..=0x4DBF // CJK Extension A
        | 0x4E00..=0x9FFF // CJK Unified Ideographs
        | 0xF900..=0xFAFF // CJK Compatibility Ideographs
        | 0xAC00..=0xD7AF // Hangul syllables
        | 0x20000..=0x2FFFF)
}

impl Analyzer {
    /// The terms of `text`, in order, with repeats (BM25 counts them).
    pub fn terms(&self, text: &str) -> Vec<String> {
        let mut out = Vec::new();
        self.each_term(text, &mut |term| out.push(term.to_owned()));
        out
    }

    /// The terms of `text` joined by spaces: what the full-text index stores.
    pub fn indexed(&self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        self.each_term(text, &mut |term| {
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(term);
        });
        out
    }

    /// Calls `emit` with each term of `text`, in order; one buffer serves every word.
    fn each_term(&self, text: &str, emit: &mut dyn FnMut(&str)) {
        let mut word = String::new();
        let mut cjk: Vec<char> = Vec::new();
        for c in text.chars() {
            if is_cjk(c) {
                self.flush_word(&mut word, emit);
                cjk.push(c);
            } else if c.is_alphanumeric() {
                flush_cjk(&mut cjk, emit);
                if c.is_ascii() {
                    word.push(c.to_ascii_lowercase());
                } else {
                    word.extend(c.to_lowercase());
                }
            } else if c == '\'' || c == '’' {
                // "Caroline's" → "caroline"; "don't" → "don" (a stop word).
                self.flush_word(&mut word, emit);
                flush_cjk(&mut cjk, emit);
                word.push('\u{0}');
            } else {
                self.flush_word(&mut word, emit);
                flush_cjk(&mut cjk, emit);
            }
        }
        self.flush_word(&mut word, emit);
        flush_cjk(&mut cjk, emit);
    }

    fn flush_word(&self, word: &mut String, emit: &mut dyn FnMut(&str)) {
        // A word right after an apostrophe (the "s" of "'s") is marked with a leading NUL: drop it.
        let keep = !word.is_empty()
            && !word.starts_with('\u{0}')
            && !stop_words().contains(word.as_str())
            && (word.chars().nth(1).is_some() || word.chars().all(|c| c.is_ascii_digit()));
        if keep {
            self.stem(word, emit);
        }
        word.clear();
    }

    /// Emits the English stem of a lower-cased word, remembered: text repeats its words (Zipf),
    /// and stemming was most of the cost of indexing an import.
    fn stem(&self, word: &str, emit: &mut dyn FnMut(&str)) {
        thread_local! {
            static STEMS: RefCell<FastMap<String, String>> = RefCell::new(FastMap::default());
        }
        STEMS.with(|stems| {
            let mut stems = stems.borrow_mut();
            if let Some(stem) = stems.get(word) {
                emit(stem);
                return;
            }
            if stems.len() >= STEM_CACHE_WORDS {
                stems.clear();
            }
            let stem = self.stemmer.stem(word).into_owned();
            emit(&stem);
            stems.insert(word.to_owned(), stem);
        })
    }

    /// Distinct terms of a query, in first-seen order, at most `max`.
    pub fn query_terms(&self, text: &str, max: usize) -> Vec<String> {
        let mut seen = HashSet::new();
        self.terms(text)
            .into_iter()
            .filter(|t| seen.insert(t.clone()))
            .take(max)
            .collect()
    }
}

fn flush_cjk(run: &mut Vec<char>, emit: &mut dyn FnMut(&str)) {
    let mut buf = [0u8; 8];
    match run.len() {
        0 => {}
        1 => emit(run[0].encode_utf8(&mut buf)),
        _ => {
            for pair in run.windows(2) {
                let first = pair[0].len_utf8();
                pair[0].encode_utf8(&mut buf);
                pair[1].encode_utf8(&mut buf[first..]);
                let len = first + pair[1].len_utf8();
                if let Ok(term) = std::str::from_utf8(&buf[..len]) {
                    emit(term);
                }
            }
        }
    }
    run.clear();
}

/// Structural fragments: paths, dotted or `::` names, snake_case and camelCase identifiers, error
/// codes. Lower-cased, distinct, in first-seen order. Word boundaries are ASCII: identifiers are,
/// and a Unicode boundary sends the regex engine to its slowest path on any non-ASCII text.
pub fn idents(text: &str) -> Vec<String> {
    static RE: OnceLock<Option<Regex>> = OnceLock::new();
    let Some(re) = RE
        .get_or_init(|| {
            Regex::new(concat!(
                r"(?:[A-Za-z0-9_.~-]*/[A-Za-z0-9_./-]+)", // paths
                r"|(?:[A-Za-z_][A-Za-z0-9_]*(?:(?:::|\.)[A-Za-z_][A-Za-z0-9_]*)+)", // a::b, a.b.c
                r"|(?:(?-u:\b)[A-Za-z0-9]*_[A-Za-z0-9_]+(?-u:\b))", // snake_case
                r"|(?:(?-u:\b)[a-z]+[A-Z][A-Za-z0-9]*(?-u:\b))", // camelCase
                r"|(?:(?-u:\b)[A-Z]{1,6}-?\d{2,6}(?-u:\b))", // E0599, HTTP-404
                r"|(?:(?-u:\b)E[A-Z]{3,}(?-u:\b))",       // ENOENT
                r"|(?:#\d+(?-u:\b))",                     // #123
            ))
            .ok()
        })
        .as_ref()
    else {
        return Vec::new();
    };
    let mut seen = HashSet::new();
    re.find_iter(text)
        .map(|m| {
            m.as_str()
                .trim_matches(|c: char| c == '.' || c == '-')
                .to_lowercase()
        })
        .filter(|s| s.len() >= 3 && seen.insert(s.clone()))
        .collect()
}

/// Quotes terms for an FTS5 MATCH expression joined by OR (scores stay BM25 scores).
pub fn fts_or_query(terms: &[String]) -> String {
    terms
        .iter()
        .map(|t| format!("\"{}\"", t.replace('"', "\"\"")))
        .collect::<Vec<_>>()
        .join(" OR ")
}

/// At most `max` characters of `text`, cut at a character boundary, with an ellipsis when cut.
pub fn snippet(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn english_terms_are_stemmed_without_stop_words() {
        let a = Analyzer::default();
        assert_eq!(
            a.terms("Caroline's painting classes were running late"),
            vec!["carolin", "paint", "class", "run", "late"]
        );
    }

    #[test]
    fn chinese_is_split_into_overlapping_pairs() {
        let a = Analyzer::default();
        assert_eq!(a.terms("记得浇花"), vec!["记得", "得浇", "浇花"]);
        assert_eq!(a.terms("我 喜欢 猫"), vec!["我", "喜欢", "猫"]);
        // Mixed scripts keep both.
        assert_eq!(a.terms("用Rust写"), vec!["用", "rust", "写"]);
    }

    #[test]
    fn japanese_kana_and_kanji_pair_up() {
        let a = Analyzer::default();
        assert_eq!(a.terms("東京タワー"), vec!["東京", "京タ", "タワ", "ワー"]);
    }

    #[test]
    fn structural_fragments_are_found() {
        let found = idents(
            "error[E0599]: no method in src/main.rs for tokio::spawn; see #42 and ENOENT in my_var",
        );
        for want in [
            "e0599",
            "src/main.rs",
            "tokio::spawn",
            "#42",
            "enoent",
            "my_var",
        ] {
            assert!(
                found.iter().any(|f| f == want),
                "{want} missing from {found:?}"
            );
        }
        assert!(idents("just plain words here").is_empty());
    }

    #[test]
    fn fts_queries_quote_every_term() {
        let q = fts_or_query(&["a\"b".to_owned(), "c".to_owned()]);
        assert_eq!(q, "\"a\"\"b\" OR \"c\"");
    }
}

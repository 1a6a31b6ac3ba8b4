//! Voice input on the device: capture (a microphone through cpal, or a WAV file through the same
//! pipeline) to 16 kHz mono f32, whisper transcription with a model kept warm, and the import of
//! faster-whisper (CTranslate2) models by converting them to whisper.cpp's ggml format.

pub mod audio;
pub mod capture;
pub mod convert;
mod error;
pub mod models;
mod transcribe;
pub mod wav;

pub use capture::{input_devices, Recording};
pub use error::VoiceError;
pub use models::{import, installed, model_path, InstalledModel, ModelRecord};
pub use transcribe::{Hints, Transcriber, PROMPT_TOKENS};
pub use wav::read_wav;

/// Word error rate of `hypothesis` against `reference`: word edits (substitutions, insertions,
/// deletions) over reference words, case and punctuation ignored, small numbers compared as words
/// (`7` and `seven` are the same word, as the usual Whisper text normaliser has it).
pub fn word_error_rate(reference: &str, hypothesis: &str) -> f64 {
    let words = |t: &str| -> Vec<String> {
        t.to_lowercase()
            .chars()
            .map(|c| {
                if c.is_alphanumeric() || c == '\'' {
                    c
                } else {
                    ' '
                }
            })
            .collect::<String>()
            .split_whitespace()
            .map(|w| number_word(w).unwrap_or(w).to_owned())
            .collect()
    };
    let (r, h) = (words(reference), words(hypothesis));
    if r.is_empty() {
        return if h.is_empty() { 0.0 } else { 1.0 };
    }
    let mut row: Vec<usize> = (0..=h.len()).collect();
    for (i, rw) in r.iter().enumerate() {
        let mut previous = row[0];
        row[0] = i + 1;
        for (j, hw) in h.iter().enumerate() {
            let current = row[j + 1];
            row[j + 1] = if rw == hw {
                previous
            } else {
                1 + previous.min(row[j]).min(row[j + 1])
            };
            previous = current;
        }
    }
    row[h.len()] as f64 / r.len() as f64
}

/// `0`–`20` as the word for it.
fn number_word(digits: &str) -> Option<&'static str> {
    const WORDS: [&str; 21] = [
        "zero",
        "one",
        "two",
        "three",
        "four",
        "five",
        "six",
        "seven",
        "eight",
        "nine",
        "ten",
        "eleven",
        "twelve",
        "thirteen",
        "fourteen",
        "fifteen",
        "sixteen",
        "seventeen",
        "eighteen",
        "nineteen",
        "twenty",
    ];
    digits
        .parse::<usize>()
        .ok()
        .and_then(|n| WORDS.get(n).copied())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn word_error_rate_counts_edits_over_reference_words() {
        assert_eq!(
            word_error_rate(
                "Remember to water the plants",
                "remember to water the plants."
            ),
            0.0
        );
        assert_eq!(
            word_error_rate("my train leaves at seven", "my train leave at 7"),
            0.2
        );
        assert_eq!(word_error_rate("a b c d", "a x c"), 0.5);
        assert_eq!(word_error_rate("", ""), 0.0);
    }
}

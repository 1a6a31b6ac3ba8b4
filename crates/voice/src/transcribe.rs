//! Whisper transcription through whisper-rs: a model loaded once and kept warm, used from any
//! thread (each call gets its own state), language automatic or fixed.

use std::borrow::Cow;
use std::path::Path;
use std::sync::Once;

use whisper_rs::{FullParams, SamplingStrategy, WhisperContext, WhisperContextParameters};

use crate::audio::WHISPER_RATE;
use crate::VoiceError;

/// A loaded model.
pub struct Transcriber {
    context: WhisperContext,
    multilingual: bool,
}

impl Transcriber {
    /// Loads the ggml model at `path` (the slow part: do it once).
    pub fn load(path: &Path) -> Result<Self, VoiceError> {
        static QUIET: Once = Once::new();
        // whisper.cpp logs every load step to stderr; route it through `tracing` instead.
        QUIET.call_once(whisper_rs::install_logging_hooks);
        let context = WhisperContext::new_with_params(path, WhisperContextParameters::default())
            .map_err(|e| VoiceError::Model(format!("{} does not load: {e}", path.display())))?;
        let multilingual = context.is_multilingual();
        Ok(Self {
            context,
            multilingual,
        })
    }

    /// How many tokens whisper reads of the prompt `hints` make: it keeps only the last
    /// [`PROMPT_TOKENS`], so a prompt longer than that loses its beginning.
    pub fn prompt_tokens(&self, hints: &Hints) -> Result<usize, VoiceError> {
        let prompt = prompt(hints);
        let room = prompt.len() + 1;
        self.context
            .tokenize(&prompt, room)
            .map(|tokens| tokens.len())
            .map_err(|e| VoiceError::Transcription(format!("the prompt does not tokenize: {e}")))
    }

    /// The text said in `samples` (16 kHz mono). `language`: `auto` or a code like `en`; an
    /// English-only model always transcribes English.
    pub fn transcribe(&self, samples: &[f32], language: &str) -> Result<String, VoiceError> {
        self.transcribe_with(samples, language, &Hints::default())
    }

    /// [`Transcriber::transcribe`] told what to expect: the person's vocabulary becomes
    /// whisper's prompt, so the words they use (a project's name, "header file", "migration")
    /// are the ones it hears. Decoding is a beam search of five with `hints.beam`, else greedy
    /// with whisper's temperature fallback (a segment that decodes badly is decoded again,
    /// warmer).
    pub fn transcribe_with(
        &self,
        samples: &[f32],
        language: &str,
        hints: &Hints,
    ) -> Result<String, VoiceError> {
        if samples.is_empty() {
            return Ok(String::new());
        }
        let mut state = self
            .context
            .create_state()
            .map_err(|e| VoiceError::Transcription(e.to_string()))?;
        let mut params = FullParams::new(if hints.beam {
            SamplingStrategy::BeamSearch {
                beam_size: BEAM_SIZE,
                patience: -1.0,
            }
        } else {
            SamplingStrategy::Greedy { best_of: 1 }
        });
        params.set_temperature(0.0);
        params.set_temperature_inc(0.2);
        let prompt = prompt(hints);
        if !prompt.is_empty() {
            params.set_initial_prompt(&prompt);
        }
        let language = match (self.multilingual, language) {
            (false, _) => Some("en"),
            (true, "auto" | "") => Some("auto"),
            (true, code) => Some(code),
        };
        params.set_language(language);
        params.set_n_threads(threads());
        params.set_print_progress(false);
        params.set_print_realtime(false);
        params.set_print_special(false);
        params.set_print_timestamps(false);
        params.set_suppress_blank(true);
        // No "[MUSIC PLAYING]", "(speaking)" or "♪" in place of words: OpenAI's and
        // faster-whisper's decoders suppress these tokens by default, whisper.cpp's does not, and
        // tiny.en gave whole sentences of fast or synthetic speech back as such a tag.
        params.set_suppress_nst(true);
        let audio = at_least_a_second(samples);
        state
            .full(params, &audio)
            .map_err(|e| VoiceError::Transcription(e.to_string()))?;
        let mut text = String::new();
        for i in 0..state.full_n_segments() {
            if let Some(segment) = state.get_segment(i) {
                if let Ok(piece) = segment.to_str_lossy() {
                    text.push_str(&piece);
                }
            }
        }
        Ok(text.trim().to_owned())
    }
}

/// Whisper reads at least a second: very short clips are padded with silence. (Half a second
/// of silence before and after every clip was tried: 2 points better on technical speech
/// primed with a glossary, 11 points worse on everyday sentences.)
fn at_least_a_second(samples: &[f32]) -> Cow<'_, [f32]> {
    let second = WHISPER_RATE as usize;
    if samples.len() >= second {
        return Cow::Borrowed(samples);
    }
    let mut audio = samples.to_vec();
    audio.resize(second + second / 10, 0.0);
    Cow::Owned(audio)
}

/// The prompt tokens whisper reads (`n_text_ctx / 2`), counted from the prompt's end.
pub const PROMPT_TOKENS: usize = 224;

/// Beams kept while decoding (whisper's own default).
const BEAM_SIZE: i32 = 5;

/// Words and phrases of the vocabulary given to whisper: its prompt holds at most 224 tokens,
/// and a long list drowns the few that matter.
const PROMPT_WORDS: usize = 40;

/// What a transcription is told beyond the audio.
#[derive(Debug, Clone, Default)]
pub struct Hints {
    /// Words the person uses (project names, identifiers, people), most telling first: the
    /// prompt when nothing they said is known.
    pub vocabulary: Vec<String>,
    /// What the person said lately, newest last: whisper's prompt, as if it had just heard it.
    pub said: Vec<String>,
    /// Beam search instead of greedy decoding (with its temperature fallback). Voice input
    /// uses it: primed with the starter glossary, tiny.en got 28.6 % of fresh technical speech
    /// wrong against 33.1 % greedy, 27.8 against 31.7 % in five other voices, for 6 % more time
    /// on short clips (whisper's encoder, the same for both, dominates them) and 39 % more on
    /// 11.5 s of speech.
    pub beam: bool,
}

/// Whisper's prompt: what the person said lately, which primes the decoder toward their words
/// and their way of putting them; else their vocabulary as a glossary line.
fn prompt(hints: &Hints) -> String {
    let said: Vec<String> = hints
        .said
        .iter()
        .map(|s| s.replace('\0', "").trim().to_owned())
        .filter(|s| !s.is_empty())
        .collect();
    if !said.is_empty() {
        return said.join(" ");
    }
    let words: Vec<String> = hints
        .vocabulary
        .iter()
        .map(|w| w.replace('\0', "").trim().to_owned())
        .filter(|w| !w.is_empty())
        .take(PROMPT_WORDS)
        .collect();
    if words.is_empty() {
        return String::new();
    }
    format!("Glossary: {}.", words.join(", "))
}

fn threads() -> i32 {
    std::thread::available_parallelism()
        .map(|n| n.get().min(8) as i32)
        .unwrap_or(2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_was_said_is_the_prompt_else_the_vocabulary_as_a_glossary() {
        let vocabulary = vec!["cairn".to_owned(), " webhook handler ".to_owned()];
        let glossary = Hints {
            vocabulary: vocabulary.clone(),
            ..Hints::default()
        };
        assert_eq!(prompt(&glossary), "Glossary: cairn, webhook handler.");
        let said = Hints {
            vocabulary,
            said: vec![
                "tag a release".into(),
                " ".into(),
                "bump the version".into(),
            ],
            beam: false,
        };
        assert_eq!(prompt(&said), "tag a release bump the version");
        assert_eq!(prompt(&Hints::default()), "");
    }

    #[test]
    fn clips_shorter_than_a_second_are_padded_with_silence() {
        let audio = at_least_a_second(&[0.5; 10]);
        assert_eq!(audio.len(), WHISPER_RATE as usize * 11 / 10);
        assert!(audio[10..].iter().all(|s| *s == 0.0));
        assert_eq!(at_least_a_second(&[0.5; 20_000]).len(), 20_000);
    }
}

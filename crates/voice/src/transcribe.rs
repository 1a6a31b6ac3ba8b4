//! Whisper transcription through whisper-rs: a model loaded once and kept warm, used from any
//! thread (each call gets its own state), language automatic or fixed.

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

    /// The text said in `samples` (16 kHz mono). `language`: `auto` or a code like `en`; an
    /// English-only model always transcribes English.
    pub fn transcribe(&self, samples: &[f32], language: &str) -> Result<String, VoiceError> {
        if samples.is_empty() {
            return Ok(String::new());
        }
        let mut state = self
            .context
            .create_state()
            .map_err(|e| VoiceError::Transcription(e.to_string()))?;
        let mut params = FullParams::new(SamplingStrategy::Greedy { best_of: 1 });
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
        // Whisper reads at least a second: pad very short clips with silence.
        let mut padded;
        let audio = if samples.len() < WHISPER_RATE as usize {
            padded = samples.to_vec();
            padded.resize(WHISPER_RATE as usize + WHISPER_RATE as usize / 10, 0.0);
            &padded[..]
        } else {
            samples
        };
        state
            .full(params, audio)
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

fn threads() -> i32 {
    std::thread::available_parallelism()
        .map(|n| n.get().min(8) as i32)
        .unwrap_or(2)
}

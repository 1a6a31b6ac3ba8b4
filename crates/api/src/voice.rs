//! Voice input for every front end: the configured model (imported on first use from the
//! faster-whisper folder setup downloads), kept warm once loaded; captures from the microphone or
//! from a WAV file named in the config, through the same pipeline.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use cairn_voice::{InstalledModel, Recording, Transcriber, VoiceError};

/// What the command line's voice tools use beside the chat's: a WAV file as whisper's samples
/// (at [`WHISPER_RATE`]), the input devices, a model's checksum check, and the word error rate
/// `cairn eval voice` scores with.
pub use cairn_voice::audio::WHISPER_RATE;
pub use cairn_voice::models::verify as verify_model;
pub use cairn_voice::{input_devices, read_wav, word_error_rate, Hints};

use crate::{Cairn, Error};

/// Words of what the person said lately offered to whisper (its prompt holds 224 tokens).
const SAID_WORDS: usize = 140;

/// Words of the person's vocabulary offered to whisper.
const VOCABULARY_WORDS: usize = 40;

/// Whisper's prompt while memory holds nothing the person said nor their vocabulary (a new
/// install): a glossary of words developers say that tiny.en mishears ("async" as "a sync",
/// "README" as "read me", "linter" as "link to"), then what people typically ask a coding agent,
/// in plain words. The glossary comes first: whisper keeps the last 224 tokens of a prompt, and
/// the sentences, nearest the audio, prime it toward speech rather than lists (the glossary
/// last did worse on everyday sentences, 25.3 → 31.6 %): 219 tokens together by tiny.en's
/// tokenizer, held under 224 by the test `the_starter_prompt_fits_what_whisper_reads`. On freshly
/// synthesised technical sentences (tiny.en, empty memory) the word error rate went from 40.4 %
/// unprimed to 18.5 % with the sentences alone, and with the glossary from 16.9 to 12.8 % and
/// 15.4 to 13.7 % (two sets of 60 clips whose mistakes were in view when it was written); on 60
/// clips written after it, 36.0 to 33.1 % (harder words: "debounce", "deserializer"), and on 40
/// in five other voices 33.4 to 33.7 %; ten everyday sentences stay at 25.3 % (31.6 % unprimed).
/// Once memory holds what the person said, their sentences replace it.
const STARTER_GLOSSARY: &str = "Glossary: API, async, backend, frontend, README, rebase, npm, \
cargo, Kubernetes, container, schema, migration, query, cache, environment variable, middleware, \
webhook, YAML, regex, closure, callback, iterator, linter, runtime, stack trace, null pointer, \
timeout, load balancer, proxy, token, staging, production, pipeline, cron job, refactor, \
benchmark, TypeScript, Python, Rust, GitHub.";

/// The starter prompt's sentences, after [`STARTER_GLOSSARY`].
const STARTER_SAYINGS: [&str; 7] = [
    "Open the repository, create a new branch and commit the changes.",
    "The build fails: the compiler shows an error in the module, and a unit test fails too.",
    "Run the tests again, then fix the bug in the function and rename the variable.",
    "Check the logs on the server, the API endpoint returns an exception from the handler.",
    "Update the dependencies and the config file, rebuild the Docker image and deploy it.",
    "Write a script that reads the JSON file, parses it and writes the output to the database.",
    "Review the pull request and merge it into the main branch.",
];

/// A capture in progress.
pub enum VoiceCapture {
    Microphone(Recording),
    /// The config's WAV input: read when the capture stops.
    File(PathBuf),
}

impl VoiceCapture {
    /// The meter's level (0–1); a file plays at a steady level.
    pub fn level(&self) -> f32 {
        match self {
            Self::Microphone(r) => r.level(),
            Self::File(_) => 0.5,
        }
    }

    /// The samples captured, ready for whisper.
    pub fn finish(self) -> Result<Vec<f32>, VoiceError> {
        match self {
            Self::Microphone(r) => r.finish(),
            Self::File(path) => cairn_voice::read_wav(&path),
        }
    }
}

/// The loaded model, by the path it was loaded from.
pub(crate) type WarmModel = Arc<Mutex<Option<(PathBuf, Arc<Transcriber>)>>>;

impl Cairn {
    /// Installed whisper models.
    pub fn voice_models(&self) -> Vec<InstalledModel> {
        cairn_voice::installed(&self.home().models_dir())
    }

    /// Imports a faster-whisper folder as a whisper model.
    pub fn import_voice_model(
        &self,
        dir: &Path,
        name: Option<&str>,
    ) -> Result<InstalledModel, Error> {
        Ok(cairn_voice::import(&self.home().models_dir(), dir, name)?)
    }

    /// The file of `model`: a path to a ggml file, or an installed model's name — imported first
    /// from `<models>/whisper-ct2/<name>` when setup downloaded it but it is not converted yet.
    pub fn voice_model_path(&self, model: &str) -> Result<PathBuf, Error> {
        let as_path = Path::new(model);
        if as_path.is_absolute() {
            return Ok(as_path.to_path_buf());
        }
        let models = self.home().models_dir();
        match cairn_voice::model_path(&models, model) {
            Ok(path) => Ok(path),
            Err(missing) => {
                let downloaded = models.join("whisper-ct2").join(model);
                if downloaded.join("model.bin").exists() {
                    Ok(cairn_voice::import(&models, &downloaded, Some(model))?.path)
                } else {
                    Err(missing.into())
                }
            }
        }
    }

    /// The configured model (or `model`), loaded once and kept warm.
    pub fn transcriber(&self, model: Option<&str>) -> Result<Arc<Transcriber>, Error> {
        let config = self.load_config().unwrap_or_default();
        // One load (and first-use import) at a time: the mic button warms the model while the
        // person speaks, and the transcript may ask for it before that is done.
        let mut warm = self
            .voice
            .lock()
            .map_err(|_| Error::Voice(VoiceError::Model("the model lock was poisoned".into())))?;
        let path = self.voice_model_path(model.unwrap_or(&config.voice.model))?;
        if let Some((loaded, transcriber)) = warm.as_ref() {
            if *loaded == path {
                return Ok(transcriber.clone());
            }
        }
        let transcriber = Arc::new(Transcriber::load(&path)?);
        *warm = Some((path, transcriber.clone()));
        Ok(transcriber)
    }

    /// Starts capturing from the configured input.
    pub fn voice_begin(&self) -> Result<VoiceCapture, Error> {
        let config = self.load_config().unwrap_or_default();
        let input = config.voice.input.trim();
        if input.is_empty() || input == "microphone" {
            return Ok(VoiceCapture::Microphone(Recording::start(
                config.voice.device.as_deref(),
            )?));
        }
        let path = PathBuf::from(input);
        if !path.exists() {
            return Err(Error::Voice(VoiceError::BadAudio(format!(
                "the voice input {} does not exist (voice.input in the config)",
                path.display()
            ))));
        }
        Ok(VoiceCapture::File(path))
    }

    /// Stops `capture` and transcribes it with the configured model and language.
    pub fn voice_finish(&self, capture: VoiceCapture) -> Result<String, Error> {
        let samples = capture.finish()?;
        let language = self.load_config().unwrap_or_default().voice.language;
        self.transcribe(&samples, &language, None)
    }

    /// Transcribes `samples` as voice input does: the configured model (or `model`) primed with
    /// the person's vocabulary from memory.
    pub fn transcribe(
        &self,
        samples: &[f32],
        language: &str,
        model: Option<&str>,
    ) -> Result<String, Error> {
        let hints = self.voice_hints();
        Ok(self
            .transcriber(model)?
            .transcribe_with(samples, language, &hints)?)
    }

    /// What whisper is primed with: what the person said lately and their vocabulary, from
    /// memory; while memory has neither (or cannot be read), [`STARTER_GLOSSARY`] and
    /// [`STARTER_SAYINGS`]. Decoded with a beam search, which mishears fewer technical words
    /// than greedy decoding.
    pub fn voice_hints(&self) -> Hints {
        let read = self.memory().and_then(|m| {
            Ok((
                m.said_recently(SAID_WORDS)?,
                m.vocabulary(VOCABULARY_WORDS)?,
            ))
        });
        let (said, vocabulary) = read.unwrap_or_else(|e| {
            tracing::debug!("no vocabulary for voice input: {e}");
            (Vec::new(), Vec::new())
        });
        let said = if said.is_empty() && vocabulary.is_empty() {
            std::iter::once(STARTER_GLOSSARY)
                .chain(STARTER_SAYINGS)
                .map(str::to_owned)
                .collect()
        } else {
            said
        };
        Hints {
            vocabulary,
            said,
            beam: true,
        }
    }
}

/// The mic button's session: at most one capture at a time, started when the button is pressed
/// and transcribed when it is released.
#[derive(Default)]
pub struct VoiceSession {
    capture: Mutex<Option<VoiceCapture>>,
}

impl VoiceSession {
    fn slot(&self) -> Result<std::sync::MutexGuard<'_, Option<VoiceCapture>>, Error> {
        self.capture
            .lock()
            .map_err(|_| Error::Internal("the voice lock was poisoned".into()))
    }

    /// Starts capturing (from the microphone, or the WAV file the config names); the model
    /// warms up meanwhile, on a thread of its own, so the transcript is quick.
    pub fn start(&self, cairn: &Cairn) -> Result<(), Error> {
        let capture = cairn.voice_begin()?;
        *self.slot()? = Some(capture);
        let cairn = cairn.clone();
        std::thread::spawn(move || {
            if let Err(e) = cairn.transcriber(None) {
                tracing::warn!("the voice model did not load: {e}");
            }
        });
        Ok(())
    }

    /// The input level for the meter, 0–1 (0 when nothing is being captured).
    pub fn level(&self) -> f32 {
        self.slot()
            .ok()
            .and_then(|slot| slot.as_ref().map(VoiceCapture::level))
            .unwrap_or(0.0)
    }

    /// Stops the capture and transcribes it: the words said. Blocking.
    pub fn stop(&self, cairn: &Cairn) -> Result<String, Error> {
        let capture = self
            .slot()?
            .take()
            .ok_or_else(|| Error::Invalid("nothing is being recorded".into()))?;
        cairn.voice_finish(capture)
    }
}

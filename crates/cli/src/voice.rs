//! `cairn voice`: installed models, importing a faster-whisper model, transcribing a WAV file
//! (the same pipeline as the microphone), and listening to the microphone from the terminal.

use std::io::BufRead;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::Context;
use cairn_api::Cairn;

#[derive(Debug, clap::Subcommand)]
pub enum VoiceCommand {
    /// The installed whisper models, with their checksums verified.
    Models {
        #[arg(long)]
        json: bool,
    },
    /// Import a faster-whisper (CTranslate2) model folder, converted to whisper.cpp's format.
    Import {
        dir: PathBuf,
        /// The name to install it as [default: tiny.en, base… from its shape].
        #[arg(long)]
        name: Option<String>,
    },
    /// Transcribe a WAV file (any rate, mono or stereo) through the voice pipeline.
    Transcribe {
        file: PathBuf,
        /// A model name or a ggml file [default: voice.model in the config, else tiny.en].
        #[arg(long)]
        model: Option<String>,
        /// auto, or a language code.
        #[arg(long)]
        language: Option<String>,
        /// Print the text with timings as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Record from the microphone until Enter, then print what was said.
    Listen,
    /// The input devices.
    Devices,
}

pub fn run(cairn: &Cairn, command: VoiceCommand) -> anyhow::Result<()> {
    match command {
        VoiceCommand::Models { json } => {
            let models = cairn.voice_models();
            if json {
                println!("{}", serde_json::to_string_pretty(&models)?);
            } else if models.is_empty() {
                println!("no whisper model installed: run ./run setup, or cairn voice import <faster-whisper folder>");
            }
            for m in &models {
                if json {
                    break;
                }
                let ok = match cairn_api::voice::verify_model(m) {
                    Ok(true) => "checksum ok",
                    Ok(false) => "CHECKSUM MISMATCH",
                    Err(_) => "unreadable",
                };
                println!(
                    "{:<10} {:>6.1} MB  {}  {ok}  {}",
                    m.record.name,
                    m.record.bytes as f64 / 1e6,
                    if m.record.multilingual {
                        "multilingual"
                    } else {
                        "English    "
                    },
                    m.path.display()
                );
            }
            Ok(())
        }
        VoiceCommand::Import { dir, name } => {
            let started = Instant::now();
            let model = cairn.import_voice_model(&dir, name.as_deref())?;
            println!(
                "imported {} ({:.1} MB, sha256 {}) in {:.1} s → {}",
                model.record.name,
                model.record.bytes as f64 / 1e6,
                model.record.sha256,
                started.elapsed().as_secs_f64(),
                model.path.display()
            );
            Ok(())
        }
        VoiceCommand::Transcribe {
            file,
            model,
            language,
            json,
        } => {
            let started = Instant::now();
            let transcriber = cairn.transcriber(model.as_deref())?;
            let loaded = started.elapsed().as_secs_f64();
            let samples = cairn_api::voice::read_wav(&file)?;
            let audio = samples.len() as f64 / f64::from(cairn_api::voice::WHISPER_RATE);
            let language =
                language.unwrap_or_else(|| cairn.load_config().unwrap_or_default().voice.language);
            let at = Instant::now();
            drop(transcriber);
            let text = cairn.transcribe(&samples, &language, model.as_deref())?;
            let took = at.elapsed().as_secs_f64();
            if json {
                println!(
                    "{}",
                    serde_json::json!({"text": text, "audio_seconds": audio, "load_seconds": loaded,
                        "transcribe_seconds": took, "real_time_factor": if audio > 0.0 { took / audio } else { 0.0 }})
                );
            } else {
                println!("{text}");
            }
            Ok(())
        }
        VoiceCommand::Listen => {
            let capture = cairn.voice_begin()?;
            eprintln!("listening… press Enter to stop");
            let mut line = String::new();
            std::io::stdin()
                .lock()
                .read_line(&mut line)
                .context("cannot read standard input")?;
            eprintln!("transcribing…");
            println!("{}", cairn.voice_finish(capture)?);
            Ok(())
        }
        VoiceCommand::Devices => {
            let devices = cairn_api::voice::input_devices();
            if devices.is_empty() {
                println!("no input device (no microphone)");
            }
            for d in devices {
                println!("{d}");
            }
            Ok(())
        }
    }
}

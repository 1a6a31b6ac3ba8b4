//! The real-time factor of transcription (processing time / audio time) for tiny.en and base on
//! this machine, greedy and with beam search (voice input's), and the first-use latency
//! (converting the downloaded model, loading it).
//!
//! `cargo bench -p cairn-voice --bench rtf` (needs `./run setup`'s models and espeak-ng + sox).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use cairn_voice::convert::convert_ct2_to_ggml;
use cairn_voice::{read_wav, Hints, Transcriber};

fn models_home() -> PathBuf {
    std::env::var_os("CAIRN_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cairn")))
        .unwrap_or_default()
        .join("models/whisper-ct2")
}

/// About twelve seconds of speech, synthesised.
fn speech(dir: &Path) -> Result<PathBuf, Box<dyn std::error::Error>> {
    let raw = dir.join("raw.wav");
    let out = dir.join("speech.wav");
    let text = "Cairn keeps a long memory of your work. It remembers what you asked yesterday, \
which files you changed, and why the build failed last week, so you can pick up where you left off.";
    Command::new("espeak-ng")
        .args(["-v", "en", "-s", "150", "-w"])
        .arg(&raw)
        .arg(text)
        .status()?;
    Command::new("sox")
        .arg(&raw)
        .args(["-r", "16000", "-c", "1", "-b", "16"])
        .arg(&out)
        .status()?;
    Ok(out)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let wav = speech(dir.path())?;
    let samples = read_wav(&wav)?;
    let seconds = samples.len() as f64 / 16_000.0;
    for name in ["tiny.en", "base"] {
        let ct2 = models_home().join(name);
        if !ct2.join("model.bin").exists() {
            println!(
                "{name}: not downloaded ({}); run ./run setup",
                ct2.display()
            );
            continue;
        }
        let started = Instant::now();
        let ggml = dir.path().join(format!("{name}.bin"));
        convert_ct2_to_ggml(&ct2, &ggml)?;
        let converted = started.elapsed().as_secs_f64();
        let started = Instant::now();
        let transcriber = Transcriber::load(&ggml)?;
        let loaded = started.elapsed().as_secs_f64();
        let started = Instant::now();
        let first = transcriber.transcribe(&samples, "en")?;
        let first_run = started.elapsed().as_secs_f64();
        let median = |hints: &Hints| -> Result<f64, Box<dyn std::error::Error>> {
            let mut runs = Vec::new();
            for _ in 0..3 {
                let started = Instant::now();
                transcriber.transcribe_with(&samples, "en", hints)?;
                runs.push(started.elapsed().as_secs_f64());
            }
            runs.sort_by(f64::total_cmp);
            Ok(runs[runs.len() / 2])
        };
        let greedy = median(&Hints::default())?;
        let beam = median(&Hints {
            beam: true,
            ..Hints::default()
        })?;
        println!(
            "{name}: real-time factor {:.3} greedy ({greedy:.2} s for {seconds:.1} s of speech, median of 3), {:.3} with beam search as voice input decodes ({beam:.2} s); first use: convert {converted:.2} s + load {loaded:.2} s + first transcription {first_run:.2} s",
            greedy / seconds,
            beam / seconds
        );
        println!("  heard: {first}");
    }
    Ok(())
}

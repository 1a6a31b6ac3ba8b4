//! WAV files as an input source: any sample rate, mono or stereo, 8/16/24/32-bit integer or
//! float, read with hound and sent through the same pipeline as the microphone.

use std::path::Path;

use crate::audio::prepare;
use crate::VoiceError;

/// The file's samples, ready for whisper (16 kHz mono, silence trimmed).
pub fn read_wav(path: &Path) -> Result<Vec<f32>, VoiceError> {
    let reader = hound::WavReader::open(path)
        .map_err(|e| VoiceError::BadAudio(format!("{}: {e}", path.display())))?;
    let spec = reader.spec();
    let samples: Vec<f32> = match spec.sample_format {
        hound::SampleFormat::Float => reader
            .into_samples::<f32>()
            .collect::<Result<_, _>>()
            .map_err(|e| VoiceError::BadAudio(format!("{}: {e}", path.display())))?,
        hound::SampleFormat::Int => {
            let scale = 2f32.powi(i32::from(spec.bits_per_sample.max(1)) - 1);
            reader
                .into_samples::<i32>()
                .map(|s| s.map(|s| s as f32 / scale))
                .collect::<Result<_, _>>()
                .map_err(|e| VoiceError::BadAudio(format!("{}: {e}", path.display())))?
        }
    };
    prepare(&samples, spec.channels, spec.sample_rate)
}

//! Audio as whisper wants it: 16 kHz mono f32. Down-mixing, resampling (rubato's FFT resampler),
//! trimming leading and trailing silence, and the level shown by the UI's meter.

use rubato::{FftFixedIn, Resampler};

use crate::VoiceError;

/// Whisper's sample rate.
pub const WHISPER_RATE: u32 = 16_000;

/// Interleaved frames of `channels` to mono (the mean of the channels).
pub fn to_mono(interleaved: &[f32], channels: u16) -> Vec<f32> {
    let channels = usize::from(channels.max(1));
    if channels == 1 {
        return interleaved.to_vec();
    }
    interleaved
        .chunks(channels)
        .map(|frame| frame.iter().sum::<f32>() / frame.len() as f32)
        .collect()
}

/// Mono samples at `rate` resampled to 16 kHz.
pub fn resample_to_whisper(mono: &[f32], rate: u32) -> Result<Vec<f32>, VoiceError> {
    if rate == WHISPER_RATE || mono.is_empty() {
        return Ok(mono.to_vec());
    }
    if rate == 0 {
        return Err(VoiceError::BadAudio(
            "the audio has a sample rate of 0".into(),
        ));
    }
    let chunk = 1024;
    let mut resampler =
        FftFixedIn::<f32>::new(rate as usize, WHISPER_RATE as usize, chunk, 2, 1)
            .map_err(|e| VoiceError::BadAudio(format!("cannot resample from {rate} Hz: {e}")))?;
    let expected = (mono.len() as u64 * u64::from(WHISPER_RATE) / u64::from(rate)) as usize;
    let mut out = Vec::with_capacity(expected + chunk);
    let mut at = 0;
    while at + resampler.input_frames_next() <= mono.len() {
        let need = resampler.input_frames_next();
        let block = resampler
            .process(&[&mono[at..at + need]], None)
            .map_err(|e| VoiceError::BadAudio(e.to_string()))?;
        out.extend_from_slice(&block[0]);
        at += need;
    }
    // rubato refuses an empty partial block, and a recording whose length is a multiple of the
    // chunk (a microphone delivers whole buffers of 1,024 frames) leaves none.
    let rest = &mono[at..];
    if !rest.is_empty() {
        let block = resampler
            .process_partial(Some(&[rest]), None)
            .map_err(|e| VoiceError::BadAudio(e.to_string()))?;
        out.extend_from_slice(&block[0]);
    }
    // Flush the resampler's delay, then drop it from the front.
    let tail = resampler
        .process_partial::<&[f32]>(None, None)
        .map_err(|e| VoiceError::BadAudio(e.to_string()))?;
    out.extend_from_slice(&tail[0]);
    let delay = resampler.output_delay().min(out.len());
    out.drain(..delay);
    out.truncate(expected);
    Ok(out)
}

/// Leading and trailing silence removed (20 ms frames quieter than -45 dBFS, 200 ms kept on each
/// side so words are not clipped). All silence: empty.
pub fn trim_silence(samples: &[f32]) -> Vec<f32> {
    let frame = (WHISPER_RATE / 50) as usize;
    let threshold = 10f32.powf(-45.0 / 20.0);
    let loud = |chunk: &[f32]| rms(chunk) > threshold;
    let frames: Vec<&[f32]> = samples.chunks(frame).collect();
    let Some(first) = frames.iter().position(|c| loud(c)) else {
        return Vec::new();
    };
    let last = frames.iter().rposition(|c| loud(c)).unwrap_or(first);
    let pad = 10;
    let start = first.saturating_sub(pad) * frame;
    let end = ((last + 1 + pad) * frame).min(samples.len());
    samples[start..end].to_vec()
}

/// Root mean square of `samples`.
pub fn rms(samples: &[f32]) -> f32 {
    if samples.is_empty() {
        return 0.0;
    }
    (samples.iter().map(|s| s * s).sum::<f32>() / samples.len() as f32).sqrt()
}

/// The meter's level, 0.0 (silence, -60 dBFS or less) to 1.0 (full scale).
pub fn level(samples: &[f32]) -> f32 {
    let r = rms(samples);
    if r <= 0.0 {
        return 0.0;
    }
    ((20.0 * r.log10() + 60.0) / 60.0).clamp(0.0, 1.0)
}

/// Interleaved samples at any rate and channel count, ready for whisper.
pub fn prepare(interleaved: &[f32], channels: u16, rate: u32) -> Result<Vec<f32>, VoiceError> {
    let mono = to_mono(interleaved, channels);
    let resampled = resample_to_whisper(&mono, rate)?;
    Ok(trim_silence(&resampled))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn tone(rate: u32, seconds: f32, hz: f32) -> Vec<f32> {
        (0..(rate as f32 * seconds) as usize)
            .map(|i| (i as f32 * hz * std::f32::consts::TAU / rate as f32).sin() * 0.5)
            .collect()
    }

    #[test]
    fn audio_of_whole_chunks_resamples() {
        // 71 chunks of 1,024 frames at 22,050 Hz: espeak-ng's length for one sentence, and what
        // a microphone delivering 1,024-frame buffers always records. It was refused.
        let audio = tone(22_050, 72_704.0 / 22_050.0, 300.0);
        assert_eq!(audio.len() % 1024, 0);
        let out = resample_to_whisper(&audio, 22_050).unwrap();
        assert!((out.len() as i64 - 52_755).abs() <= 2, "{}", out.len());
    }

    #[test]
    fn resampling_keeps_duration_and_pitch() {
        let out = resample_to_whisper(&tone(44_100, 1.0, 440.0), 44_100).unwrap();
        assert!((out.len() as i64 - 16_000).abs() <= 2, "{}", out.len());
        // 440 Hz at 16 kHz crosses zero about 880 times a second.
        let crossings = out.windows(2).filter(|w| w[0] <= 0.0 && w[1] > 0.0).count();
        assert!((430..=450).contains(&crossings), "{crossings}");
    }

    #[test]
    fn stereo_is_mixed_and_silence_trimmed() {
        let mut stereo = Vec::new();
        for s in tone(16_000, 0.5, 300.0) {
            stereo.extend([s, s]);
        }
        assert_eq!(to_mono(&stereo, 2).len(), 8_000);
        let mut padded = vec![0.0; 16_000];
        padded.extend(tone(16_000, 0.5, 300.0));
        padded.extend(vec![0.0; 16_000]);
        let trimmed = trim_silence(&padded);
        assert!(trimmed.len() < 8_000 + 2 * 3_300, "{}", trimmed.len());
        assert!(trimmed.len() >= 8_000);
        assert!(trim_silence(&[0.0; 16_000]).is_empty());
        assert_eq!(level(&[0.0; 100]), 0.0);
        assert!(level(&tone(16_000, 0.1, 300.0)) > 0.8);
    }
}

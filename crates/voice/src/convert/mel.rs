//! Whisper's mel filter bank, computed as `librosa.filters.mel(sr=16000, n_fft=400, n_mels=N)`
//! (Slaney mel scale, Slaney area normalisation), the values whisper's `mel_filters.npz` holds.
//!
//! Checked against `whisper/assets/mel_filters.npz` of the `openai-whisper==20250625` sdist by the
//! test `mel_bank_matches_whisper_npz`: bit-identical for `mel_80` and `mel_128` (max abs
//! difference 0, no value differing in its bits, the -0.0 at band 0 bin 0 included).

/// Whisper's audio sample rate.
pub const SAMPLE_RATE: f64 = 16_000.0;
/// Whisper's FFT size; the bank has `N_FFT / 2 + 1 = 201` columns.
pub const N_FFT: usize = 400;

const F_SP: f64 = 200.0 / 3.0;
const MIN_LOG_HZ: f64 = 1000.0;

fn logstep() -> f64 {
    6.4f64.ln() / 27.0
}

fn min_log_mel() -> f64 {
    MIN_LOG_HZ / F_SP
}

/// Hz → mel on the Slaney scale (linear below 1 kHz, logarithmic above), as librosa `htk=False`.
fn hz_to_mel(hz: f64) -> f64 {
    if hz >= MIN_LOG_HZ {
        min_log_mel() + (hz / MIN_LOG_HZ).ln() / logstep()
    } else {
        hz / F_SP
    }
}

/// Mel → Hz, the inverse of [`hz_to_mel`].
fn mel_to_hz(mel: f64) -> f64 {
    if mel >= min_log_mel() {
        MIN_LOG_HZ * (logstep() * (mel - min_log_mel())).exp()
    } else {
        F_SP * mel
    }
}

/// `numpy.linspace(start, stop, n)` with the endpoint pinned to `stop`.
fn linspace(start: f64, stop: f64, n: usize) -> Vec<f64> {
    if n == 1 {
        return vec![start];
    }
    let step = (stop - start) / (n - 1) as f64;
    let mut v: Vec<f64> = (0..n).map(|i| i as f64 * step + start).collect();
    if let Some(last) = v.last_mut() {
        *last = stop;
    }
    v
}

/// The `n_mels × 201` filter bank, row-major (row = mel band, column = FFT bin), in f32.
///
/// Follows librosa step by step, including its rounding: the triangular weights are stored in
/// f32 before the Slaney normalisation is applied in f64 and rounded to f32 again.
pub fn mel_filters(n_mels: usize) -> Vec<f32> {
    let n_bins = N_FFT / 2 + 1;
    let fft_freqs = linspace(0.0, SAMPLE_RATE / 2.0, n_bins);
    let mel_points = linspace(hz_to_mel(0.0), hz_to_mel(SAMPLE_RATE / 2.0), n_mels + 2);
    let mel_f: Vec<f64> = mel_points.into_iter().map(mel_to_hz).collect();
    let fdiff: Vec<f64> = mel_f.windows(2).map(|w| w[1] - w[0]).collect();

    let mut weights = Vec::with_capacity(n_mels * n_bins);
    for i in 0..n_mels {
        let enorm = 2.0 / (mel_f[i + 2] - mel_f[i]);
        for &f in &fft_freqs {
            let lower = -(mel_f[i] - f) / fdiff[i];
            let upper = (mel_f[i + 2] - f) / fdiff[i + 1];
            // `maximum(0, minimum(lower, upper))`, spelled out: `f64::max` may return either
            // zero for (-0.0, 0.0), and does differently by build. whisper's asset keeps the -0.0
            // that band 0 has at bin 0, so keep it too.
            let m = if lower <= upper { lower } else { upper };
            let w = if m < 0.0 { 0.0f32 } else { m as f32 };
            weights.push((f64::from(w) * enorm) as f32);
        }
    }
    weights
}

//! Speech capture for the composer's microphone button.

use super::bridge::invoke;
use cairn_protocol::ApiError;

/// Starts capturing speech (the microphone, or the configured WAV input).
pub async fn voice_start() -> Result<(), ApiError> {
    invoke("voice_start").await
}

/// The input level, 0–1, for the meter.
pub async fn voice_level() -> Result<f32, ApiError> {
    invoke("voice_level").await
}

/// Stops capturing; the words said.
pub async fn voice_stop() -> Result<String, ApiError> {
    invoke("voice_stop").await
}

//! The voice crate's one error type, worded for the person who pressed the mic button.

#[derive(Debug, thiserror::Error)]
pub enum VoiceError {
    /// No input device, or it cannot be opened: the person should check the microphone.
    #[error("{0}")]
    NoMicrophone(String),
    /// The audio cannot be read or converted.
    #[error("{0}")]
    BadAudio(String),
    /// No such model installed, or it does not load.
    #[error("{0}")]
    Model(String),
    /// Whisper failed on the audio.
    #[error("transcription failed: {0}")]
    Transcription(String),
    #[error(transparent)]
    Convert(#[from] crate::convert::ConvertError),
    #[error("{0}")]
    Io(String),
}

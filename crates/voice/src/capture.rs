//! Microphone capture through cpal: the default input device (or one chosen by name), any native
//! format, gathered until stopped and then converted for whisper. cpal streams cannot move between
//! threads, so each recording owns a thread that holds its stream. A missing or refused device is a
//! clear error, never a crash.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use cpal::traits::{DeviceTrait, HostTrait, StreamTrait};

use crate::audio::{level, prepare};
use crate::VoiceError;

/// A recording in progress.
pub struct Recording {
    stop: mpsc::Sender<()>,
    thread: Option<JoinHandle<()>>,
    samples: Arc<Mutex<Vec<f32>>>,
    level: Arc<AtomicU32>,
    channels: u16,
    rate: u32,
}

/// The names of the input devices.
pub fn input_devices() -> Vec<String> {
    let host = cpal::default_host();
    host.input_devices()
        .map(|devices| devices.filter_map(|d| d.name().ok()).collect())
        .unwrap_or_default()
}

impl Recording {
    /// Starts recording from `device` (a name from [`input_devices`]) or the default input.
    pub fn start(device: Option<&str>) -> Result<Self, VoiceError> {
        let host = cpal::default_host();
        let device = match device {
            Some(name) => host
                .input_devices()
                .map_err(|e| VoiceError::NoMicrophone(e.to_string()))?
                .find(|d| d.name().is_ok_and(|n| n == name))
                .ok_or_else(|| {
                    VoiceError::NoMicrophone(format!("no input device called {name:?}"))
                })?,
            None => host.default_input_device().ok_or_else(|| {
                VoiceError::NoMicrophone("this machine has no microphone (no input device)".into())
            })?,
        };
        let config = device.default_input_config().map_err(|e| {
            VoiceError::NoMicrophone(format!("the microphone cannot be opened: {e}"))
        })?;
        let channels = config.channels();
        let rate = config.sample_rate().0;
        let samples = Arc::new(Mutex::new(Vec::new()));
        let meter = Arc::new(AtomicU32::new(0));
        let (stop, stopped) = mpsc::channel::<()>();
        let (ready, started) = mpsc::channel::<Result<(), VoiceError>>();
        let (sink, gauge) = (samples.clone(), meter.clone());
        let thread = std::thread::spawn(move || {
            let format = config.sample_format();
            let config: cpal::StreamConfig = config.into();
            let push = move |data: Vec<f32>| {
                gauge.store(level(&data).to_bits(), Ordering::Relaxed);
                if let Ok(mut all) = sink.lock() {
                    all.extend(data);
                }
            };
            let on_error = |e: cpal::StreamError| tracing::warn!("microphone stream: {e}");
            let stream = match format {
                cpal::SampleFormat::F32 => device.build_input_stream(
                    &config,
                    move |data: &[f32], _: &cpal::InputCallbackInfo| push(data.to_vec()),
                    on_error,
                    None,
                ),
                cpal::SampleFormat::I16 => device.build_input_stream(
                    &config,
                    move |data: &[i16], _: &cpal::InputCallbackInfo| {
                        push(data.iter().map(|s| f32::from(*s) / 32768.0).collect())
                    },
                    on_error,
                    None,
                ),
                cpal::SampleFormat::U16 => device.build_input_stream(
                    &config,
                    move |data: &[u16], _: &cpal::InputCallbackInfo| {
                        push(
                            data.iter()
                                .map(|s| (f32::from(*s) - 32768.0) / 32768.0)
                                .collect(),
                        )
                    },
                    on_error,
                    None,
                ),
                other => {
                    let _ = ready.send(Err(VoiceError::NoMicrophone(format!(
                        "the microphone's sample format {other:?} is not supported"
                    ))));
                    return;
                }
            };
            let stream = match stream.and_then(|s| {
                s.play().map(|()| s).map_err(|e| match e {
                    cpal::PlayStreamError::DeviceNotAvailable => {
                        cpal::BuildStreamError::DeviceNotAvailable
                    }
                    cpal::PlayStreamError::BackendSpecific { err } => {
                        cpal::BuildStreamError::BackendSpecific { err }
                    }
                })
            }) {
                Ok(s) => s,
                Err(e) => {
                    let _ = ready.send(Err(VoiceError::NoMicrophone(format!(
                        "the microphone cannot be used (is access denied?): {e}"
                    ))));
                    return;
                }
            };
            let _ = ready.send(Ok(()));
            let _ = stopped.recv();
            drop(stream);
        });
        started
            .recv()
            .map_err(|_| VoiceError::NoMicrophone("the microphone thread stopped".into()))??;
        Ok(Self {
            stop,
            thread: Some(thread),
            samples,
            level: meter,
            channels,
            rate,
        })
    }

    /// The current input level, 0.0–1.0, for the meter.
    pub fn level(&self) -> f32 {
        f32::from_bits(self.level.load(Ordering::Relaxed))
    }

    /// Stops and returns what was said, ready for whisper.
    pub fn finish(mut self) -> Result<Vec<f32>, VoiceError> {
        let _ = self.stop.send(());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        let samples = self.samples.lock().map(|s| s.clone()).unwrap_or_default();
        prepare(&samples, self.channels, self.rate)
    }
}

impl Drop for Recording {
    fn drop(&mut self) {
        let _ = self.stop.send(());
    }
}

//! The model host's side of `cairn_llm::local`: requests in on standard input, one JSON line each;
//! the reply's events and what is loaded out on standard output. The host ends when its
//! input closes or when its model was unloaded for idleness.

use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use cairn_llm::local::{HostReply, HostRequest};
use cairn_llm::ProviderError;

use crate::engine::{Job, Shared};
use crate::Engine;

type Out = Arc<Mutex<std::io::Stdout>>;

fn write(out: &Out, reply: &HostReply) {
    let Ok(text) = serde_json::to_string(reply) else {
        return;
    };
    if let Ok(mut out) = out.lock() {
        let _ = writeln!(out, "{text}").and_then(|()| out.flush());
    }
}

/// Serves requests from standard input until it closes; returns the exit code.
pub fn serve_stdio() -> i32 {
    let out: Out = Arc::new(Mutex::new(std::io::stdout()));
    let notify = out.clone();
    let engine = Arc::new(Engine::new(Shared {
        on_loaded: Some(Box::new(move |path: Option<&Path>| {
            write(
                &notify,
                &HostReply::Loaded {
                    model: path.map(Path::to_path_buf),
                },
            );
            if path.is_none() {
                tracing::info!("the model was unloaded");
            }
        })),
        end_when_idle: true,
        ..Shared::default()
    }));
    let cancels: Arc<Mutex<HashMap<u64, Arc<AtomicBool>>>> = Arc::default();
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else {
            break;
        };
        if line.trim().is_empty() {
            continue;
        }
        let request = match serde_json::from_str::<HostRequest>(&line) {
            Ok(request) => request,
            Err(e) => {
                eprintln!("cairn-model-host: unreadable request: {e}");
                continue;
            }
        };
        match request {
            HostRequest::Cancel { id } => {
                if let Some(flag) = cancels.lock().ok().and_then(|c| c.get(&id).cloned()) {
                    flag.store(true, Ordering::Relaxed);
                }
            }
            HostRequest::Run {
                id,
                model,
                request,
                options,
            } => {
                let cancelled = Arc::new(AtomicBool::new(false));
                if let Ok(mut c) = cancels.lock() {
                    c.insert(id, cancelled.clone());
                }
                let (tx, mut rx) = tokio::sync::mpsc::channel(8192);
                engine.submit(Job {
                    path: model,
                    request,
                    options,
                    tx,
                    cancelled,
                });
                let out = out.clone();
                let cancels = cancels.clone();
                std::thread::spawn(move || {
                    while let Some(event) = rx.blocking_recv() {
                        let reply = match event {
                            Ok(event) => HostReply::Event { id, event },
                            Err(e) => HostReply::Error {
                                id,
                                overflow: matches!(e, ProviderError::ContextOverflow(_)),
                                unavailable: matches!(e, ProviderError::Unavailable(_)),
                                message: match e {
                                    ProviderError::ContextOverflow(m)
                                    | ProviderError::Unavailable(m) => m,
                                    ProviderError::Rejected { message, .. } => message,
                                    other => other.to_string(),
                                },
                            },
                        };
                        write(&out, &reply);
                    }
                    if let Ok(mut c) = cancels.lock() {
                        c.remove(&id);
                    }
                });
            }
        }
    }
    0
}

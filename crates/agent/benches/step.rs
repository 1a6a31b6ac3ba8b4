//! The runtime's own overhead per step, against the scripted mock model server: everything a
//! step costs (building the request, context hygiene, tool dispatch, session bookkeeping) except
//! the time the model takes, which is measured by a timing provider and subtracted.
//!
//! `cargo bench -p cairn-agent --bench step`

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use cairn_agent::{AgentSettings, Event, Op, Runtime};
use cairn_llm::{ChatRequest, OpenAiCompatible, Provider, ProviderError, StreamEvent};
use cairn_test_support::{text_reply, tool_call_reply, MockServer};
use cairn_tools::{Toolbox, ToolboxOptions};
use serde_json::json;
use tokio::sync::mpsc;

/// Wraps a provider and adds up the time from each request to its last event.
struct Timed {
    inner: OpenAiCompatible,
    model_time: Arc<Mutex<Duration>>,
}

impl Provider for Timed {
    fn stream(&self, request: ChatRequest) -> mpsc::Receiver<Result<StreamEvent, ProviderError>> {
        let started = Instant::now();
        let mut inner = self.inner.stream(request);
        let (tx, rx) = mpsc::channel(64);
        let total = self.model_time.clone();
        tokio::spawn(async move {
            while let Some(event) = inner.recv().await {
                let last = matches!(event, Ok(StreamEvent::Done(_)) | Err(_));
                if last {
                    if let Ok(mut t) = total.lock() {
                        *t += started.elapsed();
                    }
                }
                if tx.send(event).await.is_err() || last {
                    break;
                }
            }
        });
        rx
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let turns = 300;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let dir = tempfile::tempdir()?;
        let file: String = (1..=200).map(|n| format!("line {n}\n")).collect();
        std::fs::write(dir.path().join("notes.txt"), file)?;
        let mut replies = Vec::new();
        for i in 0..turns {
            replies.push(tool_call_reply(
                &format!("c{i}"),
                "read_file",
                json!({"path": "notes.txt", "start": 1 + i % 100, "end": 50 + i % 100}),
            ));
            replies.push(text_reply("The notes list lines."));
        }
        let server = MockServer::start(replies).await?;
        let model_time = Arc::new(Mutex::new(Duration::ZERO));
        let provider = Arc::new(Timed {
            inner: OpenAiCompatible::new(&server.base_url, None),
            model_time: model_time.clone(),
        });
        let mut settings = AgentSettings::new(provider, "mock", PathBuf::from(dir.path()));
        settings.tools = Toolbox::new(&ToolboxOptions::default());
        let runtime = Runtime::new(settings, None);
        let mut per_turn = Vec::new();
        let mut steps = 0;
        for i in 0..turns {
            let before_model = *model_time.lock().map_err(|_| "poisoned")?;
            let started = Instant::now();
            let mut events = runtime.submit(Op::UserMessage {
                session: format!("bench-{}", i % 10),
                text: "What do the notes say?".into(),
                images: Vec::new(),
            });
            while let Some(event) = events.recv().await {
                match event {
                    Event::TurnComplete { steps: s, .. } => steps += s,
                    Event::Error { message, .. } => return Err(message.into()),
                    _ => {}
                }
            }
            let model = *model_time.lock().map_err(|_| "poisoned")? - before_model;
            per_turn.push(started.elapsed().saturating_sub(model));
        }
        let total: Duration = per_turn.iter().sum();
        let per_step = total / steps as u32;
        per_turn.sort();
        let p50 = per_turn[per_turn.len() / 2] / 2;
        let p95 = per_turn[per_turn.len() * 95 / 100] / 2;
        println!(
            "runtime overhead per step (excluding the model), {steps} steps in {turns} turns with a read_file call each: mean {:.3} ms, p50 {:.3} ms, p95 {:.3} ms",
            per_step.as_secs_f64() * 1e3,
            p50.as_secs_f64() * 1e3,
            p95.as_secs_f64() * 1e3
        );
        Ok(())
    })
}

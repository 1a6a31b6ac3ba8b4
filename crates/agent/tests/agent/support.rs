//! The setup the agent tests share: settings for the scripted model server (a fixed date, a
//! project root), built up with what a test needs, and one turn run to its end.

use std::path::PathBuf;
use std::sync::Arc;

use cairn_agent::{AgentSettings, Event, Op, Runtime};
use cairn_llm::OpenAiCompatible;
use cairn_test_support::MockServer;
use cairn_tools::{Toolbox, ToolboxOptions};

/// Agent settings against `server`, in `root`, on 2026-11-29.
pub struct Setup(AgentSettings);

impl Setup {
    pub fn new(server: &MockServer, root: impl Into<PathBuf>) -> Self {
        let provider = Arc::new(OpenAiCompatible::new(&server.base_url, None));
        let mut settings = AgentSettings::new(provider, "mock-model", root.into());
        settings.today = Arc::new(|| "2026-11-29".to_owned());
        Self(settings)
    }

    /// The built-in tools as `options` choose them.
    pub fn tools(mut self, options: ToolboxOptions) -> Self {
        self.0.tools = Toolbox::new(&options);
        self
    }

    /// The folder the person started in, inside the project.
    pub fn started_in(mut self, dir: impl Into<PathBuf>) -> Self {
        self.0.started_in = dir.into();
        self
    }

    pub fn settings(self) -> AgentSettings {
        self.0
    }
}

/// Runs one message to the end, answering nothing; every event.
pub async fn run(runtime: &Runtime, session: &str, text: &str) -> Vec<Event> {
    let mut events = runtime.submit(Op::UserMessage {
        session: session.into(),
        text: text.into(),
        images: Vec::new(),
    });
    let mut out = Vec::new();
    while let Some(event) = events.recv().await {
        // The status line is for the person; the turns' tests read what the turn did.
        if !matches!(event, Event::Status(_)) {
            out.push(event);
        }
    }
    out
}

/// Runs one message to the end, answering each approval as `allow` says for the tool asking;
/// every event (the approval requests among them).
pub async fn run_approving(
    runtime: &Runtime,
    session: &str,
    text: &str,
    allow: impl Fn(&str) -> bool,
) -> Result<Vec<Event>, tokio::time::error::Elapsed> {
    let mut events = runtime.submit(Op::UserMessage {
        session: session.into(),
        text: text.into(),
        images: Vec::new(),
    });
    let mut seen = Vec::new();
    while let Some(event) =
        tokio::time::timeout(std::time::Duration::from_secs(20), events.recv()).await?
    {
        if let Event::ApprovalRequest { request, tool, .. } = &event {
            runtime.submit(Op::Approve {
                request: *request,
                allow: allow(tool),
            });
        }
        seen.push(event);
    }
    Ok(seen)
}

/// The approval requests among `events`: each call's display line.
pub fn asked(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::ApprovalRequest { display, .. } => Some(display.clone()),
            _ => None,
        })
        .collect()
}

/// The output of every tool call in `events`, in order.
pub fn results(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::ToolResult { output, .. } => Some(output.clone()),
            _ => None,
        })
        .collect()
}

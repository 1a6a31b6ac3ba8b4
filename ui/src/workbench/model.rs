//! A task's messages and how the stream's events change them: the keyed `Message::apply`
//! reducer, parts in the order they happened, tool lines, what a reply waits for.

use super::*;
use cairn_protocol::TurnStatus;

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Author {
    Person,
    Cairn,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Progress {
    Streaming,
    Done,
    Failed,
}

#[derive(Debug, Clone, PartialEq)]
pub(super) struct Message {
    pub(super) author: Author,
    /// What was said and done, in the order it happened: texts and the tool calls between them.
    pub(super) parts: Vec<Part>,
    /// Why the reply failed, shown after what it had said, and what kind of failure it was.
    pub(super) failure: Option<(String, FailureKind)>,
    pub(super) progress: Progress,
    /// Memories recalled before this reply, and why each.
    pub(super) recalled: usize,
    pub(super) recalled_items: Vec<RecalledMemory>,
    /// An approval or a question waiting for the person.
    pub(super) pending: Option<Pending>,
    /// The person stopped the turn.
    pub(super) stopped: bool,
    /// Why nothing comes yet: the model request failed and is being sent again.
    pub(super) retrying: Option<String>,
    /// What the turn does while no words come, and since when (the caller's clock, ms): the
    /// status line's counter runs from it.
    pub(super) status: Option<(TurnStatus, f64)>,
    /// The names of the files attached to a person's message.
    pub(super) attachments: Vec<String>,
    /// A finished reply's turn as captured in memory, when it can be rated.
    pub(super) turn_id: Option<i64>,
    /// How the person rated the reply.
    pub(super) rating: Option<Rating>,
}

/// A part's key in the message's list.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) enum PartKey {
    Text(usize),
    Tool(String),
    Compacted(usize),
    JobNote(usize),
}

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Part {
    Text(String),
    Tool(ToolLine),
    /// Where the task was compacted, with the summary the model goes on from.
    Compacted(String),
    /// The harness told the model that a background job ended (the mark first).
    JobNote(String),
}

#[derive(Debug, Clone, PartialEq)]
pub(super) struct ToolLine {
    pub(super) call_id: String,
    pub(super) name: String,
    pub(super) display: String,
    /// `None` while it runs.
    pub(super) failed: Option<bool>,
    /// What the model read back (header included).
    pub(super) output: String,
    pub(super) started_at: f64,
    pub(super) took_ms: Option<f64>,
}

/// Something the turn waits for the person to answer.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Pending {
    Approval {
        request: u64,
        tool: String,
        display: String,
    },
    Question {
        request: u64,
        questions: Vec<AskQuestion>,
    },
}

impl Message {
    pub(super) fn person(text: String) -> Self {
        Self {
            author: Author::Person,
            parts: vec![Part::Text(text)],
            failure: None,
            progress: Progress::Done,
            recalled: 0,
            recalled_items: Vec::new(),
            pending: None,
            stopped: false,
            retrying: None,
            status: None,
            attachments: Vec::new(),
            turn_id: None,
            rating: None,
        }
    }

    pub(super) fn reply() -> Self {
        Self {
            author: Author::Cairn,
            parts: Vec::new(),
            failure: None,
            progress: Progress::Streaming,
            recalled: 0,
            recalled_items: Vec::new(),
            pending: None,
            stopped: false,
            retrying: None,
            status: None,
            attachments: Vec::new(),
            turn_id: None,
            rating: None,
        }
    }

    /// Its texts, a paragraph each (what search and the "said something" checks read).
    pub(super) fn text(&self) -> String {
        let texts: Vec<&str> = self
            .parts
            .iter()
            .filter_map(|p| match p {
                Part::Text(text) => Some(text.as_str()),
                _ => None,
            })
            .collect();
        texts.join("\n\n")
    }

    /// The mark a compaction leaves in the stream.
    pub(super) fn compaction(summary: String) -> Self {
        let mut mark = Self::reply();
        mark.parts = vec![Part::Compacted(summary)];
        mark.progress = Progress::Done;
        mark
    }

    pub(super) fn tool(&self, call_id: &str) -> Option<&ToolLine> {
        self.parts.iter().find_map(|p| match p {
            Part::Tool(line) if line.call_id == call_id => Some(line),
            _ => None,
        })
    }

    pub(super) fn tool_mut(&mut self, call_id: &str) -> Option<&mut ToolLine> {
        self.parts.iter_mut().find_map(|p| match p {
            Part::Tool(line) if line.call_id == call_id => Some(line),
            _ => None,
        })
    }

    /// Applies one streamed event to this reply, arrived at `now_ms` (the clock is the caller's,
    /// so the reducer runs on the host in tests).
    pub(super) fn apply(&mut self, event: ChatEvent, now_ms: f64) {
        // A retry is news only until the next thing arrives.
        self.retrying = None;
        match event {
            ChatEvent::Recalled { hits, items } => {
                self.recalled = hits;
                self.recalled_items = items;
            }
            // Text after a tool call is a new paragraph below its card.
            ChatEvent::Text { text } => {
                self.status = None;
                match self.parts.last_mut() {
                    Some(Part::Text(last)) => last.push_str(&text),
                    _ => self.parts.push(Part::Text(text)),
                }
            }
            // The same stage moving on (more of the context read) keeps its counter.
            ChatEvent::Status { status } => {
                let since = match &self.status {
                    Some((current, since)) if current.same_stage(&status) => *since,
                    _ => now_ms,
                };
                self.status = Some((status, since));
            }
            ChatEvent::Notice { .. } => {}
            ChatEvent::JobNote { text } => self.parts.push(Part::JobNote(text)),
            ChatEvent::Retrying { reason, after_ms } => {
                self.retrying = Some(present::retrying_text(&reason, after_ms));
            }
            ChatEvent::Tool {
                call_id,
                name,
                display,
            } => {
                self.status = Some((TurnStatus::RunningTool { name: name.clone() }, now_ms));
                self.parts.push(Part::Tool(ToolLine {
                    call_id,
                    name,
                    display,
                    failed: None,
                    output: String::new(),
                    started_at: now_ms,
                    took_ms: None,
                }));
            }
            // What it does while it runs shows in its card until its result replaces it.
            ChatEvent::ToolProgress { call_id, text } => {
                if let Some(line) = self.tool_mut(&call_id) {
                    line.output.push_str(&text);
                }
            }
            ChatEvent::ToolDone {
                call_id,
                output,
                failed,
            } => {
                if let Some(line) = self.tool_mut(&call_id) {
                    line.failed = Some(failed);
                    line.output = output;
                    line.took_ms = Some(now_ms - line.started_at);
                }
                self.pending = None;
                // Another call still running keeps the line; else the model is asked next.
                let running = self.parts.iter().find_map(|p| match p {
                    Part::Tool(line) if line.failed.is_none() => Some(line.name.clone()),
                    _ => None,
                });
                self.status = running.map(|name| (TurnStatus::RunningTool { name }, now_ms));
            }
            ChatEvent::Approval {
                request,
                tool,
                display,
            } => {
                self.status = None;
                self.pending = Some(Pending::Approval {
                    request,
                    tool,
                    display,
                })
            }
            ChatEvent::Question { request, questions } => {
                self.status = None;
                self.pending = Some(Pending::Question { request, questions })
            }
            ChatEvent::Stopped { .. } => {
                self.status = None;
                self.pending = None;
                self.stopped = true;
                self.progress = Progress::Done;
            }
            ChatEvent::Done { turn_id, .. } => {
                self.status = None;
                self.pending = None;
                self.progress = Progress::Done;
                self.turn_id = turn_id;
            }
            // What the reply said before it failed stays.
            ChatEvent::Failed { message, class } => {
                self.status = None;
                self.failure = Some((message, class));
                self.progress = Progress::Failed;
            }
        }
    }
}

/// One message of a task's stream, keyed for the list: a streamed token updates only its own
/// message's signal, and the list adds or removes items by key without rebuilding the rest.
#[derive(Debug, Clone)]
pub(super) struct Entry {
    pub(super) key: u64,
    pub(super) message: ArcRwSignal<Message>,
}

impl Entry {
    pub(super) fn new(message: Message) -> Self {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        Self {
            key: NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            message: ArcRwSignal::new(message),
        }
    }
}

#[derive(Debug, Clone)]
pub(super) struct Task {
    pub(super) id: usize,
    /// The conversation id the runtime and the memory know this task by.
    pub(super) session: String,
    pub(super) title: String,
    pub(super) messages: Vec<Entry>,
    pub(super) pinned: bool,
    pub(super) archived: bool,
    /// Last activity, unix ms.
    pub(super) updated_at: f64,
    /// Its transcript is loaded (stored tasks load when opened).
    pub(super) loaded: bool,
    /// A reply finished while another task was open.
    pub(super) unread: bool,
    /// Its standing goal, as `/goal` describes it.
    pub(super) goal: Option<String>,
}

impl Task {
    pub(super) fn stored(id: usize, summary: TaskSummary) -> Self {
        Self {
            id,
            session: summary.session,
            title: summary.title,
            messages: Vec::new(),
            pinned: summary.pinned,
            archived: summary.archived,
            updated_at: summary.updated_at as f64,
            loaded: false,
            unread: false,
            goal: summary.goal,
        }
    }

    /// Whether its last reply is streaming (tracked: a view reading it follows the reply).
    pub(super) fn running(&self) -> bool {
        self.messages
            .last()
            .is_some_and(|e| e.message.with(|m| m.progress == Progress::Streaming))
    }
}

/// A stored transcript as the stream's messages.
pub(super) fn messages_of(transcript: Vec<TranscriptMessage>) -> Vec<Entry> {
    transcript
        .into_iter()
        .map(|m| {
            let mut message = if m.from_person {
                Message::person(String::new())
            } else {
                let mut reply = Message::reply();
                reply.progress = Progress::Done;
                reply
            };
            message.attachments = m.attachments;
            message.stopped = m.stopped;
            message.recalled = m.recalled.len();
            message.recalled_items = m.recalled;
            message.parts = m
                .parts
                .into_iter()
                .map(|part| match part {
                    ReplyPart::Text { text } => Part::Text(text),
                    ReplyPart::Compacted { summary } => Part::Compacted(summary),
                    ReplyPart::JobNote { text } => Part::JobNote(text),
                    ReplyPart::Tool(t) => Part::Tool(ToolLine {
                        call_id: t.call_id,
                        name: t.name,
                        display: t.display,
                        failed: Some(t.failed),
                        output: t.output,
                        started_at: 0.0,
                        took_ms: None,
                    }),
                })
                .collect();
            Entry::new(message)
        })
        .collect()
}

/// Runs `f` on the last message of task `id`; only that message's view changes.
pub(super) fn update_reply(tasks: RwSignal<Vec<Task>>, id: usize, f: impl FnOnce(&mut Message)) {
    let last = tasks.with_untracked(|all| {
        all.iter()
            .find(|t| t.id == id)
            .and_then(|t| t.messages.last().map(|e| e.message.clone()))
    });
    if let Some(message) = last {
        message.update(f);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(call_id: &str) -> ChatEvent {
        ChatEvent::Tool {
            call_id: call_id.into(),
            name: "bash".into(),
            display: "🛠️ df -h".into(),
        }
    }

    #[test]
    fn text_and_tool_calls_keep_the_order_they_happened_in() {
        let mut reply = Message::reply();
        reply.apply(
            ChatEvent::Text {
                text: "First I will check ".into(),
            },
            1_000.0,
        );
        reply.apply(
            ChatEvent::Text {
                text: "the disk.".into(),
            },
            1_010.0,
        );
        reply.apply(tool("c1"), 1_100.0);
        reply.apply(
            ChatEvent::ToolDone {
                call_id: "c1".into(),
                output: "/dev/sda1 40G".into(),
                failed: false,
            },
            1_350.0,
        );
        reply.apply(
            ChatEvent::Text {
                text: "The disk has enough space.".into(),
            },
            1_400.0,
        );
        assert_eq!(reply.parts.len(), 3, "{:?}", reply.parts);
        assert!(matches!(&reply.parts[0], Part::Text(t) if t == "First I will check the disk."));
        assert!(matches!(&reply.parts[1], Part::Tool(_)));
        assert!(matches!(&reply.parts[2], Part::Text(t) if t == "The disk has enough space."));
        let line = reply.tool("c1").map(|l| (l.failed, l.took_ms));
        assert_eq!(
            line,
            Some((Some(false), Some(250.0))),
            "timed by the given clock"
        );
        assert_eq!(
            reply.text(),
            "First I will check the disk.\n\nThe disk has enough space."
        );
        assert_eq!(reply.progress, Progress::Streaming);
    }

    #[test]
    fn a_failure_keeps_what_was_said_and_a_retry_shows_until_the_next_event() {
        let mut reply = Message::reply();
        reply.apply(
            ChatEvent::Text {
                text: "Partial answer".into(),
            },
            0.0,
        );
        reply.apply(
            ChatEvent::Retrying {
                reason: "the server is busy".into(),
                after_ms: 2_000,
            },
            1.0,
        );
        assert!(reply.retrying.is_some());
        reply.apply(
            ChatEvent::Failed {
                message: "connection refused".into(),
                class: FailureKind::Connection,
            },
            2.0,
        );
        assert_eq!(reply.retrying, None);
        assert_eq!(reply.text(), "Partial answer");
        assert_eq!(reply.progress, Progress::Failed);
        assert_eq!(
            reply.failure,
            Some(("connection refused".to_owned(), FailureKind::Connection))
        );
    }

    #[test]
    fn a_finished_reply_keeps_its_turn_for_rating() {
        let mut reply = Message::reply();
        reply.apply(
            ChatEvent::Text {
                text: "Done.".into(),
            },
            0.0,
        );
        assert_eq!(reply.turn_id, None);
        reply.apply(
            ChatEvent::Done {
                steps: 1,
                input_tokens: 10,
                output_tokens: 2,
                turn_id: Some(42),
                tools: None,
                unresolved: None,
            },
            1.0,
        );
        assert_eq!(reply.turn_id, Some(42));
        assert_eq!(reply.progress, Progress::Done);
    }

    #[test]
    fn a_stop_ends_the_reply_and_drops_what_it_waited_for() {
        let mut reply = Message::reply();
        reply.apply(
            ChatEvent::Approval {
                request: 7,
                tool: "bash".into(),
                display: "🛠️ rm -rf build".into(),
            },
            0.0,
        );
        assert!(reply.pending.is_some());
        reply.apply(ChatEvent::Stopped { tools: None }, 1.0);
        assert!(reply.stopped);
        assert_eq!(reply.pending, None);
        assert_eq!(reply.progress, Progress::Done);
    }
}

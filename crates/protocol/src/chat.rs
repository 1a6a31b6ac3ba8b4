//! A conversation on the wire: the chat stream's events, a turn's status and failure kinds,
//! ask_user's questions, stored transcripts, recalled memories and attachments.

use serde::{Deserialize, Serialize};

/// What the desktop's chat stream carries, one event at a time (over a Tauri channel).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ChatEvent {
    /// Memories recalled before the request.
    Recalled {
        hits: usize,
        /// What was recalled, and why.
        #[serde(default)]
        items: Vec<RecalledMemory>,
    },
    /// A piece of the answer.
    Text { text: String },
    /// Something the person should know that is not the answer (a wrap-up, a compaction);
    /// `about` says which, for a front end that words it itself (the CLI).
    Notice {
        text: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        about: Option<NoticeAbout>,
    },
    /// The harness told the model that a background job ended (`text`, its mark first): shown as
    /// the harness's, not the person's. A wake-up turn opens with it.
    JobNote { text: String },
    /// The model request failed (`reason`) and is sent again after `after_ms`; the reply shows
    /// it until something arrives.
    Retrying { reason: String, after_ms: u64 },
    /// What the turn is doing while no words arrive (loading the model, reading the context,
    /// waiting, thinking): the reply's status line shows it with the seconds it has taken.
    Status { status: TurnStatus },
    /// A tool call starts; `display` is its one-line description (`🛠️  bash: ls`).
    Tool {
        call_id: String,
        name: String,
        display: String,
    },
    /// What a running call is doing (an asked agent's words and tool calls), as it happens.
    ToolProgress { call_id: String, text: String },
    /// A tool call ended with `output` (as the model reads it).
    ToolDone {
        call_id: String,
        output: String,
        failed: bool,
    },
    /// The turn was stopped by the person; `tools`: the calls it made, counted (as in `Done`).
    Stopped {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tools: Option<String>,
    },
    /// A call waits for the person's approval (`approve`).
    Approval {
        request: u64,
        tool: String,
        display: String,
    },
    /// ask_user waits for answers (`answer_question`).
    Question {
        request: u64,
        questions: Vec<AskQuestion>,
    },
    /// The turn ended.
    Done {
        steps: usize,
        input_tokens: u64,
        output_tokens: u64,
        /// The turn as captured in memory, for rating the reply.
        #[serde(default)]
        turn_id: Option<i64>,
        /// The tool calls the turn made, counted (`⚙ 2 command(s) · 📝 1 file op(s)`); `None`
        /// when it made none.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tools: Option<String>,
        /// The answer was given over a failed tool call that nothing got past: the line under
        /// the reply that says so (the turn is not done; `cairn` exits 1).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        unresolved: Option<String>,
    },
    /// The turn failed; `message` says why, `class` what the person can do about it.
    Failed {
        message: String,
        #[serde(default)]
        class: FailureKind,
    },
}

/// What a [`ChatEvent::Notice`] is about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "what", rename_all = "snake_case")]
pub enum NoticeAbout {
    /// The model was asked again: its reply was `reason` (thinking only, cut off).
    Nudged { reason: String },
    /// `limit` (the step limit, a budget) was reached: the tools were withdrawn for a last answer.
    WrappedUp { limit: String },
    /// The earlier conversation was summarised to fit the model's context.
    Compacted,
}

/// What a turn is doing while the person sees no words yet.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum TurnStatus {
    /// Cairn's own model is being loaded into memory.
    LoadingModel { model: String },
    /// The model reads the prompt: `done` of `tokens` evaluated so far.
    ReadingContext { tokens: u64, done: u64 },
    /// The request is sent; nothing has come back yet.
    Waiting { model: String },
    /// The model reasons before it answers.
    Thinking,
    /// A tool runs (`name`).
    RunningTool { name: String },
}

impl TurnStatus {
    /// Whether `other` is the same stage (its counter keeps running as the numbers move).
    pub fn same_stage(&self, other: &Self) -> bool {
        std::mem::discriminant(self) == std::mem::discriminant(other)
    }
}

/// What kind of failure ended a turn: what the person can do next. Every failure can be retried.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// The model server refused the key: fix it in Settings.
    Auth,
    /// The server asked to slow down: retry in a moment.
    RateLimited,
    /// The conversation does not fit the model's context, even summarised.
    Context,
    /// The server could not be reached, failed or stopped sending: retry, or check its address.
    Connection,
    /// The server rejected the request (an unknown model, a bad parameter): check Settings.
    Rejected,
    /// The model's reply could not be used (cut off, empty, a loop): retry, perhaps reworded.
    Generation,
    /// Cairn's own model cannot run on this machine (its host program missing, its file not
    /// loading, memory short): reinstall it, or pick another model in Settings.
    LocalModel,
    /// Cairn could not write the task to disk (the disk full or read-only): free space, retry.
    Storage,
    /// Anything else.
    #[default]
    Other,
}

impl FailureKind {
    /// Whether the fix is likely in the model's settings (its key, address or name).
    pub fn points_to_settings(self) -> bool {
        matches!(
            self,
            Self::Auth | Self::Connection | Self::Rejected | Self::LocalModel
        )
    }
}

wire_enum! {
    /// How a question of ask_user is answered.
    pub enum QuestionKind {
        /// One of the options.
        Choice = "choice",
        /// Any of the options.
        Multi = "multi",
        /// Free text.
        Text = "text",
        /// Yes or no.
        Confirm = "confirm",
    }
}

/// A question put by ask_user, as the form shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AskQuestion {
    pub question: String,
    pub kind: QuestionKind,
    pub options: Vec<String>,
    pub default: Option<String>,
}

/// A stored conversation as the stream shows it: the person's words and Cairn's replies, each
/// reply's texts and tool calls in the order they happened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TranscriptMessage {
    pub from_person: bool,
    /// The person's words are one text; a reply alternates texts and the calls between them.
    pub parts: Vec<ReplyPart>,
    /// The names of the files attached to a person's message.
    #[serde(default)]
    pub attachments: Vec<String>,
    /// The person stopped this reply.
    #[serde(default)]
    pub stopped: bool,
    /// What was recalled from memory before this reply, and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub recalled: Vec<RecalledMemory>,
}

/// One piece of a message, in order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ReplyPart {
    Text {
        text: String,
    },
    Tool(TranscriptTool),
    /// Where the task was compacted: what came before is what the person saw; the model goes on
    /// from this summary.
    Compacted {
        summary: String,
    },
    /// The harness told the model that a background job ended.
    JobNote {
        text: String,
    },
}

impl TranscriptMessage {
    /// Its texts, a paragraph each.
    pub fn text(&self) -> String {
        let texts: Vec<&str> = self
            .parts
            .iter()
            .filter_map(|p| match p {
                ReplyPart::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        texts.join("\n\n")
    }

    /// The mark a compaction left, in place of a message.
    pub fn compaction(summary: impl Into<String>) -> Self {
        Self {
            from_person: false,
            parts: vec![ReplyPart::Compacted {
                summary: summary.into(),
            }],
            attachments: Vec::new(),
            stopped: false,
            recalled: Vec::new(),
        }
    }

    pub fn is_compaction(&self) -> bool {
        matches!(self.parts.first(), Some(ReplyPart::Compacted { .. }))
    }

    /// Its tool calls, in order.
    pub fn tools(&self) -> impl Iterator<Item = &TranscriptTool> {
        self.parts.iter().filter_map(|p| match p {
            ReplyPart::Tool(tool) => Some(tool),
            _ => None,
        })
    }
}

/// One tool call of a stored reply.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TranscriptTool {
    pub call_id: String,
    pub name: String,
    pub display: String,
    pub output: String,
    pub failed: bool,
}

/// A memory recalled before a request, as the "recalled from memory" block shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecalledMemory {
    pub id: i64,
    pub source: String,
    pub date: String,
    pub snippet: String,
    pub score: f64,
    /// Which recall channels found it, with ranks.
    pub channels: String,
    /// Why it was kept.
    pub reason: String,
    /// The question's own words the memory holds (the plain "why": "Matches your words …").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub words: Vec<String>,
    /// Whether it is close to the question in meaning.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub close_in_meaning: bool,
}

/// An attachment as the composer sends it with a message: the file's name and its bytes as a data
/// URL.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AttachmentInput {
    pub name: String,
    pub data_url: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_notice_says_what_it_is_about_and_a_stop_counts_its_tools() -> Result<(), serde_json::Error>
    {
        let notice = ChatEvent::Notice {
            text: "The step limit was reached; the model was asked for a final answer.".into(),
            about: Some(NoticeAbout::WrappedUp {
                limit: "step limit".into(),
            }),
        };
        let json = serde_json::to_value(&notice)?;
        assert_eq!(json["kind"], "notice");
        assert_eq!(json["about"]["what"], "wrapped_up");
        assert_eq!(serde_json::from_value::<ChatEvent>(json)?, notice);
        let compacted = serde_json::to_value(NoticeAbout::Compacted)?;
        assert_eq!(compacted, serde_json::json!({"what": "compacted"}));
        let nudged = serde_json::to_value(NoticeAbout::Nudged {
            reason: "empty".into(),
        })?;
        assert_eq!(nudged["what"], "nudged");
        let stopped = ChatEvent::Stopped {
            tools: Some("⚙ 1 command(s)".into()),
        };
        let json = serde_json::to_value(&stopped)?;
        assert_eq!(json["kind"], "stopped");
        assert_eq!(serde_json::from_value::<ChatEvent>(json)?, stopped);
        // Without a count the events read and write as before.
        let plain: ChatEvent = serde_json::from_str(r#"{"kind":"stopped"}"#)?;
        assert_eq!(plain, ChatEvent::Stopped { tools: None });
        assert_eq!(
            serde_json::to_value(&plain)?,
            serde_json::json!({"kind": "stopped"})
        );
        let notice: ChatEvent = serde_json::from_str(r#"{"kind":"notice","text":"hi"}"#)?;
        assert_eq!(
            notice,
            ChatEvent::Notice {
                text: "hi".into(),
                about: None
            }
        );
        Ok(())
    }

    #[test]
    fn a_status_event_round_trips() -> Result<(), serde_json::Error> {
        for status in [
            TurnStatus::LoadingModel {
                model: "qwen".into(),
            },
            TurnStatus::ReadingContext {
                tokens: 1840,
                done: 828,
            },
            TurnStatus::Waiting {
                model: "mock/long-model".into(),
            },
            TurnStatus::Thinking,
        ] {
            let event = ChatEvent::Status { status };
            let json = serde_json::to_string(&event)?;
            assert_eq!(serde_json::from_str::<ChatEvent>(&json)?, event);
        }
        let json = serde_json::to_value(ChatEvent::Status {
            status: TurnStatus::ReadingContext {
                tokens: 10,
                done: 5,
            },
        })?;
        assert_eq!(json["kind"], "status");
        assert_eq!(json["status"]["state"], "reading_context");
        assert!(TurnStatus::Thinking.same_stage(&TurnStatus::Thinking));
        assert!(!TurnStatus::Thinking.same_stage(&TurnStatus::Waiting { model: "m".into() }));
        Ok(())
    }

    #[test]
    fn a_recalled_memory_carries_the_words_it_matched_and_older_ones_still_read(
    ) -> Result<(), serde_json::Error> {
        let recalled = RecalledMemory {
            id: 3,
            source: "claude-code".into(),
            date: "2026-12-04".into(),
            snippet: "The staging database password rotates every 90 days".into(),
            score: 1.4,
            channels: "fts #1, vec #1".into(),
            reason: "kept: above the relative threshold".into(),
            words: vec!["staging".into(), "database".into()],
            close_in_meaning: true,
        };
        let json = serde_json::to_string(&recalled)?;
        assert_eq!(serde_json::from_str::<RecalledMemory>(&json)?, recalled);
        // A task saved before the words were kept reads with none.
        let old = r#"{"id":1,"source":"codex","date":"2026-01-01","snippet":"s","score":1.0,"channels":"fts #1","reason":"kept"}"#;
        let read: RecalledMemory = serde_json::from_str(old)?;
        assert!(read.words.is_empty() && !read.close_in_meaning);
        Ok(())
    }
}

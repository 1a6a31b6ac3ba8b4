//! Tasks for the workbench: the stored conversations as a list, one as a transcript (the person's
//! words, Cairn's replies with their texts and tool calls in order), and rename, pin, archive,
//! restore, delete.

use cairn_agent::{words_of, Session, SessionHeader};
use cairn_llm::Role;
use cairn_protocol::{RecalledMemory, ReplyPart, TaskSummary, TranscriptMessage, TranscriptTool};
use cairn_tools::{Toolbox, ToolboxOptions};

use crate::{Cairn, Error};

/// A change to a task.
#[derive(Debug, Clone, Default, serde::Deserialize)]
pub struct TaskChange {
    pub title: Option<String>,
    pub pinned: Option<bool>,
    pub archived: Option<bool>,
}

/// What a task is called until its first message names it.
pub(crate) const UNTITLED: &str = "New task";

fn summary(h: SessionHeader) -> TaskSummary {
    TaskSummary {
        session: h.id,
        // A task made for its goal has no title until its first message.
        title: if h.title.is_empty() {
            UNTITLED.to_owned()
        } else {
            h.title
        },
        created_at: h.created_at,
        updated_at: h.updated_at,
        archived: h.archived,
        pinned: h.pinned,
        goal: h.goal.as_ref().map(|g| cairn_agent::describe_goal(Some(g))),
        folder: h
            .folder
            .map(|f| f.display().to_string())
            .unwrap_or_default(),
    }
}

/// Whether a tool result reads as a failure (the runtime's error, refusal and exit-code texts).
fn looks_failed(output: &str) -> bool {
    let body = output
        .split_once('\n')
        .filter(|(first, _)| first.starts_with("[#"))
        .map_or(output, |(_, rest)| rest);
    body.contains("[error: ")
        || body.contains("rejected by the user]")
        || body.contains("[exit code: ")
        || body.starts_with("[unknown tool")
}

/// A stored conversation as the stream shows it.
pub fn transcript(session: &Session) -> Vec<TranscriptMessage> {
    let tools = Toolbox::new(&ToolboxOptions {
        save_answer: true,
        ..ToolboxOptions::default()
    });
    let mut out: Vec<TranscriptMessage> = Vec::new();
    // Where the person stopped a reply: after how many non-system messages.
    let stops: Vec<usize> = session
        .marks
        .iter()
        .filter(|mark| mark.is_stopped())
        .filter_map(|mark| mark.place_in(session))
        .collect();
    let mark_stopped = |out: &mut Vec<TranscriptMessage>, seen: usize| {
        if stops.contains(&seen) {
            if let Some(reply) = out.last_mut().filter(|r| !r.from_person) {
                reply.stopped = true;
            }
        }
    };
    // What was recalled before the reply to the person's message at each position.
    let recalls: std::collections::HashMap<usize, &Vec<RecalledMemory>> = session
        .recalls
        .iter()
        .map(|r| (r.position, &r.items))
        .collect();
    let mut recalled_next: Vec<RecalledMemory> = Vec::new();
    let mut seen = 0;
    // What came before each compaction, then what the model is sent now; each summary marks its
    // place.
    for m in session.earlier.iter().chain(&session.messages) {
        mark_stopped(&mut out, seen);
        let position = seen;
        if m.role != Role::System {
            seen += 1;
        }
        match m.role {
            Role::System => {}
            Role::User if cairn_agent::compaction_summary(&m.content).is_some() => {
                let summary = cairn_agent::compaction_summary(&m.content).unwrap_or_default();
                out.push(TranscriptMessage::compaction(summary));
            }
            Role::Assistant
                if m.tool_calls.is_empty() && cairn_agent::is_compaction_ack(m.content.trim()) => {}
            // A background job's note: the harness's, shown in the reply it arrived in (or
            // opening the reply of the turn it woke).
            Role::User if cairn_agent::is_job_note(words_of(m)) => {
                let text = words_of(m).trim().to_owned();
                if let Some(reply) = current_reply(&mut out, &mut recalled_next) {
                    reply.parts.push(ReplyPart::JobNote { text });
                }
            }
            Role::User => {
                let words = words_of(m).trim();
                // The runtime's own requests (nudges, wrap-up, compaction) are not the person's.
                if words.is_empty() || cairn_agent::is_runtime_text(&m.content) {
                    continue;
                }
                let (words, documents) = crate::split_documents(words);
                let images = m
                    .images
                    .iter()
                    .map(|i| crate::attachments::attached_name(&i.path));
                recalled_next = recalls
                    .get(&position)
                    .map(|items| (*items).clone())
                    .unwrap_or_default();
                out.push(TranscriptMessage {
                    from_person: true,
                    parts: vec![ReplyPart::Text {
                        text: words.trim_end().to_owned(),
                    }],
                    attachments: documents.into_iter().chain(images).collect(),
                    stopped: false,
                    recalled: Vec::new(),
                });
            }
            Role::Assistant if m.content.trim().is_empty() && m.tool_calls.is_empty() => {}
            Role::Assistant => {
                let Some(reply) = current_reply(&mut out, &mut recalled_next) else {
                    continue;
                };
                if !m.content.trim().is_empty() {
                    reply.parts.push(ReplyPart::Text {
                        text: m.content.trim().to_owned(),
                    });
                }
                for call in &m.tool_calls {
                    let input: serde_json::Value =
                        serde_json::from_str(&call.arguments).unwrap_or(serde_json::Value::Null);
                    let display = tools
                        .get(&call.name)
                        .map(|t| t.display(&input))
                        .unwrap_or_else(|| format!("{}: {}", call.name, call.arguments));
                    reply.parts.push(ReplyPart::Tool(TranscriptTool {
                        call_id: call.id.clone(),
                        name: call.name.clone(),
                        display,
                        output: String::new(),
                        failed: false,
                    }));
                }
            }
            Role::Tool => {
                if let Some(reply) = out
                    .last_mut()
                    .filter(|r| !r.from_person && !r.is_compaction())
                {
                    let id = m.tool_call_id.as_deref().unwrap_or("");
                    let tool = reply.parts.iter_mut().find_map(|p| match p {
                        ReplyPart::Tool(tool) if tool.call_id == id => Some(tool),
                        _ => None,
                    });
                    if let Some(tool) = tool {
                        tool.output = m.content.clone();
                        tool.failed = looks_failed(&m.content);
                    }
                }
            }
        }
    }
    mark_stopped(&mut out, seen);
    out
}

/// The reply being built (the last message, when it is one), or a new one opened with the
/// memories recalled for it.
fn current_reply<'a>(
    out: &'a mut Vec<TranscriptMessage>,
    recalled: &mut Vec<RecalledMemory>,
) -> Option<&'a mut TranscriptMessage> {
    if !out
        .last()
        .is_some_and(|last| !last.from_person && !last.is_compaction())
    {
        out.push(TranscriptMessage {
            from_person: false,
            parts: Vec::new(),
            attachments: Vec::new(),
            stopped: false,
            recalled: std::mem::take(recalled),
        });
    }
    out.last_mut()
}

/// A task a turn has just started in, before its first step stores it.
pub(crate) fn unstored(session: &str, now_ms: i64) -> TaskSummary {
    TaskSummary {
        session: session.to_owned(),
        title: UNTITLED.to_owned(),
        created_at: now_ms,
        updated_at: now_ms,
        archived: false,
        pinned: false,
        goal: None,
        folder: String::new(),
    }
}

impl Cairn {
    /// Task `session` as the task list shows it, if it is stored.
    pub fn task_summary(&self, session: &str) -> Option<TaskSummary> {
        self.session_store().header(session).map(summary)
    }

    /// Every stored task, most recently updated first (archived ones included, marked).
    pub fn tasks_list(&self) -> Vec<TaskSummary> {
        self.session_store()
            .headers()
            .into_iter()
            .map(summary)
            .collect()
    }

    /// The tasks whose title or conversation (the person's words and the replies, not tool
    /// output) contains `query`, ignoring case: their session ids, most recent first.
    pub fn tasks_search(&self, query: &str) -> Vec<String> {
        let query = query.trim().to_lowercase();
        if query.is_empty() {
            return Vec::new();
        }
        self.session_store()
            .list()
            .into_iter()
            .filter(|session| {
                session.title.to_lowercase().contains(&query)
                    || transcript(session)
                        .iter()
                        .any(|m| m.text().to_lowercase().contains(&query))
            })
            .map(|session| session.id)
            .collect()
    }

    /// One task's transcript.
    pub fn task_transcript(&self, session: &str) -> Result<Vec<TranscriptMessage>, Error> {
        let stored = self
            .session_store()
            .load(session)
            .ok_or_else(|| Error::NotFound(format!("no task {session:?}")))?;
        Ok(transcript(&stored))
    }

    /// `/goal <words>` on a task (see `cairn_agent::GoalCommand`): what to tell the person.
    pub fn task_goal(&self, session: &str, words: &str) -> Result<String, Error> {
        let command = cairn_agent::GoalCommand::parse(words).map_err(Error::Invalid)?;
        let store = self.session_store();
        // A goal set before the task's first message makes the task, empty, to hold it.
        if matches!(command, cairn_agent::GoalCommand::Create(_)) && store.load(session).is_none() {
            let config = self.load_config().unwrap_or_default();
            let empty = Session::empty(session, config.agent.yolo, cairn_memory::now_ms());
            store.save(&empty).map_err(Error::Agent)?;
        }
        let mut outcome = None;
        let found = store
            .update(session, |s| outcome = Some(command.apply(&mut s.goal)))
            .map_err(Error::Agent)?;
        match outcome {
            Some(said) if found => said.map_err(Error::Invalid),
            _ => Err(Error::Invalid(
                "Send this task a first message, then set its goal.".into(),
            )),
        }
    }

    /// Renames, pins or archives a task; its new summary.
    pub fn task_update(&self, session: &str, change: TaskChange) -> Result<TaskSummary, Error> {
        let store = self.session_store();
        let mut updated = None;
        let found = store
            .update(session, |s| {
                if let Some(title) = change
                    .title
                    .as_deref()
                    .map(str::trim)
                    .filter(|t| !t.is_empty())
                {
                    s.title = title.chars().take(120).collect();
                }
                if let Some(pinned) = change.pinned {
                    s.pinned = pinned;
                }
                if let Some(archived) = change.archived {
                    s.archived = archived;
                }
                updated = Some(summary(s.header()));
            })
            .map_err(Error::Agent)?;
        match (found, updated) {
            (true, Some(summary)) => Ok(summary),
            _ => Err(Error::NotFound(format!("no task {session:?}"))),
        }
    }

    /// Deletes a task for good.
    pub fn task_delete(&self, session: &str) -> Result<bool, Error> {
        self.session_store().delete(session).map_err(Error::Agent)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use cairn_llm::{Message, ToolCall};

    /// A stored task "s" with these messages (and these from before a compaction).
    fn session_of(earlier: Vec<Message>, messages: Vec<Message>) -> Session {
        Session {
            id: "s".into(),
            title: "t".into(),
            created_at: 0,
            updated_at: 0,
            archived: false,
            pinned: false,
            earlier,
            messages,
            errors: vec![],
            marks: vec![],
            context: Default::default(),
            yolo: true,
            goal: None,
            recalls: vec![],
            folder: None,
        }
    }

    #[test]
    fn job_notes_show_in_the_reply_they_came_in_or_open_the_turn_they_woke() {
        let note = |job: &str| {
            format!("[A background job you started has finished:]\n{job} (make) exited with code 0 after 2 s.\nbuilt")
        };
        let session = session_of(
            vec![],
            vec![
                Message::new(Role::System, "You are Cairn."),
                Message::new(Role::User, "Build it"),
                Message::new(Role::Assistant, "Started."),
                Message::new(Role::User, note("job1")),
                Message::new(Role::Assistant, "It built."),
                Message::new(Role::User, note("job2")),
                Message::new(Role::Assistant, "The second one built too."),
            ],
        );
        let t = transcript(&session);
        assert_eq!(t.len(), 2, "{t:?}");
        assert!(t[0].from_person);
        assert_eq!(
            t[1].parts,
            vec![
                ReplyPart::Text {
                    text: "Started.".into()
                },
                ReplyPart::JobNote { text: note("job1") },
                ReplyPart::Text {
                    text: "It built.".into()
                },
                ReplyPart::JobNote { text: note("job2") },
                ReplyPart::Text {
                    text: "The second one built too.".into()
                },
            ]
        );
        // A note with no reply before it opens the reply of the turn it woke.
        let woken = session_of(
            vec![],
            vec![
                Message::new(Role::System, "You are Cairn."),
                Message::new(Role::User, note("job3")),
                Message::new(Role::Assistant, "Done."),
            ],
        );
        let t = transcript(&woken);
        assert_eq!(t.len(), 1, "{t:?}");
        assert!(!t[0].from_person);
        assert_eq!(t[0].parts[0], ReplyPart::JobNote { text: note("job3") });
    }

    #[test]
    fn a_reopened_reply_shows_what_it_recalled() {
        let mut session = session_of(
            vec![],
            vec![
                Message::new(Role::System, "You are Cairn."),
                Message::new(Role::User, "Where does the basil go?"),
                Message::new(Role::Assistant, "South bed."),
                Message::new(Role::User, "And the tomatoes?"),
                Message::new(Role::Assistant, "Beside it."),
            ],
        );
        let recalled = RecalledMemory {
            id: 7,
            source: "codex".into(),
            date: "2026-11-30".into(),
            snippet: "Basil grew best in the south bed".into(),
            score: 1.2,
            channels: "fts #1".into(),
            reason: "kept: above the relative threshold".into(),
            words: vec!["basil".into()],
            close_in_meaning: true,
        };
        session.recalls = vec![cairn_agent::SessionRecall {
            position: 2,
            items: vec![recalled.clone()],
        }];
        let t = transcript(&session);
        assert_eq!(t.len(), 4);
        assert!(t[1].recalled.is_empty(), "the first reply recalled nothing");
        assert_eq!(t[3].recalled, vec![recalled]);
        assert!(
            t[2].recalled.is_empty(),
            "the person's message carries none"
        );
    }

    #[test]
    fn a_compacted_task_reads_back_whole_with_the_summary_in_its_place_and_its_stops() {
        let summary_message = format!(
            "{}\n\nThe garden has tomatoes.",
            "[Summary of the conversation so far, written when it was compacted:]"
        );
        let mut session = session_of(
            vec![
                Message::new(Role::User, "What grows here?"),
                Message::new(Role::Assistant, "Tomatoes."),
            ],
            vec![
                Message::new(Role::System, "You are Cairn."),
                Message::new(Role::User, summary_message),
                Message::new(Role::Assistant, "Understood: I continue from this summary."),
                Message::new(Role::User, "And basil?"),
                Message::new(Role::Assistant, "Yes."),
            ],
        );
        // The person stopped the first reply (before the compaction) and the last one.
        let mark = |position| cairn_agent::SessionMark {
            at: 0,
            message_index: 0,
            position: Some(position),
            text: "[the turn was stopped by the person]".into(),
        };
        session.marks = vec![mark(2), mark(6)];
        let t = transcript(&session);
        let stopped: Vec<bool> = t.iter().map(|m| m.stopped).collect();
        assert_eq!(stopped, [false, true, false, false, true]);
        let texts: Vec<String> = t.iter().map(|m| m.text()).collect();
        assert_eq!(
            texts,
            ["What grows here?", "Tomatoes.", "", "And basil?", "Yes."]
        );
        assert_eq!(
            t[2].parts,
            [ReplyPart::Compacted {
                summary: "The garden has tomatoes.".into()
            }]
        );
    }

    #[test]
    fn a_stored_turn_reads_back_with_its_tools_and_without_the_runtime_note() {
        let mut call = Message::new(Role::Assistant, "Let me look.");
        call.tool_calls.push(ToolCall {
            id: "c1".into(),
            name: "bash".into(),
            arguments: r#"{"command": "ls"}"#.into(),
        });
        let session = session_of(
            vec![],
            vec![
                Message::new(Role::System, "system"),
                Message::new(Role::User, "list files\n\nToday is 2026-11-29."),
                call,
                Message::tool_result("c1", "[#0001]\na\nb\n"),
                Message::new(Role::Assistant, "Two files."),
                {
                    let mut m = Message::new(
                    Role::User,
                    "run it\n\n--- Attached file: notes.md ---\n# Notes\n\nToday is 2026-11-29.",
                );
                    m.images.push(cairn_llm::Image {
                        media_type: "image/png".into(),
                        path: "/d/attachments/0123456789ab-plot.png".into(),
                    });
                    m
                },
                Message::new(Role::Assistant, ""),
            ],
        );
        let t = transcript(&session);
        assert_eq!(t.len(), 3);
        assert_eq!(t[0].text(), "list files");
        assert!(t[0].from_person);
        assert_eq!(t[1].text(), "Let me look.\n\nTwo files.");
        // The call sits between the text before it and the text after it.
        let tool = match &t[1].parts[..] {
            [ReplyPart::Text { .. }, ReplyPart::Tool(tool), ReplyPart::Text { text }] => {
                assert_eq!(text, "Two files.");
                tool
            }
            other => panic!("{other:?}"),
        };
        assert_eq!(tool.display, "🛠️  bash: ls");
        assert_eq!(tool.output, "[#0001]\na\nb\n");
        assert!(!tool.failed);
        assert!(looks_failed("[#0002]\n[command rejected by the user]"));
        assert_eq!(t[2].text(), "run it");
        assert_eq!(t[2].attachments, ["notes.md", "plot.png"]);
        let session = Session {
            goal: Some(cairn_agent::Goal {
                text: "g".into(),
                paused: false,
                budget: None,
                turns: 0,
            }),
            ..session
        };
        let Ok(dir) = tempfile::tempdir() else {
            return;
        };
        let cairn = Cairn::new(cairn_config::Home::at(dir.path()));
        assert!(cairn.task_goal("s", "pause").is_err(), "no such task yet");
        assert!(cairn.session_store().save(&session).is_ok());
        assert_eq!(
            cairn.task_goal("s", "").ok().as_deref(),
            Some("Goal (active): g")
        );
        assert!(cairn.task_goal("s", "pause").is_ok());
        let goal = cairn.session_store().load("s").and_then(|s| s.goal);
        assert!(goal.is_some_and(|g| g.paused), "the change is stored");
        assert!(cairn.task_goal("s", "budget many").is_err());
        assert_eq!(cairn.tasks_search("TWO FILES"), ["s"]);
        assert_eq!(cairn.tasks_search("run it"), ["s"]);
        assert!(
            cairn.tasks_search("a\nb").is_empty(),
            "tool output is not searched"
        );
        assert!(cairn.tasks_search("  ").is_empty());
    }
}

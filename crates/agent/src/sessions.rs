//! Sessions on disk: one JSON file per conversation under `<data>/sessions/`, written atomically
//! after every turn, so a conversation survives a restart with its errors.

use std::path::PathBuf;

use cairn_llm::Message;

use crate::context::ContextState;
use crate::error::AgentError;
use serde::{Deserialize, Serialize};

/// A failure remembered with the session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionError {
    pub at: i64,
    /// Where it happened (`generation`, …).
    #[serde(rename = "where", default = "generation")]
    pub place: String,
    pub message: String,
}

fn generation() -> String {
    "generation".into()
}

/// A note in the transcript: a turn stopped, a prompt wrapped up.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionMark {
    pub at: i64,
    /// How many messages the session had when it was made.
    pub message_index: usize,
    /// How many of the person's and the model's messages came before it, those before a
    /// compaction included: where it stands in the transcript (absent in older files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub position: Option<usize>,
    pub text: String,
}

impl SessionMark {
    /// Where the mark stands among `session`'s non-system messages, earlier ones first.
    pub fn place_in(&self, session: &Session) -> Option<usize> {
        match self.position {
            Some(position) => Some(position),
            // Older files counted the system message, and knew no compaction.
            None if session.earlier.is_empty() => self.message_index.checked_sub(1),
            None => None,
        }
    }

    /// Whether it says the person stopped the turn.
    pub fn is_stopped(&self) -> bool {
        self.text == crate::texts::MARK_STOPPED
    }
}

/// A conversation as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Session {
    pub id: String,
    pub title: String,
    pub created_at: i64,
    pub updated_at: i64,
    #[serde(default)]
    pub archived: bool,
    /// Kept at the top of the task list.
    #[serde(default)]
    pub pinned: bool,
    /// What the model is sent: after a compaction, its summary and what followed.
    pub messages: Vec<Message>,
    /// What came before each compaction, oldest first, as the person saw it: kept for the
    /// transcript, never sent to the model again.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub earlier: Vec<Message>,
    #[serde(default)]
    pub errors: Vec<SessionError>,
    #[serde(default)]
    pub marks: Vec<SessionMark>,
    /// Result ids, stored full outputs and the dedupe table.
    #[serde(default)]
    pub context: ContextState,
    /// The permission mode the session last ran in.
    #[serde(default = "yes")]
    pub yolo: bool,
    /// The standing goal (`/goal`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goal: Option<crate::Goal>,
    /// What was recalled from memory before each reply, for the transcript.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub recalls: Vec<SessionRecall>,
    /// Where its tools work (absent in files from before tasks had folders: then where the
    /// runtime started).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub folder: Option<PathBuf>,
}

/// The memories recalled before a reply: for the person's message at `position` among the
/// session's non-system messages (those before a compaction included).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionRecall {
    pub position: usize,
    pub items: Vec<cairn_protocol::RecalledMemory>,
}

fn yes() -> bool {
    true
}

/// A session's header: the fields a list shows (the rest of the file is skipped unread).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct SessionHeader {
    pub id: String,
    pub title: String,
    pub created_at: i64,
    pub updated_at: i64,
    #[serde(default)]
    pub archived: bool,
    #[serde(default)]
    pub pinned: bool,
    /// The standing goal, if the task has one.
    #[serde(default)]
    pub goal: Option<crate::Goal>,
    /// Where its tools work, if it was told.
    #[serde(default)]
    pub folder: Option<PathBuf>,
}

impl Session {
    /// A session with nothing said yet (its title comes with its first message).
    pub fn empty(id: &str, yolo: bool, now_ms: i64) -> Self {
        Self {
            id: id.to_owned(),
            title: String::new(),
            created_at: now_ms,
            updated_at: now_ms,
            archived: false,
            pinned: false,
            messages: Vec::new(),
            earlier: Vec::new(),
            errors: Vec::new(),
            marks: Vec::new(),
            context: ContextState::default(),
            yolo,
            goal: None,
            recalls: Vec::new(),
            folder: None,
        }
    }

    /// What a list shows of it.
    pub fn header(&self) -> SessionHeader {
        SessionHeader {
            id: self.id.clone(),
            title: self.title.clone(),
            created_at: self.created_at,
            updated_at: self.updated_at,
            archived: self.archived,
            pinned: self.pinned,
            goal: self.goal.clone(),
            folder: self.folder.clone(),
        }
    }

    /// How many times the person spoke in it.
    pub fn turns(&self) -> usize {
        self.messages
            .iter()
            .filter(|m| m.role == cairn_llm::Role::User)
            .count()
    }
}

/// The folder of session files.
#[derive(Debug, Clone)]
pub struct SessionStore {
    dir: PathBuf,
}

/// Session ids become file names: letters, digits, `-`, `_` and `.` only.
pub fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 128
        && !id.starts_with('.')
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// Why `id` cannot name a session (a `noun`: task, session), or `None` when it can: refused
/// before a turn runs, at every door.
pub fn id_problem(id: &str, noun: &str) -> Option<String> {
    (!valid_id(id)).then(|| {
        format!(
            "{:?} is not a {noun} id: letters, digits, '-', '_' and '.' only, not starting with '.', at most 128",
            id.chars().take(40).collect::<String>()
        )
    })
}

impl SessionStore {
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    /// The folder the session files are in.
    pub fn dir(&self) -> &std::path::Path {
        &self.dir
    }

    fn path(&self, id: &str) -> Option<PathBuf> {
        valid_id(id).then(|| self.dir.join(format!("{id}.json")))
    }

    /// The stored session, if any (a damaged file is reported and treated as absent).
    pub fn load(&self, id: &str) -> Option<Session> {
        self.read(id)
    }

    /// The session's standing goal, read without building its conversation.
    pub fn goal(&self, id: &str) -> Option<crate::Goal> {
        #[derive(serde::Deserialize)]
        struct GoalOnly {
            #[serde(default)]
            goal: Option<crate::Goal>,
        }
        self.read::<GoalOnly>(id)?.goal
    }

    /// The folder stored with the session, read without building its conversation.
    pub fn folder(&self, id: &str) -> Option<PathBuf> {
        #[derive(serde::Deserialize)]
        struct FolderOnly {
            #[serde(default)]
            folder: Option<PathBuf>,
        }
        self.read::<FolderOnly>(id)?.folder
    }

    /// A stored session read as `T` (the whole session, or only its header).
    fn read<T: serde::de::DeserializeOwned>(&self, id: &str) -> Option<T> {
        let path = self.path(id)?;
        let bytes = std::fs::read(&path).ok()?;
        match serde_json::from_slice(&bytes) {
            Ok(value) => Some(value),
            Err(e) => {
                tracing::warn!("{} is damaged and was not loaded: {e}", path.display());
                None
            }
        }
    }

    /// Every stored session read as `T`, in no particular order.
    fn read_all<T: serde::de::DeserializeOwned>(&self) -> Vec<T> {
        std::fs::read_dir(&self.dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|entry| {
                let name = entry.file_name().to_string_lossy().into_owned();
                self.read(name.strip_suffix(".json")?)
            })
            .collect()
    }

    /// Every stored session's header (no messages, no stored results), most recently updated
    /// first: what a task list needs, without building every conversation in memory.
    /// One session's header, read without building its conversation.
    pub fn header(&self, id: &str) -> Option<SessionHeader> {
        self.read(id)
    }

    pub fn headers(&self) -> Vec<SessionHeader> {
        let mut headers: Vec<SessionHeader> = self.read_all();
        headers.sort_by(|a, b| b.updated_at.cmp(&a.updated_at).then(a.id.cmp(&b.id)));
        headers
    }

    /// Writes the session atomically (a crash leaves the old file or the new one, never half).
    pub fn save(&self, session: &Session) -> Result<(), AgentError> {
        let path = self
            .path(&session.id)
            .ok_or_else(|| AgentError::SessionId(session.id.clone()))?;
        let json = serde_json::to_vec_pretty(session)
            .map_err(|e| AgentError::SessionFile(e.to_string()))?;
        cairn_config::write_private_atomically(&path, &json)
            .map_err(|e| AgentError::SessionFile(e.to_string()))
    }

    /// Every stored session, most recently updated first.
    pub fn list(&self) -> Vec<Session> {
        let mut sessions: Vec<Session> = self.read_all();
        sessions.sort_by(|a, b| b.updated_at.cmp(&a.updated_at).then(a.id.cmp(&b.id)));
        sessions
    }

    /// Changes a stored session with `change`; false when there is no such session.
    pub fn update(&self, id: &str, change: impl FnOnce(&mut Session)) -> Result<bool, AgentError> {
        let Some(mut session) = self.load(id) else {
            return Ok(false);
        };
        change(&mut session);
        self.save(&session).map(|()| true)
    }

    /// Deletes a session's file; false when there was none.
    pub fn delete(&self, id: &str) -> Result<bool, AgentError> {
        let Some(path) = self.path(id) else {
            return Ok(false);
        };
        match std::fs::remove_file(&path) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(AgentError::SessionFile(format!("{}: {e}", path.display()))),
        }
    }
}

/// The person's words of a stored user message: the note the runtime appends (today's date, what
/// changed) and the memories recalled after it are cut.
pub fn person_words(content: &str) -> &str {
    match content.rfind("\n\nToday is ") {
        Some(at) => &content[..at],
        None => content,
    }
}

/// The person's words of a stored user message: as the runtime kept them apart, else as
/// [`person_words`] cuts them (sessions written before they were kept apart).
pub fn words_of(message: &cairn_llm::Message) -> &str {
    message
        .words
        .as_deref()
        .unwrap_or_else(|| person_words(&message.content))
}

/// A title from the first message: its first line, at most 60 characters.
pub fn title_of(text: &str) -> String {
    let line = text.trim().lines().next().unwrap_or_default().trim();
    let mut title: String = line.chars().take(60).collect();
    if line.chars().count() > 60 {
        title.push('…');
    }
    title
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[allow(clippy::unwrap_used)]
    fn headers_are_read_without_the_rest_newest_first() {
        let dir = tempfile::tempdir().unwrap();
        let store = SessionStore::new(dir.path());
        for (id, at) in [("old", 1), ("new", 5)] {
            let json = serde_json::json!({"id": id, "title": id, "created_at": at, "updated_at": at,
                "pinned": at == 5, "messages": [{"role": "user", "content": "x".repeat(1000)}]});
            std::fs::write(dir.path().join(format!("{id}.json")), json.to_string()).unwrap();
        }
        std::fs::write(dir.path().join("torn.json"), "{\"id\": \"torn\", \"tit").unwrap();
        let headers = store.headers();
        assert_eq!(
            headers.iter().map(|h| h.id.as_str()).collect::<Vec<_>>(),
            ["new", "old"]
        );
        assert!(headers[0].pinned && !headers[0].archived);
        assert_eq!(store.list()[0].header(), headers[0]);
    }

    #[test]
    fn ids_cannot_escape_the_folder() {
        assert!(valid_id("cli-123-456"));
        for bad in ["", "../x", "a/b", ".hidden", "x y"] {
            assert!(!valid_id(bad), "{bad}");
        }
    }
}

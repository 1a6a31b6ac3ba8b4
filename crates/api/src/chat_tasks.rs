//! Tasks as the chat owns them, the same at every door (the desktop's commands, the CLI, the
//! HTTP tasks API): a new task's id, a message or a restart sent to a task, a task made with its
//! first message, renamed, given a goal, deleted (its jobs and team with it), and the pet's view;
//! each change is published as a [`TaskChanged`](cairn_protocol::TaskChanged).

use std::hash::BuildHasher;

use cairn_agent::Op;
use cairn_protocol::{PetState, TaskSummary};

use crate::chat::{Chat, ChatTurn};
use crate::{AttachmentInput, Error, TaskChange};

/// A new task's id ([`cairn_protocol::task_id`]: the time and a random tail).
pub fn mint_task_id() -> String {
    let now = u64::try_from(cairn_memory::now_ms()).unwrap_or_default();
    // A fresh randomly keyed hasher per call: its keys are the randomness.
    let random = std::collections::hash_map::RandomState::new().hash_one(now);
    cairn_protocol::task_id(now, random as u32)
}

impl Chat {
    /// Sends the person's message (its attachments checked and stored) to task `session`, made
    /// on first use; its events come from the turn. Blocking while the attachments are read.
    pub fn send(
        &self,
        session: &str,
        text: &str,
        attachments: &[AttachmentInput],
    ) -> Result<ChatTurn, Error> {
        let prepared = self.cairn().prepare_message(text, attachments)?;
        self.submit(
            session,
            Op::UserMessage {
                session: session.to_owned(),
                text: prepared.text,
                images: prepared.images,
            },
        )
    }

    /// `/restart`: runs the task's last message again, streaming like a new one.
    pub fn restart(&self, session: &str) -> Result<ChatTurn, Error> {
        self.submit(
            session,
            Op::Restart {
                session: session.to_owned(),
            },
        )
    }

    /// A new task working in `folder` (or where new tasks work), its first turn started with
    /// nobody but the subscribers listening; its id.
    pub fn new_task(&self, text: &str, folder: Option<&str>) -> Result<String, Error> {
        if text.trim().is_empty() {
            return Err(Error::Invalid("the message is empty".into()));
        }
        let session = mint_task_id();
        if let Some(folder) = folder {
            self.set_task_folder(&session, folder)?;
        }
        self.start_detached(&session, text)?;
        Ok(session)
    }

    /// Renames, pins, unpins, archives or restores a task; its new summary.
    pub fn update_task(&self, session: &str, change: TaskChange) -> Result<TaskSummary, Error> {
        let summary = self.cairn().task_update(session, change)?;
        self.publish_task(session);
        Ok(summary)
    }

    /// `/goal <words>` on a task: what to tell the person.
    pub fn task_goal(&self, session: &str, words: &str) -> Result<String, Error> {
        let said = self.cairn().task_goal(session, words)?;
        self.publish_task(session);
        Ok(said)
    }

    /// Deletes a task for good: its background jobs stop and its team ends first. Whether there
    /// was such a task.
    pub fn delete_task(&self, session: &str) -> Result<bool, Error> {
        self.jobs().end_session(session);
        self.cairn().teams().end(session);
        let deleted = self.cairn().task_delete(session)?;
        if deleted {
            self.publish_removed(session);
        }
        Ok(deleted)
    }

    /// What the pet shows now.
    pub fn pet_state(&self) -> PetState {
        self.cairn()
            .pet_state(&self.running(), cairn_memory::now_ms())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minted_ids_are_valid_task_ids_and_apart() {
        let ids: std::collections::HashSet<String> = (0..100).map(|_| mint_task_id()).collect();
        assert_eq!(ids.len(), 100, "{ids:?}");
        for id in &ids {
            assert!(id.starts_with("task-"), "{id}");
            assert_eq!(cairn_agent::session_id_problem(id, "task"), None, "{id}");
        }
    }
}

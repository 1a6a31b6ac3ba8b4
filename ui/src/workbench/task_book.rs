//! The task list's own changes, pure and host-tested beside `Message::apply`: the stored tasks
//! merged in when the workbench starts, and each [`TaskChanged`] the backend pushes applied (a
//! turn started or ended elsewhere — the pet, the local API, a job's wake-up —, a rename, a goal,
//! a deletion). No state here but the list; the caller says which task is open.

use cairn_protocol::{TaskChanged, TaskSummary};

use super::model::Task;

/// What the caller has to do after a change.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(super) struct Applied {
    /// The open task changed elsewhere: its transcript loads again.
    pub(super) reload_open: bool,
    /// The open task is gone: nothing is open now.
    pub(super) closed_open: bool,
}

/// A reply that ended this long (ms) before the stored task's time is the same activity, not a
/// newer one (the stored time is taken as the turn is saved).
const SAME_ACTIVITY_MS: f64 = 1_000.0;

/// Brings task `summary` into `all`: a task not listed yet is added (its transcript loads when
/// opened); a listed one takes its goal, pin and archive, and — when it was active elsewhere
/// since (newer than what is shown, and no reply streams here) — its title, and its transcript
/// loads again (now when it is open, else it is marked unread).
fn take(all: &mut Vec<Task>, summary: TaskSummary, open: Option<usize>) -> Applied {
    let Some(task) = all.iter_mut().find(|t| t.session == summary.session) else {
        let next = all.iter().map(|t| t.id).max().unwrap_or(0) + 1;
        all.push(Task::stored(next, summary));
        return Applied::default();
    };
    // A goal, a pin or an archive changes without touching the task's time.
    task.goal = summary.goal;
    task.pinned = summary.pinned;
    task.archived = summary.archived;
    let mut applied = Applied::default();
    if !task.running() && summary.updated_at as f64 > task.updated_at + SAME_ACTIVITY_MS {
        task.updated_at = summary.updated_at as f64;
        task.title = summary.title;
        task.messages.clear();
        task.loaded = false;
        if open == Some(task.id) {
            applied.reload_open = true;
        } else {
            task.unread = true;
        }
    }
    applied
}

/// The stored tasks, read when the workbench starts, merged into what it already shows.
pub(super) fn merge_stored(
    all: &mut Vec<Task>,
    stored: Vec<TaskSummary>,
    open: Option<usize>,
) -> Applied {
    let mut applied = Applied::default();
    for summary in stored {
        applied.reload_open |= take(all, summary, open).reload_open;
    }
    applied
}

/// One pushed change.
pub(super) fn apply(all: &mut Vec<Task>, change: TaskChanged, open: Option<usize>) -> Applied {
    match change {
        TaskChanged::Updated { task, .. } => take(all, task, open),
        TaskChanged::Removed { session } => {
            let gone = all.iter().find(|t| t.session == session).map(|t| t.id);
            all.retain(|t| t.session != session);
            Applied {
                reload_open: false,
                closed_open: gone.is_some() && gone == open,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::model::{Entry, Message};
    use super::*;

    fn summary(session: &str, title: &str, updated_at: i64) -> TaskSummary {
        TaskSummary {
            session: session.into(),
            title: title.into(),
            created_at: 0,
            updated_at,
            archived: false,
            pinned: false,
            goal: None,
            folder: String::new(),
        }
    }

    fn updated(session: &str, title: &str, updated_at: i64) -> TaskChanged {
        TaskChanged::Updated {
            task: summary(session, title, updated_at),
            running: false,
        }
    }

    #[test]
    fn a_task_started_elsewhere_is_added_once_and_named_when_its_turn_ends() {
        let mut all = Vec::new();
        apply(&mut all, updated("pet-task", "New task", 10_000), None);
        apply(&mut all, updated("pet-task", "New task", 10_000), None);
        assert_eq!(all.len(), 1);
        assert_eq!((all[0].id, all[0].title.as_str()), (1, "New task"));
        assert!(!all[0].loaded, "its transcript loads when opened");
        let applied = apply(
            &mut all,
            updated("pet-task", "Water the basil", 40_000),
            None,
        );
        assert_eq!(applied, Applied::default());
        assert_eq!(all[0].title, "Water the basil");
        assert!(all[0].unread, "it changed while another task was open");
    }

    #[test]
    fn the_open_task_continued_elsewhere_reloads_and_is_not_unread() {
        let mut all = vec![Task::stored(4, summary("s", "Plan", 10_000))];
        all[0].loaded = true;
        let applied = apply(&mut all, updated("s", "Plan", 60_000), Some(4));
        assert!(applied.reload_open);
        assert!(!all[0].unread);
        assert!(!all[0].loaded, "it loads again");
    }

    #[test]
    fn a_reply_streaming_here_is_not_replaced_by_the_stored_task() {
        let mut all = vec![Task::stored(1, summary("s", "Plan", 10_000))];
        all[0].loaded = true;
        all[0]
            .messages
            .push(Entry::new(Message::person("go on".into())));
        all[0].messages.push(Entry::new(Message::reply()));
        let applied = apply(&mut all, updated("s", "Plan", 60_000), Some(1));
        assert_eq!(applied, Applied::default());
        assert_eq!(all[0].messages.len(), 2, "the stream stays");
        // Its own turn ending a moment later is the same activity.
        let mut all = vec![Task::stored(1, summary("s", "Plan", 10_000))];
        apply(&mut all, updated("s", "Plan", 10_900), None);
        assert!(!all[0].unread);
    }

    #[test]
    fn a_goal_pin_or_archive_applies_without_touching_the_time() {
        let mut all = vec![Task::stored(1, summary("s", "Plan", 10_000))];
        let mut changed = summary("s", "Plan", 10_000);
        changed.goal = Some("Goal (active): ship it".into());
        changed.pinned = true;
        changed.archived = true;
        apply(
            &mut all,
            TaskChanged::Updated {
                task: changed,
                running: false,
            },
            None,
        );
        assert_eq!(all[0].goal.as_deref(), Some("Goal (active): ship it"));
        assert!(all[0].pinned && all[0].archived);
        assert!(!all[0].unread);
        assert_eq!(all[0].updated_at, 10_000.0);
    }

    #[test]
    fn a_deleted_task_goes_and_closes_when_it_was_open() {
        let mut all = vec![
            Task::stored(1, summary("a", "A", 0)),
            Task::stored(2, summary("b", "B", 0)),
        ];
        let removed = |session: &str| TaskChanged::Removed {
            session: session.into(),
        };
        assert_eq!(apply(&mut all, removed("a"), Some(2)), Applied::default());
        let applied = apply(&mut all, removed("b"), Some(2));
        assert!(applied.closed_open);
        assert!(all.is_empty());
        assert_eq!(apply(&mut all, removed("zzz"), None), Applied::default());
    }

    #[test]
    fn merging_the_stored_tasks_keeps_ids_and_adds_the_new_ones() {
        let mut all = vec![Task::stored(7, summary("a", "A", 0))];
        let applied = merge_stored(
            &mut all,
            vec![summary("a", "A", 0), summary("b", "B", 5)],
            Some(7),
        );
        assert_eq!(applied, Applied::default());
        let ids: Vec<(usize, &str)> = all.iter().map(|t| (t.id, t.session.as_str())).collect();
        assert_eq!(ids, [(7, "a"), (8, "b")]);
    }
}

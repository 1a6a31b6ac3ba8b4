//! The pet's view of the tasks: which are running or just finished (its badge and list), and
//! which one a message typed into its bubble continues.

use std::collections::HashSet;

use cairn_protocol::{PetState, PetTask, TaskSummary};

use crate::Cairn;

/// A finished task stays on the pet's badge, and is continued by its bubble, this long.
const PET_RECENT_MS: i64 = 5 * 60 * 1000;

/// How many tasks the pet's list shows.
const PET_LIST: usize = 6;

impl Cairn {
    /// The pet's state at `now_ms`, with `running` the sessions whose turn runs now.
    pub fn pet_state(&self, running: &HashSet<String>, now_ms: i64) -> PetState {
        pet_state(self.tasks_list(), running, now_ms)
    }
}

/// Running tasks first (a turn that has just started has no stored task yet: "New task"), then
/// those finished in the last five minutes, most recent first; archived tasks never.
fn pet_state(stored: Vec<TaskSummary>, running: &HashSet<String>, now_ms: i64) -> PetState {
    // The finished task that leaves the badge first: when, from now.
    let settles_in_ms = stored
        .iter()
        .filter(|t| !t.archived && !running.contains(&t.session))
        .map(|t| PET_RECENT_MS - (now_ms - t.updated_at))
        .filter(|left| *left >= 0)
        .min()
        .and_then(|left| u64::try_from(left).ok());
    let mut tasks: Vec<PetTask> = stored
        .into_iter()
        .filter(|t| {
            !t.archived && (running.contains(&t.session) || now_ms - t.updated_at <= PET_RECENT_MS)
        })
        .map(|t| PetTask {
            running: running.contains(&t.session),
            session: t.session,
            title: t.title,
        })
        .collect();
    let mut unstored: Vec<&String> = running
        .iter()
        .filter(|session| !tasks.iter().any(|t| &t.session == *session))
        .collect();
    unstored.sort();
    for session in unstored {
        tasks.insert(
            0,
            PetTask {
                session: session.clone(),
                title: crate::tasks::UNTITLED.into(),
                running: true,
            },
        );
    }
    // Stable: within each group the order stays most recent first.
    tasks.sort_by_key(|t| !t.running);
    PetState {
        badge: tasks.len(),
        continues: tasks.first().cloned(),
        tasks: tasks.into_iter().take(PET_LIST).collect(),
        settles_in_ms,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_800_000_000_000;

    fn task(session: &str, minutes_ago: i64, archived: bool) -> TaskSummary {
        TaskSummary {
            session: session.into(),
            title: format!("About {session}"),
            created_at: NOW - 3_600_000,
            updated_at: NOW - minutes_ago * 60_000,
            archived,
            pinned: false,
            goal: None,
            folder: String::new(),
        }
    }

    #[test]
    fn nothing_recent_means_no_badge_and_a_new_task() {
        let state = pet_state(vec![task("old", 6, false)], &HashSet::new(), NOW);
        assert_eq!(state.badge, 0);
        assert!(state.tasks.is_empty());
        assert_eq!(state.continues, None);
        assert_eq!(state.settles_in_ms, None, "nothing to wait for");
    }

    #[test]
    fn the_bubble_continues_the_running_task_before_a_recent_one_and_names_it() {
        let stored = vec![task("recent", 1, false), task("busy", 30, false)];
        let running = HashSet::from(["busy".to_owned()]);
        let state = pet_state(stored, &running, NOW);
        assert_eq!(state.badge, 2);
        assert_eq!(
            state.continues,
            Some(PetTask {
                session: "busy".into(),
                title: "About busy".into(),
                running: true,
            })
        );
        assert_eq!(state.tasks[1].session, "recent");
        // The recent one leaves the badge four minutes from now; the running one stays.
        assert_eq!(state.settles_in_ms, Some(4 * 60_000));
    }

    #[test]
    fn archived_tasks_stay_off_and_a_turn_without_a_stored_task_is_a_new_task() {
        let stored = vec![task("archived", 1, true)];
        let running = HashSet::from(["pet-1".to_owned()]);
        let state = pet_state(stored, &running, NOW);
        assert_eq!(state.badge, 1);
        assert_eq!(state.tasks[0].title, "New task");
        assert_eq!(state.continues.map(|t| t.session).as_deref(), Some("pet-1"));
    }

    #[test]
    fn the_list_shows_six_but_the_badge_counts_all() {
        let stored = (0..9).map(|n| task(&format!("t{n}"), 0, false)).collect();
        let state = pet_state(stored, &HashSet::new(), NOW);
        assert_eq!(state.badge, 9);
        assert_eq!(state.tasks.len(), 6);
    }
}

//! Facts that change: a later statement supersedes the one it updates, recall reads the current
//! version first, a question about the past finds the past, and the injection labels what is out
//! of date.

use cairn_memory::{render_injection, MemoryStore, NewMemory, SearchQuery};

use crate::TestResult;

const DAY: i64 = 86_400_000;
const START: i64 = 1_700_000_000_000;

fn say(store: &MemoryStore, day: i64, text: &str) -> Result<i64, Box<dyn std::error::Error>> {
    Ok(store
        .add(NewMemory {
            text: text.into(),
            session: Some(format!("day-{day}")),
            created_at: Some(START + day * DAY),
            ..NewMemory::default()
        })?
        .id)
}

fn top(store: &MemoryStore, query: &str) -> Result<Vec<i64>, Box<dyn std::error::Error>> {
    Ok(store
        .search(&SearchQuery::new(query).limit(5))?
        .hits
        .into_iter()
        .map(|h| h.memory.id)
        .collect())
}

#[test]
fn a_change_supersedes_the_fact_it_updates_and_recall_reads_it_first() -> TestResult {
    let store = MemoryStore::open_in_memory()?.with_clock(|| START + 100 * DAY);
    let old = say(
        &store,
        1,
        "User: our staging server is at 10.0.3.5\nAssistant: Noted.",
    )?;
    let unrelated = say(&store, 2, "User: I love long walks by the river.")?;
    let looking_back = say(
        &store,
        3,
        "User: remember when the staging server kept crashing?",
    )?;
    let new = say(
        &store,
        4,
        "User: we moved the staging server to 10.0.3.7 now\nAssistant: Updated.",
    )?;
    let cello = say(&store, 5, "User: I started learning the cello now.")?;
    assert_eq!(store.overview()?.backlog.facts, 5, "waiting for the pass");
    assert_eq!(store.relate_all_pending()?, 5);
    assert_eq!(store.relate_all_pending()?, 0, "each memory is read once");
    assert_eq!(store.overview()?.backlog, Default::default());

    let old_record = store.get(old)?.ok_or("old memory")?;
    assert_eq!(old_record.metadata["superseded_by"], new);
    assert_eq!(old_record.metadata["superseded_on"], START + 4 * DAY);
    let new_record = store.get(new)?.ok_or("new memory")?;
    assert_eq!(new_record.metadata["supersedes"], serde_json::json!([old]));
    for id in [unrelated, looking_back, cello] {
        let record = store.get(id)?.ok_or("memory")?;
        assert!(
            record.metadata.get("superseded_by").is_none()
                && record.metadata.get("supersedes").is_none(),
            "{record:?}"
        );
    }
    let history: Vec<i64> = store.versions(old)?.iter().map(|m| m.id).collect();
    assert_eq!(history, vec![old, new]);
    assert_eq!(store.versions(new)?.len(), 2);

    // Asked what holds, the current address comes before the old one, even though the old
    // statement shares more of the question's words.
    let ranked = top(&store, "what is our staging server's address?")?;
    let at = |id: i64| ranked.iter().position(|r| *r == id);
    assert!(
        at(new).is_some() && at(new) < at(old).or(Some(usize::MAX)),
        "{ranked:?}"
    );

    // The injection labels the outdated statement and points at its successor.
    let result = store.search(&SearchQuery::new("staging server 10.0.3.5").limit(5))?;
    let text = render_injection(&result.hits);
    let new_at = result
        .hits
        .iter()
        .position(|h| h.memory.id == new)
        .ok_or("the current version is recalled")?;
    assert!(
        text.contains(&format!(
            "outdated: superseded on 2023-11-18 by no. {}",
            new_at + 1
        )),
        "{text}"
    );
    let explained = result
        .hits
        .iter()
        .find(|h| h.memory.id == old)
        .ok_or("the old version is recalled")?;
    assert!(
        explained
            .reason
            .contains(&format!("superseded on 2023-11-18 by memory {new}")),
        "{}",
        explained.reason
    );

    // Asked about the past, the past comes first.
    let ranked = top(
        &store,
        "Which address did the staging server have before we moved it to 10.0.3.7?",
    )?;
    assert_eq!(ranked.first(), Some(&old), "{ranked:?}");

    // Deleting the update makes the old value current again.
    store.delete(new)?;
    let record = store.get(old)?.ok_or("old memory")?;
    assert!(record.metadata.get("superseded_by").is_none(), "{record:?}");
    let result = store.search(&SearchQuery::new("staging server 10.0.3.5").limit(5))?;
    assert!(result.hits.iter().any(|h| h.memory.id == old));
    assert!(!render_injection(&result.hits).contains("outdated"));
    Ok(())
}

#[test]
fn a_later_change_follows_the_chain_to_the_current_version() -> TestResult {
    let store = MemoryStore::open_in_memory()?.with_clock(|| START + 100 * DAY);
    let first = say(&store, 1, "Ana: Our team's tickets live in Jira.")?;
    let second = say(
        &store,
        2,
        "Ana: We moved our team's tickets from Jira to Linear.",
    )?;
    let third = say(
        &store,
        3,
        "Ana: Our team's tickets moved from Linear to GitHub Issues now.",
    )?;
    let other = say(&store, 4, "Ben: I track my tickets in a notebook now.")?;
    store.relate_all_pending()?;
    let history: Vec<i64> = store.versions(first)?.iter().map(|m| m.id).collect();
    assert_eq!(history, vec![first, second, third]);
    assert!(
        store
            .get(other)?
            .ok_or("memory")?
            .metadata
            .get("supersedes")
            .is_none(),
        "another person's statement updates nothing of Ana's"
    );
    let ranked = top(&store, "Where does Ana's team track tickets now?")?;
    let third_at = ranked.iter().position(|id| *id == third);
    let first_at = ranked.iter().position(|id| *id == first);
    let second_at = ranked.iter().position(|id| *id == second);
    assert!(third_at.is_some(), "{ranked:?}");
    assert!(third_at < first_at.or(Some(usize::MAX)), "{ranked:?}");
    assert!(third_at < second_at.or(Some(usize::MAX)), "{ranked:?}");
    Ok(())
}

#[test]
fn a_remark_as_related_to_two_facts_updates_neither() -> TestResult {
    let store = MemoryStore::open_in_memory()?.with_clock(|| START + 100 * DAY);
    let office = say(&store, 1, "Ana: I drive my car to the office on Mondays.")?;
    let gym = say(&store, 2, "Ana: I drive my car to the gym on Fridays.")?;
    let remark = say(&store, 3, "Ana: I drive my car everywhere now.")?;
    let job = say(&store, 4, "Ana: I work as a nurse at the city hospital.")?;
    let new_job = say(
        &store,
        5,
        "Ana: I left the hospital, I work as a nurse at a school now.",
    )?;
    store.relate_all_pending()?;
    for id in [office, gym, remark] {
        let record = store.get(id)?.ok_or("memory")?;
        assert!(
            record.metadata.get("superseded_by").is_none()
                && record.metadata.get("supersedes").is_none(),
            "{record:?}"
        );
    }
    let history: Vec<i64> = store.versions(job)?.iter().map(|m| m.id).collect();
    assert_eq!(
        history,
        vec![job, new_job],
        "a reworded change still updates its fact"
    );
    Ok(())
}

#[test]
fn asked_what_held_before_a_new_value_recall_finds_the_earlier_value_of_that_shape() -> TestResult {
    let store = MemoryStore::open_in_memory()?.with_clock(|| START + 100 * DAY);
    say(
        &store,
        1,
        "John: We went hiking at the lake last weekend, it was lovely.",
    )?;
    let old = say(&store, 2, "John: Text me at 555-0142 when you land, okay?")?;
    say(
        &store,
        3,
        "John: The kids loved the board games we played on movie night.",
    )?;
    say(&store, 4, "John: Call the office at 2 pm, they expect you.")?;
    say(&store, 5, "John: New number alert: 555-0172.")?;
    say(
        &store,
        6,
        "Maria: I still have 555-0142 saved under your name, John.",
    )?;
    store.relate_all_pending()?;
    let hits = store
        .search(&SearchQuery::new("What was John's phone number before 555-0172?").limit(5))?
        .hits;
    let first = hits.first().ok_or("no hit")?;
    assert_eq!(first.memory.id, old, "{hits:#?}");
    assert!(
        first.reason.contains("value like the one"),
        "{}",
        first.reason
    );
    Ok(())
}

/// `text` from `source` under `external`, said on `day`.
fn imported(
    store: &MemoryStore,
    day: i64,
    source: &str,
    external: &str,
    text: &str,
) -> Result<i64, Box<dyn std::error::Error>> {
    Ok(store
        .add(NewMemory {
            text: text.into(),
            source: Some(source.into()),
            external_id: Some(external.into()),
            session: Some(format!("{source}-{day}")),
            created_at: Some(START + day * DAY),
            ..NewMemory::default()
        })?
        .id)
}

#[test]
fn exact_and_near_duplicates_merge_keeping_every_source() -> TestResult {
    let store = MemoryStore::open_in_memory()?.with_clock(|| START + 100 * DAY);
    let first = imported(
        &store,
        1,
        "claude-code",
        "cc-1",
        "User: the release checklist lives in docs/RELEASING.md, read it first",
    )?;
    // The same conversation seen from another agent's history, and said again with other
    // punctuation and case.
    let again = imported(
        &store,
        2,
        "codex",
        "cx-9",
        "User: the release checklist lives in docs/RELEASING.md, read it first",
    )?;
    let near = imported(
        &store,
        3,
        "cairn",
        "t-4",
        "User: The release checklist lives in docs/RELEASING.md — read it first!",
    )?;
    // Short remarks are moments, not facts: never merged.
    let thanks = [
        imported(&store, 4, "cairn", "t-5", "User: thanks, that helps!")?,
        imported(&store, 5, "cairn", "t-6", "User: thanks, that helps!")?,
    ];
    store.relate_all_pending()?;

    let kept = store.get(first)?.ok_or("kept")?;
    assert_eq!(
        kept.metadata["duplicates"],
        serde_json::json!([again, near])
    );
    for id in [again, near] {
        let merged = store.get(id)?.ok_or("merged")?;
        assert_eq!(merged.metadata["duplicate_of"], first);
        assert_eq!(merged.status, cairn_memory::Status::Archived);
    }
    // Every source keeps its own id.
    let sources: Vec<(String, Option<String>)> = [first, again, near]
        .iter()
        .filter_map(|id| store.get(*id).ok().flatten())
        .map(|m| (m.source, m.external_id))
        .collect();
    assert_eq!(
        sources,
        [
            ("claude-code".to_owned(), Some("cc-1".to_owned())),
            ("codex".to_owned(), Some("cx-9".to_owned())),
            ("cairn".to_owned(), Some("t-4".to_owned())),
        ]
    );
    for id in thanks {
        assert!(store
            .get(id)?
            .is_some_and(|m| m.metadata.get("duplicate_of").is_none()));
    }

    // Recall finds the fact once and says how often it was said.
    let hits = store
        .search(&SearchQuery::new("where is the release checklist?").limit(5))?
        .hits;
    let found: Vec<i64> = hits.iter().map(|h| h.memory.id).collect();
    assert_eq!(found.first(), Some(&first));
    assert!(!found.contains(&again) && !found.contains(&near));
    assert!(
        hits[0]
            .reason
            .contains(&format!("said 3 times (merged: #{again}, #{near})")),
        "{}",
        hits[0].reason
    );

    // Forgetting the fact forgets its copies.
    assert!(store.delete(first)?);
    for id in [first, again, near] {
        assert_eq!(
            store.get(id)?.map(|m| m.status),
            Some(cairn_memory::Status::Deleted)
        );
    }
    Ok(())
}

#[test]
fn a_fact_said_again_after_it_changed_is_not_a_duplicate() -> TestResult {
    let store = MemoryStore::open_in_memory()?.with_clock(|| START + 100 * DAY);
    let old = say(
        &store,
        1,
        "User: our staging server is at 10.0.3.5 for the team",
    )?;
    let new = say(
        &store,
        2,
        "User: we moved the staging server to 10.0.3.7 now",
    )?;
    let back = say(
        &store,
        3,
        "User: our staging server is at 10.0.3.5 for the team",
    )?;
    store.relate_all_pending()?;
    assert_eq!(store.get(old)?.ok_or("old")?.metadata["superseded_by"], new);
    let back = store.get(back)?.ok_or("back")?;
    assert!(back.metadata.get("duplicate_of").is_none(), "{back:?}");
    assert_eq!(back.status, cairn_memory::Status::Activated);
    Ok(())
}

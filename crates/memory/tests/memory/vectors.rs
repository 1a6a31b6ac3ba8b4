//! The vector channel with a small deterministic embedder (concept buckets), so semantic recall is
//! tested without a model file.

use std::sync::Arc;
use std::time::{Duration, Instant};

use cairn_memory::{Embedder, MemoryStore, NewMemory, SearchQuery};

use crate::TestResult;

/// Words map to concepts; a text's vector is its normalised concept histogram.
struct Concepts;

const GROUPS: &[&[&str]] = &[
    &["dog", "puppy", "canine", "hound"],
    &["car", "vehicle", "truck", "sedan"],
    &["stock", "market", "shares", "investor"],
];

impl Embedder for Concepts {
    fn model(&self) -> &str {
        "concepts-test"
    }

    fn dim(&self) -> usize {
        GROUPS.len() + 1
    }

    fn embed(&self, text: &str) -> Result<Vec<f32>, cairn_memory::MemoryError> {
        let mut v = vec![0.0f32; GROUPS.len() + 1];
        v[GROUPS.len()] = 0.05;
        for word in text.to_lowercase().split(|c: char| !c.is_alphanumeric()) {
            if let Some(group) = GROUPS.iter().position(|g| g.contains(&word)) {
                v[group] += 1.0;
            }
        }
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        Ok(v.into_iter().map(|x| x / norm).collect())
    }
}

fn store() -> Result<MemoryStore, Box<dyn std::error::Error>> {
    let store = MemoryStore::open_in_memory()?;
    for text in [
        "my hound sleeps all day",
        "the sedan needs new tyres",
        "investors sold their shares",
        "error E1234 in build.rs",
    ] {
        store.add(NewMemory {
            text: text.into(),
            ..NewMemory::default()
        })?;
    }
    store.set_embedder(Arc::new(Concepts));
    store.embed_all_pending()?;
    Ok(store)
}

#[test]
fn a_memory_with_no_shared_word_is_found_by_meaning() -> TestResult {
    let store = store()?;
    let result = store.search(&SearchQuery::new("tell me about the puppy"))?;
    let first = result.hits.first().ok_or("no hit")?;
    assert_eq!(first.memory.text, "my hound sleeps all day");
    assert_eq!(first.channels.len(), 1);
    assert_eq!(first.channels[0].channel, "vec");
    assert!(first.channels[0].score > 0.9);
    Ok(())
}

#[test]
fn identifier_queries_need_a_keyword_channel() -> TestResult {
    let store = store()?;
    let mut q = SearchQuery::new("what broke with E9999 and the truck?");
    q.verbose = true;
    let result = store.search(&q)?;
    assert!(
        result
            .hits
            .iter()
            .all(|h| h.channels.iter().any(|c| c.channel != "vec")),
        "{:?}",
        result.hits
    );
    let dropped = result
        .dropped
        .iter()
        .find(|h| h.memory.text.contains("sedan"))
        .ok_or("sedan not considered")?;
    assert!(
        dropped.reason.contains("no keyword channel confirmed"),
        "{}",
        dropped.reason
    );
    Ok(())
}

#[test]
fn deleted_and_filtered_memories_leave_the_vector_channel() -> TestResult {
    let store = store()?;
    let hound = store.search(&SearchQuery::new("puppy"))?.hits[0].memory.id;
    store.delete(hound)?;
    assert!(store
        .search(&SearchQuery::new("puppy"))?
        .hits
        .iter()
        .all(|h| h.memory.id != hound));
    let mut q = SearchQuery::new("vehicle");
    q.sources = vec!["somewhere-else".into()];
    assert!(store.search(&q)?.hits.is_empty());
    Ok(())
}

#[test]
fn the_background_queue_embeds_new_memories() -> TestResult {
    let store = Arc::new(store()?);
    let _worker = store.spawn_background_queue();
    store.add(NewMemory {
        text: "a truck blocked the road".into(),
        ..NewMemory::default()
    })?;
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let hits = store.search(&SearchQuery::new("vehicle"))?.hits;
        if hits.iter().any(|h| {
            h.memory.text.contains("truck") && h.channels.iter().any(|c| c.channel == "vec")
        }) {
            return Ok(());
        }
        if Instant::now() > deadline {
            return Err("the new memory was never embedded".into());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn the_queue_resumes_where_it_stopped_and_comes_back_for_what_was_left_behind() -> TestResult {
    let store = MemoryStore::open_in_memory()?;
    store.set_embedder(Arc::new(Concepts));
    let mut ids = Vec::new();
    for i in 0..10 {
        ids.push(
            store
                .add(NewMemory {
                    text: format!("the truck number {i}"),
                    ..NewMemory::default()
                })?
                .id,
        );
    }
    // Batches of three walk the backlog: 3 + 3 + 3 + 1, then nothing.
    let batches: Vec<usize> = std::iter::from_fn(|| match store.embed_pending(3) {
        Ok(0) => None,
        done => Some(done),
    })
    .collect::<Result<_, _>>()?;
    assert_eq!(batches, [3, 3, 3, 1]);
    // An edit drops the vector of a memory the queue has passed: it is found again, with what is
    // new since.
    store.update_text(ids[1], "the puppy number 1")?;
    store.add(NewMemory {
        text: "the sedan number 10".into(),
        ..NewMemory::default()
    })?;
    assert_eq!(store.embed_pending(3)?, 2);
    assert_eq!(store.embed_pending(3)?, 0);
    // Past a full batch, the queue resumes after it, and still comes back for an edit behind it.
    for i in 11..15 {
        store.add(NewMemory {
            text: format!("the car number {i}"),
            ..NewMemory::default()
        })?;
    }
    assert_eq!(store.embed_pending(3)?, 3);
    store.update_text(ids[0], "the hound number 0")?;
    assert_eq!(store.embed_pending(3)?, 1, "the rest of the new ones");
    assert_eq!(store.embed_pending(3)?, 1, "then the edit behind them");
    assert_eq!(store.embed_pending(3)?, 0);
    let found = store.search(&SearchQuery::new("canine"))?;
    assert_eq!(
        found.hits.first().map(|h| h.memory.id),
        Some(ids[1]),
        "the edited memory is found by its new meaning"
    );
    Ok(())
}

#[test]
fn a_command_catches_up_a_small_backlog_and_leaves_a_large_one_to_the_queue() -> TestResult {
    let store = MemoryStore::open_in_memory()?;
    store.set_embedder(Arc::new(Concepts));
    for text in [
        "my hound sleeps all day",
        "the sedan needs new tyres",
        "investors sold their shares",
    ] {
        store.add(NewMemory {
            text: text.into(),
            ..NewMemory::default()
        })?;
    }
    // More waiting than a command takes on: left alone, and said.
    assert_eq!(store.catch_up(Duration::from_secs(5), 2)?, 3);
    let found = store.search(&SearchQuery::new("tell me about the puppy"))?;
    assert!(found.hits.is_empty(), "{:?}", found.hits);
    // A few: embedded now, and found by meaning.
    assert_eq!(store.catch_up(Duration::from_secs(5), 3)?, 0);
    let found = store.search(&SearchQuery::new("tell me about the puppy"))?;
    let first = found.hits.first().ok_or("no hit")?;
    assert_eq!(first.memory.text, "my hound sleeps all day");
    Ok(())
}

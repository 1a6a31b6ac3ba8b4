//! Sync between devices, on the store's side: three stores with skewed clocks exchange their logs
//! through an in-memory hub in random orders, after random adds, edits, archives, deletes and
//! ratings, and end up holding the same memories.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

use cairn_memory::{FeedbackRequest, Layer, MemoryStore, NewMemory, Rating, Status};
use cairn_protocol::sync::Record;

use crate::TestResult;

const WORDS: &[&str] = &[
    "kyoto", "deploy", "port", "8080", "tea", "green", "alice", "bob", "release", "friday",
    "python", "rust", "cache", "hotel", "brother", "meeting",
];

struct Device {
    name: String,
    store: MemoryStore,
    /// Its log as far as the hub holds it.
    pushed: i64,
}

/// Each device's log as the hub holds it.
type Hub = Vec<Vec<(i64, Record)>>;

fn device(index: usize, skew_ms: i64) -> Result<Device, Box<dyn std::error::Error>> {
    let tick = Arc::new(AtomicI64::new(1_800_000_000_000 + skew_ms));
    let store =
        MemoryStore::open_in_memory()?.with_clock(move || tick.fetch_add(7, Ordering::SeqCst));
    Ok(Device {
        name: format!("device-{index}"),
        store,
        pushed: 0,
    })
}

fn push(device: &mut Device, log: &mut Vec<(i64, Record)>) -> TestResult {
    device.store.sync_seal(&device.name)?;
    for record in device.store.sync_outbox(device.pushed + 1, 1000)? {
        assert_eq!(record.idx, device.pushed + 1, "the log is contiguous");
        log.push((record.idx, record.record));
        device.pushed = record.idx;
    }
    Ok(())
}

fn pull(device: &Device, from: &str, log: &[(i64, Record)], page: usize) -> TestResult {
    let cursor = device.store.sync_cursor(from)?;
    let records: Vec<(i64, Record)> = log
        .iter()
        .filter(|(idx, _)| *idx > cursor)
        .take(page)
        .cloned()
        .collect();
    device.store.sync_apply(&device.name, from, &records)?;
    Ok(())
}

fn live(store: &MemoryStore) -> Result<Vec<i64>, Box<dyn std::error::Error>> {
    Ok(store
        .list(Some(Layer::Trace), 0, 10_000)?
        .into_iter()
        .map(|m| m.id)
        .collect())
}

fn new(text: &str) -> NewMemory {
    NewMemory {
        text: text.into(),
        ..NewMemory::default()
    }
}

fn text(rng: &mut fastrand::Rng) -> String {
    (0..rng.usize(3..7))
        .map(|_| WORDS[rng.usize(..WORDS.len())])
        .collect::<Vec<_>>()
        .join(" ")
}

fn one_case(seed: u64) -> TestResult {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut devices = Vec::new();
    for index in 0..3 {
        // Clocks up to ten minutes apart either way.
        devices.push(device(index, rng.i64(-600_000..600_000))?);
    }
    let mut hub: Hub = vec![Vec::new(); 3];
    for _ in 0..rng.usize(10..40) {
        let d = rng.usize(..3);
        let ids = live(&devices[d].store)?;
        match rng.u8(..10) {
            0..=2 => {
                let session = format!("s{}", rng.u8(..3));
                devices[d].store.add(NewMemory {
                    text: text(&mut rng),
                    session: Some(session),
                    metadata: Some(serde_json::json!({ "tag": rng.u8(..4) })),
                    ..NewMemory::default()
                })?;
            }
            3 if !ids.is_empty() => {
                let id = ids[rng.usize(..ids.len())];
                devices[d].store.update_text(id, &text(&mut rng))?;
            }
            4 if !ids.is_empty() => {
                let id = ids[rng.usize(..ids.len())];
                let status = if rng.bool() {
                    Status::Archived
                } else {
                    Status::Activated
                };
                devices[d].store.set_status(id, status)?;
            }
            5 if !ids.is_empty() => {
                devices[d].store.delete(ids[rng.usize(..ids.len())])?;
            }
            6 if !ids.is_empty() => {
                devices[d].store.give_feedback(&FeedbackRequest {
                    memory_id: Some(ids[rng.usize(..ids.len())]),
                    turn_id: None,
                    rating: if rng.bool() { Rating::Up } else { Rating::Down },
                    note: None,
                })?;
            }
            7 => {
                let (log, device) = (&mut hub[d], &mut devices[d]);
                push(device, log)?;
            }
            _ => {
                let from = rng.usize(..3);
                if from != d {
                    let name = devices[from].name.clone();
                    pull(&devices[d], &name, &hub[from], rng.usize(1..6))?;
                }
            }
        }
    }
    // Everyone pushes, then everyone pulls everything, in a random order.
    for d in 0..3 {
        let (log, device) = (&mut hub[d], &mut devices[d]);
        push(device, log)?;
    }
    let mut order: Vec<(usize, usize)> = (0..3)
        .flat_map(|d| (0..3).filter(move |f| *f != d).map(move |f| (d, f)))
        .collect();
    rng.shuffle(&mut order);
    for (d, from) in order {
        let name = devices[from].name.clone();
        pull(&devices[d], &name, &hub[from], usize::MAX)?;
    }
    // Applying wrote nothing of the person's: sealing again has nothing to send.
    for device in &devices {
        assert_eq!(
            device.store.sync_seal(&device.name)?,
            0,
            "seed {seed}: {} re-sent",
            device.name
        );
    }
    let first = devices[0].store.sync_dump()?;
    for device in &devices[1..] {
        let dump = device.store.sync_dump()?;
        assert_eq!(
            first, dump,
            "seed {seed}: {} and {} differ",
            devices[0].name, device.name
        );
    }
    Ok(())
}

#[test]
fn three_devices_converge_whatever_the_order_and_the_clocks() -> TestResult {
    let base = std::env::var("CAIRN_SYNC_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20_261_208u64);
    for case in 0..200 {
        one_case(base + case)?;
    }
    Ok(())
}

#[test]
fn an_edit_made_after_seeing_a_change_wins_even_with_a_slow_clock() -> TestResult {
    // b's clock is an hour behind a's: without versions that follow what was seen, b's later
    // edit would lose to a's earlier one.
    let mut a = device(0, 0)?;
    let mut b = device(1, -3_600_000)?;
    let mut hub: Hub = vec![Vec::new(); 2];
    let id = a.store.add(new("the deploy port is 8080"))?.id;
    push(&mut a, &mut hub[0])?;
    pull(&b, &a.name.clone(), &hub[0], 10)?;
    let theirs = live(&b.store)?[0];
    b.store.update_text(theirs, "the deploy port is 9090")?;
    push(&mut b, &mut hub[1])?;
    pull(&a, &b.name.clone(), &hub[1], 10)?;
    let mine = a.store.get(id)?.ok_or("gone")?;
    assert_eq!(mine.text, "the deploy port is 9090");
    assert_eq!(a.store.sync_dump()?, b.store.sync_dump()?);
    Ok(())
}

#[test]
fn a_deletion_wins_and_an_older_record_never_brings_the_memory_back() -> TestResult {
    let mut a = device(0, 0)?;
    let mut b = device(1, 0)?;
    let mut c = device(2, 0)?;
    let mut hub: Hub = vec![Vec::new(); 3];
    let id = a.store.add(new("my locker code is 4412"))?.id;
    push(&mut a, &mut hub[0])?;
    pull(&b, "device-0", &hub[0], 10)?;
    let theirs = live(&b.store)?[0];
    b.store.delete(theirs)?;
    push(&mut b, &mut hub[1])?;
    // c hears of the deletion before the memory itself.
    pull(&c, "device-1", &hub[1], 10)?;
    pull(&c, "device-0", &hub[0], 10)?;
    assert!(
        live(&c.store)?.is_empty(),
        "the deleted memory came back on c"
    );
    // a edits it after b deleted it: the deletion still wins.
    a.store.update_text(id, "my locker code is 9999")?;
    push(&mut a, &mut hub[0])?;
    pull(&a, "device-1", &hub[1], 10)?;
    pull(&b, "device-0", &hub[0], 10)?;
    pull(&c, "device-0", &hub[0], 10)?;
    for store in [&a.store, &b.store, &c.store] {
        assert!(live(store)?.is_empty());
        let dump = serde_json::to_string(&store.sync_dump()?)?;
        assert!(!dump.contains("locker"), "{dump}");
    }
    let _ = &mut c;
    Ok(())
}

#[test]
fn the_same_turn_imported_on_two_devices_is_one_memory() -> TestResult {
    use cairn_memory::{ImportTurn, TurnCompletion, TurnStart};
    let turn = || ImportTurn {
        key: "claude-code:conv-1:turn-1".into(),
        start: TurnStart {
            session: "claude-code:conv-1".into(),
            source: Some("claude-code".into()),
            request: "how do I restart the cache service?".into(),
            idempotency_key: None,
            started_at: Some(1_790_000_000_000),
            workspace: None,
        },
        done: TurnCompletion {
            answer: "run systemctl restart cache".into(),
            tool_calls: Vec::new(),
            reasoning: None,
            status: None,
            completed_at: Some(1_790_000_001_000),
            origin: None,
        },
    };
    let mut a = device(0, 0)?;
    let mut b = device(1, 0)?;
    let mut hub: Hub = vec![Vec::new(); 2];
    a.store.import_turn(turn())?;
    b.store.import_turn(turn())?;
    push(&mut a, &mut hub[0])?;
    push(&mut b, &mut hub[1])?;
    pull(&a, "device-1", &hub[1], 10)?;
    pull(&b, "device-0", &hub[0], 10)?;
    assert_eq!(live(&a.store)?.len(), 1);
    assert_eq!(live(&b.store)?.len(), 1);
    assert_eq!(a.store.sync_dump()?, b.store.sync_dump()?);
    // Imported on a third device after the copy arrived: still one.
    let mut c = device(2, 0)?;
    pull(&c, "device-0", &hub[0], 10)?;
    c.store.import_turn(turn())?;
    c.store.sync_seal("device-2")?;
    assert_eq!(live(&c.store)?.len(), 1);
    let _ = &mut c;
    Ok(())
}

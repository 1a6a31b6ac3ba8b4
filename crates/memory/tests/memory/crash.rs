//! A process killed in the middle of an ingest: the database stays sound, every acknowledged write
//! is there, and sending the same memories again adds no duplicates.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use cairn_memory::{MemoryStore, NewMemory};

use crate::TestResult;

const CHILD_ENV: &str = "CAIRN_MEMORY_CRASH_CHILD_DB";
const TOTAL: usize = 200_000;

fn turn(i: usize) -> NewMemory {
    NewMemory {
        text: format!("turn {i}: the agent edited file_{i}.rs and ran the tests"),
        source: Some("crash-test".into()),
        external_id: Some(format!("t{i}")),
        session: Some(format!("s{}", i / 50)),
        ..NewMemory::default()
    }
}

/// The child's part, run in the process the test starts (never as a test of its own): writes
/// memories in small transactions and prints each acknowledged external id until it is killed.
fn ingest_until_killed(path: &str) -> TestResult {
    let store = MemoryStore::open(std::path::Path::new(path))?;
    for start in (0..TOTAL).step_by(10) {
        store.add_batch((start..start + 10).map(turn).collect())?;
        println!("acked {}", start + 9);
    }
    Ok(())
}

#[test]
fn a_killed_ingest_loses_no_acknowledged_write() -> TestResult {
    // Started again by itself as the child that is killed.
    if let Ok(path) = std::env::var(CHILD_ENV) {
        return ingest_until_killed(&path);
    }
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("memory.sqlite");
    let mut child = Command::new(std::env::current_exe()?)
        .args([
            "--exact",
            "crash::a_killed_ingest_loses_no_acknowledged_write",
            "--nocapture",
            "--test-threads",
            "1",
        ])
        .env(CHILD_ENV, &path)
        .stdout(Stdio::piped())
        .spawn()?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let mut acked = 0usize;
    for line in BufReader::new(stdout).lines() {
        let line = line?;
        if let Some(n) = line.strip_prefix("acked ") {
            acked = n.trim().parse()?;
            if acked >= 2_000 {
                child.kill()?;
                break;
            }
        }
    }
    let _ = child.wait();
    assert!(acked >= 2_000, "the child stopped early at {acked}");

    let store = MemoryStore::open(&path)?;
    assert_eq!(store.integrity_check()?, "ok");
    let stored = store.overview()?.total as usize;
    assert!(
        stored > acked,
        "acknowledged {} but only {stored} stored",
        acked + 1
    );

    // Re-send everything acknowledged (and a little more): no duplicates appear.
    let resend = acked + 100;
    store.add_batch((0..=resend).map(turn).collect())?;
    assert_eq!(store.overview()?.total as usize, stored.max(resend + 1));
    assert_eq!(store.integrity_check()?, "ok");
    Ok(())
}

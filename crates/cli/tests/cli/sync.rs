//! `cairn hub` and `cairn sync` as a person runs them, and sync killed at the worst moments: the
//! hub runs as its own process on a real PostgreSQL; a laptop's `cairn sync now` is killed with
//! SIGKILL at twelve points of its push, a desktop's at twelve points of its pull, and in the end the
//! hub holds each record once, in order, and both devices hold the same memories, none twice.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use cairn_memory::{Layer, MemoryStore, NewMemory};
use cairn_test_support::Postgres;

use crate::cairn;

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// The hub, as `cairn hub serve` runs it; killed on drop.
struct HubProcess(Child);

impl Drop for HubProcess {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_hub(url: &str) -> Result<(HubProcess, String), Box<dyn std::error::Error>> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args([
            "hub",
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--database-url",
            url,
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let hub = HubProcess(child);
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line)?;
    let address = line
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .ok_or_else(|| format!("the hub said {line:?}"))?
        .to_owned();
    Ok((hub, address))
}

/// The last word of the line of `out` that holds `marker`.
fn code_after(out: &[u8], marker: &str) -> Result<String, Box<dyn std::error::Error>> {
    let text = String::from_utf8_lossy(out);
    Ok(text
        .lines()
        .find(|l| l.contains(marker))
        .and_then(|l| l.split_whitespace().nth(4))
        .map(str::to_owned)
        .ok_or_else(|| format!("no code in {text}"))?)
}

fn ok(home: &Path, args: &[&str]) -> Result<String, Box<dyn std::error::Error>> {
    let out = cairn(home, args)?;
    if !out.status.success() {
        return Err(format!(
            "cairn {args:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
        .into());
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Runs `cairn sync now` in `home` and kills it with SIGKILL after `after`.
fn killed_sync(home: &Path, after: Duration) -> TestResult {
    let mut child = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(["sync", "now"])
        .env("CAIRN_HOME", home)
        .env_remove("CAIRN_CONFIG")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()?;
    std::thread::sleep(after);
    let _ = child.kill();
    child.wait()?;
    Ok(())
}

fn records_of(pg: &Postgres, device_name: &str) -> Result<(i64, i64), Box<dyn std::error::Error>> {
    let out = pg.psql(
        "hub",
        &format!(
            "SELECT count(*), coalesce(max(idx), 0) FROM records r JOIN devices d ON d.id = r.device_id WHERE d.name = '{device_name}';"
        ),
    )?;
    let mut parts = out
        .trim()
        .split('|')
        .map(|p| p.parse::<i64>().unwrap_or(-1));
    Ok((parts.next().unwrap_or(-1), parts.next().unwrap_or(-1)))
}

fn texts(home: &Path) -> Result<Vec<String>, Box<dyn std::error::Error>> {
    let store = MemoryStore::open(&home.join("data/memory.sqlite"))?;
    let mut texts: Vec<String> = store
        .list(Some(Layer::Trace), 0, 100_000)?
        .into_iter()
        .map(|m| m.text)
        .collect();
    texts.sort();
    Ok(texts)
}

#[test]
fn sync_killed_mid_push_and_mid_pull_loses_and_doubles_nothing() -> TestResult {
    let pg = Postgres::start()?;
    let url = pg.database("hub")?;
    let (_hub, address) = start_hub(&url)?;
    let added = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(["hub", "account", "add", "alice", "--database-url", &url])
        .output()?;
    assert!(added.status.success(), "{added:?}");
    let code = code_after(&added.stdout, "cairn sync join")?;

    let laptop = tempfile::tempdir()?;
    let desktop = tempfile::tempdir()?;
    let joined = ok(
        laptop.path(),
        &["sync", "join", &address, &code, "--name", "laptop"],
    )?;
    assert!(joined.contains("Joined"), "{joined}");
    let paired = cairn(laptop.path(), &["sync", "pair"])?;
    let pairing = code_after(&paired.stdout, "cairn sync join")?;
    ok(
        desktop.path(),
        &["sync", "join", &address, &pairing, "--name", "desktop"],
    )?;
    let status = ok(desktop.path(), &["sync", "status"])?;
    assert!(
        status.contains("alice as desktop") && status.contains("laptop"),
        "{status}"
    );

    // The laptop remembers a lot while the desktop is away.
    const MEMORIES: usize = 4000;
    {
        let store = MemoryStore::open(&laptop.path().join("data/memory.sqlite"))?;
        store.add_batch(
            (0..MEMORIES)
                .map(|i| NewMemory {
                    text: format!(
                        "note {i}: the build of service {} failed on step {}",
                        i % 97,
                        i % 13
                    ),
                    session: Some(format!("chat-{}", i / 25)),
                    ..NewMemory::default()
                })
                .collect(),
        )?;
    }
    let points =
        [20, 60, 100, 150, 200, 260, 330, 420, 550, 700, 900, 1200].map(Duration::from_millis);
    let mut partial = false;
    for after in points {
        killed_sync(laptop.path(), after)?;
        let (count, max) = records_of(&pg, "laptop")?;
        assert_eq!(
            count, max,
            "the laptop's log on the hub has a gap or a double"
        );
        partial |= count > 0 && count < MEMORIES as i64;
    }
    ok(laptop.path(), &["sync", "now"])?;
    assert_eq!(
        records_of(&pg, "laptop")?,
        (MEMORIES as i64, MEMORIES as i64)
    );

    let mut partial_pull = false;
    for after in points {
        killed_sync(desktop.path(), after)?;
        let here = texts(desktop.path())?.len();
        partial_pull |= here > 0 && here < MEMORIES;
    }
    ok(desktop.path(), &["sync", "now"])?;
    let mine = texts(laptop.path())?;
    let theirs = texts(desktop.path())?;
    assert_eq!(
        theirs.len(),
        MEMORIES,
        "memories lost or doubled on the desktop"
    );
    assert_eq!(mine, theirs);
    let dump = |home: &Path| -> Result<serde_json::Value, Box<dyn std::error::Error>> {
        Ok(MemoryStore::open(&home.join("data/memory.sqlite"))?.sync_dump()?)
    };
    assert_eq!(dump(laptop.path())?, dump(desktop.path())?);
    assert!(
        partial && partial_pull,
        "no kill landed in the middle of a sync (push {partial}, pull {partial_pull}): the points need moving"
    );
    Ok(())
}

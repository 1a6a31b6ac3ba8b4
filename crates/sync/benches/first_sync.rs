//! Sync's figures on this machine, printed (`cargo bench -p cairn-sync --bench first_sync`, or
//! `-- --memories 20000` for a shorter run): a first sync of N memories from a laptop through a
//! hub on a real PostgreSQL to a new desktop, end to end (seal and encrypt, push, pull, decrypt,
//! apply and index); one new memory's round from one device to the other; the hub's CPU time and
//! PostgreSQL's size for the N memories.

use std::sync::Arc;
use std::time::{Duration, Instant};

use cairn_memory::{MemoryStore, NewMemory};
use cairn_test_support::Postgres;

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

const WORDS: &[&str] = &[
    "deploy",
    "staging",
    "port",
    "cache",
    "release",
    "friday",
    "invoice",
    "kyoto",
    "hotel",
    "brother",
    "python",
    "rust",
    "migration",
    "backup",
    "dentist",
    "meeting",
    "budget",
    "garden",
    "printer",
    "laptop",
    "password",
    "manager",
    "review",
    "tests",
    "server",
    "config",
];

fn sentence(i: usize) -> String {
    let mut words = Vec::new();
    let mut x = i.wrapping_mul(2_654_435_761) | 1;
    for _ in 0..(12 + i % 20) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        words.push(WORDS[x % WORDS.len()]);
    }
    format!("note {i}: {}", words.join(" "))
}

/// This thread's CPU time so far (user + system), from /proc.
fn thread_cpu() -> Duration {
    let ticks = std::fs::read_to_string("/proc/thread-self/stat")
        .ok()
        .and_then(|stat| {
            let after = stat.rsplit_once(") ")?.1.split(' ').collect::<Vec<_>>();
            Some(after.get(11)?.parse::<u64>().ok()? + after.get(12)?.parse::<u64>().ok()?)
        })
        .unwrap_or(0);
    Duration::from_millis(ticks * 10)
}

/// The CPU time of every process of the PostgreSQL cluster whose dir holds `marker`.
fn postgres_cpu() -> Duration {
    let mut ticks = 0u64;
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let path = entry.path();
        let Ok(cmdline) = std::fs::read_to_string(path.join("cmdline")) else {
            continue;
        };
        if !cmdline.starts_with("postgres") {
            continue;
        }
        if let Ok(stat) = std::fs::read_to_string(path.join("stat")) {
            if let Some((_, after)) = stat.rsplit_once(") ") {
                let fields: Vec<&str> = after.split(' ').collect();
                ticks += fields
                    .get(11)
                    .and_then(|f| f.parse::<u64>().ok())
                    .unwrap_or(0);
                ticks += fields
                    .get(12)
                    .and_then(|f| f.parse::<u64>().ok())
                    .unwrap_or(0);
            }
        }
    }
    Duration::from_millis(ticks * 10)
}

fn main() -> Result<()> {
    let memories: usize = std::env::args()
        .skip_while(|a| a != "--memories")
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(100_000);
    let pg = Postgres::start()?;
    let url = pg.database("hub")?;
    // The hub on a thread of its own, so its CPU time is its own.
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    listener.set_nonblocking(true)?;
    let address = format!("http://{}", listener.local_addr()?);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let hub_url = url.clone();
    let hub = std::thread::spawn(move || -> Duration {
        let Ok(rt) = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        else {
            return Duration::ZERO;
        };
        rt.block_on(async move {
            let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
                return;
            };
            let _ = cairn_hub::serve(&hub_url, listener, async {
                let _ = stopped.await;
            })
            .await;
        });
        thread_cpu()
    });
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let figures = rt.block_on(run(&pg, &address, memories));
    let _ = stop.send(());
    let hub_cpu = hub.join().unwrap_or_default();
    let (push, pull, round, pg_cpu) = figures?;
    let size: i64 = pg
        .psql("hub", "SELECT pg_database_size('hub')")?
        .trim()
        .parse()
        .unwrap_or(0);
    let records: i64 = pg
        .psql("hub", "SELECT pg_total_relation_size('records')")?
        .trim()
        .parse()
        .unwrap_or(0);
    let total = push + pull;
    println!("first sync of {memories} memories, laptop → hub → desktop (end to end):");
    println!(
        "  push (seal, encrypt, send): {:.1} s, {:.0} memories/s",
        push.as_secs_f64(),
        memories as f64 / push.as_secs_f64()
    );
    println!(
        "  pull (fetch, decrypt, apply, index): {:.1} s, {:.0} memories/s",
        pull.as_secs_f64(),
        memories as f64 / pull.as_secs_f64()
    );
    println!(
        "  end to end: {:.1} s, {:.0} memories/s",
        total.as_secs_f64(),
        memories as f64 / total.as_secs_f64()
    );
    println!(
        "one new memory, written on the laptop, recalled on the desktop: {:.0} ms (one round each; the app's background adds at most 0.5 s before the push and 1 s before the pull)",
        round.as_secs_f64() * 1000.0
    );
    let per_100k = 100_000.0 / memories as f64;
    println!(
        "hub CPU: {:.1} s ({:.1} s per 100k memories); PostgreSQL CPU: {:.1} s",
        hub_cpu.as_secs_f64(),
        hub_cpu.as_secs_f64() * per_100k,
        pg_cpu.as_secs_f64()
    );
    println!(
        "PostgreSQL: database {:.1} MB, records {:.1} MB ({:.1} MB per 100k memories)",
        size as f64 / 1e6,
        records as f64 / 1e6,
        records as f64 / 1e6 * per_100k
    );
    Ok(())
}

async fn run(
    pg: &Postgres,
    address: &str,
    memories: usize,
) -> Result<(Duration, Duration, Duration, Duration)> {
    let pool = cairn_hub::pool(&pg.url("hub"))?;
    for _ in 0..100 {
        if cairn_hub::add_account(&pool, "bench").await.is_ok() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let code = cairn_hub::new_join_code(&pool, "bench").await?;
    let laptop = tempfile::tempdir()?;
    let store = Arc::new(MemoryStore::open(&laptop.path().join("memory.sqlite"))?);
    for chunk in (0..memories).collect::<Vec<_>>().chunks(10_000) {
        store.add_batch(
            chunk
                .iter()
                .map(|i| NewMemory {
                    text: sentence(*i),
                    session: Some(format!("chat-{}", i / 20)),
                    ..NewMemory::default()
                })
                .collect(),
        )?;
    }
    let place = cairn_sync::join(laptop.path(), address, &code, "laptop", None).await?;
    let pg_before = postgres_cpu();
    let started = Instant::now();
    let report = cairn_sync::sync_once(&store, &place).await?;
    let push = started.elapsed();
    assert_eq!(report.pushed, memories, "{report:?}");

    let desktop = tempfile::tempdir()?;
    let other = Arc::new(MemoryStore::open(&desktop.path().join("memory.sqlite"))?);
    let pairing = cairn_sync::pair(laptop.path()).await?;
    let joined = cairn_sync::join(desktop.path(), address, &pairing, "desktop", None).await?;
    let started = Instant::now();
    let report = cairn_sync::sync_once(&other, &joined).await?;
    let pull = started.elapsed();
    assert_eq!(report.pulled, memories, "{report:?}");
    let pg_cpu = postgres_cpu().saturating_sub(pg_before);

    let started = Instant::now();
    store.add(NewMemory {
        text: "the new printer's address is 10.0.4.17".into(),
        ..NewMemory::default()
    })?;
    cairn_sync::sync_once(&store, &place).await?;
    cairn_sync::sync_once(&other, &joined).await?;
    let hits = other.search(&cairn_memory::SearchQuery::new("printer address 10.0.4.17"))?;
    let round = started.elapsed();
    assert!(hits
        .hits
        .iter()
        .any(|h| h.memory.text.contains("10.0.4.17")));
    Ok((push, pull, round, pg_cpu))
}

//! Devices of one person syncing through a real hub on a real PostgreSQL, over loopback HTTP:
//! what one device remembers, edits, rates or deletes, the others hold after a round each; the
//! hub holds none of it readable; a device joins only with the vault's key.

use std::path::Path;
use std::sync::Arc;

use cairn_memory::{FeedbackRequest, Layer, MemoryStore, NewMemory, Rating};
use cairn_sync::{join, leave, pair, revoke, sync_home, sync_once, Joined, SyncError};
use cairn_test_support::Postgres;

type TestResult = Result<(), Box<dyn std::error::Error>>;

struct Hub {
    pg: Postgres,
    address: String,
    pool: deadpool_postgres::Pool,
    _server: tokio::task::JoinHandle<()>,
}

async fn hub() -> Result<Hub, Box<dyn std::error::Error>> {
    let pg = Postgres::start()?;
    let url = pg.database("hub")?;
    let pool = cairn_hub::pool(&url)?;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let address = format!("http://{}", listener.local_addr()?);
    let server = tokio::spawn(async move {
        let _ = cairn_hub::serve(&url, listener, std::future::pending()).await;
    });
    // The hub migrates before it answers: wait for it.
    for _ in 0..100 {
        if reqwest::get(format!("{address}/v1/health")).await.is_ok() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    Ok(Hub {
        pg,
        address,
        pool,
        _server: server,
    })
}

struct Device {
    home: tempfile::TempDir,
    store: Arc<MemoryStore>,
}

impl Device {
    fn new() -> Result<Self, Box<dyn std::error::Error>> {
        let home = tempfile::tempdir()?;
        let store = Arc::new(MemoryStore::open(&home.path().join("memory.sqlite"))?);
        Ok(Self { home, store })
    }

    fn home(&self) -> &Path {
        self.home.path()
    }

    async fn sync(&self) -> Result<cairn_sync::SyncReport, SyncError> {
        let place = Joined::load(self.home())?.ok_or(SyncError::NotJoined)?;
        sync_once(&self.store, &place).await
    }

    fn texts(&self) -> Result<Vec<String>, Box<dyn std::error::Error>> {
        let mut texts: Vec<String> = self
            .store
            .list(Some(Layer::Trace), 0, 1000)?
            .into_iter()
            .map(|m| m.text)
            .collect();
        texts.sort();
        Ok(texts)
    }
}

/// A device joined as `account`'s first, on a new account.
async fn first_device(hub: &Hub, account: &str) -> Result<Device, Box<dyn std::error::Error>> {
    let device = Device::new()?;
    let code = cairn_hub::add_account(&hub.pool, account).await?;
    join(device.home(), &hub.address, &code, "laptop", None).await?;
    Ok(device)
}

/// A device paired with `with`.
async fn paired(
    hub: &Hub,
    with: &Device,
    name: &str,
) -> Result<Device, Box<dyn std::error::Error>> {
    let device = Device::new()?;
    join(
        device.home(),
        &hub.address,
        &pair(with.home()).await?,
        name,
        None,
    )
    .await?;
    Ok(device)
}

fn memory(text: &str) -> NewMemory {
    NewMemory {
        text: text.into(),
        session: Some("chat-1".into()),
        ..NewMemory::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_one_device_remembers_the_others_recall() -> TestResult {
    let hub = hub().await?;
    let code = cairn_hub::add_account(&hub.pool, "alice").await?;
    let laptop = Device::new()?;
    // Written before the laptop ever joined: it travels too.
    laptop
        .store
        .add(memory("Alice's brother Tomas lives in Lisbon"))?;
    join(laptop.home(), &hub.address, &code, "laptop", None).await?;
    let id = laptop
        .store
        .add(memory("the staging server listens on port 8443"))?
        .id;
    let report = laptop.sync().await?;
    assert_eq!((report.pushed, report.pending), (2, 0), "{report:?}");

    let desktop = paired(&hub, &laptop, "desktop").await?;
    let report = desktop.sync().await?;
    assert_eq!(report.pulled, 2, "{report:?}");
    assert_eq!(desktop.texts()?, laptop.texts()?);
    // Recalled on the desktop, by words the laptop's memory holds.
    let hits = desktop.store.search(&cairn_memory::SearchQuery::new(
        "which port does staging use",
    ))?;
    assert!(
        hits.hits.iter().any(|h| h.memory.text.contains("8443")),
        "{:?}",
        hits.hits.iter().map(|h| &h.memory.text).collect::<Vec<_>>()
    );

    // An edit on the laptop, a rating and a new memory on the desktop, a deletion on the laptop.
    laptop
        .store
        .update_text(id, "the staging server listens on port 9443")?;
    let tomas = desktop
        .store
        .list(Some(Layer::Trace), 0, 10)?
        .into_iter()
        .find(|m| m.text.contains("Tomas"))
        .ok_or("no Tomas")?;
    desktop.store.give_feedback(&FeedbackRequest {
        memory_id: Some(tomas.id),
        turn_id: None,
        rating: Rating::Up,
        note: Some("right".into()),
    })?;
    desktop
        .store
        .add(memory("Alice prefers green tea in the afternoon"))?;
    laptop.sync().await?;
    desktop.sync().await?;
    laptop.sync().await?;
    assert_eq!(laptop.store.sync_dump()?, desktop.store.sync_dump()?);
    assert!(laptop.texts()?.iter().any(|t| t.contains("green tea")));
    assert!(desktop.texts()?.iter().any(|t| t.contains("9443")));

    let gone = laptop
        .store
        .list(Some(Layer::Trace), 0, 10)?
        .into_iter()
        .find(|m| m.text.contains("green tea"))
        .ok_or("no tea")?;
    laptop.store.delete(gone.id)?;
    laptop.sync().await?;
    desktop.sync().await?;
    assert!(!desktop.texts()?.iter().any(|t| t.contains("green tea")));
    assert_eq!(laptop.store.sync_dump()?, desktop.store.sync_dump()?);

    // The hub's database holds none of it readable.
    let dump = String::from_utf8_lossy(&hub.pg.dump("hub")?).into_owned();
    // (Words with letters past f and spaces: ciphertext is dumped as hex, where a bare number
    // like 8443 turns up by chance.)
    for secret in [
        "Tomas",
        "Lisbon",
        "port 8443",
        "port 9443",
        "green tea",
        "staging",
    ] {
        assert!(!dump.contains(secret), "the hub's dump holds {secret:?}");
    }
    assert!(dump.contains("laptop"), "the dump is the hub's database");

    // A new device with only the operator's code may not start a second key for the vault...
    let lost = Device::new()?;
    let code = cairn_hub::new_join_code(&hub.pool, "alice").await?;
    let refused = join(lost.home(), &hub.address, &code, "new laptop", None).await;
    assert!(matches!(refused, Err(SyncError::Key(_))), "{refused:?}");
    assert!(Joined::load(lost.home())?.is_none());
    // ...nor join with a wrong recovery key; with the right one it recalls everything.
    let code = cairn_hub::new_join_code(&hub.pool, "alice").await?;
    let wrong = cairn_sync::VaultKey::generate()?.recovery();
    let refused = join(lost.home(), &hub.address, &code, "new laptop", Some(&wrong)).await;
    assert!(matches!(refused, Err(SyncError::Key(_))), "{refused:?}");
    let code = cairn_hub::new_join_code(&hub.pool, "alice").await?;
    let words = Joined::load(laptop.home())?
        .ok_or("not joined")?
        .recovery_key()?;
    join(lost.home(), &hub.address, &code, "new laptop", Some(&words)).await?;
    lost.sync().await?;
    assert_eq!(lost.texts()?, laptop.texts()?);

    // The desktop is revoked from the laptop: its next round is refused, and it can leave.
    revoke(laptop.home(), "desktop").await?;
    let refused = desktop.sync().await;
    assert!(
        matches!(refused, Err(SyncError::Hub { status: 401, .. })),
        "{refused:?}"
    );
    leave(desktop.home()).await?;
    assert!(Joined::load(desktop.home())?.is_none());
    assert!(!desktop.texts()?.is_empty(), "leaving keeps the memory");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_device_that_joins_again_sends_its_memory_under_its_new_name() -> TestResult {
    let hub = hub().await?;
    let laptop = first_device(&hub, "bob").await?;
    laptop
        .store
        .add(memory("the build cache lives in /var/cache/ci"))?;
    laptop.sync().await?;
    let words = Joined::load(laptop.home())?
        .ok_or("not joined")?
        .recovery_key()?;
    leave(laptop.home()).await?;
    let code = cairn_hub::new_join_code(&hub.pool, "bob").await?;
    join(laptop.home(), &hub.address, &code, "laptop", Some(&words)).await?;
    let report = laptop.sync().await?;
    assert_eq!((report.pushed, report.pending), (1, 0), "{report:?}");
    // A device joining now hears of the memory once, from either log.
    let desktop = paired(&hub, &laptop, "desktop").await?;
    desktop.sync().await?;
    assert_eq!(
        desktop.texts()?,
        vec!["the build cache lives in /var/cache/ci".to_owned()]
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_device_restored_from_a_backup_catches_up_without_bringing_back_what_was_deleted(
) -> TestResult {
    let hub = hub().await?;
    let laptop = first_device(&hub, "carol").await?;
    laptop
        .store
        .add(memory("keep: the router's admin page is 192.168.1.1"))?;
    laptop
        .store
        .add(memory("delete: the old alarm code was 1234"))?;
    laptop.sync().await?;
    let desktop = paired(&hub, &laptop, "desktop").await?;
    desktop.sync().await?;

    // A backup of the laptop's memory, taken now (closed, so the log is in the file).
    let db = laptop.home().join("memory.sqlite");
    let Device { home, store } = laptop;
    drop(store);
    let backup = home.path().join("backup.sqlite");
    std::fs::copy(&db, &backup)?;
    let laptop = Device {
        store: Arc::new(MemoryStore::open(&db)?),
        home,
    };
    laptop
        .store
        .add(memory("after the backup: the boiler was serviced in May"))?;
    laptop.sync().await?;
    let old = desktop
        .store
        .list(Some(Layer::Trace), 0, 10)?
        .into_iter()
        .find(|m| m.text.contains("alarm"))
        .ok_or("no alarm")?;
    desktop.store.delete(old.id)?;
    desktop.sync().await?;

    // The laptop comes back from its backup and writes something new: its log forked.
    let Device { home, store } = laptop;
    drop(store);
    for stale in ["memory.sqlite-wal", "memory.sqlite-shm"] {
        let _ = std::fs::remove_file(home.path().join(stale));
    }
    std::fs::copy(&backup, &db)?;
    let laptop = Device {
        store: Arc::new(MemoryStore::open(&db)?),
        home,
    };
    laptop
        .store
        .add(memory("after the restore: the car's tyres were changed"))?;
    let before = Joined::load(laptop.home())?.ok_or("not joined")?.device;
    sync_home(&laptop.store, laptop.home()).await?;
    let after = Joined::load(laptop.home())?.ok_or("not joined")?.device;
    assert_ne!(before, after, "the forked log goes on under a new place");
    sync_home(&desktop.store, desktop.home()).await?;
    sync_home(&laptop.store, laptop.home()).await?;
    let expected = vec![
        "after the backup: the boiler was serviced in May".to_owned(),
        "after the restore: the car's tyres were changed".to_owned(),
        "keep: the router's admin page is 192.168.1.1".to_owned(),
    ];
    assert_eq!(
        laptop.texts()?,
        expected,
        "the laptop lost, kept or doubled something"
    );
    assert_eq!(desktop.texts()?, expected);
    assert_eq!(laptop.store.sync_dump()?, desktop.store.sync_dump()?);
    Ok(())
}

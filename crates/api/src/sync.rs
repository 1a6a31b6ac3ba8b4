//! One memory on every device: this device on its hub (join, pair, revoke, leave, pause), a round
//! of sync now, what sync is doing, and sync in the background of the app and `cairn serve`. What
//! a round did last is kept beside the memory, so every front end (and another process) sees it.

use std::time::{Duration, Instant};

use cairn_protocol::sync::SyncView;
use cairn_sync::{Joined, SyncError, SyncReport};

use crate::background::{self, Background};
use crate::{Cairn, Error};

/// How often the background looks: a change of the memory is pushed at the next look.
const LOOK_EVERY: Duration = Duration::from_millis(500);
/// How often the background asks the hub for other devices' changes when nothing changed here.
const PULL_EVERY: Duration = Duration::from_secs(1);
/// The longest wait between tries while the hub is down.
const BACKOFF_MAX: Duration = Duration::from_secs(300);

/// This machine's name, the device's name on the hub unless another is given.
pub fn this_device_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("COMPUTERNAME").ok())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|name| name.trim().to_owned())
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| "this device".into())
}

impl Cairn {
    fn joined(&self) -> Result<Option<Joined>, Error> {
        Ok(Joined::load(self.home().root())?)
    }

    /// Joins this device to the hub at `address` with a code (see [`cairn_sync::join`]).
    pub async fn sync_join(
        &self,
        address: &str,
        code: &str,
        device_name: Option<&str>,
        recovery: Option<&str>,
    ) -> Result<Joined, Error> {
        self.home().ensure_dirs()?;
        let name = device_name.map_or_else(this_device_name, str::to_owned);
        Ok(cairn_sync::join(self.home().root(), address, code, &name, recovery).await?)
    }

    /// A code that pairs another device with this one's vault (valid ten minutes).
    pub async fn sync_pair(&self) -> Result<String, Error> {
        Ok(cairn_sync::pair(self.home().root()).await?)
    }

    /// Revokes another device of the account, by name or id.
    pub async fn sync_revoke(&self, device: &str) -> Result<(), Error> {
        cairn_sync::revoke(self.home().root(), device).await?;
        Ok(())
    }

    /// Takes this device off its hub; the memory stays.
    pub async fn sync_leave(&self) -> Result<(), Error> {
        cairn_sync::leave(self.home().root()).await?;
        if let Ok(store) = self.memory() {
            for key in ["last_ok_ms", "last_error"] {
                store.sync_set_meta(key, "")?;
            }
        }
        Ok(())
    }

    /// Pauses sync (nothing is sent or fetched) or lets it run again.
    pub fn sync_pause(&self, paused: bool) -> Result<(), Error> {
        let mut place = self.joined()?.ok_or(SyncError::NotJoined)?;
        place.paused = paused;
        place.save(self.home().root())?;
        Ok(())
    }

    /// The vault's recovery key, for the person to write down.
    pub fn sync_recovery_key(&self) -> Result<String, Error> {
        let place = self.joined()?.ok_or(SyncError::NotJoined)?;
        Ok(place.recovery_key()?)
    }

    /// One round of sync now (paused or not), recorded like the background's.
    pub async fn sync_now(&self) -> Result<SyncReport, Error> {
        self.joined()?.ok_or(SyncError::NotJoined)?;
        let store = self.memory()?;
        let result = cairn_sync::sync_home(&store, self.home().root()).await;
        record(&store, &result);
        Ok(result?)
    }

    /// What sync is doing, as this device knows it (no hub is asked).
    pub fn sync_view(&self) -> Result<SyncView, Error> {
        let Some(place) = self.joined()? else {
            return Ok(SyncView::default());
        };
        let store = self.memory()?;
        let meta = |key: &str| -> Result<Option<String>, Error> {
            Ok(store.sync_meta(key)?.filter(|v| !v.is_empty()))
        };
        Ok(SyncView {
            joined: true,
            hub: Some(place.hub.clone()),
            account: Some(place.account_name.clone()),
            device: Some(place.device_name.clone()),
            device_id: Some(place.device.clone()),
            paused: place.paused,
            pending: cairn_sync::pending(&store)?,
            last_ok_ms: meta("last_ok_ms")?.and_then(|t| t.parse().ok()),
            last_error: meta("last_error")?,
            devices: Vec::new(),
        })
    }

    /// [`Cairn::sync_view`]; with `ask_hub`, with the account's devices as the hub lists them now.
    pub async fn sync_status(&self, ask_hub: bool) -> Result<SyncView, Error> {
        let mut view = self.sync_view()?;
        if ask_hub && view.joined {
            if let Some(place) = self.joined()? {
                match cairn_sync::hub_status(&place).await {
                    Ok(me) => view.devices = me.devices,
                    Err(e) => view.last_error = Some(e.to_string()),
                }
            }
        }
        Ok(view)
    }

    /// Syncs in the background until the handle is dropped: a change of the memory is pushed
    /// within a second, other devices' changes are fetched every second, and while the hub
    /// cannot be reached the tries back off (up to five minutes), said once. One process per
    /// data home syncs (the app and `cairn serve` may both run).
    pub fn spawn_sync(&self) -> Background {
        let cairn = self.clone();
        let mut runner = background::OneRunner::new(self.home().data_dir().join("sync.runner"));
        let mut runtime: Option<tokio::runtime::Runtime> = None;
        let mut last_round: Option<Instant> = None;
        let mut last_revision = -1;
        let mut wait = Duration::ZERO;
        let mut said: Option<String> = None;
        background::every(LOOK_EVERY, move || {
            let Ok(Some(place)) = cairn.joined() else {
                return;
            };
            if place.paused {
                return;
            }
            if !runner.here() {
                return;
            }
            let Ok(store) = cairn.memory() else {
                return;
            };
            let revision = store.revision().unwrap_or(-1);
            let since = last_round.map_or(Duration::MAX, |t| t.elapsed());
            let due = if wait > Duration::ZERO {
                since >= wait
            } else {
                revision != last_revision || since >= PULL_EVERY
            };
            if !due {
                return;
            }
            if runtime.is_none() {
                runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .ok();
            }
            let Some(rt) = &runtime else {
                return;
            };
            let result = rt.block_on(cairn_sync::sync_home(&store, cairn.home().root()));
            last_round = Some(Instant::now());
            last_revision = store.revision().unwrap_or(-1);
            record(&store, &result);
            match result {
                Ok(report) => {
                    if said.take().is_some() {
                        tracing::info!("sync with {} works again", place.hub);
                    }
                    if report.pulled > 0 || report.pushed > 0 {
                        tracing::info!(
                            "synced: {} records sent, {} received",
                            report.pushed,
                            report.pulled
                        );
                    }
                    wait = Duration::ZERO;
                }
                Err(e) => {
                    let message = e.to_string();
                    if said.as_deref() != Some(message.as_str()) {
                        tracing::warn!("sync: {message}");
                        said = Some(message);
                    }
                    let base = if e.transient() {
                        (wait * 2).max(Duration::from_secs(2))
                    } else {
                        Duration::from_secs(60)
                    };
                    // A little jitter, so devices of one hub do not come back all at once.
                    let jitter =
                        Duration::from_millis(u64::from(cairn_memory::now_ms() as u16 % 1000));
                    wait = base.min(BACKOFF_MAX) + jitter;
                }
            }
        })
    }
}

/// Keeps what a round did beside the memory, for the status of every front end.
fn record(store: &cairn_memory::MemoryStore, result: &Result<SyncReport, SyncError>) {
    let written = match result {
        Ok(_) => store
            .sync_set_meta("last_ok_ms", &cairn_memory::now_ms().to_string())
            .and_then(|()| store.sync_set_meta("last_error", "")),
        Err(e) => store.sync_set_meta("last_error", &e.to_string()),
    };
    if let Err(e) = written {
        tracing::warn!("sync's status could not be kept: {e}");
    }
}

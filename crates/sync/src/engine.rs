//! One round of sync: seal the memory's own changes, seal each new record end to end, push this
//! device's log from where the hub's copy ends, then pull every other device's log from where
//! this device left off, opening and applying a page at a time (each page with its cursor in one
//! transaction). A round cut anywhere loses and doubles nothing: a record is sealed once and sent
//! as the same bytes again, and a page lands whole or not at all.

use std::sync::Arc;

use base64::Engine;
use cairn_memory::{Applied, MemoryStore};
use cairn_protocol::sync::{HubMe, HubPage, HubPush, HubPushed, HubRecord, HubTails, Record};

use crate::device::Joined;
use crate::SyncError;

/// Records per push and per page pulled.
const BATCH: usize = 500;

/// What a round did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SyncReport {
    /// Records of this device's log the hub took.
    pub pushed: usize,
    /// Records of other devices' logs applied here.
    pub pulled: usize,
    pub applied: AppliedTotals,
    /// Records of this device's log the hub does not hold yet.
    pub pending: i64,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AppliedTotals {
    pub changed: usize,
    pub unchanged: usize,
    pub parked: usize,
}

impl AppliedTotals {
    fn add(&mut self, applied: Applied) {
        self.changed += applied.changed;
        self.unchanged += applied.unchanged;
        self.parked = applied.parked;
    }
}

/// Runs the store's blocking work off the async runtime's threads.
async fn blocking<T: Send + 'static>(
    store: &Arc<MemoryStore>,
    work: impl FnOnce(&MemoryStore) -> Result<T, cairn_memory::MemoryError> + Send + 'static,
) -> Result<T, SyncError> {
    let store = store.clone();
    tokio::task::spawn_blocking(move || work(&store))
        .await
        .map_err(|e| SyncError::Invalid(format!("a sync step stopped: {e}")))?
        .map_err(SyncError::from)
}

fn pushed(store: &MemoryStore) -> Result<i64, cairn_memory::MemoryError> {
    Ok(store
        .sync_meta("pushed")?
        .and_then(|p| p.parse().ok())
        .unwrap_or(0))
}

/// Records of this device's log the hub does not hold yet.
pub fn pending(store: &MemoryStore) -> Result<i64, cairn_memory::MemoryError> {
    Ok((store.sync_log_end()? - pushed(store)?).max(0))
}

/// One round of sync for the device `place` over `store`.
pub async fn sync_once(store: &Arc<MemoryStore>, place: &Joined) -> Result<SyncReport, SyncError> {
    let client = place.client()?;
    let key = place.key()?;
    let device = place.device.clone();
    let mut report = SyncReport::default();
    {
        let device = device.clone();
        blocking(store, move |s| {
            s.sync_restart_log(&device)?;
            s.sync_seal(&device)
        })
        .await?;
    }
    let path = format!("v1/spaces/{}/records", place.vault);
    let mut from = blocking(store, pushed).await? + 1;
    loop {
        let mut batch = blocking(store, move |s| s.sync_outbox(from, BATCH)).await?;
        if batch.is_empty() {
            break;
        }
        // Each record is sealed once and kept: sent again after a crash, it is the same bytes.
        if batch.iter().any(|o| o.sealed.is_none()) {
            let mut sealed = Vec::new();
            for outgoing in batch.iter().filter(|o| o.sealed.is_none()) {
                let plain = serde_json::to_vec(&outgoing.record)
                    .map_err(|e| SyncError::Invalid(format!("a record: {e}")))?;
                sealed.push((
                    outgoing.idx,
                    key.seal(&plain, &place.vault, &device, outgoing.idx)?,
                ));
            }
            blocking(store, move |s| s.sync_keep_sealed(&sealed)).await?;
            // Another process may have sealed some first: send what the log keeps.
            batch = blocking(store, move |s| s.sync_outbox(from, BATCH)).await?;
        }
        let mut records = Vec::with_capacity(batch.len());
        for outgoing in batch {
            let Some(sealed) = outgoing.sealed else {
                return Err(SyncError::Invalid(format!(
                    "record {} was not kept sealed",
                    outgoing.idx
                )));
            };
            records.push(HubRecord {
                idx: outgoing.idx,
                version: outgoing.version,
                body: base64::engine::general_purpose::STANDARD.encode(sealed),
            });
        }
        let sent = records.len();
        let answer: Result<HubPushed, SyncError> = client.post(&path, &HubPush { records }).await;
        match answer {
            Ok(pushed) => {
                let tail = pushed.tail;
                blocking(store, move |s| s.sync_set_meta("pushed", &tail.to_string())).await?;
                report.pushed += sent;
                from = tail + 1;
            }
            Err(SyncError::Hub {
                status: 409,
                message,
            }) => {
                // The hub's copy ends before what this device thought it had sent (the hub was
                // restored from a backup): send again from there. Any other disagreement is a fork.
                let tails: HubTails = client
                    .get(&format!("v1/spaces/{}/status", place.vault))
                    .await?;
                let tail = tails
                    .tails
                    .iter()
                    .find(|t| t.device == device)
                    .map_or(0, |t| t.idx);
                if tail + 1 < from && !message.contains("forked") {
                    blocking(store, move |s| s.sync_set_meta("pushed", &tail.to_string())).await?;
                    from = tail + 1;
                } else {
                    return Err(SyncError::Forked);
                }
            }
            Err(e) => return Err(e),
        }
    }
    let tails: HubTails = client
        .get(&format!("v1/spaces/{}/status", place.vault))
        .await?;
    for tail in tails.tails.iter().filter(|t| t.device != device) {
        let other = tail.device.clone();
        let mut cursor = {
            let other = other.clone();
            blocking(store, move |s| s.sync_cursor(&other)).await?
        };
        while cursor < tail.idx {
            let page: HubPage = client
                .get(&format!(
                    "{path}?device={other}&from={}&limit={BATCH}",
                    cursor + 1
                ))
                .await?;
            if page.records.is_empty() {
                break;
            }
            let mut records = Vec::with_capacity(page.records.len());
            for (i, record) in page.records.iter().enumerate() {
                if record.idx != cursor + 1 + i as i64 {
                    return Err(SyncError::Invalid(format!(
                        "the hub's copy of device {other}'s log skips from {} to {}",
                        cursor + i as i64,
                        record.idx
                    )));
                }
                let sealed = base64::engine::general_purpose::STANDARD
                    .decode(&record.body)
                    .map_err(|_| SyncError::Invalid("a record on the hub is not base64".into()))?;
                let plain = key.open(&sealed, &place.vault, &other, record.idx)?;
                let body: Record = serde_json::from_slice(&plain).map_err(|e| {
                    SyncError::Invalid(format!(
                        "record {} of device {other} is not one this version of Cairn reads ({e}): update Cairn",
                        record.idx
                    ))
                })?;
                records.push((record.idx, body));
            }
            let count = records.len();
            cursor = records.last().map_or(cursor, |(idx, _)| *idx);
            let (device, other) = (device.clone(), other.clone());
            let applied = blocking(store, move |s| s.sync_apply(&device, &other, &records)).await?;
            report.applied.add(applied);
            report.pulled += count;
        }
    }
    report.pending = blocking(store, pending).await?;
    Ok(report)
}

/// One round of sync for the device joined in `home` (see [`sync_once`]); a log that forked is
/// started again under a new place on the hub, and the round runs again.
pub async fn sync_home(
    store: &Arc<MemoryStore>,
    home: &std::path::Path,
) -> Result<SyncReport, SyncError> {
    let place = Joined::load(home)?.ok_or(SyncError::NotJoined)?;
    match sync_once(store, &place).await {
        Err(SyncError::Forked) => {
            let renewed = crate::device::renew(home, &place).await?;
            sync_once(store, &renewed).await
        }
        other => other,
    }
}

/// Who this device is on its hub, with the account's devices.
pub async fn hub_status(place: &Joined) -> Result<HubMe, SyncError> {
    place.client()?.get("v1/me").await
}

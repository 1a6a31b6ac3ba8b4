//! This device on its hub: joining (the first device makes the vault key, a paired one receives
//! it, a lone new one gives the recovery key), pairing another device, revoking one, leaving —
//! and the private file that keeps the token and the key (`sync.json` in the Cairn home, readable
//! by its owner only, written atomically).

use std::path::{Path, PathBuf};

use base64::Engine;
use cairn_protocol::sync::{
    HubJoin, HubJoined, HubMe, HubPage, HubPairCode, HubPairRequest, HubTails,
};
use serde::{Deserialize, Serialize};

use crate::hub_client::HubClient;
use crate::vault::{base32, random, unbase32, VaultKey};
use crate::SyncError;

/// The file, in the Cairn home, that says which hub this device syncs with.
pub const JOINED_FILE: &str = "sync.json";

/// This device's place on a hub, with its secrets.
#[derive(Clone, Serialize, Deserialize)]
pub struct Joined {
    pub hub: String,
    pub account: String,
    pub account_name: String,
    pub device: String,
    pub device_name: String,
    /// The person's vault (a space on the hub).
    pub vault: String,
    token: String,
    vault_key: String,
    /// Sync is paused by the person: nothing is sent or fetched.
    #[serde(default)]
    pub paused: bool,
}

impl std::fmt::Debug for Joined {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Joined")
            .field("hub", &self.hub)
            .field("account_name", &self.account_name)
            .field("device_name", &self.device_name)
            .finish_non_exhaustive()
    }
}

impl Joined {
    pub fn path(home: &Path) -> PathBuf {
        home.join(JOINED_FILE)
    }

    /// This device's place, if it joined a hub.
    pub fn load(home: &Path) -> Result<Option<Self>, SyncError> {
        let path = Self::path(home);
        match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map(Some).map_err(|e| {
                SyncError::Invalid(format!(
                    "{} is damaged ({e}): join the hub again with `cairn sync join`",
                    path.display()
                ))
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(SyncError::Invalid(format!("{}: {e}", path.display()))),
        }
    }

    pub fn save(&self, home: &Path) -> Result<(), SyncError> {
        let bytes = serde_json::to_vec_pretty(self)
            .map_err(|e| SyncError::Invalid(format!("the sync file: {e}")))?;
        cairn_config::write_private_atomically(&Self::path(home), &bytes)?;
        Ok(())
    }

    pub(crate) fn client(&self) -> Result<HubClient, SyncError> {
        HubClient::new(&self.hub, Some(&self.token))
    }

    pub(crate) fn key(&self) -> Result<VaultKey, SyncError> {
        VaultKey::from_hex(&self.vault_key)
    }

    /// The vault key as the person writes it down.
    pub fn recovery_key(&self) -> Result<String, SyncError> {
        Ok(self.key()?.recovery())
    }
}

/// Joins this device (`home`) to the hub at `address` with `code`: a code from the hub's operator
/// (the account's first device, which makes the vault key; or a lone new device, with the
/// `recovery` key written down earlier), or a pairing code from a joined device, which carries
/// the secret that opens the vault key the hub holds sealed for it.
pub async fn join(
    home: &Path,
    address: &str,
    code: &str,
    device_name: &str,
    recovery: Option<&str>,
) -> Result<Joined, SyncError> {
    if Joined::load(home)?.is_some() {
        return Err(SyncError::Invalid(
            "this device is already joined to a hub: `cairn sync leave` first".into(),
        ));
    }
    let (hub_code, secret) = match code.split_once('+') {
        Some((hub_code, secret)) => (
            hub_code,
            Some(
                unbase32(secret)
                    .ok_or_else(|| SyncError::Key("the pairing code's secret is damaged".into()))?,
            ),
        ),
        None => (code, None),
    };
    let client = HubClient::new(address, None)?;
    let joined: HubJoined = client
        .post(
            "v1/join",
            &HubJoin {
                code: hub_code.to_owned(),
                device_name: device_name.to_owned(),
            },
        )
        .await?;
    let made_here = secret.is_none() && recovery.is_none();
    let key = match (&secret, recovery, &joined.sealed_vault_key) {
        (Some(secret), _, Some(sealed)) => VaultKey::open_from_pairing(sealed, secret),
        (Some(_), _, None) => Err(SyncError::Key(
            "the code is not a pairing code: give the recovery key with it instead".into(),
        )),
        (None, Some(words), _) => VaultKey::from_recovery(words),
        (None, None, _) => VaultKey::generate(),
    };
    let me = joined.me;
    let place = Joined {
        hub: address.trim().to_owned(),
        account: me.account.clone(),
        account_name: me.account_name.clone(),
        device: me.device.clone(),
        device_name: me.device_name.clone(),
        vault: me.vault.clone(),
        token: joined.token,
        vault_key: String::new(),
        paused: false,
    };
    let key = match key {
        Ok(key) => key,
        Err(e) => {
            let _ = leave_hub(&place).await;
            return Err(e);
        }
    };
    let place = Joined {
        vault_key: key.hex(),
        ..place
    };
    // The vault may already hold other devices' records: the key must open them.
    if let Err(e) = check_key(&place, &key, made_here).await {
        let _ = leave_hub(&place).await;
        return Err(e);
    }
    place.save(home)?;
    Ok(place)
}

/// Opens one record of another device with `key`; with a key made here, any record at all
/// means the vault has a key already.
async fn check_key(place: &Joined, key: &VaultKey, made_here: bool) -> Result<(), SyncError> {
    let client = place.client()?;
    let tails: HubTails = client
        .get(&format!("v1/spaces/{}/status", place.vault))
        .await?;
    let Some(other) = tails
        .tails
        .iter()
        .find(|t| t.device != place.device && t.idx > 0)
    else {
        return Ok(());
    };
    if made_here {
        return Err(SyncError::Key(
            "this vault already holds other devices' memories: pair this device from one of them (`cairn sync pair`), or join with the recovery key".into(),
        ));
    }
    let page: HubPage = client
        .get(&format!(
            "v1/spaces/{}/records?device={}&from=1&limit=1",
            place.vault, other.device
        ))
        .await?;
    if let Some(record) = page.records.first() {
        let sealed = base64::engine::general_purpose::STANDARD
            .decode(&record.body)
            .map_err(|_| SyncError::Invalid("a record on the hub is not base64".into()))?;
        key.open(&sealed, &place.vault, &other.device, record.idx)
            .map_err(|_| {
                SyncError::Key(
                    "that key does not open this vault's memories: check the recovery key".into(),
                )
            })?;
    }
    Ok(())
}

async fn leave_hub(place: &Joined) -> Result<HubMe, SyncError> {
    place
        .client()?
        .post(
            &format!("v1/devices/{}/revoke", place.device),
            &serde_json::json!({}),
        )
        .await
}

/// Gives this device a new place on its hub (a new id and token; the old one is revoked) and
/// keeps it: its log forked (it was restored from a backup), so it starts a new log, which
/// carries its whole memory again with the versions it has. Other devices keep the newer of
/// each part, and what was deleted meanwhile stays deleted.
pub(crate) async fn renew(home: &Path, place: &Joined) -> Result<Joined, SyncError> {
    let renewed: HubJoined = place
        .client()?
        .post("v1/devices/renew", &serde_json::json!({}))
        .await?;
    let place = Joined {
        device: renewed.me.device.clone(),
        token: renewed.token,
        ..place.clone()
    };
    place.save(home)?;
    tracing::info!(
        "this device's log on the hub forked (restored from a backup?): it starts a new one"
    );
    Ok(place)
}

/// A code that pairs another device with this one's vault, valid for ten minutes: the hub's
/// one-time code, then `+` and the secret that opens the vault key (the hub never sees it).
pub async fn pair(home: &Path) -> Result<String, SyncError> {
    let place = Joined::load(home)?.ok_or(SyncError::NotJoined)?;
    let secret = random::<16>()?;
    let sealed_vault_key = place.key()?.seal_for_pairing(&secret)?;
    let code: HubPairCode = place
        .client()?
        .post("v1/pair", &HubPairRequest { sealed_vault_key })
        .await?;
    Ok(format!("{}+{}", code.code, base32(&secret)))
}

/// Revokes one of the account's devices, by id or name: its token stops working at once.
/// Revoking this device is [`leave`].
pub async fn revoke(home: &Path, device: &str) -> Result<HubMe, SyncError> {
    let place = Joined::load(home)?.ok_or(SyncError::NotJoined)?;
    let client = place.client()?;
    let me: HubMe = client.get("v1/me").await?;
    let matches: Vec<_> = me
        .devices
        .iter()
        .filter(|d| d.revoked_ms.is_none() && (d.id == device || d.name == device))
        .collect();
    let target = match matches.as_slice() {
        [one] => one.id.clone(),
        [] => {
            return Err(SyncError::Invalid(format!(
                "no device of this account is called {device}"
            )))
        }
        _ => {
            return Err(SyncError::Invalid(format!(
            "more than one device is called {device}: give its id (`cairn sync status` lists them)"
        )))
        }
    };
    if target == place.device {
        return Err(SyncError::Invalid(
            "that is this device: `cairn sync leave` takes it off the hub".into(),
        ));
    }
    client
        .post(
            &format!("v1/devices/{target}/revoke"),
            &serde_json::json!({}),
        )
        .await
}

/// Takes this device off its hub (its token is revoked) and forgets the hub; the memory stays.
pub async fn leave(home: &Path) -> Result<(), SyncError> {
    let place = Joined::load(home)?.ok_or(SyncError::NotJoined)?;
    match leave_hub(&place).await {
        Ok(_) | Err(SyncError::Hub { status: 401, .. }) => {}
        Err(e) => return Err(e),
    }
    std::fs::remove_file(Joined::path(home))
        .map_err(|e| SyncError::Invalid(format!("{}: {e}", Joined::path(home).display())))
}

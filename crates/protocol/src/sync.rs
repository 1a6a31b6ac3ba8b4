//! Sync between devices: the records a device writes to its log (what one memory or one rating
//! is, with its versions) and the sync hub's wire (who a device is, what a space's logs hold, a
//! batch pushed, a page pulled). A record's body travels sealed: the hub sees only the envelope.

use serde::{Deserialize, Serialize};

use crate::memory::{Layer, Status};

/// A version: `{wall clock ms, 13 digits}-{device id}`. Versions compare as strings: later
/// wall time first, the device id breaking ties, so every device picks the same winner.
pub type Version = String;

/// The wall-clock part of a version (0 when it has none).
pub fn version_wall(version: &str) -> i64 {
    version
        .get(..13)
        .and_then(|wall| wall.parse().ok())
        .unwrap_or(0)
}

/// The version a device writes at `wall` ms.
pub fn version_at(wall: i64, device: &str) -> Version {
    format!("{:013}-{device}", wall.max(0))
}

/// One object's state, as a device's log carries it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Record {
    Memory(MemorySnapshot),
    Feedback(FeedbackEvent),
}

/// A memory as its author left it: what it says and where it came from (`content`), its
/// status, or that it was deleted. Each part carries the version that wrote it; a device keeps
/// the highest of each, and a deletion beats everything.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemorySnapshot {
    pub uid: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<MemoryContent>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<StatusChange>,
    /// The version that deleted it: a tombstone has no content.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deleted: Option<Version>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryContent {
    pub version: Version,
    pub layer: Layer,
    pub text: String,
    pub source: String,
    /// The author's own id, where it means the same on every device (an imported turn's key).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    pub created_at: i64,
    /// What the author wrote about it; what each device works out itself (rewards, versions of
    /// a fact, duplicates) is left out.
    #[serde(default)]
    pub metadata: serde_json::Value,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StatusChange {
    pub version: Version,
    pub status: Status,
}

/// A rating of a reply: given once, never changed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FeedbackEvent {
    pub uid: String,
    /// The rated memory.
    pub memory: String,
    pub at: i64,
    pub value: f64,
    pub origin: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Who a device is on its hub (`GET /v1/me`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HubMe {
    pub account: String,
    pub account_name: String,
    pub device: String,
    pub device_name: String,
    /// The person's own space: their vault.
    pub vault: String,
    /// The hub's clock, for the device to see how far its own is off.
    pub now_ms: i64,
    pub devices: Vec<HubDevice>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HubDevice {
    pub id: String,
    pub name: String,
    pub created_ms: i64,
    #[serde(default)]
    pub last_seen_ms: Option<i64>,
    #[serde(default)]
    pub revoked_ms: Option<i64>,
}

/// A record as the hub keeps it: where it sits in whose log, and its sealed body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HubRecord {
    pub idx: i64,
    /// The version the record carries (its newest part), for the hub to refuse a clock far
    /// in the future.
    pub version: Version,
    /// The sealed body, base64.
    pub body: String,
}

/// `POST /v1/spaces/{space}/records`: records of the sending device's own log, in order from
/// `records[0].idx`, which is at most the hub's tail + 1.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HubPush {
    pub records: Vec<HubRecord>,
}

/// The answer to a push: the device's log on the hub now ends at `tail`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HubPushed {
    pub tail: i64,
}

/// `GET /v1/spaces/{space}/status`: the last index of each device's log in the space.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HubTails {
    pub tails: Vec<HubTail>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HubTail {
    pub device: String,
    pub idx: i64,
}

/// `GET /v1/spaces/{space}/records?device=&from=&limit=`: a page of one device's log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HubPage {
    pub records: Vec<HubRecord>,
}

/// `POST /v1/join`: a new device of an account, with the one-time code the hub (or one of the
/// account's devices, pairing) issued.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HubJoin {
    pub code: String,
    pub device_name: String,
}

/// The joined device's token (shown once) and, when it was paired, the vault key sealed for it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HubJoined {
    pub token: String,
    pub me: HubMe,
    #[serde(default)]
    pub sealed_vault_key: Option<String>,
}

/// `POST /v1/pair`: an account's device asks for a code for another device; `sealed_vault_key`
/// is the vault key sealed with a secret that never reaches the hub.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HubPairRequest {
    pub sealed_vault_key: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HubPairCode {
    pub code: String,
    pub expires_ms: i64,
}

/// Sync as the app shows it (Settings → Devices, the sidebar's footer, `cairn sync status`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SyncView {
    /// This device is joined to a hub.
    pub joined: bool,
    #[serde(default)]
    pub hub: Option<String>,
    #[serde(default)]
    pub account: Option<String>,
    #[serde(default)]
    pub device: Option<String>,
    #[serde(default)]
    pub device_id: Option<String>,
    #[serde(default)]
    pub paused: bool,
    /// Records of this device's log the hub does not hold yet.
    #[serde(default)]
    pub pending: i64,
    /// When a round last went through.
    #[serde(default)]
    pub last_ok_ms: Option<i64>,
    /// Why the last round did not, if it did not.
    #[serde(default)]
    pub last_error: Option<String>,
    /// The account's devices, as the hub last listed them (empty when it could not be asked).
    #[serde(default)]
    pub devices: Vec<HubDevice>,
}

/// What went wrong, as the hub says it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HubError {
    pub error: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_order_by_time_then_device() {
        let early = version_at(999, "b");
        let late = version_at(1_000, "a");
        assert!(early < late, "{early} < {late}");
        assert!(version_at(5, "a") < version_at(5, "b"));
        assert_eq!(version_wall(&late), 1_000);
        assert_eq!(version_wall("nonsense"), 0);
    }

    #[test]
    fn a_record_says_its_kind() {
        let record = Record::Feedback(FeedbackEvent {
            uid: "f".into(),
            memory: "m".into(),
            at: 1,
            value: 1.0,
            origin: "person".into(),
            note: None,
        });
        let json = serde_json::to_value(&record).unwrap_or_default();
        assert_eq!(json["kind"], "feedback");
        let back: Record = serde_json::from_value(json).unwrap_or(Record::Memory(MemorySnapshot {
            uid: String::new(),
            content: None,
            status: None,
            deleted: None,
        }));
        assert_eq!(back, record);
    }
}

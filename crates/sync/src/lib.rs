//! The device's side of sync: one memory on every device. A device joins a hub (a code from the
//! hub's operator for the first device, a pairing code from a joined device for the next), keeps
//! its token and the vault key in a private file of the Cairn home, and syncs: the memory's own
//! changes are sealed into records of this device's log, each sealed end to end with the vault
//! key before it leaves, pushed, and the other devices' logs are pulled and applied.

mod device;
mod engine;
mod hub_client;
mod vault;

pub use device::{join, leave, pair, revoke, Joined, JOINED_FILE};
pub use engine::{hub_status, pending, sync_home, sync_once, SyncReport};
pub use hub_client::check_hub_address;
pub use vault::VaultKey;

/// What went wrong, each saying what sync does next.
#[derive(Debug, thiserror::Error)]
pub enum SyncError {
    /// The hub cannot be reached: the memory works locally; sync tries again later.
    #[error("{0}; the memory works on this device and sync tries again later")]
    Offline(String),
    /// The hub refused (401: join again; 404: not yours; 409: the logs disagree).
    #[error("the hub answered {status}: {message}")]
    Hub { status: u16, message: String },
    /// This device's log differs from what the hub holds under the same indexes.
    #[error("this device's log on the hub differs from its own (was it restored from a backup?); it starts a new one")]
    Forked,
    #[error("this device is not joined to a hub: `cairn sync join ADDRESS CODE`")]
    NotJoined,
    #[error("{0}")]
    Key(String),
    #[error("{0}")]
    Invalid(String),
    #[error(transparent)]
    Memory(#[from] cairn_memory::MemoryError),
    #[error(transparent)]
    Config(#[from] cairn_config::ConfigError),
}

impl SyncError {
    /// Whether trying again later may work (the hub or the network), as opposed to something the
    /// person has to do.
    pub fn transient(&self) -> bool {
        match self {
            Self::Offline(_) => true,
            Self::Hub { status, .. } => *status >= 500 || *status == 429,
            _ => false,
        }
    }
}

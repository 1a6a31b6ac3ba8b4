//! The one typed bridge to the backend: Tauri commands invoked through the webview's IPC, grouped
//! by what they serve; the rest of the UI calls them as `ipc::…`.

mod app;
mod attachments;
mod bridge;
mod devices;
mod events;
mod memory;
mod schedules;
mod settings;
mod sources;
mod tasks;
mod voice;

pub use app::*;
pub use attachments::*;
pub use devices::*;
pub use events::*;
pub use memory::*;
pub use schedules::*;
pub use settings::*;
pub use sources::*;
pub use tasks::*;
pub use voice::*;

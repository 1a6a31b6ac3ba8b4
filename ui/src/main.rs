//! The UI entry point: mounts the workbench or the pet, depending on which page loaded the module.

mod ipc;
mod memory_page;
mod pet;
mod present;
mod settings_page;
mod sources_page;
mod workbench;

fn main() {
    let path = web_sys::window()
        .and_then(|w| w.location().pathname().ok())
        .unwrap_or_default();
    if present::is_pet_page(&path) {
        leptos::mount::mount_to_body(pet::Pet);
    } else {
        leptos::mount::mount_to_body(workbench::Workbench);
    }
}

//! Cairn's Leptos UI (wasm), one module for both windows: the workbench (task list, message stream,
//! composer, Memory, Sources and Settings pages) and the pet. It renders and dispatches; every call
//! to the backend goes through `ipc`. This entry point mounts the workbench or the pet, depending on
//! which page loaded the module.

mod composer;
mod dom;
mod format;
mod forms;
mod highlight;
mod i18n;
mod ipc;
mod markdown;
mod memory_page;
mod notice;
mod pet;
mod present;
mod rate;
mod schedules_page;
mod segmented;
mod settings_models;
mod settings_page;
mod setup;
mod slash;
mod sources_page;
mod workbench;

fn main() {
    // The language and theme chosen in Settings apply from the first paint, in both windows.
    wasm_bindgen_futures::spawn_local(async {
        if let Ok(settings) = ipc::settings_get().await {
            i18n::set_language(settings.language.as_str());
            settings_page::apply_theme(settings.theme);
        }
        if let Some(root) = dom::root_element() {
            let _ = root.set_attribute("lang", i18n::language());
        }
        let path = dom::page_path();
        markdown::install_code_copy();
        if present::is_pet_page(&path) {
            leptos::mount::mount_to_body(pet::Pet);
        } else {
            leptos::mount::mount_to_body(workbench::Workbench);
        }
    });
}

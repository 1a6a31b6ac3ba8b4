//! The two windows: the workbench and the pet (placing, showing, hiding).

use tauri::{AppHandle, Manager, PhysicalPosition, Runtime};

pub const WORKBENCH: &str = "workbench";
pub const PET: &str = "pet";

/// The pet's side, in logical pixels.
const PET_SIZE: f64 = 160.0;

/// The pet's footprint (logical pixels) assumed when placing it, before its size can be read.
const PET_PLACEMENT_SIZE: f64 = PET_SIZE;

/// Shows the pet if hidden, hides it if shown; returns whether it is now visible.
pub fn toggle_pet<R: Runtime>(app: &AppHandle<R>) -> tauri::Result<bool> {
    let Some(pet) = app.get_webview_window(PET) else {
        return Ok(false);
    };
    if pet.is_visible()? {
        pet.hide()?;
        Ok(false)
    } else {
        pet.show()?;
        pet.set_always_on_top(true)?;
        Ok(true)
    }
}

/// Brings the workbench to the front.
pub fn show_workbench<R: Runtime>(app: &AppHandle<R>) -> tauri::Result<()> {
    if let Some(workbench) = app.get_webview_window(WORKBENCH) {
        workbench.show()?;
        workbench.unminimize()?;
        workbench.set_focus()?;
    }
    Ok(())
}

/// Puts the pet near the bottom-right corner of its monitor.
pub fn place_pet<R: Runtime>(app: &AppHandle<R>) {
    let Some(pet) = app.get_webview_window(PET) else {
        return;
    };
    if let Err(e) = pet.set_size(tauri::LogicalSize::new(PET_SIZE, PET_SIZE)) {
        tracing::warn!("cannot size the pet: {e}");
    }
    let (Ok(Some(monitor)), Ok(size)) = (pet.current_monitor(), pet.outer_size()) else {
        return;
    };
    let scale = monitor.scale_factor();
    let margin = (48.0 * scale) as i32;
    // Before the window is mapped its size may read as zero: place for the size it will have.
    // (The pet is "resizable" with min = max = 160 because GTK forces non-resizable windows to at
    // least 200×200: tauri-apps/tao#561.)
    let least = (PET_PLACEMENT_SIZE * scale) as i32;
    let (width, height) = (
        (size.width as i32).max(least),
        (size.height as i32).max(least),
    );
    let area = monitor.size();
    let origin = monitor.position();
    let x = origin.x + area.width as i32 - width - margin;
    let y = origin.y + area.height as i32 - height - margin;
    if let Err(e) = pet.set_position(PhysicalPosition::new(x.max(0), y.max(0))) {
        tracing::warn!("cannot place the pet: {e}");
    }
}

//! The two windows: the workbench and the pet (creating, placing, showing, hiding). Each is
//! created when first shown, not at start: a window not yet wanted costs no web process.

use tauri::{
    AppHandle, LogicalSize, Manager, PhysicalPosition, PhysicalSize, Runtime, WebviewWindow,
    WebviewWindowBuilder,
};

pub const WORKBENCH: &str = "workbench";
pub const PET: &str = "pet";

/// The pet's side in logical pixels, as tauri.conf.json sets it (min = max = 160 on a "resizable"
/// window, because GTK forces non-resizable windows to at least 200×200: tauri-apps/tao#561).
const PET_SIZE: f64 = 160.0;

/// The pet's size in logical pixels while its bubble or task list is open: room for a
/// conversation above and beside the stones, which keep their place at the bottom-right.
const PET_OPEN: (f64, f64) = (340.0, 440.0);

/// The window `label` (as tauri.conf.json describes it), created now if it is not there yet;
/// `true` with it when it was just created.
fn window<R: Runtime>(app: &AppHandle<R>, label: &str) -> tauri::Result<(WebviewWindow<R>, bool)> {
    if let Some(window) = app.get_webview_window(label) {
        return Ok((window, false));
    }
    let config = app
        .config()
        .app
        .windows
        .iter()
        .find(|w| w.label == label)
        .cloned()
        .ok_or_else(|| tauri::Error::WindowNotFound)?;
    let window = WebviewWindowBuilder::from_config(app, &config)?.build()?;
    Ok((window, true))
}

/// Shows the pet (creating it on first use).
pub fn show_pet<R: Runtime>(app: &AppHandle<R>) -> tauri::Result<()> {
    let (pet, created) = window(app, PET)?;
    if created {
        place_pet(app);
    }
    pet.show()?;
    pet.set_always_on_top(true)?;
    Ok(())
}

/// Whether the pet is on screen.
pub fn pet_showing<R: Runtime>(app: &AppHandle<R>) -> bool {
    app.get_webview_window(PET)
        .and_then(|pet| pet.is_visible().ok())
        .unwrap_or(false)
}

/// Shows the pet if hidden (or not created yet), hides it if shown; returns whether it is now
/// visible.
pub fn toggle_pet<R: Runtime>(app: &AppHandle<R>) -> tauri::Result<bool> {
    let Some(pet) = app.get_webview_window(PET) else {
        show_pet(app)?;
        return Ok(true);
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

/// Brings the workbench to the front (creating it on first use).
pub fn show_workbench<R: Runtime>(app: &AppHandle<R>) -> tauri::Result<()> {
    let (workbench, _) = window(app, WORKBENCH)?;
    workbench.show()?;
    workbench.unminimize()?;
    workbench.set_focus()?;
    remember_mode(app, "full");
    Ok(())
}

/// `name` in the data folder, where the windows' state is remembered between runs.
fn data_file<R: Runtime>(app: &AppHandle<R>, name: &str) -> Option<std::path::PathBuf> {
    let desktop = app.try_state::<crate::Desktop>()?;
    Some(desktop.cairn.home().data_dir().join(name))
}

/// Where the pet's position is remembered between runs.
fn pet_position_file<R: Runtime>(app: &AppHandle<R>) -> Option<std::path::PathBuf> {
    data_file(app, "pet.json")
}

/// Grows the pet to [`PET_OPEN`] (`open`) or shrinks it to the stones, keeping its bottom-right
/// corner (where the stones are) in place, within its monitor.
pub fn expand_pet<R: Runtime>(app: &AppHandle<R>, open: bool) -> tauri::Result<()> {
    let Some(pet) = app.get_webview_window(PET) else {
        return Ok(());
    };
    let scale = pet.scale_factor()?;
    let (width, height) = if open { PET_OPEN } else { (PET_SIZE, PET_SIZE) };
    let logical = LogicalSize::new(width, height);
    let target: PhysicalSize<u32> = logical.to_physical(scale);
    let now = pet.outer_size()?;
    if now == target {
        return Ok(());
    }
    let at = pet.outer_position()?;
    let mut x = at.x + now.width as i32 - target.width as i32;
    let mut y = at.y + now.height as i32 - target.height as i32;
    if let Ok(Some(monitor)) = pet.current_monitor() {
        let (origin, area) = (monitor.position(), monitor.size());
        x = x.clamp(
            origin.x,
            (origin.x + area.width as i32 - target.width as i32).max(origin.x),
        );
        y = y.clamp(
            origin.y,
            (origin.y + area.height as i32 - target.height as i32).max(origin.y),
        );
    }
    // The size is pinned (min = max, see PET_SIZE): unpin, resize, pin again.
    pet.set_min_size(None::<LogicalSize<f64>>)?;
    pet.set_max_size(None::<LogicalSize<f64>>)?;
    pet.set_size(logical)?;
    pet.set_position(PhysicalPosition::new(x, y))?;
    pet.set_min_size(Some(logical))?;
    pet.set_max_size(Some(logical))?;
    Ok(())
}

/// The pet moved (dragged, or grown or shrunk by [`expand_pet`]): remember where the stones are,
/// as the position of the closed pet.
pub fn pet_moved<R: Runtime>(app: &AppHandle<R>, position: PhysicalPosition<i32>) {
    let Some(pet) = app.get_webview_window(PET) else {
        return;
    };
    let (Ok(size), Ok(scale)) = (pet.outer_size(), pet.scale_factor()) else {
        return;
    };
    let side = (PET_SIZE * scale).round() as i32;
    remember_pet_position(
        app,
        position.x + size.width as i32 - side,
        position.y + size.height as i32 - side,
    );
}

/// Remembers where the person dragged the pet (physical pixels).
fn remember_pet_position<R: Runtime>(app: &AppHandle<R>, x: i32, y: i32) {
    if let Some(file) = pet_position_file(app) {
        let json = format!("{{\"x\": {x}, \"y\": {y}}}");
        if let Err(e) = cairn_config::write_private_atomically(&file, json.as_bytes()) {
            tracing::warn!("cannot remember the pet's position: {e}");
        }
    }
}

/// The remembered position, if it is still on a monitor.
fn remembered_pet_position<R: Runtime>(app: &AppHandle<R>) -> Option<PhysicalPosition<i32>> {
    let text = std::fs::read_to_string(pet_position_file(app)?).ok()?;
    let value: serde_json::Value = serde_json::from_str(&text).ok()?;
    let (x, y) = (value["x"].as_i64()? as i32, value["y"].as_i64()? as i32);
    let on_screen = app.available_monitors().ok()?.iter().any(|m| {
        let (p, s) = (m.position(), m.size());
        x >= p.x && y >= p.y && x < p.x + s.width as i32 && y < p.y + s.height as i32
    });
    on_screen.then_some(PhysicalPosition::new(x, y))
}

/// Puts the pet where the person left it, else near the bottom-right corner of its monitor.
pub fn place_pet<R: Runtime>(app: &AppHandle<R>) {
    let Some(pet) = app.get_webview_window(PET) else {
        return;
    };
    if let Some(position) = remembered_pet_position(app) {
        if pet.set_position(position).is_ok() {
            return;
        }
    }
    // Its size is fixed (tauri.conf.json) but may read as zero before the window is mapped.
    let Ok(Some(monitor)) = pet.current_monitor() else {
        return;
    };
    let scale = monitor.scale_factor();
    let side = (PET_SIZE * scale) as i32;
    let margin = (48.0 * scale) as i32;
    let area = monitor.size();
    let origin = monitor.position();
    let x = origin.x + area.width as i32 - side - margin;
    let y = origin.y + area.height as i32 - side - margin;
    if let Err(e) = pet.set_position(PhysicalPosition::new(x.max(0), y.max(0))) {
        tracing::warn!("cannot place the pet: {e}");
    }
}

/// Where the window in use at exit is remembered (for `[ui] launch = "last"`).
fn last_window_file<R: Runtime>(app: &AppHandle<R>) -> Option<std::path::PathBuf> {
    data_file(app, "window.json")
}

/// Remembers whether the workbench (`full`) or the pet alone (`pet`) is in use.
pub fn remember_mode<R: Runtime>(app: &AppHandle<R>, mode: &str) {
    if let Some(file) = last_window_file(app) {
        let json = format!("{{\"last\": \"{mode}\"}}");
        if let Err(e) = cairn_config::write_private_atomically(&file, json.as_bytes()) {
            tracing::warn!("cannot remember the window in use: {e}");
        }
    }
}

/// Whether the workbench opens at start (else the pet does): always for `full`, never for `pet`,
/// and for `last` unless the pet alone was in use when Cairn last closed.
pub fn opens_workbench<R: Runtime>(app: &AppHandle<R>, launch: cairn_config::LaunchMode) -> bool {
    use cairn_config::LaunchMode;
    match launch {
        LaunchMode::Full => true,
        LaunchMode::Pet => false,
        LaunchMode::Last => last_window_file(app)
            .and_then(|file| std::fs::read_to_string(file).ok())
            .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
            .is_none_or(|value| value["last"] != "pet"),
    }
}

/// Reloads both windows (after the language changed).
pub fn reload_all<R: Runtime>(app: &AppHandle<R>) {
    for window in app.webview_windows().values() {
        if let Err(e) = window.eval("window.location.reload()") {
            tracing::warn!("cannot reload {}: {e}", window.label());
        }
    }
}

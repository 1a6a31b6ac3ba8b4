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

/// Puts the pet where the person left it, else near the bottom-right corner of its monitor —
/// clear of the workbench, or at least of its composer (see [`pet_spot`]).
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
    let area = Area {
        x: monitor.position().x,
        y: monitor.position().y,
        width: monitor.size().width as i32,
        height: monitor.size().height as i32,
    };
    let workbench = app
        .get_webview_window(WORKBENCH)
        .filter(|w| w.is_visible().unwrap_or(false) && !w.is_minimized().unwrap_or(false))
        .and_then(|w| Some((w.outer_position().ok()?, w.outer_size().ok()?)))
        .map(|(at, size)| Area {
            x: at.x,
            y: at.y,
            width: size.width as i32,
            height: size.height as i32,
        })
        .filter(|w| w.width > 0 && w.height > 0);
    let (x, y) = pet_spot(
        area,
        workbench,
        (PET_SIZE * scale) as i32,
        (48.0 * scale) as i32,
        (COMPOSER_ROOM * scale) as i32,
    );
    if let Err(e) = pet.set_position(PhysicalPosition::new(x, y)) {
        tracing::warn!("cannot place the pet: {e}");
    }
}

/// How far above the workbench's bottom edge its composer (text box, Send/Stop, what a command
/// said) reaches, in logical pixels: a pet that must sit on the workbench sits above it.
const COMPOSER_ROOM: f64 = 190.0;

/// A rectangle on screen, in physical pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Area {
    pub x: i32,
    pub y: i32,
    pub width: i32,
    pub height: i32,
}

impl Area {
    fn right(self) -> i32 {
        self.x + self.width
    }

    fn bottom(self) -> i32 {
        self.y + self.height
    }

    fn overlaps(self, other: Area) -> bool {
        self.x < other.right()
            && other.x < self.right()
            && self.y < other.bottom()
            && other.y < self.bottom()
    }

    fn holds(self, other: Area) -> bool {
        other.x >= self.x
            && other.y >= self.y
            && other.right() <= self.right()
            && other.bottom() <= self.bottom()
    }
}

/// Where a new pet (a square of `side`) goes on `monitor`, its top-left corner: the bottom-right
/// corner, `margin` in, unless that covers the workbench; then beside the workbench (right, then
/// left, at its bottom), below or above it; when the workbench leaves no room, on its right edge
/// above its composer (`composer` from its bottom), so Send and Stop stay in view.
pub fn pet_spot(
    monitor: Area,
    workbench: Option<Area>,
    side: i32,
    margin: i32,
    composer: i32,
) -> (i32, i32) {
    let at = |x: i32, y: i32| Area {
        x,
        y,
        width: side,
        height: side,
    };
    let corner = at(
        monitor.right() - side - margin,
        monitor.bottom() - side - margin,
    );
    let Some(wb) = workbench else {
        return (corner.x.max(monitor.x), corner.y.max(monitor.y));
    };
    let low = (wb.bottom() - side).min(corner.y);
    let candidates = [
        corner,
        at(wb.right() + margin, low),
        at(wb.x - margin - side, low),
        at(corner.x, wb.bottom() + margin),
        at(corner.x, wb.y - margin - side),
    ];
    if let Some(clear) = candidates
        .into_iter()
        .find(|c| monitor.holds(*c) && !c.overlaps(wb))
    {
        return (clear.x, clear.y);
    }
    let x = (wb.right().min(monitor.right()) - side - margin).max(monitor.x);
    let y = (wb.bottom().min(monitor.bottom()) - composer - side).max(monitor.y);
    (x, y)
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

#[cfg(test)]
mod tests {
    use super::*;

    const SCREEN: Area = Area {
        x: 0,
        y: 0,
        width: 1440,
        height: 900,
    };

    fn pet(at: (i32, i32)) -> Area {
        Area {
            x: at.0,
            y: at.1,
            width: 160,
            height: 160,
        }
    }

    #[test]
    fn alone_the_pet_takes_the_bottom_right_corner() {
        assert_eq!(pet_spot(SCREEN, None, 160, 48, 190), (1232, 692));
    }

    #[test]
    fn beside_a_small_workbench_the_pet_keeps_clear_of_it() {
        let workbench = Area {
            x: 100,
            y: 60,
            width: 1000,
            height: 700,
        };
        let at = pet(pet_spot(SCREEN, Some(workbench), 160, 48, 190));
        assert!(!at.overlaps(workbench) && SCREEN.holds(at), "{at:?}");
    }

    /// Issue #48: the pet's first place was over the centred workbench's Send/Stop button.
    #[test]
    fn on_a_workbench_that_fills_the_screen_the_pet_stays_above_the_composer() {
        let workbench = Area {
            x: 130,
            y: 70,
            width: 1180,
            height: 760,
        };
        let at = pet(pet_spot(SCREEN, Some(workbench), 160, 48, 190));
        let composer = Area {
            x: workbench.x + 260,
            y: workbench.bottom() - 190,
            width: workbench.width - 260,
            height: 190,
        };
        assert!(!at.overlaps(composer), "{at:?} covers {composer:?}");
        assert!(SCREEN.holds(at), "{at:?}");
    }
}

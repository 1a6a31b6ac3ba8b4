//! The tray icon and its menu: show the workbench, show or hide the pet, pause following other
//! agents' history, quit (which stops the local API and removes `runtime.json`, as any exit does).

use std::sync::Arc;

use cairn_api::ScanControl;
use tauri::menu::{CheckMenuItem, Menu, MenuEvent, MenuItem, PredefinedMenuItem};
use tauri::tray::{MouseButton, MouseButtonState, TrayIconBuilder, TrayIconEvent};
use tauri::{AppHandle, Manager, Runtime};

use crate::windows;

/// What a menu entry does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    ShowWorkbench,
    TogglePet,
    PauseSync,
    Quit,
}

impl Action {
    const ALL: [Action; 4] = [
        Action::ShowWorkbench,
        Action::TogglePet,
        Action::PauseSync,
        Action::Quit,
    ];

    /// The menu entry's id.
    pub fn id(self) -> &'static str {
        match self {
            Action::ShowWorkbench => "show-workbench",
            Action::TogglePet => "toggle-pet",
            Action::PauseSync => "pause-sync",
            Action::Quit => "quit",
        }
    }

    pub fn from_id(id: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|a| a.id() == id)
    }
}

/// Following other agents' history, which the tray pauses and resumes.
#[derive(Default, Clone)]
pub struct HistorySync(pub Arc<ScanControl>);

/// The menu's words in the UI's language (`[ui] language`): show the workbench, show the pet,
/// pause importing, quit.
fn labels(language: &str) -> [&'static str; 4] {
    if language.eq_ignore_ascii_case("zh-CN") {
        [
            "显示工作台",
            "显示宠物",
            "暂停导入其他智能体的历史",
            "退出 Cairn",
        ]
    } else {
        [
            "Show the workbench",
            "Show the pet",
            "Pause importing other agents' history",
            "Quit Cairn",
        ]
    }
}

/// Puts Cairn's icon in the tray; where the desktop has no tray, Cairn runs without one.
pub fn install<R: Runtime>(app: &AppHandle<R>) -> tauri::Result<()> {
    let desktop = app.state::<crate::Desktop>();
    let language = desktop
        .cairn
        .load_config()
        .map(|c| c.language)
        .unwrap_or_default();
    let [show_label, pet_label, pause_label, quit_label] = labels(language.as_str());
    let show = MenuItem::with_id(
        app,
        Action::ShowWorkbench.id(),
        show_label,
        true,
        None::<&str>,
    )?;
    let pet = CheckMenuItem::with_id(
        app,
        Action::TogglePet.id(),
        pet_label,
        true,
        windows::pet_showing(app),
        None::<&str>,
    )?;
    let pause = CheckMenuItem::with_id(
        app,
        Action::PauseSync.id(),
        pause_label,
        true,
        false,
        None::<&str>,
    )?;
    let quit = MenuItem::with_id(app, Action::Quit.id(), quit_label, true, None::<&str>)?;
    let menu = Menu::with_items(
        app,
        &[
            &show,
            &pet,
            &PredefinedMenuItem::separator(app)?,
            &pause,
            &PredefinedMenuItem::separator(app)?,
            &quit,
        ],
    )?;
    // The icon is written to a file for the desktop's tray: into Cairn's own cache, not a folder
    // of /tmp that another user of this machine may own.
    let icon_dir = desktop.cairn.home().cache_dir().join("tray");
    let mut tray = TrayIconBuilder::with_id("cairn")
        .tooltip("Cairn")
        .temp_dir_path(icon_dir)
        .menu(&menu)
        .show_menu_on_left_click(false)
        .on_menu_event(move |app, event: MenuEvent| {
            let Some(action) = Action::from_id(event.id().as_ref()) else {
                return;
            };
            act(app, action);
            // The check marks follow what is, not what was clicked.
            let _ = pet.set_checked(windows::pet_showing(app));
            let _ = pause.set_checked(app.state::<HistorySync>().0.is_paused());
        })
        .on_tray_icon_event(|tray, event| {
            if let TrayIconEvent::Click {
                button: MouseButton::Left,
                button_state: MouseButtonState::Up,
                ..
            } = event
            {
                act(tray.app_handle(), Action::ShowWorkbench);
            }
        });
    if let Some(icon) = app.default_window_icon() {
        tray = tray.icon(icon.clone().to_owned());
    }
    tray.build(app)?;
    Ok(())
}

/// Does what a menu entry says.
pub fn act<R: Runtime>(app: &AppHandle<R>, action: Action) {
    let done = match action {
        Action::ShowWorkbench => windows::show_workbench(app),
        Action::TogglePet => windows::toggle_pet(app).map(|_| ()),
        Action::PauseSync => {
            let sync = app.state::<HistorySync>();
            if sync.0.is_paused() {
                sync.0.resume();
            } else {
                sync.0.pause();
            }
            Ok(())
        }
        Action::Quit => {
            crate::quit_or_ask(app);
            Ok(())
        }
    };
    if let Err(e) = done {
        tracing::warn!("the tray's {action:?} failed: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_menu_speaks_the_ui_language() {
        assert_eq!(labels("en")[3], "Quit Cairn");
        assert_eq!(labels("zh-CN")[3], "退出 Cairn");
        assert_eq!(labels("something else")[0], "Show the workbench");
    }

    #[test]
    fn every_entry_is_found_by_its_id() {
        for action in Action::ALL {
            assert_eq!(Action::from_id(action.id()), Some(action));
        }
        assert_eq!(Action::from_id("something else"), None);
    }
}

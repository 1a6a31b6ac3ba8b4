//! Whether there is a display to open windows on, checked before anything else starts. Without
//! one, GTK fails to start inside Tauri's event loop, which panics with a backtrace; here the
//! person gets one line saying what is missing and how to use Cairn without a display.
//!
//! Two checks, on the systems where Tauri runs on GTK: neither `DISPLAY` nor `WAYLAND_DISPLAY` set
//! (and nothing GTK would try without them), then GTK's own start-up, `gtk_init_check`, which
//! reports a display that is named but cannot be opened (`DISPLAY=:999`, a compositor gone)
//! instead of aborting. Tauri's own GTK start-up later finds GTK started and goes on.

/// What to run instead, said with every "no display" line.
const HEADLESS: &str =
    "to use Cairn without a display, run `cairn serve` for the local API or `cairn` for the CLI";

/// Why the desktop app cannot open its windows, as one line for stderr; `None` when a display
/// opened. Must run on the main thread, before anything else uses GTK.
pub fn missing() -> Option<String> {
    #[cfg(any(
        target_os = "linux",
        target_os = "dragonfly",
        target_os = "freebsd",
        target_os = "netbsd",
        target_os = "openbsd"
    ))]
    {
        gtk::missing()
    }
    #[cfg(not(any(
        target_os = "linux",
        target_os = "dragonfly",
        target_os = "freebsd",
        target_os = "netbsd",
        target_os = "openbsd"
    )))]
    {
        None
    }
}

#[cfg(any(
    target_os = "linux",
    target_os = "dragonfly",
    target_os = "freebsd",
    target_os = "netbsd",
    target_os = "openbsd"
))]
mod gtk {
    use std::os::raw::{c_char, c_int};

    use super::HEADLESS;

    extern "C" {
        /// GTK 3's start-up: opens the default display and answers whether it could, where
        /// `gtk_init` would abort. Linked through `gtk-sys`, which Tauri's GTK backend brings.
        fn gtk_init_check(argc: *mut c_int, argv: *mut *mut *mut c_char) -> c_int;
    }

    /// A display variable's value, when set to something.
    fn variable(name: &str) -> Option<String> {
        std::env::var_os(name)
            .filter(|value| !value.is_empty())
            .map(|value| value.to_string_lossy().into_owned())
    }

    /// See [`super::missing`].
    pub(super) fn missing() -> Option<String> {
        let x11 = variable("DISPLAY");
        let wayland = variable("WAYLAND_DISPLAY");
        let backend = variable("GDK_BACKEND");
        // What GTK would try without either variable: Wayland's default socket, or a backend
        // that needs neither (broadway, a display in the browser).
        let default_wayland = variable("XDG_RUNTIME_DIR")
            .is_some_and(|dir| std::path::Path::new(&dir).join("wayland-0").exists());
        let broadway = backend.as_deref().is_some_and(|b| b.contains("broadway"));
        if x11.is_none() && wayland.is_none() && !default_wayland && !broadway {
            return Some(format!(
                "no display found (neither DISPLAY nor WAYLAND_DISPLAY is set); {HEADLESS}"
            ));
        }
        if gtk_starts() {
            return None;
        }
        let tried: Vec<String> = [
            ("WAYLAND_DISPLAY", wayland),
            ("DISPLAY", x11),
            ("GDK_BACKEND", backend),
        ]
        .into_iter()
        .filter_map(|(name, value)| value.map(|value| format!("{name}={value}")))
        .collect();
        Some(if tried.is_empty() {
            format!("cannot open a display (DISPLAY and WAYLAND_DISPLAY are not set); {HEADLESS}")
        } else {
            format!("cannot open the display ({}); {HEADLESS}", tried.join(", "))
        })
    }

    /// Starts GTK on its default display; false when no display could be opened.
    #[allow(unsafe_code)]
    fn gtk_starts() -> bool {
        // SAFETY: GTK accepts null `argc` and `argv` (no arguments to parse). This runs on the
        // main thread before anything else uses GTK, as GTK requires; the later `gtk::init()` of
        // Tauri's event loop (the same call, same thread) finds GTK started and returns at once.
        unsafe { gtk_init_check(std::ptr::null_mut(), std::ptr::null_mut()) != 0 }
    }
}

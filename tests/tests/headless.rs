//! Cairn on a machine without a display, and the UI build when nothing changed.
//!
//! - `cairn-desktop` with no display (no `DISPLAY` nor `WAYLAND_DISPLAY`, or a `DISPLAY` nobody
//!   serves) says so in one line on stderr, points at `cairn serve` and `cairn`, and exits with
//!   status 1: no panic, no backtrace, no local API started.
//! - `scripts/build-ui.sh` run again with nothing changed leaves every file of `ui/dist` as it
//!   was (same mtimes), so cargo does not rebuild and relink the desktop app, which embeds it.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant, SystemTime};

use common::{desktop_binary, TestResult};

/// How long the app gets to give up; it answers at once, a hang means it found a display.
const GIVE_UP: Duration = Duration::from_secs(60);

/// Runs `cairn-desktop` on the empty data home `home` with no display variables but `display`
/// (`DISPLAY`'s value, when given), and returns what it did.
fn desktop_without_display(home: &Path, display: Option<&str>) -> TestResult<Output> {
    let mut command = Command::new(desktop_binary()?);
    command
        .env("CAIRN_HOME", home)
        .env("HOME", home)
        .env("RUST_BACKTRACE", "1")
        .env_remove("CAIRN_CONFIG")
        .env_remove("XDG_CONFIG_HOME")
        // Nothing GTK would find a display through: `./run test` sets DISPLAY to its Xvfb.
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .env_remove("GDK_BACKEND")
        .env_remove("XDG_RUNTIME_DIR")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(display) = display {
        command.env("DISPLAY", display);
    }
    let mut child = command.spawn()?;
    let started = Instant::now();
    while child.try_wait()?.is_none() {
        if started.elapsed() > GIVE_UP {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!(
                "cairn-desktop was still running after {GIVE_UP:?} without a display"
            )
            .into());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(child.wait_with_output()?)
}

/// The checks both cases share: status 1, one line on stderr naming DISPLAY and `cairn serve`, no
/// panic, and nothing started (no `runtime.json` in the home).
fn says_no_display(home: &Path, output: &Output) -> TestResult {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "stderr: {stderr}");
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "one line on stderr, got: {stderr}");
    let line = lines[0];
    assert!(line.starts_with("cairn-desktop: "), "{line}");
    assert!(line.contains("DISPLAY"), "names DISPLAY: {line}");
    assert!(
        line.contains("`cairn serve`"),
        "points at cairn serve: {line}"
    );
    assert!(line.contains("`cairn`"), "points at the CLI: {line}");
    for word in ["panicked", "backtrace", "RUST_BACKTRACE", "gtk backend"] {
        assert!(!stderr.contains(word), "{word} in: {stderr}");
    }
    assert!(
        !home.join("runtime.json").exists(),
        "the local API started without a display"
    );
    Ok(())
}

#[test]
fn without_display_variables_the_app_says_so_and_exits_1() -> TestResult {
    let home = tempfile::tempdir()?;
    let output = desktop_without_display(home.path(), None)?;
    says_no_display(home.path(), &output)?;
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("neither DISPLAY nor WAYLAND_DISPLAY is set"),
        "{stderr}"
    );
    Ok(())
}

#[test]
fn with_a_display_nobody_serves_the_app_says_so_and_exits_1() -> TestResult {
    // The first display number from 987 with no X server's socket.
    let number = (987..1100)
        .find(|n| !Path::new(&format!("/tmp/.X11-unix/X{n}")).exists())
        .ok_or("every display from :987 to :1099 is taken")?;
    let display = format!(":{number}");
    let home = tempfile::tempdir()?;
    let output = desktop_without_display(home.path(), Some(&display))?;
    says_no_display(home.path(), &output)?;
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(&format!("cannot open the display (DISPLAY={display})")),
        "{stderr}"
    );
    Ok(())
}

/// Every file under `dir` (relative path) with its mtime.
fn mtimes(dir: &Path) -> TestResult<BTreeMap<PathBuf, SystemTime>> {
    let mut found = BTreeMap::new();
    let mut pending = vec![dir.to_owned()];
    while let Some(folder) = pending.pop() {
        for entry in std::fs::read_dir(&folder)? {
            let entry = entry?;
            let meta = entry.metadata()?;
            if meta.is_dir() {
                pending.push(entry.path());
            } else {
                let path = entry.path();
                found.insert(path.strip_prefix(dir)?.to_owned(), meta.modified()?);
            }
        }
    }
    Ok(found)
}

/// Runs `scripts/build-ui.sh` from the workspace root; its stdout, or an error with its output.
fn build_ui(root: &Path) -> TestResult<String> {
    let output = Command::new("scripts/build-ui.sh")
        .current_dir(root)
        .stdin(Stdio::null())
        .output()?;
    if !output.status.success() {
        return Err(format!(
            "scripts/build-ui.sh failed: {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
        .into());
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// Fast when the UI was built before (as `./run test` does first): cargo finds the wasm fresh,
/// and only wasm-bindgen runs again.
#[test]
fn building_the_ui_again_with_nothing_changed_touches_no_file() -> TestResult {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let dist = root.join("ui/dist");
    // Brings ui/dist up to date with the sources (builds it when missing)…
    build_ui(&root)?;
    let before = mtimes(&dist)?;
    let folder_before = std::fs::metadata(&dist)?.modified()?;
    assert!(
        before.keys().any(|path| path.ends_with("index.html")),
        "ui/dist has no index.html: {before:?}"
    );
    // …so a second build has nothing to change.
    let said = build_ui(&root)?;
    let after = mtimes(&dist)?;
    assert_eq!(
        before.keys().collect::<Vec<_>>(),
        after.keys().collect::<Vec<_>>(),
        "the same files"
    );
    for (path, mtime) in &before {
        assert_eq!(
            Some(mtime),
            after.get(path),
            "{} was rewritten",
            path.display()
        );
    }
    assert_eq!(
        folder_before,
        std::fs::metadata(&dist)?.modified()?,
        "ui/dist itself changed"
    );
    assert!(said.contains("unchanged"), "{said}");
    Ok(())
}

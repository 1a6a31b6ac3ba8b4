//! Start at login: the XDG autostart entry (`$XDG_CONFIG_HOME/autostart/cairn-desktop.desktop`,
//! else under `~/.config/autostart/`) that desktop sessions run when the person logs in.

use std::path::{Path, PathBuf};

use crate::ConfigError;

/// The entry's file name.
pub const ENTRY_NAME: &str = "cairn-desktop.desktop";

/// Where the entry lives, from the environment (`None` without `XDG_CONFIG_HOME` or `HOME`).
pub fn entry_path(env: impl Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let config = env("XDG_CONFIG_HOME")
        .filter(|d| Path::new(d).is_absolute())
        .map(PathBuf::from)
        .or_else(|| env("HOME").map(|h| Path::new(&h).join(".config")))?;
    Some(config.join("autostart").join(ENTRY_NAME))
}

/// Whether the entry is there and not switched off (`Hidden=true` or
/// `X-GNOME-Autostart-enabled=false`, as session settings write it).
pub fn is_enabled(path: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(path) else {
        return false;
    };
    !text.lines().map(str::trim).any(|line| {
        line.eq_ignore_ascii_case("Hidden=true")
            || line.eq_ignore_ascii_case("X-GNOME-Autostart-enabled=false")
    })
}

/// Writes the entry that starts `program` at login (atomically: a session never reads half of it).
pub fn enable(path: &Path, program: &Path) -> Result<(), ConfigError> {
    crate::atomic::write_private_atomically(path, entry(program).as_bytes())
}

/// Removes the entry; nothing to do when it is not there.
pub fn disable(path: &Path) -> Result<(), ConfigError> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(ConfigError::io(path, e)),
    }
}

/// The desktop entry, with the program quoted as the Desktop Entry spec asks when it needs it.
fn entry(program: &Path) -> String {
    let program = program.display().to_string();
    let exec = if program
        .chars()
        .any(|c| c.is_whitespace() || "\"'\\$`".contains(c))
    {
        let escaped: String = program
            .chars()
            .flat_map(|c| match c {
                '"' | '`' | '$' | '\\' => vec!['\\', c],
                c => vec![c],
            })
            .collect();
        format!("\"{escaped}\"")
    } else {
        program
    };
    format!(
        "[Desktop Entry]\n\
         Type=Application\n\
         Name=Cairn\n\
         Comment=A local-first AI agent with a long memory\n\
         Exec={exec}\n\
         Icon=cairn-desktop\n\
         Terminal=false\n\
         X-GNOME-Autostart-enabled=true\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(vars: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| (*v).to_owned())
        }
    }

    #[test]
    fn the_entry_lives_under_the_xdg_config_home_else_under_home() {
        assert_eq!(
            entry_path(env(&[("XDG_CONFIG_HOME", "/x/cfg"), ("HOME", "/home/a")])),
            Some(PathBuf::from("/x/cfg/autostart/cairn-desktop.desktop"))
        );
        // A relative XDG_CONFIG_HOME is invalid by the spec and ignored.
        assert_eq!(
            entry_path(env(&[("XDG_CONFIG_HOME", "cfg"), ("HOME", "/home/a")])),
            Some(PathBuf::from(
                "/home/a/.config/autostart/cairn-desktop.desktop"
            ))
        );
        assert_eq!(entry_path(env(&[])), None);
    }

    #[test]
    fn enabling_writes_an_entry_that_runs_the_program_and_disabling_removes_it(
    ) -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("autostart").join(ENTRY_NAME);
        assert!(!is_enabled(&path));
        disable(&path)?;
        enable(&path, Path::new("/usr/bin/cairn-desktop"))?;
        assert!(is_enabled(&path));
        let text = std::fs::read_to_string(&path)?;
        assert!(text.starts_with("[Desktop Entry]\n"), "{text}");
        assert!(text.contains("\nExec=/usr/bin/cairn-desktop\n"), "{text}");
        disable(&path)?;
        assert!(!path.exists());

        enable(&path, Path::new("/opt/my apps/cairn \"x\""))?;
        let text = std::fs::read_to_string(&path)?;
        assert!(
            text.contains("\nExec=\"/opt/my apps/cairn \\\"x\\\"\"\n"),
            "{text}"
        );
        Ok(())
    }

    #[test]
    fn an_entry_switched_off_by_the_session_reads_as_off() -> Result<(), Box<dyn std::error::Error>>
    {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join(ENTRY_NAME);
        std::fs::write(&path, "[Desktop Entry]\nExec=cairn-desktop\nHidden=true\n")?;
        assert!(!is_enabled(&path));
        Ok(())
    }
}

//! Where the file tools may read without asking (under `yolo = false`): inside the project, and
//! never in the places that hold a person's secrets — Cairn's own home (its token, config and
//! memory), `~/.ssh`, `~/.aws`, `~/.gnupg`, credential files and browser profiles — wherever the
//! project is. A prompt injection (a fetched page, an MCP result, a planted memory) that asks the
//! agent to read one of those has to get past the person first.

use std::path::{Component, Path, PathBuf};

/// Folders and files under the person's home that hold credentials or browsing data.
const SECRET_PLACES: &[&str] = &[
    ".ssh",
    ".aws",
    ".gnupg",
    ".azure",
    ".kube",
    ".docker",
    ".netrc",
    ".git-credentials",
    ".npmrc",
    ".pypirc",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".password-store",
    ".local/share/keyrings",
    ".config/gcloud",
    ".config/gh",
    ".mozilla",
    ".thunderbird",
    ".config/google-chrome",
    ".config/chromium",
    ".config/BraveSoftware",
    ".config/microsoft-edge",
    ".config/vivaldi",
    ".config/opera",
    "snap/firefox",
    "snap/chromium",
    "Library/Keychains",
    "Library/Application Support/Google/Chrome",
    "Library/Application Support/Firefox",
];

/// The places a read always asks for, whatever the project.
#[derive(Debug, Clone, Default)]
pub struct Protected {
    places: Vec<PathBuf>,
}

impl Protected {
    /// Cairn's home and the usual secret places under the person's home folder (`$HOME`).
    pub fn defaults(cairn_home: &Path) -> Self {
        let mut places = vec![cairn_home.to_path_buf()];
        if let Some(home) = std::env::var_os("HOME").filter(|h| !h.is_empty()) {
            let home = PathBuf::from(home);
            places.extend(SECRET_PLACES.iter().map(|p| home.join(p)));
        }
        Self::new(places)
    }

    /// Exactly `places` (and whatever they contain).
    pub fn new(places: Vec<PathBuf>) -> Self {
        Self {
            places: places.iter().map(|p| real(p)).collect(),
        }
    }

    /// Whether `path` (absolute) is one of the places or inside one.
    pub fn covers(&self, path: &Path) -> bool {
        let path = real(path);
        self.places.iter().any(|place| path.starts_with(place))
    }
}

/// Whether reading `path` (absolute) asks first: outside `project`, or in a protected place.
pub fn read_asks(path: &Path, project: &Path, protected: &Protected) -> bool {
    !inside(path, project) || protected.covers(path)
}

/// Whether `path` (absolute) is `folder` or inside it, links followed.
pub fn inside(path: &Path, folder: &Path) -> bool {
    real(path).starts_with(real(folder))
}

/// Paths outside any folder that a command may name without leaving it: the null device and
/// the standard streams, and where programs are installed (`/usr/bin/env python3`).
const HARMLESS: &[&str] = &[
    "/dev/null",
    "/dev/stdin",
    "/dev/stdout",
    "/dev/stderr",
    "/dev/tty",
    "/bin",
    "/usr/bin",
    "/usr/local/bin",
    "/usr/sbin",
    "/sbin",
];

/// Whether shell `command`, run in `folder`, names a place outside it: an absolute path, a
/// path under `~` or `$HOME`, or one climbing out with `..` (a `cd` with no folder goes home).
/// A reading of the words, not of the shell: it errs on the side of asking.
pub fn command_leaves(command: &str, folder: &Path) -> bool {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let words: Vec<&str> = command
        .split(|c: char| c.is_whitespace() || ";|&<>()`=,".contains(c))
        .map(|w| w.trim_matches(|c| c == '"' || c == '\'' || c == '{' || c == '}'))
        // An address (https://…) is not a place on this disk.
        .filter(|w| !w.is_empty() && !w.contains("://"))
        .collect();
    let bare_cd = command.split(|c: char| ";|&\n".contains(c)).any(|part| {
        matches!(
            part.split_whitespace().collect::<Vec<_>>()[..],
            ["cd"] | ["cd", "~"] | ["cd", "-"]
        )
    });
    bare_cd
        || words.iter().any(|word| {
            let place = if let Some(rest) = word.strip_prefix('~') {
                if !(rest.is_empty() || rest.starts_with('/')) {
                    return true; // ~someone: another person's home
                }
                match &home {
                    Some(home) => home.join(rest.trim_start_matches('/')),
                    None => return true,
                }
            } else if let Some(rest) = word
                .strip_prefix("$HOME")
                .or_else(|| word.strip_prefix("${HOME}"))
            {
                match &home {
                    Some(home) => home.join(rest.trim_start_matches('/')),
                    None => return true,
                }
            } else if word.starts_with('/') {
                PathBuf::from(word)
            } else if Path::new(word)
                .components()
                .any(|c| c == Component::ParentDir)
            {
                folder.join(word)
            } else {
                return false;
            };
            let harmless = HARMLESS.iter().any(|h| lexical(&place).starts_with(h));
            !harmless && !inside(&place, folder)
        })
}

/// `path` as the file system resolves it: symbolic links followed for the part that exists (a
/// link inside the project may point anywhere), `.` and `..` taken out lexically for the rest.
fn real(path: &Path) -> PathBuf {
    let mut existing = lexical(path);
    let mut rest = Vec::new();
    loop {
        if let Ok(resolved) = existing.canonicalize() {
            return rest.iter().rev().fold(resolved, |p, part| p.join(part));
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_owned());
                existing = parent.to_path_buf();
            }
            _ => return lexical(path),
        }
    }
}

/// `path` with `.` and `..` taken out, without asking the file system.
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_inside_the_project_does_not_ask_and_one_outside_does() {
        let project = std::env::temp_dir().join("cairn-access-project");
        let protected = Protected::new(vec![PathBuf::from("/nonexistent/cairn-home")]);
        assert!(!read_asks(
            &project.join("src/main.rs"),
            &project,
            &protected
        ));
        assert!(read_asks(
            &project.join("../elsewhere.txt"),
            &project,
            &protected
        ));
        assert!(read_asks(Path::new("/etc/passwd"), &project, &protected));
        assert!(read_asks(
            &project.join("a/../../cairn-access-project-sibling/x"),
            &project,
            &protected
        ));
    }

    #[test]
    fn a_command_naming_a_place_outside_its_folder_leaves_it() {
        let folder = std::env::temp_dir().join("cairn-access-folder");
        let leaves = |command: &str| command_leaves(command, &folder);
        for stays in [
            "ls",
            "python3 hello.py > out.txt 2>/dev/null",
            "wc -l notes/today.md",
            "/usr/bin/env python3 run.py",
            "curl -s https://example.com/a/b",
            "mkdir -p build && cd build && make",
        ] {
            assert!(!leaves(stays), "{stays}");
        }
        let inside_by_path = format!("cat {}/notes.md", folder.display());
        assert!(!leaves(&inside_by_path));
        for goes in [
            "rm -rf /",
            "cat /etc/passwd",
            "cp a.txt ../a.txt",
            "ls ~",
            "echo x > ~/.bashrc",
            "cat $HOME/.profile",
            "cd; ls",
            "tar czf '/tmp/x.tgz' .",
            "git --git-dir=/srv/repo status",
        ] {
            assert!(leaves(goes), "{goes}");
        }
    }

    #[test]
    fn protected_places_ask_even_inside_the_project() {
        let project = PathBuf::from("/nonexistent/home/me");
        let protected = Protected::new(vec![project.join(".ssh")]);
        assert!(read_asks(
            &project.join(".ssh/id_ed25519"),
            &project,
            &protected
        ));
        assert!(!read_asks(&project.join("notes.md"), &project, &protected));
        assert!(!read_asks(&project.join(".sshrc"), &project, &protected));
    }

    #[test]
    fn a_symbolic_link_out_of_the_project_asks() -> std::io::Result<()> {
        let root = std::env::temp_dir().join(format!("cairn-access-link-{}", std::process::id()));
        let (project, outside) = (root.join("project"), root.join("outside"));
        std::fs::create_dir_all(&project)?;
        std::fs::create_dir_all(&outside)?;
        std::fs::write(outside.join("secret.txt"), "s")?;
        let link = project.join("innocent.txt");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(outside.join("secret.txt"), &link)?;
        let asks = read_asks(&link, &project, &Protected::default());
        std::fs::remove_dir_all(&root)?;
        assert!(
            asks,
            "a link inside the project that points outside it asks"
        );
        Ok(())
    }

    #[test]
    fn the_defaults_cover_cairns_home_and_the_ssh_folder() {
        let cairn_home = PathBuf::from("/nonexistent/cairn-home");
        let protected = Protected::defaults(&cairn_home);
        assert!(protected.covers(&cairn_home.join("runtime.json")));
        if let Some(home) = std::env::var_os("HOME") {
            assert!(protected.covers(&PathBuf::from(home).join(".ssh/id_rsa")));
        }
    }
}

//! Where tasks work: each task has a folder the person sees and may change. A new task works in
//! the folder last used (the most recently updated task's, while it exists), else in the
//! workspace (`[agent] workspace`, default `<home>/workspace`) — never in whatever folder the app
//! happened to be started from.

use std::path::{Path, PathBuf};

use cairn_protocol::settings::FolderListing;

use crate::{Cairn, Error};

impl Cairn {
    /// The workspace new tasks start in: `[agent] workspace` (`~` is the person's home) or
    /// `<home>/workspace`, created when missing.
    pub fn workspace(&self) -> PathBuf {
        let configured = self
            .load_config()
            .ok()
            .and_then(|c| c.agent.workspace)
            .map(|w| self.expand_home(&w));
        let folder = configured.unwrap_or_else(|| self.home().root().join("workspace"));
        if let Err(e) = std::fs::create_dir_all(&folder) {
            tracing::warn!("the workspace {} cannot be made: {e}", folder.display());
        }
        folder
    }

    /// The folder a new task works in: the last one used, else the workspace.
    pub fn default_folder(&self) -> PathBuf {
        self.session_store()
            .headers()
            .into_iter()
            .filter_map(|h| h.folder)
            .find(|f| f.is_dir())
            .unwrap_or_else(|| self.workspace())
    }

    /// `folder` as a task may use it: `~` expanded, made absolute, and an existing folder (the
    /// error says what is wrong in the person's words).
    pub fn checked_folder(&self, folder: &str) -> Result<PathBuf, Error> {
        let folder = folder.trim();
        if folder.is_empty() {
            return Err(Error::Invalid("Choose a folder for the task.".into()));
        }
        let path = self.expand_home(folder);
        if !path.is_absolute() {
            return Err(Error::Invalid(format!(
                "“{folder}” is not a full path: start it with / (or ~ for your home folder)."
            )));
        }
        match std::fs::metadata(&path) {
            Ok(meta) if meta.is_dir() => Ok(path.canonicalize().unwrap_or(path)),
            Ok(_) => Err(Error::Invalid(format!(
                "“{}” is a file, not a folder.",
                path.display()
            ))),
            Err(_) => Err(Error::Invalid(format!(
                "There is no folder “{}”.",
                path.display()
            ))),
        }
    }

    /// The subfolders of `folder` (`~` allowed; empty: the person's home), for choosing where a
    /// task works.
    pub fn folder_listing(&self, folder: &str) -> Result<FolderListing, Error> {
        let folder = match folder.trim() {
            "" => "~",
            other => other,
        };
        let path = self.checked_folder(folder)?;
        let entries = std::fs::read_dir(&path)
            .map_err(|e| Error::Invalid(format!("“{}” cannot be read: {e}", path.display())))?;
        let mut folders: Vec<String> = entries
            .flatten()
            .filter(|e| e.path().is_dir())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|name| !name.starts_with('.'))
            .collect();
        folders.sort_by_key(|name| name.to_lowercase());
        Ok(FolderListing {
            parent: path.parent().map(|p| p.display().to_string()),
            path: path.display().to_string(),
            folders,
        })
    }

    /// `path` with a leading `~` as the person's home folder.
    fn expand_home(&self, path: &str) -> PathBuf {
        let home = (self.env)("HOME").filter(|h| !h.is_empty());
        match (path.strip_prefix('~'), home) {
            (Some(rest), Some(home)) if rest.is_empty() || rest.starts_with('/') => {
                Path::new(&home).join(rest.trim_start_matches('/'))
            }
            _ => PathBuf::from(path),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::sync::Arc;

    use cairn_agent::Session;
    use cairn_config::Home;

    use super::*;

    fn cairn(home: &Path, person: &Path) -> Cairn {
        let person = person.display().to_string();
        Cairn::with_env(
            Home::at(home),
            Arc::new(move |name| (name == "HOME").then(|| person.clone())),
        )
    }

    #[test]
    fn a_new_task_works_in_the_last_folder_used_else_the_workspace() {
        let (home, person, project) = (
            tempfile::tempdir().unwrap(),
            tempfile::tempdir().unwrap(),
            tempfile::tempdir().unwrap(),
        );
        let cairn = cairn(home.path(), person.path());
        let workspace = home.path().join("workspace");
        assert_eq!(cairn.default_folder(), workspace);
        assert!(workspace.is_dir());

        let store = cairn.session_store();
        let mut older = Session::empty("older", true, 1);
        older.folder = Some(project.path().to_path_buf());
        store.save(&older).unwrap();
        assert_eq!(cairn.default_folder(), project.path());
        // A folder since removed is passed over.
        let mut newer = Session::empty("newer", true, 2);
        newer.folder = Some(project.path().join("gone"));
        store.save(&newer).unwrap();
        assert_eq!(cairn.default_folder(), project.path());
    }

    #[test]
    fn a_folder_is_checked_and_said_plainly() {
        let (home, person) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        std::fs::create_dir(person.path().join("notes")).unwrap();
        std::fs::write(person.path().join("a.txt"), "x").unwrap();
        let cairn = cairn(home.path(), person.path());
        assert_eq!(
            cairn.checked_folder("~/notes").unwrap(),
            person.path().join("notes").canonicalize().unwrap()
        );
        let said = |f: &str| cairn.checked_folder(f).unwrap_err().to_string();
        assert!(
            said("notes").contains("not a full path"),
            "{}",
            said("notes")
        );
        assert!(said("~/a.txt").contains("is a file"));
        assert!(said("~/missing").starts_with("There is no folder"));
        assert_eq!(said(" "), "Choose a folder for the task.");
    }

    #[test]
    fn a_folder_lists_its_subfolders_without_hidden_ones() {
        let (home, person) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        for dir in ["b-notes", "A-src", ".secret"] {
            std::fs::create_dir(person.path().join(dir)).unwrap();
        }
        std::fs::write(person.path().join("file.txt"), "x").unwrap();
        let listing = cairn(home.path(), person.path())
            .folder_listing("")
            .unwrap();
        assert_eq!(listing.folders, ["A-src", "b-notes"]);
        assert_eq!(
            listing.path,
            person.path().canonicalize().unwrap().display().to_string()
        );
        assert!(listing.parent.is_some());
    }
}

//! The data home (`$CAIRN_HOME`, default `~/.cairn`) and the paths inside it.

use std::path::{Path, PathBuf};

use cairn_protocol::Paths;

use crate::ConfigError;

/// Where Cairn keeps config, databases, models and logs. Built from an injected environment lookup so
/// tests never touch the real `~`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Home {
    root: PathBuf,
    config_file: PathBuf,
}

impl Home {
    /// A home rooted at `root`, with the config file at `root/config.toml`.
    pub fn at(root: impl Into<PathBuf>) -> Self {
        let root = root.into();
        Self {
            config_file: root.join("config.toml"),
            root,
        }
    }

    /// Resolves the home from environment variables: `CAIRN_HOME` (else `$HOME/.cairn`) and
    /// `CAIRN_CONFIG` for the config file.
    pub fn from_env(env: impl Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let non_empty = |name: &str| env(name).filter(|v| !v.trim().is_empty());
        let root = match non_empty("CAIRN_HOME") {
            Some(home) => PathBuf::from(home),
            None => PathBuf::from(non_empty("HOME").ok_or(ConfigError::NoHome)?).join(".cairn"),
        };
        let home = Self::at(root);
        Ok(match non_empty("CAIRN_CONFIG") {
            Some(file) => home.with_config_file(file),
            None => home,
        })
    }

    /// Resolves the home from this process's environment.
    pub fn from_process_env() -> Result<Self, ConfigError> {
        Self::from_env(|name| std::env::var(name).ok())
    }

    /// The same home with another config file (`--config`).
    pub fn with_config_file(mut self, file: impl Into<PathBuf>) -> Self {
        self.config_file = file.into();
        self
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn config_file(&self) -> &Path {
        &self.config_file
    }

    /// `runtime.json`: the running API's address, token and pid.
    pub fn runtime_file(&self) -> PathBuf {
        self.root.join("runtime.json")
    }

    pub fn logs_dir(&self) -> PathBuf {
        self.root.join("logs")
    }

    pub fn models_dir(&self) -> PathBuf {
        self.root.join("models")
    }

    /// What Cairn can rebuild at any time (the local model's evaluated prompts): safe to delete.
    pub fn cache_dir(&self) -> PathBuf {
        self.root.join("cache")
    }

    /// Databases (memory, sessions).
    pub fn data_dir(&self) -> PathBuf {
        self.root.join("data")
    }

    /// Creates the home and its folders, private to the user.
    pub fn ensure_dirs(&self) -> Result<(), ConfigError> {
        for dir in [
            self.root.clone(),
            self.logs_dir(),
            self.models_dir(),
            self.data_dir(),
        ] {
            std::fs::create_dir_all(&dir).map_err(|e| ConfigError::io(&dir, e))?;
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700))
                    .map_err(|e| ConfigError::io(&dir, e))?;
            }
        }
        Ok(())
    }

    /// The paths as reported by `cairn status`.
    pub fn paths(&self) -> Paths {
        let show = |p: &Path| p.display().to_string();
        Paths {
            home: show(&self.root),
            config: show(&self.config_file),
            runtime: show(&self.runtime_file()),
            logs: show(&self.logs_dir()),
            models: show(&self.models_dir()),
            data: show(&self.data_dir()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| (*v).to_owned())
        }
    }

    #[test]
    fn defaults_to_dot_cairn_in_the_user_home() -> Result<(), ConfigError> {
        let home = Home::from_env(env(&[("HOME", "/home/ada")]))?;
        assert_eq!(home.root(), Path::new("/home/ada/.cairn"));
        assert_eq!(
            home.config_file(),
            Path::new("/home/ada/.cairn/config.toml")
        );
        assert_eq!(
            home.runtime_file(),
            Path::new("/home/ada/.cairn/runtime.json")
        );
        Ok(())
    }

    #[test]
    fn cairn_home_and_cairn_config_override() -> Result<(), ConfigError> {
        let home = Home::from_env(env(&[
            ("HOME", "/home/ada"),
            ("CAIRN_HOME", "/data/cairn"),
            ("CAIRN_CONFIG", "/etc/cairn.toml"),
        ]))?;
        assert_eq!(home.root(), Path::new("/data/cairn"));
        assert_eq!(home.config_file(), Path::new("/etc/cairn.toml"));
        Ok(())
    }

    #[test]
    fn no_home_at_all_is_a_clear_error() {
        assert!(matches!(Home::from_env(env(&[])), Err(ConfigError::NoHome)));
    }
}

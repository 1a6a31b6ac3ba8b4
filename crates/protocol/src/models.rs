//! Models: Cairn's own models (kinds, install progress) and the model servers' addresses and
//! connection tests.

use serde::{Deserialize, Serialize};

/// What is wrong with a model server's address as a person typed it, if anything (an empty
/// address is the kind's default). Checked where it is typed, and again where it is saved.
pub fn base_url_problem(url: &str) -> Option<&'static str> {
    let url = url.trim();
    if url.is_empty() {
        return None;
    }
    let rest = url
        .strip_prefix("http://")
        .or_else(|| url.strip_prefix("https://"));
    match rest {
        None => Some("Start the address with http:// or https://, e.g. http://127.0.0.1:8080/v1."),
        Some(host)
            if host.is_empty() || host.starts_with('/') || host.contains(char::is_whitespace) =>
        {
            Some("The address needs a host after http://, e.g. http://127.0.0.1:8080/v1.")
        }
        Some(_) => None,
    }
}

/// What a connection test of a configured provider found (Settings, the first run, `/model`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConnectionTest {
    pub ok: bool,
    /// The models the server lists (empty when it cannot list them).
    pub models: Vec<String>,
    pub message: String,
}

/// What one of Cairn's own models is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ModelKind {
    /// Answers and calls tools (`local/<name>`).
    Language,
    /// Turns text into vectors for the memory's search by meaning.
    Embedding,
    /// Transcribes the microphone.
    Speech,
}

/// One of Cairn's own models, as `cairn models list` and Settings show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LocalModelInfo {
    /// The name in the catalogue (`local/<name>` for a language model).
    pub name: String,
    pub kind: ModelKind,
    /// The upstream model's own name.
    pub label: String,
    pub licence: String,
    pub note: String,
    /// Its files' size once installed.
    pub bytes: u64,
    /// Whether this is the model of its kind Cairn uses when none is configured.
    pub default: bool,
    pub installed: bool,
    /// Installed, of its pinned size and checksum.
    pub whole: bool,
    /// In memory in this process now.
    pub loaded: bool,
    pub path: String,
    /// Why it cannot run on this machine even when whole (a language model whose host program
    /// is missing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cannot_run: Option<String>,
}

/// How an install of one of Cairn's models is going, for a progress bar.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct InstallProgress {
    pub phase: InstallPhase,
    /// Bytes done in this phase, of `total`.
    pub done: u64,
    pub total: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InstallPhase {
    Download,
    /// Joining the parts into the model file and checking it.
    Assemble,
    Done,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_model_server_address_needs_its_scheme_and_a_host() {
        assert_eq!(base_url_problem(""), None);
        assert_eq!(base_url_problem("http://127.0.0.1:8080/v1"), None);
        assert_eq!(base_url_problem(" https://api.openai.com/v1 "), None);
        assert!(base_url_problem("localhost:11434")
            .is_some_and(|p| p.starts_with("Start the address with http://")));
        assert!(base_url_problem("127.0.0.1:8080/v1").is_some());
        assert!(base_url_problem("http://").is_some_and(|p| p.contains("host")));
        assert!(base_url_problem("http://my host/v1").is_some());
    }
}

//! The error body every API route and Tauri command returns on failure.

use serde::{Deserialize, Serialize};

/// The error body every API route and Tauri command returns on failure.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiError {
    /// A stable code the UI can branch on, e.g. `unauthorized`, `forbidden_origin`.
    pub code: String,
    /// A sentence for a person.
    pub message: String,
}

impl ApiError {
    pub fn new(code: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            code: code.into(),
            message: message.into(),
        }
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.message, self.code)
    }
}

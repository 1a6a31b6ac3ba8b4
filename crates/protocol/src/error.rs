//! The crate's errors: the body every API route and Tauri command returns on failure, and a name
//! that is not one of a closed set's.

use serde::{Deserialize, Serialize};

wire_enum! {
    /// What kind of failure an `ApiError` is: what a client can act on.
    pub enum ErrorCode {
        /// The request itself is wrong: fix it.
        BadRequest = "bad_request",
        /// No such task, memory, provider, endpoint….
        NotFound = "not_found",
        /// Something went wrong on Cairn's side.
        Internal = "internal",
        /// No bearer token, or the wrong one.
        Unauthorized = "unauthorized",
        /// The request was addressed to a host that is not this machine.
        ForbiddenHost = "forbidden_host",
        /// The request came from a web page on another origin.
        ForbiddenOrigin = "forbidden_origin",
        /// The token was put in the URL.
        CredentialsInUrl = "credentials_in_url",
        /// The server holds as many streams or tasks as it may.
        TooMany = "too_many",
        /// The same work is running already (a scan).
        Busy = "busy",
        /// The `cairn` command is not beside the app, so hooks have nothing to run.
        NoCli = "no_cli",
        /// A desktop window could not be opened or changed.
        Window = "window",
        /// The voice capture failed.
        Voice = "voice",
        /// The UI could not encode a command's arguments.
        Encode = "encode",
        /// The UI could not read a command's answer.
        Decode = "decode",
        /// The desktop shell did not answer as a command does.
        Ipc = "ipc",
    }
}

/// The error body every API route and Tauri command returns on failure.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiError {
    /// A stable code the UI can branch on.
    pub code: ErrorCode,
    /// A sentence for a person.
    pub message: String,
}

impl ApiError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.message, self.code)
    }
}

/// A name that is not one of a closed set's, as a person or a client typed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParseError {
    /// Not a memory layer.
    UnknownLayer(String),
    /// Not one of a `wire_enum!` set's names (`set` is the type's name, `allowed` its names).
    Unknown {
        set: &'static str,
        name: String,
        allowed: &'static [&'static str],
    },
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::UnknownLayer(name) => {
                write!(f, "unknown layer {name:?}: use L1, L2, L3 or skill")
            }
            Self::Unknown { set, name, allowed } => {
                write!(f, "unknown {set} {name:?}: use {}", allowed.join(", "))
            }
        }
    }
}

impl std::error::Error for ParseError {}

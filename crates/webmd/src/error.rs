//! Why a page could not be given as Markdown, in fetch_content's three classes: each says whether
//! the model should fix its call (`usage`), try another page or later (`input`), or give up on this
//! one (`conversion`).

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// Not an HTML page, too large, undecodable, or the Markdown could not be written.
    #[error("{0}")]
    Conversion(String),
    /// The page could not be had: unreachable, too slow, an error status, too many redirections,
    /// or robots.txt forbids it.
    #[error("{0}")]
    Input(String),
    /// The URL, or a redirection or robots.txt on the way, points at this computer or a private
    /// network (loopback, link-local, private, unique-local, unspecified, multicast or broadcast
    /// addresses, after DNS resolution) and its host is not allowed. The text is the same whatever
    /// is, or is not, listening there.
    #[error("{url} is refused: it points at this computer or a private network (add its host to [agent] fetch_allow_hosts to allow it)")]
    Refused {
        /// The refused URL.
        url: String,
    },
    /// The call itself is wrong: a missing or unusable URL, an unknown option value.
    #[error("{0}")]
    Usage(String),
}

impl Error {
    /// The spec's error number.
    pub fn code(&self) -> u8 {
        match self {
            Self::Conversion(_) => 1,
            Self::Input(_) | Self::Refused { .. } => 2,
            Self::Usage(_) => 3,
        }
    }

    /// The spec's class name.
    pub fn class(&self) -> &'static str {
        match self {
            Self::Conversion(_) => "conversion",
            Self::Input(_) | Self::Refused { .. } => "input",
            Self::Usage(_) => "usage",
        }
    }
}

//! Web pages as Markdown, for fetch_content: [`Fetcher`] downloads a page the polite way (robots.txt,
//! limits) and decodes it, never from this computer or a private network unless its host is in
//! [`Fetcher::allow_hosts`] (else [`Error::Refused`]); [`to_markdown`] keeps its content and writes
//! it as Markdown.

mod clean;
mod error;
mod fetch;
mod guard;
mod markdown;
mod robots;

pub use error::Error;
pub use fetch::{decode, parse_url, Fetcher, Page};
pub use markdown::{to_markdown, Options, Tables};

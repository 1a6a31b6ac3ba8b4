//! fetch_content's download and conversion: fixture pages converted whole, and pages served on
//! 127.0.0.1 by an in-process server (charsets, robots.txt, redirections, limits), and the refusal
//! of this computer and private networks.

mod convert;
mod fetch;
mod guard;

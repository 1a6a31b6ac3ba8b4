//! The download: the URL as the model wrote it repaired, redirections followed by hand (robots.txt
//! is asked before each target), the whole fetch under one deadline, the body capped, the bytes
//! decoded in the spec's order (BOM, header, `<meta>`, valid UTF-8, windows-1252). Every hop, and
//! every robots.txt, goes through [`crate::guard`]: no connection to this computer or a private
//! network unless the host is in [`Fetcher::allow_hosts`].

use std::time::Duration;

use encoding_rs::{Encoding, UTF_8, WINDOWS_1252};
use reqwest::header::{CONTENT_LENGTH, CONTENT_TYPE, LOCATION};
use url::Url;

use crate::guard::{is_refusal, refused, AllowList, Guard};
use crate::robots::{self, short_error};
use crate::Error;

/// A page, decoded.
#[derive(Debug, Clone)]
pub struct Page {
    /// Where the page was found, after redirections.
    pub url: Url,
    pub html: String,
}

/// How pages are fetched; the defaults are the spec's.
#[derive(Debug, Clone)]
pub struct Fetcher {
    /// The whole fetch: robots.txt, redirections, the body.
    pub timeout: Duration,
    /// Larger pages are refused.
    pub max_bytes: usize,
    pub max_redirections: usize,
    /// The `User-Agent`, whose first word is the robots.txt product token.
    pub user_agent: String,
    /// Hosts that may be on this computer or a private network (an intranet wiki, a local docs
    /// server): host names or IP literals, compared case-insensitively; `*.example.com` allows its
    /// subdomains. An IP literal allows only URLs naming that IP, not names that resolve to it.
    /// Every other host is refused ([`Error::Refused`]) when it is, or resolves to, a loopback,
    /// link-local, private, unique-local, unspecified, multicast or broadcast address. Empty by
    /// default.
    pub allow_hosts: Vec<String>,
}

impl Default for Fetcher {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(30),
            max_bytes: 5 * 1024 * 1024,
            max_redirections: 10,
            user_agent: format!("cairn/{}", env!("CARGO_PKG_VERSION")),
            allow_hosts: Vec::new(),
        }
    }
}

impl Fetcher {
    /// Downloads `url` (an http or https URL, see [`parse_url`]).
    /// Whether `url`'s host is on [`Fetcher::allow_hosts`] (the person let it be read without
    /// asking, private addresses included).
    pub fn allows(&self, url: &Url) -> bool {
        url.host_str()
            .is_some_and(|host| AllowList::new(&self.allow_hosts).allows(host))
    }

    pub async fn fetch(&self, url: &Url) -> Result<Page, Error> {
        let seconds = self.timeout.as_secs_f64();
        match tokio::time::timeout(self.timeout, self.fetch_unbounded(url)).await {
            Ok(result) => result,
            Err(_) => Err(Error::Input(format!(
                "{url} did not answer within {} s",
                trim_float(seconds)
            ))),
        }
    }

    /// The client connects only to addresses the guard's resolver vetted; proxies from the
    /// environment are off because a proxy resolves names itself, which would bypass the check.
    async fn fetch_unbounded(&self, url: &Url) -> Result<Page, Error> {
        let guard = Guard::new(&self.allow_hosts);
        let client = reqwest::Client::builder()
            .user_agent(&self.user_agent)
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .dns_resolver(guard.resolver())
            .build()
            .map_err(|e| Error::Input(format!("cannot start an HTTP client: {e}")))?;
        let agent = self
            .user_agent
            .split('/')
            .next()
            .unwrap_or("cairn")
            .to_owned();
        let mut url = url.clone();
        let mut redirections = 0;
        loop {
            guard.check_literal(&url)?;
            robots::check(&client, &guard, &agent, &url).await?;
            let response = client.get(url.clone()).send().await.map_err(|e| {
                if is_refusal(&e) {
                    refused(&url)
                } else {
                    Error::Input(format!("{url} is unreachable: {}", short_error(&e)))
                }
            })?;
            let status = response.status();
            if status.is_redirection() {
                if let Some(location) = response
                    .headers()
                    .get(LOCATION)
                    .and_then(|l| l.to_str().ok())
                {
                    if redirections == self.max_redirections {
                        return Err(Error::Input(format!(
                            "more than {} redirections from {url}",
                            self.max_redirections
                        )));
                    }
                    url = url.join(location).map_err(|e| {
                        Error::Input(format!(
                            "{url} redirects to an unusable URL {location:?}: {e}"
                        ))
                    })?;
                    if !matches!(url.scheme(), "http" | "https") {
                        return Err(Error::Input(format!(
                            "redirected to {url}, which is not http or https"
                        )));
                    }
                    redirections += 1;
                    continue;
                }
            }
            if !status.is_success() {
                return Err(Error::Input(
                    format!(
                        "HTTP {} {} from {url}",
                        status.as_u16(),
                        status.canonical_reason().unwrap_or("")
                    )
                    .replace("  ", " "),
                ));
            }
            let content_type = response
                .headers()
                .get(CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .filter(|v| !v.trim().is_empty())
                .map(str::to_owned);
            let declared_length = response
                .headers()
                .get(CONTENT_LENGTH)
                .and_then(|v| v.to_str().ok()?.trim().parse::<u64>().ok());
            if let Some(mime) = content_type.as_deref().map(mime_of) {
                if !matches!(mime.as_str(), "text/html" | "application/xhtml+xml") {
                    return Err(Error::Conversion(format!(
                        "{url} is not an HTML page (Content-Type: {mime})"
                    )));
                }
            }
            if declared_length.is_some_and(|n| n > self.max_bytes as u64) {
                return Err(self.too_large(&url));
            }
            let body = self.read_body(response, &url).await?;
            if content_type.is_none() && !looks_like_html(&body) {
                return Err(Error::Conversion(format!(
                    "{url} is not an HTML page (no Content-Type, and the content is not HTML)"
                )));
            }
            let html = decode(&body, content_type.as_deref());
            return Ok(Page { url, html });
        }
    }

    async fn read_body(
        &self,
        mut response: reqwest::Response,
        url: &Url,
    ) -> Result<Vec<u8>, Error> {
        let mut body = Vec::new();
        loop {
            match response.chunk().await {
                Ok(Some(chunk)) => {
                    if body.len() + chunk.len() > self.max_bytes {
                        return Err(self.too_large(url));
                    }
                    body.extend_from_slice(&chunk);
                }
                Ok(None) => return Ok(body),
                Err(e) => {
                    return Err(Error::Input(format!(
                        "{url} broke off while sending the page: {}",
                        short_error(&e)
                    )))
                }
            }
        }
    }

    fn too_large(&self, url: &Url) -> Error {
        Error::Conversion(format!(
            "{url} is larger than {} MiB",
            trim_float(self.max_bytes as f64 / (1024.0 * 1024.0))
        ))
    }
}

/// The URL as the model wrote it, repaired: no scheme means https, `https//` gets its colon.
pub fn parse_url(raw: &str) -> Result<Url, Error> {
    let raw = raw.trim();
    if raw.is_empty() {
        return Err(Error::Usage("the url is empty".into()));
    }
    let lower = raw.to_ascii_lowercase();
    let repaired = if lower.contains("://") {
        raw.to_owned()
    } else if let Some(rest) = ["https//", "http//"]
        .iter()
        .find_map(|p| lower.starts_with(p).then(|| &raw[p.len()..]))
    {
        let scheme = if lower.starts_with("https") {
            "https"
        } else {
            "http"
        };
        format!("{scheme}://{rest}")
    } else if ["mailto:", "ftp:", "file:", "data:", "javascript:", "about:"]
        .iter()
        .any(|s| lower.starts_with(s))
    {
        raw.to_owned()
    } else {
        format!("https://{raw}")
    };
    let url =
        Url::parse(&repaired).map_err(|e| Error::Usage(format!("{raw:?} is not a URL: {e}")))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(Error::Usage(format!(
            "{raw:?} uses {}: — only http and https pages can be fetched",
            url.scheme()
        )));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(Error::Usage(format!("{raw:?} names no host")));
    }
    Ok(url)
}

/// `type/subtype` of a Content-Type, lowercased.
fn mime_of(content_type: &str) -> String {
    content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

/// No Content-Type: HTML when the first tag is one of a page's.
fn looks_like_html(body: &[u8]) -> bool {
    let head = &body[..body.len().min(1024)];
    let head = String::from_utf8_lossy(head).to_ascii_lowercase();
    let start = head.trim_start_matches(['\u{feff}', ' ', '\t', '\n', '\r']);
    start.starts_with('<')
        && [
            "<!doctype html",
            "<html",
            "<head",
            "<body",
            "<title",
            "<p",
            "<div",
            "<h1",
            "<meta",
        ]
        .iter()
        .any(|tag| start.contains(tag))
}

/// The bytes as text: BOM, the header's charset, a `<meta>` charset in the first 4 KiB, UTF-8 when
/// valid, else windows-1252. Unknown names are skipped.
pub fn decode(body: &[u8], content_type: Option<&str>) -> String {
    if let Some((encoding, bom)) = Encoding::for_bom(body) {
        return encoding
            .decode_without_bom_handling(&body[bom..])
            .0
            .into_owned();
    }
    let declared = content_type
        .and_then(charset_parameter)
        .and_then(|label| Encoding::for_label(label.as_bytes()))
        .or_else(|| meta_charset(&body[..body.len().min(4096)]));
    let encoding = match declared {
        Some(encoding) => encoding,
        None if std::str::from_utf8(body).is_ok() => UTF_8,
        None => WINDOWS_1252,
    };
    encoding.decode_without_bom_handling(body).0.into_owned()
}

fn charset_parameter(content_type: &str) -> Option<String> {
    content_type.split(';').skip(1).find_map(|param| {
        let (name, value) = param.split_once('=')?;
        name.trim()
            .eq_ignore_ascii_case("charset")
            .then(|| value.trim().trim_matches(['"', '\'']).to_owned())
    })
}

/// `<meta charset="x">` or `<meta http-equiv="Content-Type" content="…; charset=x">`.
fn meta_charset(head: &[u8]) -> Option<&'static Encoding> {
    let text = String::from_utf8_lossy(head).to_ascii_lowercase();
    let mut rest = text.as_str();
    while let Some(at) = rest.find("<meta") {
        let tag_end = rest[at..].find('>').map_or(rest.len(), |end| at + end);
        let tag = &rest[at..tag_end];
        if let Some(pos) = tag.find("charset=") {
            let value: String = tag[pos + "charset=".len()..]
                .trim_start_matches(['"', '\'', ' '])
                .chars()
                .take_while(|c| !matches!(c, '"' | '\'' | ' ' | ';' | '/' | '>'))
                .collect();
            if let Some(encoding) = Encoding::for_label(value.as_bytes()) {
                // A page that says UTF-16 in ASCII bytes is not UTF-16 (HTML's own rule).
                return Some(if encoding.is_single_byte() || encoding == UTF_8 {
                    encoding
                } else if encoding.name().starts_with("UTF-16") {
                    UTF_8
                } else {
                    encoding
                });
            }
        }
        rest = &rest[tag_end..];
    }
    None
}

fn trim_float(value: f64) -> String {
    let text = format!("{value:.1}");
    text.trim_end_matches(".0").to_owned()
}

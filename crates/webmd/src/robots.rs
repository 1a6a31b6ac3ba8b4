//! robots.txt (RFC 9309) for fetch_content: read before a page and before every redirection target,
//! for Cairn's product token (else the `*` group), and kept a day per origin. A 4xx robots.txt
//! allows everything; a 5xx or an unreachable one forbids everything. robots.txt and its
//! redirections are held to the same guard as pages: a refused address is refused (and not kept),
//! never read.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};
use std::time::{Duration, Instant};

use texting_robots::Robot;
use url::Url;

use crate::guard::{is_refusal, refused, Guard};
use crate::Error;

/// How long an origin's answer is kept.
const KEPT: Duration = Duration::from_secs(24 * 60 * 60);
/// RFC 9309: a crawler must read at least 500 KiB; more is ignored.
const MAX_ROBOTS_BYTES: usize = 500 * 1024;

/// What an origin's robots.txt says.
#[derive(Clone)]
enum Rules {
    /// No robots.txt (4xx), or nothing it forbids us.
    AllowAll,
    /// Unreachable or failing (5xx): the reason.
    DenyAll(String),
    Parsed(Arc<Robot>),
}

static CACHE: LazyLock<Mutex<HashMap<String, (Instant, Rules)>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// `Ok` when `url` may be fetched by `agent`; else why not, as an input error, or
/// [`Error::Refused`] when robots.txt is, or redirects to, a refused address. `client` must be
/// built with `guard`'s resolver.
pub async fn check(
    client: &reqwest::Client,
    guard: &Guard,
    agent: &str,
    url: &Url,
) -> Result<(), Error> {
    let origin = url.origin().ascii_serialization();
    let cached = CACHE.lock().ok().and_then(|cache| {
        cache
            .get(&origin)
            .filter(|(at, _)| at.elapsed() < KEPT)
            .map(|(_, rules)| rules.clone())
    });
    let rules = match cached {
        Some(rules) => rules,
        None => {
            let rules = read(client, guard, agent, url, &origin).await?;
            if let Ok(mut cache) = CACHE.lock() {
                cache.insert(origin.clone(), (Instant::now(), rules.clone()));
            }
            rules
        }
    };
    match rules {
        Rules::AllowAll => Ok(()),
        Rules::DenyAll(reason) => Err(Error::Input(format!(
            "robots.txt of {origin} cannot be read ({reason}), which forbids every page"
        ))),
        Rules::Parsed(robot) => {
            if robot.allowed(url.as_str()) {
                Ok(())
            } else {
                let mut path = url.path().to_owned();
                if let Some(query) = url.query() {
                    path.push('?');
                    path.push_str(query);
                }
                Err(Error::Input(format!(
                    "robots.txt of {origin} forbids {path}"
                )))
            }
        }
    }
}

/// The rules of `origin` (the origin of `page`). A refusal names `page` while robots.txt is on the
/// page's host, else the refused redirection target.
async fn read(
    client: &reqwest::Client,
    guard: &Guard,
    agent: &str,
    page: &Url,
    origin: &str,
) -> Result<Rules, Error> {
    let mut target = match Url::parse(&format!("{origin}/robots.txt")) {
        Ok(url) => url,
        Err(e) => return Ok(Rules::DenyAll(format!("unusable URL: {e}"))),
    };
    let refusal = |target: &Url| {
        if target.host() == page.host() {
            refused(page)
        } else {
            refused(target)
        }
    };
    // robots.txt's own redirections are followed (RFC 9309 §2.3.1.2: at least five).
    for _ in 0..=5 {
        if guard.check_literal(&target).is_err() {
            return Err(refusal(&target));
        }
        let response = match client.get(target.clone()).send().await {
            Ok(r) => r,
            Err(e) if is_refusal(&e) => return Err(refusal(&target)),
            Err(e) => return Ok(Rules::DenyAll(format!("unreachable: {}", short_error(&e)))),
        };
        let status = response.status();
        if status.is_redirection() {
            let next = response
                .headers()
                .get(reqwest::header::LOCATION)
                .and_then(|l| l.to_str().ok())
                .and_then(|l| target.join(l).ok());
            match next {
                Some(next) => {
                    target = next;
                    continue;
                }
                None => return Ok(Rules::AllowAll),
            }
        }
        if status.is_client_error() {
            return Ok(Rules::AllowAll);
        }
        if !status.is_success() {
            return Ok(Rules::DenyAll(format!("HTTP {}", status.as_u16())));
        }
        let body = match read_capped(response, MAX_ROBOTS_BYTES).await {
            Ok(body) => body,
            Err(e) => return Ok(Rules::DenyAll(format!("unreachable: {}", short_error(&e)))),
        };
        return Ok(match Robot::new(agent, &body) {
            Ok(robot) => Rules::Parsed(Arc::new(robot)),
            // Nothing parsable: no rule applies.
            Err(_) => Rules::AllowAll,
        });
    }
    Ok(Rules::DenyAll("too many redirections".into()))
}

/// At most `max` bytes of the body; the rest is not read.
async fn read_capped(
    mut response: reqwest::Response,
    max: usize,
) -> Result<Vec<u8>, reqwest::Error> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await? {
        let room = max.saturating_sub(body.len());
        body.extend_from_slice(&chunk[..chunk.len().min(room)]);
        if body.len() >= max {
            break;
        }
    }
    Ok(body)
}

/// A network error's cause without reqwest's URL prefix.
pub(crate) fn short_error(e: &reqwest::Error) -> String {
    let mut cause: &dyn std::error::Error = e;
    while let Some(inner) = cause.source() {
        cause = inner;
    }
    cause.to_string()
}

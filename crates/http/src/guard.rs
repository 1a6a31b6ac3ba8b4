//! Request guards: the per-run bearer token (compared in constant time) and the DNS-rebinding and
//! cross-site checks on `Host` and `Origin`, and the refusals the guards and routes answer with.

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Json;
use cairn_protocol::openai::OpenAiError;
use cairn_protocol::{ApiError, ErrorCode};
use subtle::ConstantTimeEq;

use crate::server::HttpError;

/// A 256-bit secret, fresh for each run, shown as 64 hex digits.
#[derive(Clone)]
pub struct Token(String);

impl Token {
    /// Draws a new token from the operating system's random source.
    pub fn generate() -> Result<Self, HttpError> {
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes).map_err(|e| HttpError::Random(e.to_string()))?;
        Ok(Self(hex::encode(bytes)))
    }

    /// A known token, for tests.
    pub fn from_string(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether `candidate` is this token, in time independent of where they differ.
    pub fn matches(&self, candidate: &str) -> bool {
        same_secret(&self.0, candidate)
    }
}

/// Whether two secrets are equal, in time independent of where they differ.
pub(crate) fn same_secret(known: &str, candidate: &str) -> bool {
    known.as_bytes().ct_eq(candidate.as_bytes()).into()
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(…)")
    }
}

pub(crate) fn refuse(status: StatusCode, code: ErrorCode, message: &str) -> Response {
    (status, Json(ApiError::new(code, message))).into_response()
}

/// Refuses requests whose `Host` is not a loopback name (DNS rebinding) or whose `Origin` is a web
/// page that is not Cairn's own UI or a loopback page.
pub(crate) async fn same_machine_only(request: Request, next: Next) -> Response {
    let headers = request.headers();
    let mut hosts = headers.get_all(header::HOST).iter();
    let host = hosts.next().map(|v| v.to_str().unwrap_or("\u{fffd}"));
    let one_host = hosts.next().is_none();
    if let Some(host) = host {
        if !one_host || !is_loopback_authority(host) {
            return refuse(
                StatusCode::FORBIDDEN,
                ErrorCode::ForbiddenHost,
                "this API answers only requests addressed to 127.0.0.1 or localhost",
            );
        }
    }
    if let Some(origin) = header_str(headers, header::ORIGIN.as_str()) {
        if !is_allowed_origin(origin) {
            return refuse(
                StatusCode::FORBIDDEN,
                ErrorCode::ForbiddenOrigin,
                "requests from web pages on other origins are refused",
            );
        }
    }
    next.run(request).await
}

/// Query parameters that would carry a credential.
const CREDENTIAL_PARAMS: &[&str] = &["token", "access_token", "api_key", "apikey", "key", "auth"];

/// Refuses a request carrying a credential in its URL, where it would end up in logs and browser
/// history: the token goes in the `Authorization` header only.
pub(crate) async fn no_credentials_in_url(request: Request, next: Next) -> Response {
    let in_url = request.uri().query().is_some_and(|query| {
        query.split('&').any(|pair| {
            let name = pair.split('=').next().unwrap_or("");
            CREDENTIAL_PARAMS.contains(&name.to_ascii_lowercase().as_str())
        })
    });
    if in_url {
        return refuse(
            StatusCode::BAD_REQUEST,
            ErrorCode::CredentialsInUrl,
            "never put the token in a URL: send it as Authorization: Bearer <token>",
        );
    }
    next.run(request).await
}

/// Lets a request through only with `Authorization: Bearer <token>`.
pub(crate) async fn require_token(
    State(token): State<Token>,
    request: Request,
    next: Next,
) -> Response {
    match bearer(request.headers()) {
        Some(candidate) if token.matches(candidate) => next.run(request).await,
        Some(_) => refuse(
            StatusCode::UNAUTHORIZED,
            ErrorCode::Unauthorized,
            "the token is wrong",
        ),
        None => refuse(
            StatusCode::UNAUTHORIZED,
            ErrorCode::Unauthorized,
            "send Authorization: Bearer <token>; the token is in runtime.json in Cairn's home",
        ),
    }
}

/// The credential of `Authorization: Bearer <credential>`, if the request carries one.
pub(crate) fn bearer(headers: &HeaderMap) -> Option<&str> {
    header_str(headers, header::AUTHORIZATION.as_str())
        .and_then(|value| value.strip_prefix("Bearer "))
        .map(str::trim)
}

/// An API error as its status and JSON body (an internal one is logged).
pub(crate) fn api_error(e: &cairn_api::Error) -> Response {
    let status = match e.kind() {
        cairn_api::ErrorKind::BadRequest => StatusCode::BAD_REQUEST,
        cairn_api::ErrorKind::NotFound => StatusCode::NOT_FOUND,
        cairn_api::ErrorKind::Busy => StatusCode::CONFLICT,
        cairn_api::ErrorKind::Internal => StatusCode::INTERNAL_SERVER_ERROR,
    };
    if status == StatusCode::INTERNAL_SERVER_ERROR {
        tracing::error!("an API operation failed: {e}");
    }
    (status, Json(e.to_api_error())).into_response()
}

/// A request body that is not the JSON the route takes.
pub(crate) fn bad_body(e: &axum::extract::rejection::JsonRejection) -> Response {
    refuse(
        StatusCode::BAD_REQUEST,
        ErrorCode::BadRequest,
        &e.body_text(),
    )
}

/// A refusal in OpenAI's error shape, for the `/v1` routes, whose clients read only that shape.
pub(crate) fn openai_error(
    status: StatusCode,
    kind: &str,
    code: &str,
    message: impl Into<String>,
) -> Response {
    (status, Json(OpenAiError::new(kind, code, message))).into_response()
}

fn header_str<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).map(|v| v.to_str().unwrap_or("\u{fffd}"))
}

/// `host[:port]` where host is 127.0.0.1, localhost or [::1].
fn is_loopback_authority(authority: &str) -> bool {
    let host = if let Some(rest) = authority.strip_prefix('[') {
        match rest.split_once(']') {
            Some((host, port)) if port.is_empty() || is_port(port) => host,
            _ => return false,
        }
    } else {
        match authority.split_once(':') {
            Some((host, port)) if is_port(port) => host,
            Some(_) => return false,
            None => authority,
        }
    };
    matches!(
        host.to_ascii_lowercase().as_str(),
        "127.0.0.1" | "localhost" | "::1"
    )
}

fn is_port(s: &str) -> bool {
    s.strip_prefix(':').unwrap_or(s).parse::<u16>().is_ok()
}

fn is_allowed_origin(origin: &str) -> bool {
    if matches!(
        origin,
        "tauri://localhost" | "http://tauri.localhost" | "https://tauri.localhost"
    ) {
        return true;
    }
    origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"))
        .is_some_and(is_loopback_authority)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_authorities() {
        for ok in [
            "127.0.0.1",
            "127.0.0.1:8080",
            "localhost:1",
            "LOCALHOST",
            "[::1]:9",
            "[::1]",
        ] {
            assert!(is_loopback_authority(ok), "{ok}");
        }
        for bad in [
            "evil.example",
            "evil.example:80",
            "127.0.0.1.evil.example",
            "localhost.evil.example:1",
            "127.0.0.1:notaport",
            "[::2]:1",
            "",
        ] {
            assert!(!is_loopback_authority(bad), "{bad}");
        }
    }

    #[test]
    fn origins() {
        for ok in [
            "tauri://localhost",
            "http://tauri.localhost",
            "http://127.0.0.1:5173",
            "http://localhost",
        ] {
            assert!(is_allowed_origin(ok), "{ok}");
        }
        for bad in [
            "https://evil.example",
            "null",
            "http://127.0.0.1.nip.io",
            "file://",
        ] {
            assert!(!is_allowed_origin(bad), "{bad}");
        }
    }

    #[test]
    fn tokens_are_256_bit_and_fresh() -> Result<(), HttpError> {
        let a = Token::generate()?;
        let b = Token::generate()?;
        assert_eq!(a.as_str().len(), 64);
        assert!(a.as_str().chars().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a.as_str(), b.as_str());
        assert!(a.matches(a.as_str()));
        assert!(!a.matches(b.as_str()));
        assert!(!a.matches(""));
        Ok(())
    }
}

//! Talking to a hub over HTTP(S): its address checked (plain HTTP only to this machine), each
//! answer read as the wire type or as the hub's error.

use std::time::Duration;

use cairn_protocol::sync::HubError;
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::SyncError;

pub(crate) struct HubClient {
    http: reqwest::Client,
    base: url::Url,
    token: Option<String>,
}

/// A hub's address as a device keeps it: `https://…`, or `http://` on this machine.
pub fn check_hub_address(address: &str) -> Result<url::Url, SyncError> {
    let url = url::Url::parse(address.trim())
        .map_err(|e| SyncError::Invalid(format!("{address} is not a hub address: {e}")))?;
    let loopback = match url.host() {
        Some(url::Host::Domain(domain)) => domain == "localhost",
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    };
    match url.scheme() {
        "https" => Ok(url),
        "http" if loopback || std::env::var_os("CAIRN_SYNC_ALLOW_HTTP").is_some() => Ok(url),
        "http" => Err(SyncError::Invalid(format!(
            "{address} is plain HTTP to another machine: the hub must be reached over HTTPS (set CAIRN_SYNC_ALLOW_HTTP=1 only on a network you trust)"
        ))),
        other => Err(SyncError::Invalid(format!("a hub is reached over https, not {other}"))),
    }
}

impl HubClient {
    pub(crate) fn new(address: &str, token: Option<&str>) -> Result<Self, SyncError> {
        let base = check_hub_address(address)?;
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .timeout(Duration::from_secs(60))
            .build()
            .map_err(|e| SyncError::Invalid(format!("the HTTP client: {e}")))?;
        Ok(Self {
            http,
            base,
            token: token.map(str::to_owned),
        })
    }

    fn url(&self, path: &str) -> Result<url::Url, SyncError> {
        self.base
            .join(path)
            .map_err(|e| SyncError::Invalid(format!("{path}: {e}")))
    }

    pub(crate) async fn get<T: DeserializeOwned>(&self, path: &str) -> Result<T, SyncError> {
        let mut request = self.http.get(self.url(path)?);
        if let Some(token) = &self.token {
            request = request.bearer_auth(token);
        }
        answer(request.send().await).await
    }

    pub(crate) async fn post<T: DeserializeOwned>(
        &self,
        path: &str,
        body: &impl Serialize,
    ) -> Result<T, SyncError> {
        let mut request = self.http.post(self.url(path)?).json(body);
        if let Some(token) = &self.token {
            request = request.bearer_auth(token);
        }
        answer(request.send().await).await
    }
}

async fn answer<T: DeserializeOwned>(
    response: Result<reqwest::Response, reqwest::Error>,
) -> Result<T, SyncError> {
    let response = response.map_err(|e| SyncError::Offline(without_url(&e)))?;
    let status = response.status();
    if status.is_success() {
        return response
            .json()
            .await
            .map_err(|e| SyncError::Offline(without_url(&e)));
    }
    let text = response.text().await.unwrap_or_default();
    let message = serde_json::from_str::<HubError>(&text)
        .map(|e| e.error)
        .unwrap_or_else(|_| text.chars().take(200).collect());
    Err(SyncError::Hub {
        status: status.as_u16(),
        message,
    })
}

/// A transport error without the address (it may carry a query) — the kind of failure is enough.
fn without_url(error: &reqwest::Error) -> String {
    if error.is_timeout() {
        "the hub did not answer in time"
    } else if error.is_connect() {
        "cannot reach the hub"
    } else if error.is_decode() {
        "the hub's answer is not what a hub sends"
    } else {
        "the connection to the hub broke off"
    }
    .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_http_only_to_this_machine() {
        assert!(check_hub_address("https://hub.example.org").is_ok());
        assert!(check_hub_address("http://127.0.0.1:8787").is_ok());
        assert!(check_hub_address("http://localhost:8787").is_ok());
        assert!(check_hub_address("http://[::1]:8787").is_ok());
        if std::env::var_os("CAIRN_SYNC_ALLOW_HTTP").is_none() {
            assert!(check_hub_address("http://hub.example.org").is_err());
        }
        assert!(check_hub_address("ftp://hub.example.org").is_err());
        assert!(check_hub_address("hub.example.org").is_err());
    }
}

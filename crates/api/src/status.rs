//! The `status` operation: version, paths, config validity, whether an API is answering, and which
//! providers and models are configured.

use cairn_config::{read_runtime, Config};
use cairn_protocol::{ApiStatus, ConfigStatus, Health, ProviderStatus, RuntimeInfo, StatusReport};

use crate::Cairn;

/// The version of this build of Cairn.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

impl Cairn {
    /// Reports Cairn's state. `serving` is the caller's own API when the caller is the server (it
    /// need not probe itself); otherwise `runtime.json` is read and the API it names is probed.
    pub async fn status(&self, serving: Option<&RuntimeInfo>) -> StatusReport {
        let exists = self.home.config_file().exists();
        let (config_status, config) = match self.config_now() {
            Ok((config, error)) => (
                ConfigStatus {
                    exists,
                    valid: error.is_none(),
                    kept: error.is_some(),
                    error: error.map(|e| e.to_string()),
                },
                config,
            ),
            Err(e) => (
                ConfigStatus {
                    exists,
                    valid: false,
                    error: Some(e.to_string()),
                    kept: false,
                },
                Config::default(),
            ),
        };
        let running = match serving {
            Some(info) => Some(info.clone()),
            None => self.running_api().await,
        };
        let api = ApiStatus {
            running: running.is_some(),
            url: running.as_ref().map(|info| info.api_url.clone()),
            pid: running.as_ref().map(|info| info.pid),
        };
        StatusReport {
            version: VERSION.to_owned(),
            paths: self.home.paths(),
            config: config_status,
            api,
            default_model: config.default_model_name(),
            providers: providers(&config),
            sync: self.sync_view().ok().filter(|v| v.joined),
        }
    }

    /// The API named in `runtime.json`, when it answers its health check.
    pub async fn running_api(&self) -> Option<RuntimeInfo> {
        let info = match read_runtime(&self.home.runtime_file()) {
            Ok(info) => info?,
            Err(e) => {
                tracing::warn!("ignoring the runtime file: {e}");
                return None;
            }
        };
        let url = format!("{}/api/v1/health", info.api_url);
        let healthy = match self.http.get(&url).send().await {
            Ok(response) if response.status().is_success() => response
                .json::<Health>()
                .await
                .is_ok_and(|h| h.status == "ok"),
            _ => false,
        };
        healthy.then_some(info)
    }
}

fn providers(config: &Config) -> Vec<ProviderStatus> {
    config
        .providers
        .iter()
        .map(|(name, p)| ProviderStatus {
            name: name.clone(),
            kind: p.kind,
            base_url: p.base_url.clone(),
            models: p.models.clone(),
            api_key_set: p.api_key.is_some(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use cairn_config::{write_runtime, Home};

    use super::*;

    fn cairn(dir: &std::path::Path) -> Cairn {
        Cairn::with_env(
            Home::at(dir),
            Arc::new(|name: &str| (name == "KEY").then(|| "sk-secret".to_owned())),
        )
    }

    #[tokio::test]
    async fn a_fresh_home_reports_defaults_and_no_api() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let report = cairn(dir.path()).status(None).await;
        assert_eq!(report.version, VERSION);
        assert!(!report.config.exists);
        assert!(report.config.valid);
        assert!(!report.api.running);
        assert_eq!(report.default_model, None);
        assert!(report.providers.is_empty());
        Ok(())
    }

    #[tokio::test]
    async fn reports_providers_without_their_keys() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        std::fs::write(
            dir.path().join("config.toml"),
            "[agent]\nmodel = \"o/m1\"\n[providers.o]\napi_key = \"${KEY}\"\nmodels = [\"m1\"]\n",
        )?;
        let report = cairn(dir.path()).status(None).await;
        assert!(report.config.valid, "{:?}", report.config.error);
        assert_eq!(report.default_model.as_deref(), Some("o/m1"));
        assert_eq!(report.providers.len(), 1);
        assert!(report.providers[0].api_key_set);
        let json = format!("{report:?}");
        assert!(!json.contains("sk-secret"));
        Ok(())
    }

    #[tokio::test]
    async fn an_invalid_config_is_reported_not_fatal() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        std::fs::write(dir.path().join("config.toml"), "[agent]\nbogus = 1\n")?;
        let report = cairn(dir.path()).status(None).await;
        assert!(!report.config.valid);
        let error = report.config.error.unwrap_or_default();
        assert!(error.contains(":2:") && error.contains("bogus"), "{error}");
        Ok(())
    }

    #[tokio::test]
    async fn a_stale_runtime_file_means_not_running() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        // A port nothing listens on: bind, learn the port, drop the listener.
        let port = std::net::TcpListener::bind("127.0.0.1:0")?
            .local_addr()?
            .port();
        write_runtime(
            &dir.path().join("runtime.json"),
            &RuntimeInfo {
                api_url: format!("http://127.0.0.1:{port}"),
                token: "t".into(),
                pid: 1,
            },
        )?;
        let report = cairn(dir.path()).status(None).await;
        assert!(!report.api.running);
        Ok(())
    }
}

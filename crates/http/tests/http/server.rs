//! A real server on 127.0.0.1: runtime.json published privately, requests over TCP, clean removal.

use std::sync::Arc;

use cairn_api::Cairn;
use cairn_config::{read_runtime, Home};
use cairn_protocol::StatusReport;

#[tokio::test]
async fn serves_on_loopback_and_publishes_then_removes_runtime_json(
) -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let home = Home::at(dir.path());
    let cairn = Cairn::with_env(home.clone(), Arc::new(|_: &str| None));
    let chat = Arc::new(cairn_api::chat::Chat::new(
        cairn.clone(),
        dir.path().to_path_buf(),
    ));
    let running = cairn_http::serve(cairn, None, chat).await?;
    assert!(running.addr().ip().is_loopback());

    let info = read_runtime(&home.runtime_file())?.ok_or("runtime.json missing")?;
    assert_eq!(&info, running.info());
    assert_eq!(info.pid, std::process::id());
    assert_eq!(info.token.len(), 64);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(home.runtime_file())?.permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }

    let client = reqwest::Client::builder().no_proxy().build()?;
    let health = client
        .get(format!("{}/api/v1/health", info.api_url))
        .send()
        .await?;
    assert_eq!(health.status(), 200);
    let denied = client
        .get(format!("{}/api/v1/status", info.api_url))
        .send()
        .await?;
    assert_eq!(denied.status(), 401);
    let report: StatusReport = client
        .get(format!("{}/api/v1/status", info.api_url))
        .bearer_auth(&info.token)
        .send()
        .await?
        .json()
        .await?;
    assert!(report.api.running);

    running.shutdown().await?;
    assert!(
        !home.runtime_file().exists(),
        "runtime.json is removed on clean exit"
    );
    Ok(())
}

//! `cairn serve`: publishes runtime.json, `cairn status` sees it, SIGTERM removes it.

use std::process::Command;

use cairn_protocol::StatusReport;

use crate::{cairn, start_server, stdout};

#[test]
fn serve_publishes_runtime_json_and_status_sees_it() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let runtime = dir.path().join("runtime.json");
    let (mut server, info) = start_server(dir.path())?;
    assert_eq!(info.pid, server.id());

    let output = cairn(dir.path(), &["status", "--json"])?;
    let report: StatusReport = serde_json::from_str(&stdout(&output))?;
    assert!(report.api.running, "{report:?}");
    assert_eq!(report.api.url.as_deref(), Some(info.api_url.as_str()));

    let second = cairn(dir.path(), &["serve"])?;
    assert_eq!(second.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&second.stderr).contains("already serving"));

    // A polite stop (SIGTERM) removes runtime.json.
    Command::new("kill").arg(server.id().to_string()).status()?;
    let status = server.wait()?;
    assert!(status.success(), "{status:?}");
    assert!(!runtime.exists());
    Ok(())
}

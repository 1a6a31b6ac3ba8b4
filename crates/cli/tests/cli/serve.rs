//! `cairn serve`: publishes runtime.json, `cairn status` sees it, SIGTERM removes it.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use cairn_config::read_runtime;
use cairn_protocol::StatusReport;

use crate::{cairn, stdout};

#[test]
fn serve_publishes_runtime_json_and_status_sees_it() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let runtime = dir.path().join("runtime.json");
    let mut server = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .arg("serve")
        .env("CAIRN_HOME", dir.path())
        .stdout(Stdio::null())
        .spawn()?;
    let deadline = Instant::now() + Duration::from_secs(20);
    let info = loop {
        if let Ok(Some(info)) = read_runtime(&runtime) {
            break info;
        }
        if Instant::now() > deadline {
            let _ = server.kill();
            return Err("runtime.json never appeared".into());
        }
        std::thread::sleep(Duration::from_millis(50));
    };
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

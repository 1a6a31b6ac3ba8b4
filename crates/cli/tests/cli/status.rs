//! `cairn status`.

use cairn_protocol::StatusReport;

use crate::{cairn, stdout};

#[test]
fn status_json_on_a_fresh_home() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let output = cairn(dir.path(), &["status", "--json"])?;
    assert!(output.status.success());
    let report: StatusReport = serde_json::from_str(&stdout(&output))?;
    assert_eq!(report.version, env!("CARGO_PKG_VERSION"));
    assert_eq!(report.paths.home, dir.path().display().to_string());
    assert!(report.config.valid && !report.config.exists);
    assert!(!report.api.running);
    Ok(())
}

#[test]
fn status_text_names_the_model_and_providers() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    std::fs::write(
        dir.path().join("config.toml"),
        "[agent]\nmodel = \"local/smollm2\"\n\n[providers.local]\nbase_url = \"http://127.0.0.1:8080/v1\"\nmodels = [\"smollm2\"]\n",
    )?;
    let output = cairn(dir.path(), &["status"])?;
    assert!(output.status.success());
    let text = stdout(&output);
    assert!(text.contains("model     local/smollm2"), "{text}");
    assert!(
        text.contains("local (openai, http://127.0.0.1:8080/v1, no key): smollm2"),
        "{text}"
    );
    assert!(text.contains("not running"), "{text}");
    Ok(())
}

#[test]
fn an_invalid_config_exits_1_naming_line_and_key() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    std::fs::write(
        dir.path().join("config.toml"),
        "[api]\nport = 1\ncolour = \"red\"\n",
    )?;
    let output = cairn(dir.path(), &["status"])?;
    assert_eq!(output.status.code(), Some(1));
    let text = stdout(&output);
    assert!(text.contains("INVALID"), "{text}");
    assert!(text.contains("config.toml:3:"), "{text}");
    assert!(text.contains("colour"), "{text}");
    Ok(())
}

#[test]
fn help_is_everywhere() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    for args in [&["--help"][..], &["status", "--help"], &["serve", "--help"]] {
        let output = cairn(dir.path(), args)?;
        assert!(output.status.success(), "{args:?}");
        assert!(stdout(&output).contains("Usage: cairn"), "{args:?}");
    }
    Ok(())
}

//! `cairn schedule` as a person uses it: add in plain English, list with the next run, pause,
//! resume, remove; a "when" it cannot read says how to write one, and adds nothing.

use crate::{cairn, stdout};

type TestResult = Result<(), Box<dyn std::error::Error>>;

#[test]
fn schedules_are_added_listed_paused_and_removed() -> TestResult {
    let dir = tempfile::tempdir()?;
    let home = dir.path();
    let added = cairn(
        home,
        &[
            "schedule",
            "add",
            "every weekday at 9",
            "Summarise what changed in ~/notes",
        ],
    )?;
    assert!(added.status.success());
    let said = stdout(&added);
    assert!(
        said.starts_with("added s1 · Summarise what changed in ~/notes"),
        "{said}"
    );
    assert!(
        said.contains("(0 9 * * 1-5)") && said.contains("next: "),
        "{said}"
    );
    assert!(
        said.contains("schedules run while the app or `cairn serve` runs"),
        "{said}"
    );

    let refused = cairn(home, &["schedule", "add", "now and then", "x"])?;
    assert!(!refused.status.success());
    let error = String::from_utf8_lossy(&refused.stderr);
    assert!(error.contains("every weekday at 9"), "{error}");

    assert!(cairn(
        home,
        &[
            "schedule",
            "add",
            "every 15 minutes",
            "Check the build",
            "--name",
            "build"
        ]
    )?
    .status
    .success());
    assert!(cairn(home, &["schedule", "pause", "s2"])?.status.success());
    let list = stdout(&cairn(home, &["schedule", "list"])?);
    assert!(
        list.contains("s2 · build (paused)") && list.contains("next: paused"),
        "{list}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&stdout(&cairn(home, &["schedule", "list", "--json"])?))?;
    assert_eq!(json.as_array().map(Vec::len), Some(2));

    assert!(cairn(home, &["schedule", "remove", "s1"])?.status.success());
    assert!(!cairn(home, &["schedule", "remove", "s1"])?.status.success());
    let list = stdout(&cairn(home, &["schedule", "list"])?);
    assert!(!list.contains("s1 ·") && list.contains("s2 ·"), "{list}");
    Ok(())
}

//! Fixture tests for edit_file's engine (`cairn_tools::edit::edit_text`): every folder under
//! `tests/fixtures/edit/` holds `input/<file>`, `call.json` (`{"path", "edits"}`), and either
//! `expected/<file>` + `report.txt` (the whole Ok report) or `refusal.txt` (the whole refusal),
//! compared whole. `CAIRN_BLESS=1` rewrites the expectations from what the engine does now
//! (to review with `git diff`, never to paper over a failure).
//!
//! `report.txt` and `refusal.txt` hold the text plus one final newline, which is not part of it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::path::{Path, PathBuf};

use cairn_tools::edit::{edit_text, Edit};
use serde::Deserialize;

#[derive(Deserialize)]
struct Call {
    path: String,
    edits: Vec<Edit>,
}

fn fixtures_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/edit")
}

fn read(path: &Path) -> String {
    fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A text file's content without the one final newline the file adds.
fn read_text(path: &Path) -> String {
    let text = read(path);
    text.strip_suffix('\n').map(str::to_owned).unwrap_or(text)
}

fn cases() -> Vec<PathBuf> {
    let mut cases: Vec<PathBuf> = fs::read_dir(fixtures_root())
        .expect("fixtures folder")
        .map(|entry| entry.expect("dir entry").path())
        .filter(|path| path.is_dir())
        .collect();
    cases.sort();
    cases
}

/// Runs one case; `Err` describes the mismatch.
fn run_case(case: &Path, bless: bool) -> Result<(), String> {
    let call: Call = serde_json::from_str(&read(&case.join("call.json")))
        .map_err(|e| format!("call.json: {e}"))?;
    let input = read(&case.join("input").join(&call.path));
    let result = edit_text(&call.path, &input, &call.edits);
    let refusal_file = case.join("refusal.txt");
    let expected_file = case.join("expected").join(&call.path);
    let report_file = case.join("report.txt");

    if bless {
        match &result {
            Ok(edited) => {
                fs::create_dir_all(expected_file.parent().expect("parent")).expect("mkdir");
                fs::write(&expected_file, &edited.text).expect("write expected");
                fs::write(&report_file, format!("{}\n", edited.report)).expect("write report");
                let _ = fs::remove_file(&refusal_file);
            }
            Err(refusal) => {
                fs::write(&refusal_file, format!("{refusal}\n")).expect("write refusal");
                let _ = fs::remove_file(&report_file);
                let _ = fs::remove_dir_all(case.join("expected"));
            }
        }
        return Ok(());
    }

    if refusal_file.exists() {
        // A refusal writes nothing: no expected/ folder may claim otherwise.
        if case.join("expected").exists() {
            return Err("a refusal case must not have expected/ (the file stays as it was)".into());
        }
        let want = read_text(&refusal_file);
        return match result {
            Err(got) if got == want => Ok(()),
            Err(got) => Err(format!(
                "refusal differs\n--- want\n{want}\n--- got\n{got}\n---"
            )),
            Ok(edited) => Err(format!(
                "expected a refusal, the edit went through\n--- report\n{}\n---",
                edited.report
            )),
        };
    }

    let want_text = read(&expected_file);
    let want_report = read_text(&report_file);
    match result {
        Err(refusal) => Err(format!("refused\n--- refusal\n{refusal}\n---")),
        Ok(edited) => {
            let mut problems = Vec::new();
            if edited.text != want_text {
                problems.push(format!(
                    "file differs\n--- want\n{want_text:?}\n--- got\n{:?}\n---",
                    edited.text
                ));
            }
            if edited.report != want_report {
                problems.push(format!(
                    "report differs\n--- want\n{want_report}\n--- got\n{}\n---",
                    edited.report
                ));
            }
            if problems.is_empty() {
                Ok(())
            } else {
                Err(problems.join("\n"))
            }
        }
    }
}

#[test]
fn edit_fixtures() {
    let bless = std::env::var_os("CAIRN_BLESS").is_some();
    let cases = cases();
    assert!(
        cases.len() >= 20,
        "only {} fixture cases found",
        cases.len()
    );
    let mut failures = Vec::new();
    for case in &cases {
        let name = case.file_name().unwrap_or_default().to_string_lossy();
        if let Err(why) = run_case(case, bless) {
            failures.push(format!("── {name}: {why}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n\n")
    );
}

/// Re-running the same call on the edited text must not apply it twice: the old text is gone.
#[test]
fn applying_an_edit_twice_is_refused() {
    let edits = vec![Edit {
        old: "count := 1".into(),
        new: "count := 2".into(),
    }];
    let once = edit_text("main.go", "func main() {\n\tcount := 1\n}\n", &edits).unwrap();
    let twice = edit_text("main.go", &once.text, &edits).unwrap_err();
    assert!(
        twice.starts_with("main.go: edit #1: old text not found"),
        "{twice}"
    );
}

/// The call deserialises with `new` left out (a deletion).
#[test]
fn new_defaults_to_empty() {
    let edit: Edit = serde_json::from_str(r#"{"old": "x"}"#).unwrap();
    assert_eq!(edit.new, "");
}

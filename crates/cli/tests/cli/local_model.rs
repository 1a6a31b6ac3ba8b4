//! `cairn agent` with nothing configured: Cairn's own model (Qwen2.5-Coder-1.5B-Instruct, greedy,
//! in the model host) answers a question, writes a file with `write_file` and uses in a new
//! session a fact it was told in an earlier one; a truncated model
//! file is named with the command that repairs it, and a missing model host is told in the models
//! list. A fresh home that shares only the installed
//! models; skipped where setup has not installed them, unless CAIRN_REQUIRE_MODELS says they must
//! be there.

use std::path::Path;
use std::process::{Command, Output};

use crate::stdout;

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// One model at a time: each turn's host uses every core.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// A fresh data home sharing this machine's models, or `None` when the default model is not
/// installed (and not required).
fn home_with_models() -> Result<Option<tempfile::TempDir>, Box<dyn std::error::Error>> {
    crate::home_with_model("llm/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf")
}

/// One turn, run in `dir`, with no config file.
fn agent(home: &Path, dir: &Path, args: &[&str]) -> std::io::Result<Output> {
    Command::new(env!("CARGO_BIN_EXE_cairn"))
        .arg("agent")
        .args(args)
        .current_dir(dir)
        .env("CAIRN_HOME", home)
        .env_remove("CAIRN_CONFIG")
        .output()
}

fn succeeded(output: &Output) -> Result<String, String> {
    if output.status.success() {
        Ok(stdout(output))
    } else {
        Err(format!(
            "cairn agent failed: {}\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        ))
    }
}

#[test]
fn with_nothing_configured_the_local_model_answers_a_question() -> TestResult {
    let Some(home) = home_with_models()? else {
        return Ok(());
    };
    let _one_at_a_time = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir()?;
    let output = agent(
        home.path(),
        dir.path(),
        &[
            "--message",
            "What is the capital of France? Answer in one word.",
        ],
    )?;
    let answer = succeeded(&output)?;
    assert!(answer.contains("Paris"), "{answer}");
    Ok(())
}

#[test]
fn the_local_model_writes_the_file_it_is_asked_for() -> TestResult {
    let Some(home) = home_with_models()? else {
        return Ok(());
    };
    let _one_at_a_time = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir()?;
    let output = agent(
        home.path(),
        dir.path(),
        &[
            "--message",
            "Use the write_file tool to create the file notes.txt with the content: buy milk",
        ],
    )?;
    succeeded(&output)?;
    let written = std::fs::read_to_string(dir.path().join("notes.txt")).map_err(|e| {
        format!(
            "notes.txt was not written ({e}); the turn said:\n{}\n{}",
            stdout(&output),
            String::from_utf8_lossy(&output.stderr)
        )
    })?;
    assert!(written.contains("buy milk"), "{written:?}");
    Ok(())
}

#[test]
fn a_fact_told_in_one_session_is_recalled_and_used_in_the_next() -> TestResult {
    let Some(home) = home_with_models()? else {
        return Ok(());
    };
    let _one_at_a_time = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir()?;
    let told = agent(
        home.path(),
        dir.path(),
        &["--message", "Our staging server's IP address is 10.0.3.7."],
    )?;
    succeeded(&told)?;
    // A new process and a new conversation: only the memory links the two.
    let asked = agent(
        home.path(),
        dir.path(),
        &["--message", "What is the IP address of our staging server?"],
    )?;
    let answer = succeeded(&asked)?;
    assert!(answer.contains("10.0.3.7"), "{answer}");
    assert!(
        String::from_utf8_lossy(&asked.stderr).contains("1 memory recalled")
            || answer.contains("memor"),
        "{answer}"
    );
    Ok(())
}

#[test]
fn a_truncated_model_file_is_named_with_the_command_that_reinstalls_it() -> TestResult {
    let home = tempfile::tempdir()?;
    let llm = home.path().join("models/llm");
    std::fs::create_dir_all(&llm)?;
    // The start of a GGUF file, as a broken copy leaves it.
    let file = llm.join("qwen2.5-coder-1.5b-instruct-q4_k_m.gguf");
    std::fs::write(&file, b"GGUF\x03\x00\x00\x00 and nothing more")?;
    let dir = tempfile::tempdir()?;
    let output = agent(home.path(), dir.path(), &["--message", "Hello"])?;
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{err}");
    assert!(
        err.contains(&file.display().to_string())
            && err.contains("truncated")
            && err.contains("cairn models install qwen2.5-coder-1.5b"),
        "{err}"
    );
    let listed = crate::cairn(home.path(), &["models", "list"])?;
    let listed = stdout(&listed);
    assert!(
        listed
            .lines()
            .any(|l| l.starts_with("qwen2.5-coder-1.5b ") && l.contains("DAMAGED")),
        "{listed}"
    );
    Ok(())
}

/// What setup installed is whole by the catalogue's pinned sizes and checksums — the language
/// model, the memory's two embedders and both voice models — so the app's installer and setup agree.
#[test]
fn the_models_setup_installed_are_whole_by_the_catalogue() -> TestResult {
    let Some(home) = home_with_models()? else {
        return Ok(());
    };
    let listed = crate::cairn(home.path(), &["models", "list", "--json"])?;
    let models: Vec<serde_json::Value> = serde_json::from_str(&stdout(&listed))?;
    for (name, kind) in [
        ("qwen2.5-coder-1.5b", "language"),
        ("all-minilm-l6-v2", "embedding"),
        ("multilingual-e5-small", "embedding"),
        ("whisper-tiny.en", "speech"),
        ("whisper-base", "speech"),
    ] {
        let model = models
            .iter()
            .find(|m| m["name"] == name)
            .ok_or_else(|| format!("{name} is not listed"))?;
        assert_eq!(model["kind"], kind, "{model}");
        assert_eq!(model["whole"], true, "{name} is not whole: {model}");
    }
    let table = stdout(&crate::cairn(home.path(), &["models", "list"])?);
    assert!(
        table.lines().any(|l| l.starts_with("all-minilm-l6-v2 ")
            && l.contains("memory")
            && l.contains("installed")),
        "{table}"
    );
    Ok(())
}

/// A language model whose host program cannot be found says so in the list — in its JSON, which
/// the app's setup and Settings read, and in the table — before anyone chats into the error.
#[test]
fn a_missing_model_host_is_told_in_the_models_list() -> TestResult {
    let Some(home) = home_with_models()? else {
        return Ok(());
    };
    let list = |host: &Path, json: bool| {
        let mut args = vec!["models", "list"];
        if json {
            args.push("--json");
        }
        Command::new(env!("CARGO_BIN_EXE_cairn"))
            .args(args)
            .env("CAIRN_HOME", home.path())
            .env_remove("CAIRN_CONFIG")
            .env("CAIRN_MODEL_HOST", host)
            .output()
    };
    let missing = home.path().join("nowhere").join("cairn-model-host");
    let models: Vec<serde_json::Value> = serde_json::from_str(&stdout(&list(&missing, true)?))?;
    for m in &models {
        let told = m["cannot_run"].as_str();
        if m["kind"] == "language" {
            assert!(
                told.is_some_and(|t| t.contains(&missing.display().to_string())),
                "{m}"
            );
        } else {
            assert!(told.is_none(), "{m}");
        }
    }
    let table = stdout(&list(&missing, false)?);
    assert!(
        table
            .lines()
            .any(|l| l.starts_with("qwen2.5-coder-1.5b ") && l.contains("CANNOT RUN")),
        "{table}"
    );
    assert!(
        table.contains("the language models cannot run here: its host program"),
        "{table}"
    );
    let present = home.path().join("cairn-model-host");
    std::fs::write(&present, b"")?;
    let models: Vec<serde_json::Value> = serde_json::from_str(&stdout(&list(&present, true)?))?;
    assert!(
        models.iter().all(|m| m.get("cannot_run").is_none()),
        "{models:?}"
    );
    Ok(())
}

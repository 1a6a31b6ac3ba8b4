//! Cairn's own model when its host program cannot be started: a clear error of the kind that
//! says the model cannot run here (not that a server refused the request), naming the program.

use cairn_llm::local::{LocalModel, LocalOptions};
use cairn_llm::{collect, ChatRequest, Message, Provider, ProviderError, Role};

type TestResult = Result<(), Box<dyn std::error::Error>>;

#[tokio::test]
async fn a_missing_model_host_says_the_model_cannot_run_and_names_the_program() -> TestResult {
    let dir = tempfile::tempdir()?;
    let missing = dir.path().join("cairn-model-host");
    // Read when the host is first started; no other test of this binary starts it.
    std::env::set_var("CAIRN_MODEL_HOST", &missing);
    let problem = cairn_llm::local::host_problem().ok_or("a missing host is not told")?;
    assert!(
        problem.contains(&missing.display().to_string()),
        "{problem}"
    );
    let model = LocalModel::new(dir.path().join("model.gguf"), LocalOptions::default());
    let error = collect(model.stream(ChatRequest {
        model: "qwen2.5-coder-1.5b".into(),
        messages: vec![Message::new(Role::User, "hello")],
        tools: vec![],
        max_tokens: Some(8),
        tool_choice: Default::default(),
    }))
    .await
    .err()
    .ok_or("a model without its host answered")?;
    assert!(
        matches!(&error, ProviderError::Unavailable(m) if m.contains(&missing.display().to_string())),
        "{error:?}"
    );
    assert_eq!(
        error.retry_after(),
        None,
        "the same request would fail again"
    );
    assert!(
        error
            .to_string()
            .starts_with("Cairn's own model cannot run here: "),
        "{error}"
    );
    Ok(())
}

//! What a local model costs on this machine: load time, resident memory, time to first token,
//! prompt and generation speed, the prompt time of an agent turn's second step with and without
//! the reuse of the evaluated prefix, and a new process's first prompt with and without the
//! system part saved on disk. `cairn bench model` prints it.

use std::path::Path;
use std::time::Duration;

use cairn_llm::{collect, ChatRequest, Message, Provider, ProviderError, Role, ToolCall, ToolSpec};
use serde::Serialize;

use crate::{last_stats, unload, InProcessModel, LocalOptions, StepStats};

/// The figures of one model.
#[derive(Debug, Clone, Serialize)]
pub struct ModelBench {
    pub load_s: f64,
    /// Resident memory of the whole process with the model loaded, and what loading added.
    pub rss_mb: f64,
    pub rss_added_mb: f64,
    pub time_to_first_token_ms: f64,
    pub prompt_tokens: usize,
    pub prompt_tokens_per_s: f64,
    pub generated_tokens: usize,
    pub generation_tokens_per_s: f64,
    pub second_step: SecondStep,
    pub saved_system_part: SavedSystemPart,
}

/// The first request of a new model host (a CLI turn, the first after the model was unloaded):
/// the same system prompt and tools as an earlier process, a new question.
#[derive(Debug, Clone, Serialize)]
pub struct SavedSystemPart {
    pub prompt_tokens: usize,
    /// Loaded from the prefix cache instead of evaluated.
    pub restored_tokens: usize,
    pub prompt_ms_with_saved: f64,
    pub prompt_ms_without: f64,
}

/// An agent turn's second step (the first step's prompt, its tool call and the result).
#[derive(Debug, Clone, Serialize)]
pub struct SecondStep {
    pub prompt_tokens: usize,
    /// With the prefix kept: tokens evaluated and the time it took.
    pub evaluated_with_reuse: usize,
    pub prompt_ms_with_reuse: f64,
    /// With the whole prompt evaluated again.
    pub evaluated_without_reuse: usize,
    pub prompt_ms_without_reuse: f64,
}

const SYSTEM: &str =
    "You are Cairn, a coding agent working in the person's project. Use the tools to \
read and change files and to run commands; answer briefly once the work is done.";

fn tools() -> Vec<ToolSpec> {
    let schema = |fields: &[(&str, &str)]| {
        let properties: serde_json::Map<String, serde_json::Value> = fields
            .iter()
            .map(|(name, description)| {
                (
                    (*name).to_owned(),
                    serde_json::json!({"type": "string", "description": description}),
                )
            })
            .collect();
        serde_json::json!({"type": "object", "properties": properties,
            "required": fields.iter().map(|(n, _)| *n).collect::<Vec<_>>()})
    };
    vec![
        ToolSpec {
            name: "bash".into(),
            description: "Run a shell command in the project and return its output.".into(),
            parameters: schema(&[("command", "The command line.")]),
        },
        ToolSpec {
            name: "read_file".into(),
            description: "Read a text file of the project.".into(),
            parameters: schema(&[("path", "The file, relative to the project.")]),
        },
        ToolSpec {
            name: "write_file".into(),
            description: "Create or overwrite a file with the given content.".into(),
            parameters: schema(&[("path", "The file."), ("content", "Its whole content.")]),
        },
    ]
}

fn request(messages: Vec<Message>, tools: Vec<ToolSpec>, max_tokens: u32) -> ChatRequest {
    ChatRequest {
        model: String::new(),
        messages,
        tools,
        max_tokens: Some(max_tokens),
        tool_choice: Default::default(),
    }
}

async fn run(model: &InProcessModel, request: ChatRequest) -> Result<StepStats, ProviderError> {
    collect(model.stream(request)).await?;
    Ok(last_stats())
}

/// Measures the model in `path` (unloading whatever model this process holds first).
pub async fn measure(path: &Path, threads: Option<i32>) -> Result<ModelBench, ProviderError> {
    unload().await;
    let mut options = LocalOptions::default();
    if let Some(threads) = threads {
        options.threads = threads;
    }
    let model = InProcessModel::new(path, options.clone());
    let rss_before = resident_mb();

    let first = run(
        &model,
        request(vec![Message::new(Role::User, "Say OK.")], Vec::new(), 1),
    )
    .await?;
    let rss = resident_mb();

    // A fresh prompt of an agent's size, evaluated whole, then a reply of some length.
    let cold = InProcessModel::new(
        path,
        LocalOptions {
            reuse_prefix: false,
            ..options.clone()
        },
    );
    let messages = vec![
        Message::new(Role::System, SYSTEM),
        Message::new(
            Role::User,
            "Explain in about a hundred words what a Makefile is for and how its rules work.",
        ),
    ];
    let story = run(&cold, request(messages.clone(), tools(), 128)).await?;

    // An agent turn: a first step that calls a tool, then the second step with its result.
    let mut step = vec![
        Message::new(Role::System, SYSTEM),
        Message::new(Role::User, "How many lines does src/main.rs have?"),
    ];
    run(&model, request(step.clone(), tools(), 64)).await?;
    let mut call = Message::new(Role::Assistant, "");
    call.tool_calls.push(ToolCall {
        id: "call_1".into(),
        name: "bash".into(),
        arguments: r#"{"command": "wc -l src/main.rs"}"#.into(),
    });
    step.push(call);
    step.push(Message::tool_result("call_1", "212 src/main.rs"));
    let reused = run(&model, request(step.clone(), tools(), 32)).await?;
    let whole = run(&cold, request(step, tools(), 32)).await?;

    // Two new processes in turn (the model unloaded between them) sharing one prefix cache.
    let cache = std::env::temp_dir().join(format!("cairn-bench-prefix-{}", std::process::id()));
    let saving = InProcessModel::new(
        path,
        LocalOptions {
            prefix_cache: Some(cache.clone()),
            ..options.clone()
        },
    );
    let ask = |question: &str| {
        vec![
            Message::new(Role::System, SYSTEM),
            Message::new(Role::User, question),
        ]
    };
    unload().await;
    let without = run(
        &saving,
        request(ask("Which file defines main?"), tools(), 1),
    )
    .await?;
    unload().await;
    let with_saved = run(
        &saving,
        request(ask("What does the Makefile build?"), tools(), 1),
    )
    .await?;
    let _ = std::fs::remove_dir_all(&cache);

    let per_s = |n: usize, d: Duration| {
        if d.is_zero() {
            0.0
        } else {
            n as f64 / d.as_secs_f64()
        }
    };
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    Ok(ModelBench {
        load_s: first.load.as_secs_f64(),
        rss_mb: rss,
        rss_added_mb: rss - rss_before,
        time_to_first_token_ms: ms(story.prompt_time + story.first_token),
        prompt_tokens: story.prompt_tokens,
        prompt_tokens_per_s: per_s(story.prompt_tokens - story.reused_tokens, story.prompt_time),
        generated_tokens: story.generated_tokens,
        generation_tokens_per_s: per_s(story.generated_tokens, story.generation_time),
        second_step: SecondStep {
            prompt_tokens: reused.prompt_tokens,
            evaluated_with_reuse: reused.prompt_tokens - reused.reused_tokens,
            prompt_ms_with_reuse: ms(reused.prompt_time),
            evaluated_without_reuse: whole.prompt_tokens - whole.reused_tokens,
            prompt_ms_without_reuse: ms(whole.prompt_time),
        },
        saved_system_part: SavedSystemPart {
            prompt_tokens: with_saved.prompt_tokens,
            restored_tokens: with_saved.reused_tokens,
            prompt_ms_with_saved: ms(with_saved.prompt_time),
            prompt_ms_without: ms(without.prompt_time),
        },
    })
}

/// This process's resident memory in MB (0 where /proc is not there).
fn resident_mb() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb / 1024.0)
}

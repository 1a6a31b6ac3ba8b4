//! Pins every name the UI, the CLI and other clients match on: each closed set's variants and each
//! tagged union's tags, to their exact wire strings, both ways. A rename that would break a client
//! breaks here first.

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};

use crate::memory::{Layer, Rating, Status, SummarySource};
use crate::settings::{
    Language, LaunchMode, LogLevel, McpServerState, McpTransportKind, ProviderKind, Theme,
};
use crate::*;

/// `value` travels as `wire` and `wire` reads back as `value`.
fn pins<T>(value: T, wire: Value) -> Result<(), serde_json::Error>
where
    T: Serialize + DeserializeOwned + PartialEq + std::fmt::Debug,
{
    assert_eq!(serde_json::to_value(&value)?, wire, "{value:?}");
    assert_eq!(serde_json::from_value::<T>(wire)?, value);
    Ok(())
}

/// A closed set's variants, in order, travel as `names`; `as_str` and `FromStr` agree.
macro_rules! pins_names {
    ($set:ty, [$($variant:ident = $wire:literal),+ $(,)?]) => {{
        let expected: &[(&'static str, $set)] = &[$(($wire, <$set>::$variant)),+];
        assert_eq!(<$set>::ALL.len(), expected.len(), "{} has a variant not pinned", stringify!($set));
        for (wire, variant) in expected {
            pins(*variant, json!(wire))?;
            assert_eq!(variant.as_str(), *wire);
            assert_eq!(wire.parse::<$set>().ok(), Some(*variant));
        }
        assert!("no such name".parse::<$set>().is_err());
    }};
}

#[test]
fn closed_sets_travel_as_their_names() -> Result<(), serde_json::Error> {
    pins_names!(
        JobState,
        [
            Running = "running",
            Exited = "exited",
            Killed = "killed",
            Stopped = "stopped",
            Finished = "finished",
            Failed = "failed",
        ]
    );
    pins_names!(
        TeamMemberState,
        [
            Working = "working",
            WaitingForSlot = "waiting for a slot",
            Finished = "finished",
            Idle = "idle",
        ]
    );
    pins_names!(
        QuestionKind,
        [
            Choice = "choice",
            Multi = "multi",
            Text = "text",
            Confirm = "confirm",
        ]
    );
    pins_names!(
        McpServerState,
        [
            Disabled = "disabled",
            Idle = "idle",
            Starting = "starting",
            Ready = "ready",
            Failed = "failed",
        ]
    );
    pins_names!(SummarySource, [Heuristic = "heuristic", Model = "model"]);
    pins_names!(
        ProviderKind,
        [
            Openai = "openai",
            Anthropic = "anthropic",
            Ollama = "ollama",
            Local = "local",
        ]
    );
    pins_names!(Theme, [System = "system", Light = "light", Dark = "dark"]);
    pins_names!(
        LogLevel,
        [
            Error = "error",
            Warn = "warn",
            Info = "info",
            Debug = "debug",
            Trace = "trace",
        ]
    );
    pins_names!(LaunchMode, [Pet = "pet", Full = "full", Last = "last"]);
    pins_names!(Language, [English = "en", SimplifiedChinese = "zh-CN"]);
    pins_names!(
        McpTransportKind,
        [
            Stdio = "stdio",
            StreamableHttp = "streamable_http",
            Sse = "sse",
        ]
    );
    pins_names!(
        ErrorCode,
        [
            BadRequest = "bad_request",
            NotFound = "not_found",
            Internal = "internal",
            Unauthorized = "unauthorized",
            ForbiddenHost = "forbidden_host",
            ForbiddenOrigin = "forbidden_origin",
            CredentialsInUrl = "credentials_in_url",
            TooMany = "too_many",
            Busy = "busy",
            NoCli = "no_cli",
            Window = "window",
            Voice = "voice",
            Encode = "encode",
            Decode = "decode",
            Ipc = "ipc",
        ]
    );
    Ok(())
}

#[test]
fn an_older_name_still_reads_and_defaults_hold() -> Result<(), serde_json::Error> {
    // MCP configs written for other clients say `streamableHttp`.
    assert_eq!(
        serde_json::from_value::<McpTransportKind>(json!("streamableHttp"))?,
        McpTransportKind::StreamableHttp
    );
    assert_eq!(
        "streamableHttp".parse::<McpTransportKind>().ok(),
        Some(McpTransportKind::StreamableHttp)
    );
    assert_eq!(Theme::default(), Theme::System);
    assert_eq!(LogLevel::default(), LogLevel::Info);
    assert_eq!(LaunchMode::default(), LaunchMode::Full);
    assert_eq!(Language::default(), Language::English);
    assert_eq!(
        "purple".parse::<Theme>().map_err(|e| e.to_string()),
        Err("unknown Theme \"purple\": use system, light, dark".to_owned())
    );
    // An error body keeps its shape.
    let error = ApiError::new(ErrorCode::TooMany, "full");
    assert_eq!(
        serde_json::to_value(&error)?,
        json!({"code": "too_many", "message": "full"})
    );
    assert_eq!(error.to_string(), "full (too_many)");
    Ok(())
}

#[test]
fn plain_enums_travel_as_their_names() -> Result<(), serde_json::Error> {
    for (layer, wire) in [
        (Layer::Trace, "L1"),
        (Layer::Policy, "L2"),
        (Layer::WorldModel, "L3"),
        (Layer::Skill, "skill"),
    ] {
        pins(layer, json!(wire))?;
        assert_eq!(layer.as_str(), wire);
    }
    for (status, wire) in [
        (Status::Activated, "activated"),
        (Status::Resolving, "resolving"),
        (Status::Archived, "archived"),
        (Status::Deleted, "deleted"),
    ] {
        pins(status, json!(wire))?;
        assert_eq!(status.as_str(), wire);
    }
    pins(Rating::Up, json!("up"))?;
    pins(Rating::Down, json!("down"))?;
    for (kind, wire) in [
        (FailureKind::Auth, "auth"),
        (FailureKind::RateLimited, "rate_limited"),
        (FailureKind::Context, "context"),
        (FailureKind::Connection, "connection"),
        (FailureKind::Rejected, "rejected"),
        (FailureKind::Generation, "generation"),
        (FailureKind::LocalModel, "local_model"),
        (FailureKind::Storage, "storage"),
        (FailureKind::Other, "other"),
    ] {
        pins(kind, json!(wire))?;
    }
    pins(ModelKind::Language, json!("language"))?;
    pins(ModelKind::Embedding, json!("embedding"))?;
    pins(ModelKind::Speech, json!("speech"))?;
    pins(InstallPhase::Download, json!("download"))?;
    pins(InstallPhase::Assemble, json!("assemble"))?;
    pins(InstallPhase::Done, json!("done"))?;
    Ok(())
}

#[test]
fn a_layer_reads_by_any_of_its_names_and_refuses_with_one_message() {
    for (name, layer) in [
        ("L1", Layer::Trace),
        ("trace", Layer::Trace),
        ("l2", Layer::Policy),
        ("Policy", Layer::Policy),
        ("L3", Layer::WorldModel),
        ("world_model", Layer::WorldModel),
        ("world-model", Layer::WorldModel),
        ("SKILL", Layer::Skill),
    ] {
        assert_eq!(name.parse::<Layer>(), Ok(layer), "{name}");
    }
    assert_eq!(
        "L9".parse::<Layer>().map_err(|e| e.to_string()),
        Err("unknown layer \"L9\": use L1, L2, L3 or skill".to_owned())
    );
}

/// The `tag` field of `value` as it travels, after checking that it reads back.
fn tag_of<T>(value: T, tag: &str) -> Result<Value, serde_json::Error>
where
    T: Serialize + DeserializeOwned + PartialEq + std::fmt::Debug,
{
    let json = serde_json::to_value(&value)?;
    assert_eq!(serde_json::from_value::<T>(json.clone())?, value);
    Ok(json[tag].clone())
}

#[test]
fn chat_events_are_tagged_by_kind() -> Result<(), serde_json::Error> {
    let text = || "t".to_owned();
    let events = [
        (
            ChatEvent::Recalled {
                hits: 0,
                items: vec![],
            },
            "recalled",
        ),
        (ChatEvent::Text { text: text() }, "text"),
        (
            ChatEvent::Notice {
                text: text(),
                about: Some(NoticeAbout::Compacted),
            },
            "notice",
        ),
        (ChatEvent::JobNote { text: text() }, "job_note"),
        (
            ChatEvent::Retrying {
                reason: text(),
                after_ms: 1,
            },
            "retrying",
        ),
        (
            ChatEvent::Status {
                status: TurnStatus::Thinking,
            },
            "status",
        ),
        (
            ChatEvent::Tool {
                call_id: text(),
                name: text(),
                display: text(),
            },
            "tool",
        ),
        (
            ChatEvent::ToolProgress {
                call_id: text(),
                text: text(),
            },
            "tool_progress",
        ),
        (
            ChatEvent::ToolDone {
                call_id: text(),
                output: text(),
                failed: false,
            },
            "tool_done",
        ),
        (ChatEvent::Stopped { tools: None }, "stopped"),
        (
            ChatEvent::Approval {
                request: 1,
                tool: text(),
                display: text(),
            },
            "approval",
        ),
        (
            ChatEvent::Question {
                request: 1,
                questions: vec![AskQuestion {
                    question: text(),
                    kind: QuestionKind::Multi,
                    options: vec![text()],
                    default: None,
                }],
            },
            "question",
        ),
        (
            ChatEvent::Done {
                steps: 1,
                input_tokens: 2,
                output_tokens: 3,
                turn_id: Some(4),
                tools: None,
                unresolved: None,
            },
            "done",
        ),
        (
            ChatEvent::Failed {
                message: text(),
                class: FailureKind::Auth,
            },
            "failed",
        ),
    ];
    for (event, kind) in events {
        assert_eq!(tag_of(event, "kind")?, json!(kind));
    }
    // A task's event is the chat event with the task beside its kind.
    let json = serde_json::to_value(TaskEvent {
        task: "s1".into(),
        event: ChatEvent::Stopped { tools: None },
    })?;
    assert_eq!(json, json!({"task": "s1", "kind": "stopped"}));
    Ok(())
}

#[test]
fn turn_statuses_are_tagged_by_state() -> Result<(), serde_json::Error> {
    let model = || "m".to_owned();
    for (status, state) in [
        (TurnStatus::LoadingModel { model: model() }, "loading_model"),
        (
            TurnStatus::ReadingContext { tokens: 2, done: 1 },
            "reading_context",
        ),
        (TurnStatus::Waiting { model: model() }, "waiting"),
        (TurnStatus::Thinking, "thinking"),
        (TurnStatus::RunningTool { name: model() }, "running_tool"),
    ] {
        assert_eq!(tag_of(status, "state")?, json!(state));
    }
    Ok(())
}

#[test]
fn reply_parts_are_tagged_by_kind() -> Result<(), serde_json::Error> {
    let tool = TranscriptTool {
        call_id: "c".into(),
        name: "bash".into(),
        display: "d".into(),
        output: "o".into(),
        failed: false,
    };
    for (part, kind) in [
        (ReplyPart::Text { text: "t".into() }, "text"),
        (ReplyPart::Tool(tool), "tool"),
        (
            ReplyPart::Compacted {
                summary: "s".into(),
            },
            "compacted",
        ),
        (ReplyPart::JobNote { text: "t".into() }, "job_note"),
    ] {
        assert_eq!(tag_of(part, "kind")?, json!(kind));
    }
    Ok(())
}

#[test]
fn scan_progress_is_tagged_by_event() -> Result<(), serde_json::Error> {
    let report = SourceReport::default;
    for (progress, event) in [
        (
            ScanProgress::SourceStarted {
                source: "codex".into(),
                files: 1,
            },
            "source_started",
        ),
        (
            ScanProgress::File {
                source: "codex".into(),
                done: 1,
                files: 2,
                report: report(),
            },
            "file",
        ),
        (ScanProgress::SourceDone { report: report() }, "source_done"),
        (ScanProgress::Stopped, "stopped"),
    ] {
        assert_eq!(tag_of(progress, "event")?, json!(event));
    }
    Ok(())
}

//! The one typed bridge to the backend: Tauri commands invoked through the webview's IPC.

use cairn_protocol::settings::{AppearanceInput, ProviderInput, Settings, VoiceInput};
use cairn_protocol::{memory, ApiError, ChatEvent, StatusReport};
use serde::de::DeserializeOwned;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_namespace = ["window", "__TAURI_INTERNALS__"], js_name = invoke, catch)]
    async fn tauri_invoke(cmd: &str, args: JsValue) -> Result<JsValue, JsValue>;
}

async fn invoke<T: DeserializeOwned>(cmd: &str) -> Result<T, ApiError> {
    invoke_with(cmd, &serde_json::Map::new()).await
}

/// A command with arguments (an object whose keys are the command's camelCase parameters).
async fn invoke_with<T: DeserializeOwned, A: serde::Serialize>(
    cmd: &str,
    args: &A,
) -> Result<T, ApiError> {
    let args = encode(cmd, args)?;
    decode(cmd, tauri_invoke(cmd, args).await.map_err(to_api_error)?)
}

/// A command that streams events through a Tauri channel while it runs: `args` as for
/// [`invoke_with`], plus the channel under `channel_arg` (its camelCase parameter). `on_event` sees
/// each event that decodes as `E`, in order; the answer comes when the command has finished.
async fn invoke_streaming<E, T, A>(
    cmd: &str,
    args: &A,
    channel_arg: &str,
    mut on_event: impl FnMut(E) + 'static,
) -> Result<T, ApiError>
where
    E: DeserializeOwned + 'static,
    T: DeserializeOwned,
    A: serde::Serialize,
{
    let handler = Closure::<dyn FnMut(JsValue)>::new(move |value: JsValue| {
        if let Ok(event) = serde_wasm_bindgen::from_value::<E>(value) {
            on_event(event);
        }
    });
    let channel = Channel::new();
    channel.set_onmessage(handler.as_ref().unchecked_ref());
    let args = encode(cmd, args)?;
    js_sys::Reflect::set(&args, &JsValue::from_str(channel_arg), &channel).map_err(to_api_error)?;
    let outcome = tauri_invoke(cmd, args).await.map_err(to_api_error);
    // The channel may still deliver its last events after the command returns; keep the handler.
    handler.forget();
    decode(cmd, outcome?)
}

/// The command's arguments as the JavaScript object `invoke` takes.
fn encode<A: serde::Serialize>(cmd: &str, args: &A) -> Result<JsValue, ApiError> {
    args.serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .map_err(|e| ApiError::new("encode", format!("{cmd}: {e}")))
}

/// The command's answer, typed.
fn decode<T: DeserializeOwned>(cmd: &str, value: JsValue) -> Result<T, ApiError> {
    serde_wasm_bindgen::from_value(value)
        .map_err(|e| ApiError::new("decode", format!("unexpected answer from {cmd}: {e}")))
}

fn to_api_error(value: JsValue) -> ApiError {
    serde_wasm_bindgen::from_value::<ApiError>(value.clone()).unwrap_or_else(|_| {
        ApiError::new(
            "ipc",
            value
                .as_string()
                .unwrap_or_else(|| "the app did not answer".to_owned()),
        )
    })
}

pub async fn app_status() -> Result<StatusReport, ApiError> {
    invoke("app_status").await
}

pub async fn show_workbench() -> Result<(), ApiError> {
    invoke("show_workbench").await
}

/// The pet's badge, its list and the task its bubble continues.
pub async fn pet_state() -> Result<cairn_protocol::PetState, ApiError> {
    invoke("pet_state").await
}

/// Grows the pet's window for its bubble or list (`open`), or shrinks it back to the stones.
pub async fn pet_expand(open: bool) -> Result<(), ApiError> {
    invoke_with("pet_expand", &serde_json::json!({"open": open})).await
}

/// Starts moving the pet's window with the pointer (the press that began a drag).
pub async fn drag_pet() -> Result<(), ApiError> {
    invoke_with(
        "plugin:window|start_dragging",
        &serde_json::json!({ "label": "pet" }),
    )
    .await
}

/// Shows task `session` in the workbench, bringing it to the front.
pub async fn open_task(session: &str) -> Result<(), ApiError> {
    invoke_with("open_task", &serde_json::json!({"session": session})).await
}

/// The task the workbench was asked to show, once.
pub async fn take_task_to_open() -> Result<Option<String>, ApiError> {
    invoke("take_task_to_open").await
}

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_namespace = ["window", "__TAURI__", "event"], js_name = listen, catch)]
    async fn tauri_listen(event: &str, handler: &js_sys::Function) -> Result<JsValue, JsValue>;
}

/// Calls `handler` each time the backend emits `event` to this window (for as long as the page
/// lives).
pub async fn on_app_event(event: &str, handler: impl FnMut() + 'static) -> Result<(), ApiError> {
    let mut handler = handler;
    let closure = Closure::<dyn FnMut(JsValue)>::new(move |_: JsValue| handler());
    tauri_listen(event, closure.as_ref().unchecked_ref())
        .await
        .map_err(to_api_error)?;
    closure.forget();
    Ok(())
}

/// Calls `handler` with each event of a turn nobody here started (a job's wake-up, a task created
/// over the local API), as the backend emits them.
pub async fn on_unattended_turn(
    handler: impl FnMut(cairn_protocol::TaskEvent) + 'static,
) -> Result<(), ApiError> {
    let mut handler = handler;
    let closure = Closure::<dyn FnMut(JsValue)>::new(move |event: JsValue| {
        let payload = js_sys::Reflect::get(&event, &JsValue::from_str("payload"));
        if let Ok(event) = payload.map(serde_wasm_bindgen::from_value) {
            match event {
                Ok(event) => handler(event),
                Err(e) => leptos::logging::warn!("a task event was not read: {e}"),
            }
        }
    });
    tauri_listen("task-event", closure.as_ref().unchecked_ref())
        .await
        .map_err(to_api_error)?;
    closure.forget();
    Ok(())
}

/// The stored tasks.
pub async fn tasks_list() -> Result<Vec<cairn_protocol::TaskSummary>, ApiError> {
    invoke("tasks_list").await
}

/// A stored task's transcript.
pub async fn task_transcript(
    session: &str,
) -> Result<Vec<cairn_protocol::TranscriptMessage>, ApiError> {
    invoke_with("task_transcript", &serde_json::json!({"session": session})).await
}

/// Renames, pins or archives a task (`change`: `{title?, pinned?, archived?}`).
pub async fn task_update(
    session: &str,
    change: &serde_json::Value,
) -> Result<cairn_protocol::TaskSummary, ApiError> {
    invoke_with(
        "task_update",
        &serde_json::json!({"session": session, "change": change}),
    )
    .await
}

/// Where a task works (a new task: where it will work).
pub async fn task_folder(session: &str) -> Result<String, ApiError> {
    invoke_with("task_folder", &serde_json::json!({"session": session})).await
}

/// Moves a task to `folder` from its next turn on; the folder as it will be used.
pub async fn task_folder_set(session: &str, folder: &str) -> Result<String, ApiError> {
    invoke_with(
        "task_folder_set",
        &serde_json::json!({"session": session, "folder": folder}),
    )
    .await
}

/// The subfolders of `folder` (empty: the home folder).
pub async fn folder_listing(
    folder: &str,
) -> Result<cairn_protocol::settings::FolderListing, ApiError> {
    invoke_with("folder_listing", &serde_json::json!({"folder": folder})).await
}

/// Deletes a task for good.
pub async fn task_delete(session: &str) -> Result<bool, ApiError> {
    invoke_with("task_delete", &serde_json::json!({"session": session})).await
}

/// Calls configured provider `name`: whether it answers and the models it offers.
pub async fn test_provider(name: &str) -> Result<cairn_protocol::ConnectionTest, ApiError> {
    invoke_with("settings_test_provider", &serde_json::json!({"name": name})).await
}

/// Switches the chat's model (`/model`); the model's name.
pub async fn set_model(model: &str) -> Result<String, ApiError> {
    invoke_with("set_model", &serde_json::json!({"model": model})).await
}

/// Compacts a task's history (`/compact`); the summary's length in characters.
/// Compacts a task's history; answers the summary the model goes on from.
pub async fn compact_task(session: &str) -> Result<String, ApiError> {
    invoke_with("compact_task", &serde_json::json!({"session": session})).await
}

/// Allows or denies a call waiting for permission.
pub async fn approve(request: u64, allow: bool) -> Result<(), ApiError> {
    invoke_with(
        "approve",
        &serde_json::json!({"request": request, "allow": allow}),
    )
    .await
}

/// Answers ask_user (one answer per question), or declines with `None`.
pub async fn answer_question(request: u64, answers: Option<Vec<String>>) -> Result<(), ApiError> {
    invoke_with(
        "answer_question",
        &serde_json::json!({"request": request, "answers": answers}),
    )
    .await
}

/// Stops the turn running in `session`.
pub async fn stop_turn(session: &str) -> Result<(), ApiError> {
    invoke_with("stop_turn", &serde_json::json!({"session": session})).await
}

/// Starts capturing speech (the microphone, or the configured WAV input).
pub async fn voice_start() -> Result<(), ApiError> {
    invoke("voice_start").await
}

/// The input level, 0–1, for the meter.
pub async fn voice_level() -> Result<f32, ApiError> {
    invoke("voice_level").await
}

/// Stops capturing; the words said.
pub async fn voice_stop() -> Result<String, ApiError> {
    invoke("voice_stop").await
}

#[wasm_bindgen(js_namespace = ["window", "__TAURI__", "core"])]
extern "C" {
    /// Tauri's ordered message channel (`@tauri-apps/api/core` `Channel`).
    type Channel;
    #[wasm_bindgen(constructor)]
    fn new() -> Channel;
    #[wasm_bindgen(method, setter)]
    fn set_onmessage(this: &Channel, handler: &js_sys::Function);
}

/// Sends a message in `session`; `on_event` sees the turn's events as they stream in. Returns when
/// the turn has ended.
pub async fn send_message(
    session: &str,
    text: &str,
    attachments: &[Attachment],
    on_event: impl FnMut(ChatEvent) + 'static,
) -> Result<(), ApiError> {
    let attachments: Vec<_> = attachments
        .iter()
        .map(|a| cairn_protocol::AttachmentInput {
            name: a.name.clone(),
            data_url: a.data_url.clone(),
        })
        .collect();
    invoke_streaming(
        "send_message",
        &serde_json::json!({"session": session, "text": text, "attachments": attachments}),
        "onEvent",
        on_event,
    )
    .await
}

/// A file the person attached to the message being written.
#[derive(Debug, Clone, PartialEq)]
pub struct Attachment {
    pub name: String,
    pub bytes: f64,
    /// `data:<type>;base64,…`
    pub data_url: String,
}

/// `/restart`: the task's last message again; streams like [`send_message`].
pub async fn restart_task(
    session: &str,
    on_event: impl FnMut(ChatEvent) + 'static,
) -> Result<(), ApiError> {
    invoke_streaming(
        "restart_task",
        &serde_json::json!({"session": session}),
        "onEvent",
        on_event,
    )
    .await
}

/// `/goal …` on a task.
pub async fn task_goal(session: &str, words: &str) -> Result<String, ApiError> {
    invoke_with(
        "task_goal",
        &serde_json::json!({"session": session, "words": words}),
    )
    .await
}

/// `/resume …`: episodes from memory, or one's context.
pub async fn resume_search(words: &str) -> Result<String, ApiError> {
    invoke_with("resume_search", &serde_json::json!({"words": words})).await
}

/// `text` as an attached document named `name` (a `data:<media_type>;base64,` URL, as a picked
/// file would be read).
pub fn text_attachment(name: &str, media_type: &str, text: &str) -> Result<Attachment, String> {
    // btoa takes one character per byte.
    let bytes: String = text.bytes().map(char::from).collect();
    let encoded = web_sys::window()
        .ok_or("no window")?
        .btoa(&bytes)
        .map_err(|_| "the text could not be encoded".to_owned())?;
    Ok(Attachment {
        name: name.to_owned(),
        bytes: text.len() as f64,
        data_url: format!("data:{media_type};base64,{encoded}"),
    })
}

/// Reads a picked file as a data URL.
pub async fn read_data_url(file: &web_sys::File) -> Result<String, String> {
    let unreadable = || format!("{} could not be read.", file.name());
    let reader = web_sys::FileReader::new().map_err(|_| unreadable())?;
    let promise = js_sys::Promise::new(&mut |resolve, reject| {
        let done = reader.clone();
        let on_load = Closure::once_into_js(move || {
            let _ = resolve.call1(&JsValue::NULL, &done.result().unwrap_or(JsValue::NULL));
        });
        reader.set_onload(Some(on_load.unchecked_ref()));
        let on_error = Closure::once_into_js(move || {
            let _ = reject.call0(&JsValue::NULL);
        });
        reader.set_onerror(Some(on_error.unchecked_ref()));
    });
    reader.read_as_data_url(file).map_err(|_| unreadable())?;
    wasm_bindgen_futures::JsFuture::from(promise)
        .await
        .ok()
        .and_then(|v| v.as_string())
        .ok_or_else(unreadable)
}

/// Cairn's own models: installed or not, loaded or not.
/// A number that moves whenever a memory is added, edited or deleted, wherever that happened.
pub async fn memory_revision() -> Result<i64, ApiError> {
    invoke("memory_revision").await
}

/// Counts by layer and source, sessions, turns and the size on disk.
pub async fn memory_overview() -> Result<memory::Overview, ApiError> {
    invoke("memory_overview").await
}

/// Live entries, newest first, of one layer (`L1`, `L2`, `L3`, `skill`) or all.
pub async fn memory_items(
    layer: Option<&str>,
    offset: usize,
    limit: usize,
) -> Result<Vec<memory::MemoryRecord>, ApiError> {
    let args = serde_json::json!({ "layer": layer, "offset": offset, "limit": limit });
    invoke_with("memory_items", &args).await
}

/// A search with every candidate explained.
pub async fn memory_search(
    query: &str,
    layer: Option<&str>,
    limit: usize,
) -> Result<memory::SearchResult, ApiError> {
    let args = serde_json::json!({ "query": query, "layer": layer, "limit": limit });
    invoke_with("memory_search", &args).await
}

/// One live entry.
pub async fn memory_get(id: i64) -> Result<memory::MemoryRecord, ApiError> {
    invoke_with("memory_get", &serde_json::json!({ "id": id })).await
}

/// A rating of a finished reply (by its captured turn); the episode's reward as it now stands.
pub async fn give_feedback(
    turn_id: i64,
    rating: memory::Rating,
) -> Result<memory::Reward, ApiError> {
    invoke_with(
        "give_feedback",
        &serde_json::json!({ "request": memory::FeedbackRequest { memory_id: None, turn_id: Some(turn_id), rating, note: None } }),
    )
    .await
}

/// The versions of a memory's fact, oldest first.
pub async fn memory_versions(id: i64) -> Result<Vec<memory::MemoryRecord>, ApiError> {
    invoke_with("memory_versions", &serde_json::json!({ "id": id })).await
}

/// A memory's new text, re-indexed; the entry as it is now.
pub async fn memory_edit(id: i64, text: &str) -> Result<memory::MemoryRecord, ApiError> {
    invoke_with(
        "memory_edit",
        &serde_json::json!({ "id": id, "text": text }),
    )
    .await
}

/// Deletes a memory (its text leaves the database).
pub async fn memory_delete(id: i64) -> Result<bool, ApiError> {
    invoke_with("memory_delete", &serde_json::json!({ "id": id })).await
}

/// Memories per day by source, and the search log's statistics.
pub async fn memory_analysis() -> Result<memory::Analysis, ApiError> {
    invoke("memory_analysis").await
}

pub async fn models_list() -> Result<Vec<cairn_protocol::LocalModelInfo>, ApiError> {
    invoke("models_list").await
}

/// Installs one of Cairn's models; `on_progress` sees the download and the check as they go.
pub async fn models_install(
    name: &str,
    on_progress: impl FnMut(cairn_protocol::InstallProgress) + 'static,
) -> Result<Vec<cairn_protocol::LocalModelInfo>, ApiError> {
    invoke_streaming(
        "models_install",
        &serde_json::json!({"name": name}),
        "onProgress",
        on_progress,
    )
    .await
}

/// Deletes an installed model of Cairn's.
pub async fn models_remove(name: &str) -> Result<Vec<cairn_protocol::LocalModelInfo>, ApiError> {
    invoke_with("models_remove", &serde_json::json!({"name": name})).await
}

/// Runs a scan; `on_event` sees its progress. Returns the reports, one per source scanned.
pub async fn scan_sources(
    only: Option<&str>,
    full: bool,
    on_event: impl FnMut(cairn_protocol::ScanProgress) + 'static,
) -> Result<Vec<cairn_protocol::SourceReport>, ApiError> {
    invoke_streaming(
        "sources_scan",
        &serde_json::json!({ "only": only, "full": full }),
        "onProgress",
        on_event,
    )
    .await
}

pub async fn list_sources() -> Result<Vec<cairn_protocol::SourceInfo>, ApiError> {
    invoke_with("sources_list", &serde_json::json!({})).await
}

pub async fn scan_control(action: &str) -> Result<bool, ApiError> {
    invoke_with(
        "sources_scan_control",
        &serde_json::json!({ "action": action }),
    )
    .await
}

pub async fn hooks_status() -> Result<Vec<cairn_protocol::HookStatus>, ApiError> {
    invoke_with("hooks_status", &serde_json::json!({})).await
}

/// Where the `cairn` command the hooks run should be, and whether it is there.
pub async fn hooks_cli() -> Result<(String, bool), ApiError> {
    invoke_with("hooks_cli", &serde_json::json!({})).await
}

pub async fn hook_change(
    agent: &str,
    install: bool,
) -> Result<cairn_protocol::HookStatus, ApiError> {
    let command = if install {
        "hook_install"
    } else {
        "hook_remove"
    };
    invoke_with(command, &serde_json::json!({ "agent": agent })).await
}

/// Everything the Settings page shows.
pub async fn settings_get() -> Result<Settings, ApiError> {
    invoke("settings_get").await
}

/// A change the Settings page (or the first run) makes; each answers the settings as they are
/// afterwards.
#[derive(Debug, Clone)]
pub enum SettingsChange {
    SaveProvider(ProviderInput),
    RemoveProvider(String),
    DefaultModel { provider: String, model: String },
    Voice(VoiceInput),
    Appearance(AppearanceInput),
    Agent(cairn_protocol::settings::AgentInput),
    StartAtLogin(bool),
    SaveMcp(cairn_protocol::settings::McpServerInput),
    RemoveMcp(String),
    EnableMcp { name: String, on: bool },
}

/// Makes `change`, written into the config file by the backend.
pub async fn change_settings(change: SettingsChange) -> Result<Settings, ApiError> {
    use serde_json::json;
    match change {
        SettingsChange::SaveProvider(provider) => {
            invoke_with("settings_save_provider", &json!({ "provider": provider })).await
        }
        SettingsChange::RemoveProvider(name) => {
            invoke_with("settings_remove_provider", &json!({ "name": name })).await
        }
        SettingsChange::DefaultModel { provider, model } => {
            let args = json!({ "provider": provider, "model": model });
            invoke_with("settings_set_default_model", &args).await
        }
        SettingsChange::Voice(voice) => {
            invoke_with("settings_save_voice", &json!({ "voice": voice })).await
        }
        SettingsChange::Appearance(appearance) => {
            let args = json!({ "appearance": appearance });
            invoke_with("settings_save_appearance", &args).await
        }
        SettingsChange::Agent(agent) => {
            invoke_with("settings_save_agent", &json!({ "agent": agent })).await
        }
        SettingsChange::StartAtLogin(on) => {
            invoke_with("settings_start_at_login", &json!({ "on": on })).await
        }
        SettingsChange::SaveMcp(server) => {
            invoke_with("settings_save_mcp", &json!({ "server": server })).await
        }
        SettingsChange::RemoveMcp(name) => {
            invoke_with("settings_remove_mcp", &json!({ "name": name })).await
        }
        SettingsChange::EnableMcp { name, on } => {
            invoke_with("settings_enable_mcp", &json!({ "name": name, "on": on })).await
        }
    }
}

/// Stops the background jobs and quits (the person said yes).
pub async fn quit_app() -> Result<(), ApiError> {
    invoke("quit_app").await
}

/// Task `session`'s background jobs.
pub async fn task_jobs(session: &str) -> Result<Vec<cairn_protocol::TaskJob>, ApiError> {
    invoke_with("task_jobs", &serde_json::json!({ "session": session })).await
}

/// Task `session`'s team (`None`: it has none).
pub async fn task_team(session: &str) -> Result<Option<cairn_protocol::TaskTeam>, ApiError> {
    invoke_with("task_team", &serde_json::json!({ "session": session })).await
}

/// The end of a job's output.
pub async fn job_output(session: &str, id: &str) -> Result<String, ApiError> {
    invoke_with(
        "job_output",
        &serde_json::json!({ "session": session, "id": id }),
    )
    .await
}

/// Stops a job; false when it had already ended.
pub async fn job_stop(session: &str, id: &str) -> Result<bool, ApiError> {
    invoke_with(
        "job_stop",
        &serde_json::json!({ "session": session, "id": id }),
    )
    .await
}

/// Each MCP server's state, tools and last error (those not running are started).
pub async fn mcp_statuses() -> Result<Vec<cairn_protocol::settings::McpStatus>, ApiError> {
    invoke("mcp_statuses").await
}

/// Stops an MCP server and starts it again.
pub async fn mcp_restart(name: &str) -> Result<(), ApiError> {
    invoke_with("mcp_restart", &serde_json::json!({ "name": name })).await
}

/// Writes the redacted diagnostic report; its path.
pub async fn export_diagnostics() -> Result<String, ApiError> {
    invoke("settings_export_diagnostics").await
}

/// Loads both windows again (after a change of language).
pub async fn reload_windows() -> Result<(), ApiError> {
    invoke("reload_windows").await
}

/// Shows or hides the pet; whether it shows now.
pub async fn toggle_pet() -> Result<bool, ApiError> {
    invoke("toggle_pet").await
}

/// The stored tasks whose words match `query`, best first (their session ids).
pub async fn tasks_search(query: &str) -> Result<Vec<String>, ApiError> {
    invoke_with("tasks_search", &serde_json::json!({ "query": query })).await
}

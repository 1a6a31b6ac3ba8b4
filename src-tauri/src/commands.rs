//! Typed Tauri commands: thin adapters from the webviews to `cairn-api` and the window helpers.

use cairn_api::chat::ChatTurn;
use cairn_api::{AttachmentInput, TaskChange};
use cairn_protocol::{
    ApiError, ChatEvent, ErrorCode, PetState, StatusReport, TaskJob, TaskSummary, TaskTeam,
    TranscriptMessage,
};
use tauri::ipc::Channel;
use tauri::{AppHandle, Emitter, State};

use crate::{blocking, on_chat, windows, Desktop};

/// The same report as `cairn status --json` and `GET /api/v1/status`.
#[tauri::command]
pub async fn app_status(desktop: State<'_, Desktop>) -> Result<StatusReport, ApiError> {
    let report = desktop.cairn.status(desktop.serving.as_ref()).await;
    mark_ready();
    Ok(report)
}

/// The workbench asks for the status as soon as it is interactive: for the start-up benchmark,
/// the first ask is written to `$CAIRN_READY_FILE` (once).
fn mark_ready() {
    static READY: std::sync::Once = std::sync::Once::new();
    READY.call_once(|| {
        if let Some(file) = std::env::var_os("CAIRN_READY_FILE") {
            let _ = std::fs::write(file, b"ready");
        }
    });
}

#[tauri::command]
pub fn show_workbench(app: AppHandle) -> Result<(), ApiError> {
    windows::show_workbench(&app).map_err(window_error)
}

/// Returns whether the pet is visible afterwards.
#[tauri::command]
pub fn toggle_pet(app: AppHandle) -> Result<bool, ApiError> {
    windows::toggle_pet(&app).map_err(window_error)
}

fn window_error(e: tauri::Error) -> ApiError {
    ApiError::new(ErrorCode::Window, e.to_string())
}

/// Runs one turn of `session` (the message with its attachments) and streams its events to the
/// page.
#[tauri::command]
pub async fn send_message(
    desktop: State<'_, Desktop>,
    session: String,
    text: String,
    attachments: Option<Vec<AttachmentInput>>,
    on_event: Channel<ChatEvent>,
) -> Result<(), ApiError> {
    let attachments = attachments.unwrap_or_default();
    // The attachments are read and stored off the main thread.
    let turn = tauri::async_runtime::spawn_blocking({
        let chat = desktop.chat.clone();
        move || chat.send(&session, &text, &attachments)
    })
    .await
    .map_err(crate::join_error)?;
    stream_turn(turn, on_event).await
}

/// `/restart`: runs the task's last message again, streaming like a new one.
#[tauri::command]
pub async fn restart_task(
    desktop: State<'_, Desktop>,
    session: String,
    on_event: Channel<ChatEvent>,
) -> Result<(), ApiError> {
    stream_turn(desktop.chat.restart(&session), on_event).await
}

/// `/goal …` on a task: what to tell the person.
#[tauri::command]
pub async fn task_goal(
    desktop: State<'_, Desktop>,
    session: String,
    words: String,
) -> Result<String, ApiError> {
    on_chat(&desktop, move |chat| chat.task_goal(&session, &words)).await
}

/// `/resume <words>`: matching episodes from memory; `/resume N`: that episode's context.
#[tauri::command]
pub async fn resume_search(desktop: State<'_, Desktop>, words: String) -> Result<String, ApiError> {
    blocking(&desktop, move |cairn| {
        cairn.resume_text(&words, "/resume N")
    })
    .await
}

/// Streams a turn's events to the page; a page that stops listening stops the turn.
async fn stream_turn(
    turn: Result<ChatTurn, cairn_api::Error>,
    on_event: Channel<ChatEvent>,
) -> Result<(), ApiError> {
    let mut turn = turn.map_err(|e| e.to_api_error())?;
    while let Some(event) = turn.next().await {
        if on_event.send(event).is_err() {
            break;
        }
    }
    Ok(())
}

fn voice_error(e: cairn_api::Error) -> ApiError {
    ApiError::new(ErrorCode::Voice, e.to_string())
}

/// The mic button is pressed: capture starts (from the microphone, or the WAV file the config
/// names), and the model warms up meanwhile so the transcript is quick.
#[tauri::command]
pub async fn voice_start(desktop: State<'_, Desktop>) -> Result<(), ApiError> {
    desktop.voice.start(&desktop.cairn).map_err(voice_error)
}

/// The input level for the meter, 0–1 (0 when nothing is being captured).
#[tauri::command]
pub fn voice_level(desktop: State<'_, Desktop>) -> f32 {
    desktop.voice.level()
}

/// The mic button is released: the words said, for the person to edit and send.
#[tauri::command]
pub async fn voice_stop(desktop: State<'_, Desktop>) -> Result<String, ApiError> {
    let (voice, cairn) = (desktop.voice.clone(), desktop.cairn.clone());
    tauri::async_runtime::spawn_blocking(move || voice.stop(&cairn))
        .await
        .map_err(|e| ApiError::new(ErrorCode::Internal, e.to_string()))?
        .map_err(voice_error)
}

/// The person's decision on an approval request.
#[tauri::command]
pub fn approve(desktop: State<'_, Desktop>, request: u64, allow: bool) -> Result<(), ApiError> {
    desktop
        .chat
        .approve(request, allow)
        .map_err(|e| e.to_api_error())
}

/// The person's answers to ask_user (one per question), or `None` to decline.
#[tauri::command]
pub fn answer_question(
    desktop: State<'_, Desktop>,
    request: u64,
    answers: Option<Vec<String>>,
) -> Result<(), ApiError> {
    desktop
        .chat
        .answer(request, answers)
        .map_err(|e| e.to_api_error())
}

/// Stops the turn running in `session`: its commands are killed, its question cancelled.
#[tauri::command]
pub fn stop_turn(desktop: State<'_, Desktop>, session: String) -> Result<(), ApiError> {
    desktop.chat.stop(&session).map_err(|e| e.to_api_error())
}

fn task_error(e: cairn_api::Error) -> ApiError {
    e.to_api_error()
}

/// Every stored task (archived ones marked), most recently updated first.
#[tauri::command]
pub fn tasks_list(desktop: State<'_, Desktop>) -> Vec<TaskSummary> {
    desktop.cairn.tasks_list()
}

/// The tasks whose title or conversation contains `query` (Ctrl+K searches content too).
#[tauri::command]
pub async fn tasks_search(
    desktop: State<'_, Desktop>,
    query: String,
) -> Result<Vec<String>, ApiError> {
    blocking(&desktop, move |cairn| Ok(cairn.tasks_search(&query))).await
}

/// A stored task as the stream shows it.
#[tauri::command]
pub fn task_transcript(
    desktop: State<'_, Desktop>,
    session: String,
) -> Result<Vec<TranscriptMessage>, ApiError> {
    desktop.cairn.task_transcript(&session).map_err(task_error)
}

/// Renames, pins, unpins, archives or restores a task.
#[tauri::command]
pub fn task_update(
    desktop: State<'_, Desktop>,
    session: String,
    change: TaskChange,
) -> Result<TaskSummary, ApiError> {
    desktop
        .chat
        .update_task(&session, change)
        .map_err(task_error)
}

/// Where a task works (a new task: where it will work).
#[tauri::command]
pub async fn task_folder(desktop: State<'_, Desktop>, session: String) -> Result<String, ApiError> {
    on_chat(&desktop, move |chat| {
        Ok(chat.task_folder(&session).display().to_string())
    })
    .await
}

/// Moves a task to another folder from its next turn on; the folder as it will be used.
#[tauri::command]
pub async fn task_folder_set(
    desktop: State<'_, Desktop>,
    session: String,
    folder: String,
) -> Result<String, ApiError> {
    on_chat(&desktop, move |chat| {
        chat.set_task_folder(&session, &folder)
            .map(|f| f.display().to_string())
    })
    .await
}

/// Deletes a task for good (its background jobs stop).
#[tauri::command]
pub fn task_delete(desktop: State<'_, Desktop>, session: String) -> Result<bool, ApiError> {
    desktop.chat.delete_task(&session).map_err(task_error)
}

/// The task's background jobs, for its jobs strip.
#[tauri::command]
pub fn task_jobs(desktop: State<'_, Desktop>, session: String) -> Vec<TaskJob> {
    desktop.chat.task_jobs(&session)
}

/// The task's team: its members and its room.
#[tauri::command]
pub fn task_team(desktop: State<'_, Desktop>, session: String) -> Option<TaskTeam> {
    desktop.cairn.teams().view(&session)
}

/// The end of a job's output (the last 64 KiB), as the person reads it.
#[tauri::command]
pub fn job_output(
    desktop: State<'_, Desktop>,
    session: String,
    id: String,
) -> Result<String, ApiError> {
    desktop
        .chat
        .jobs()
        .peek(&session, &id, 64 * 1024)
        .ok_or_else(|| ApiError::new(ErrorCode::NotFound, format!("no job {id} in this task")))
}

/// Quits as the tray's Quit does: asking first when background jobs run.
#[tauri::command]
pub fn quit_request(app: AppHandle) {
    crate::quit_or_ask(&app);
}

/// The person's yes to quitting while background jobs run: they stop, the app ends.
#[tauri::command]
pub fn quit_app(app: AppHandle, desktop: State<'_, Desktop>) {
    desktop.chat.jobs().stop_all();
    app.exit(0);
}

/// Stops a job from its strip; false when it had already ended.
#[tauri::command]
pub fn job_stop(desktop: State<'_, Desktop>, session: String, id: String) -> bool {
    desktop.chat.jobs().stop(&session, &id)
}

/// `/model provider/model`: the chat continues with that model, which becomes the default.
#[tauri::command]
pub async fn set_model(desktop: State<'_, Desktop>, model: String) -> Result<String, ApiError> {
    on_chat(&desktop, move |chat| chat.choose_model(&model)).await
}

/// `/compact`: the task's history replaced by the model's summary of it; the summary's length.
#[tauri::command]
pub async fn compact_task(
    desktop: State<'_, Desktop>,
    session: String,
) -> Result<String, ApiError> {
    desktop
        .chat
        .compact(&session)
        .await
        .map_err(|e| e.to_api_error())
}

/// What the pet shows: the tasks running now and those finished in the last five minutes (the
/// badge counts them), and which task a message typed into the pet continues. Asked when a task
/// changes, so the stored tasks are read off the main thread.
#[tauri::command]
pub async fn pet_state(desktop: State<'_, Desktop>) -> Result<PetState, ApiError> {
    on_chat(&desktop, |chat| Ok(chat.pet_state())).await
}

/// The pet's window grows (up and to the left, the stones staying put) while its bubble or task
/// list is open, and shrinks back to the stones when they close.
#[tauri::command]
pub fn pet_expand(app: AppHandle, open: bool) -> Result<(), ApiError> {
    windows::expand_pet(&app, open).map_err(window_error)
}

/// Opens task `session` in the workbench (from the pet's list or bubble): the workbench comes to
/// the front and shows it.
#[tauri::command]
pub fn open_task(
    app: AppHandle,
    desktop: State<'_, Desktop>,
    session: String,
) -> Result<(), ApiError> {
    if let Ok(mut wanted) = desktop.task_to_open.lock() {
        *wanted = Some(session);
    }
    windows::show_workbench(&app).map_err(window_error)?;
    // A workbench already open hears it now; one just created asks when it starts.
    let _ = app.emit_to(windows::WORKBENCH, "open-task", ());
    Ok(())
}

/// The task the workbench was asked to show (once), if any.
#[tauri::command]
pub fn take_task_to_open(desktop: State<'_, Desktop>) -> Option<String> {
    desktop.task_to_open.lock().ok().and_then(|mut w| w.take())
}

/// Reloads both windows, so a new language applies everywhere at once.
#[tauri::command]
pub fn reload_windows(app: tauri::AppHandle) {
    crate::windows::reload_all(&app);
}

/// Every command the windows may invoke.
pub fn handler() -> impl Fn(tauri::ipc::Invoke) -> bool + Send + Sync + 'static {
    tauri::generate_handler![
        crate::sources_commands::sources_list,
        crate::sources_commands::sources_scan,
        crate::sources_commands::sources_scan_control,
        crate::sources_commands::hooks_status,
        crate::sources_commands::hooks_cli,
        crate::sources_commands::hook_install,
        crate::sources_commands::hook_remove,
        crate::settings_commands::settings_get,
        crate::settings_commands::settings_save_provider,
        crate::settings_commands::settings_remove_provider,
        crate::settings_commands::settings_set_slot_model,
        crate::settings_commands::settings_test_provider,
        crate::settings_commands::settings_set_default_model,
        crate::settings_commands::settings_save_voice,
        crate::settings_commands::settings_save_appearance,
        crate::settings_commands::settings_save_agent,
        crate::settings_commands::folder_listing,
        crate::settings_commands::settings_start_at_login,
        crate::settings_commands::settings_export_diagnostics,
        crate::settings_commands::settings_save_mcp,
        crate::settings_commands::settings_remove_mcp,
        crate::settings_commands::settings_enable_mcp,
        crate::settings_commands::mcp_statuses,
        crate::settings_commands::mcp_restart,
        crate::models_commands::models_list,
        crate::models_commands::models_install,
        crate::models_commands::models_remove,
        crate::memory_commands::memory_overview,
        crate::memory_commands::memory_revision,
        crate::memory_commands::memory_items,
        crate::memory_commands::memory_search,
        crate::memory_commands::memory_get,
        crate::memory_commands::memory_versions,
        crate::memory_commands::give_feedback,
        crate::memory_commands::memory_edit,
        crate::memory_commands::memory_delete,
        crate::memory_commands::memory_analysis,
        crate::schedule_commands::schedules_list,
        crate::schedule_commands::schedule_add,
        crate::schedule_commands::schedule_edit,
        crate::schedule_commands::schedule_pause,
        crate::schedule_commands::schedule_remove,
        crate::schedule_commands::schedule_run,
        crate::sync_commands::sync_status,
        crate::sync_commands::sync_join,
        crate::sync_commands::sync_pair,
        crate::sync_commands::sync_now,
        crate::sync_commands::sync_revoke,
        crate::sync_commands::sync_leave,
        crate::sync_commands::sync_pause,
        crate::memory_commands::memory_dream,
        crate::memory_commands::memory_dream_log,
        crate::memory_commands::memory_dream_restore,
        crate::commands::app_status,
        crate::commands::show_workbench,
        crate::commands::toggle_pet,
        crate::commands::send_message,
        crate::commands::quit_app,
        crate::commands::quit_request,
        crate::commands::task_jobs,
        crate::commands::task_team,
        crate::commands::job_output,
        crate::commands::job_stop,
        crate::commands::voice_start,
        crate::commands::voice_level,
        crate::commands::voice_stop,
        crate::commands::approve,
        crate::commands::answer_question,
        crate::commands::stop_turn,
        crate::commands::tasks_list,
        crate::commands::tasks_search,
        crate::commands::task_transcript,
        crate::commands::task_update,
        crate::commands::task_delete,
        crate::commands::task_folder,
        crate::commands::task_folder_set,
        crate::commands::set_model,
        crate::commands::compact_task,
        crate::commands::pet_state,
        crate::commands::pet_expand,
        crate::commands::open_task,
        crate::commands::take_task_to_open,
        crate::commands::reload_windows,
        crate::commands::restart_task,
        crate::commands::task_goal,
        crate::commands::resume_search,
    ]
}

//! Typed Tauri commands: thin adapters from the webviews to `cairn-api` and the window helpers.

use cairn_agent::Op;
use cairn_api::{AttachmentInput, TaskChange};
use cairn_protocol::{
    ApiError, ChatEvent, PetState, StatusReport, TaskJob, TaskSummary, TaskTeam, TranscriptMessage,
};
use tauri::ipc::Channel;
use tauri::{AppHandle, Emitter, State};

use crate::{blocking, windows, Desktop};

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
    ApiError::new("window", e.to_string())
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
    let prepared = blocking(&desktop, move |cairn| {
        cairn.prepare_message(&text, &attachments)
    })
    .await?;
    let op = Op::UserMessage {
        session: session.clone(),
        text: prepared.text,
        images: prepared.images,
    };
    stream_turn(&desktop, session, op, on_event).await
}

/// `/restart`: runs the task's last message again, streaming like a new one.
#[tauri::command]
pub async fn restart_task(
    desktop: State<'_, Desktop>,
    session: String,
    on_event: Channel<ChatEvent>,
) -> Result<(), ApiError> {
    let op = Op::Restart {
        session: session.clone(),
    };
    stream_turn(&desktop, session, op, on_event).await
}

/// `/goal …` on a task: what to tell the person.
#[tauri::command]
pub async fn task_goal(
    desktop: State<'_, Desktop>,
    session: String,
    words: String,
) -> Result<String, ApiError> {
    blocking(&desktop, move |cairn| cairn.task_goal(&session, &words)).await
}

/// `/resume <words>`: matching episodes from memory; `/resume N`: that episode's context.
#[tauri::command]
pub async fn resume_search(desktop: State<'_, Desktop>, words: String) -> Result<String, ApiError> {
    blocking(&desktop, move |cairn| {
        cairn.resume_text(&words, "/resume N")
    })
    .await
}

/// Submits `op` (a message or a restart) and streams the turn's events to the page; a page that
/// stops listening stops the turn.
async fn stream_turn(
    desktop: &Desktop,
    session: String,
    op: Op,
    on_event: Channel<ChatEvent>,
) -> Result<(), ApiError> {
    let mut turn = desktop
        .chat
        .submit(&session, op)
        .map_err(|e| e.to_api_error())?;
    while let Some(event) = turn.next().await {
        if on_event.send(event).is_err() {
            break;
        }
    }
    Ok(())
}

fn voice_error(e: cairn_api::Error) -> ApiError {
    ApiError::new("voice", e.to_string())
}

/// The mic button is pressed: capture starts (from the microphone, or the WAV file the config
/// names), and the model warms up meanwhile so the transcript is quick.
#[tauri::command]
pub async fn voice_start(desktop: State<'_, Desktop>) -> Result<(), ApiError> {
    let capture = desktop.cairn.voice_begin().map_err(voice_error)?;
    let mut slot = desktop
        .voice
        .lock()
        .map_err(|_| ApiError::new("internal", "the voice lock was poisoned"))?;
    *slot = Some(capture);
    let cairn = desktop.cairn.clone();
    tauri::async_runtime::spawn_blocking(move || {
        if let Err(e) = cairn.transcriber(None) {
            tracing::warn!("the voice model did not load: {e}");
        }
    });
    Ok(())
}

/// The input level for the meter, 0–1 (0 when nothing is being captured).
#[tauri::command]
pub fn voice_level(desktop: State<'_, Desktop>) -> f32 {
    desktop
        .voice
        .lock()
        .ok()
        .and_then(|v| v.as_ref().map(|c| c.level()))
        .unwrap_or(0.0)
}

/// The mic button is released: the words said, for the person to edit and send.
#[tauri::command]
pub async fn voice_stop(desktop: State<'_, Desktop>) -> Result<String, ApiError> {
    let capture = desktop
        .voice
        .lock()
        .map_err(|_| ApiError::new("internal", "the voice lock was poisoned"))?
        .take()
        .ok_or_else(|| ApiError::new("voice", "nothing is being recorded"))?;
    let cairn = desktop.cairn.clone();
    tauri::async_runtime::spawn_blocking(move || cairn.voice_finish(capture))
        .await
        .map_err(|e| ApiError::new("internal", e.to_string()))?
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
        .cairn
        .task_update(&session, change)
        .map_err(task_error)
}

/// Where a task works (a new task: where it will work).
#[tauri::command]
pub async fn task_folder(desktop: State<'_, Desktop>, session: String) -> Result<String, ApiError> {
    let chat = desktop.chat.clone();
    tauri::async_runtime::spawn_blocking(move || chat.task_folder(&session).display().to_string())
        .await
        .map_err(crate::join_error)
}

/// Moves a task to another folder from its next turn on; the folder as it will be used.
#[tauri::command]
pub async fn task_folder_set(
    desktop: State<'_, Desktop>,
    session: String,
    folder: String,
) -> Result<String, ApiError> {
    let chat = desktop.chat.clone();
    tauri::async_runtime::spawn_blocking(move || {
        chat.set_task_folder(&session, &folder)
            .map(|f| f.display().to_string())
    })
    .await
    .map_err(crate::join_error)?
    .map_err(task_error)
}

/// Deletes a task for good (its background jobs stop).
#[tauri::command]
pub fn task_delete(desktop: State<'_, Desktop>, session: String) -> Result<bool, ApiError> {
    desktop.chat.jobs().end_session(&session);
    desktop.cairn.teams().end(&session);
    desktop.cairn.task_delete(&session).map_err(task_error)
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
        .ok_or_else(|| ApiError::new("not_found", format!("no job {id} in this task")))
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
    let chosen = blocking(&desktop, move |cairn| cairn.choose_model(&model)).await?;
    desktop.chat.reset();
    Ok(chosen)
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
/// badge counts them), and which task a message typed into the pet continues. Asked every two
/// seconds, so the stored tasks are read off the main thread.
#[tauri::command]
pub async fn pet_state(desktop: State<'_, Desktop>) -> Result<PetState, ApiError> {
    let running = desktop.chat.running();
    blocking(&desktop, move |cairn| {
        Ok(cairn.pet_state(&running, cairn_memory::now_ms()))
    })
    .await
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

//! The Cairn desktop app: starts the local API, opens the workbench and the pet, wires the pet's
//! global shortcut and the tray, and shuts everything down cleanly (removing `runtime.json`). Its
//! `#[tauri::command]`s (`commands.rs`, `*_commands.rs`) are thin adapters over `cairn-api`.

#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

mod commands;
mod display;
mod memory_commands;
mod models_commands;
mod schedule_commands;
mod settings_commands;
mod sources_commands;
mod sync_commands;
mod tray;
mod windows;

use std::sync::{Arc, Mutex};

use anyhow::Context;
use cairn_api::Cairn;
use cairn_config::Home;
use cairn_http::RunningApi;
use cairn_protocol::RuntimeInfo;
use tauri::{Manager, RunEvent, WindowEvent};
use tauri_plugin_global_shortcut::{GlobalShortcutExt, ShortcutState};

/// What every command can reach.
pub struct Desktop {
    pub cairn: Cairn,
    /// The running API's address, when it started.
    pub serving: Option<RuntimeInfo>,
    api: Mutex<Option<RunningApi>>,
    /// The conversations: the agent runtime and the turns running now.
    pub chat: Arc<cairn_api::chat::Chat>,
    /// The voice capture in progress (the mic button is on).
    pub voice: Arc<cairn_api::VoiceSession>,
    /// A task the pet asked the workbench to show, until the workbench takes it.
    pub task_to_open: Mutex<Option<String>>,
}

/// A background task that died, as the page sees it.
pub(crate) fn join_error(e: impl std::fmt::Display) -> cairn_protocol::ApiError {
    cairn_protocol::ApiError::new(
        cairn_protocol::ErrorCode::Internal,
        format!("the task failed: {e}"),
    )
}

/// Runs a blocking core operation (files, the config, the database) off the main thread.
pub(crate) async fn blocking<T: Send + 'static>(
    desktop: &Desktop,
    work: impl FnOnce(cairn_api::Cairn) -> Result<T, cairn_api::Error> + Send + 'static,
) -> Result<T, cairn_protocol::ApiError> {
    on_chat(desktop, move |chat| work(chat.cairn().clone())).await
}

/// Runs a blocking chat operation (a task's files, the config) off the main thread.
pub(crate) async fn on_chat<T: Send + 'static>(
    desktop: &Desktop,
    work: impl FnOnce(&cairn_api::chat::Chat) -> Result<T, cairn_api::Error> + Send + 'static,
) -> Result<T, cairn_protocol::ApiError> {
    let chat = desktop.chat.clone();
    tauri::async_runtime::spawn_blocking(move || work(&chat))
        .await
        .map_err(join_error)?
        .map_err(|e| e.to_api_error())
}

/// How WebKit renders, set before GTK starts (WebKit's processes inherit it) unless the person
/// set it: no GPU compositing, and no DMA-BUF renderer with it. Cairn's pages are text and a few
/// transitions, which paint as smoothly in software, and the compositing buffers were a third of
/// the idle web process (under Xvfb, 225 → 133 MB PSS). A run driven by WebDriver keeps
/// compositing: WebKitGTK 2.50 never answers WebDriver's Take Screenshot without it, and every
/// command after that one hangs too. WebKitWebDriver starts the app with
/// `WEBKIT_INSPECTOR_SERVER` set; tauri-driver adds `TAURI_WEBVIEW_AUTOMATION`.
fn lighter_rendering() {
    #[cfg(target_os = "linux")]
    {
        let automated = ["WEBKIT_INSPECTOR_SERVER", "TAURI_WEBVIEW_AUTOMATION"]
            .iter()
            .any(|name| std::env::var_os(name).is_some());
        if automated {
            return;
        }
        for name in [
            "WEBKIT_DISABLE_COMPOSITING_MODE",
            "WEBKIT_DISABLE_DMABUF_RENDERER",
        ] {
            if std::env::var_os(name).is_none() {
                std::env::set_var(name, "1");
            }
        }
    }
}

fn main() -> std::process::ExitCode {
    lighter_rendering();
    // Before anything starts (the local API, runtime.json): without a display there is no app.
    if let Some(problem) = display::missing() {
        eprintln!("cairn-desktop: {problem}");
        return std::process::ExitCode::FAILURE;
    }
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("cairn-desktop: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run() -> anyhow::Result<()> {
    let home = Home::from_process_env()?;
    let cairn = Cairn::new(home);
    let config = start_logging(&cairn);
    cairn.home().ensure_dirs()?;
    let sync = follow_history(&cairn, &config);
    // The memory dreams daily while it is idle, for as long as the app runs.
    let _dreams = cairn.spawn_daily_dream();
    // One memory on every device, when this one is joined to a hub.
    let _sync = cairn.spawn_sync();

    // One chat for the workbench, the pet and the local API's tasks: the API's event stream
    // shows every task's events, whoever started it. Tasks work in their own folders (the
    // workspace until the person picks one), not where the app was started.
    let chat = Arc::new(cairn_api::chat::Chat::new(cairn.clone(), cairn.workspace()));
    let published = chat.subscribe();
    // An edit of the config file applies without a restart; schedules run while the app does.
    let _config = chat.follow_config();
    // Each run is a task on the app's async runtime.
    let _schedules = tauri::async_runtime::block_on(async { chat.run_schedules() });
    let api = tauri::async_runtime::block_on(cairn_http::serve(
        cairn.clone(),
        config.api_port,
        chat.clone(),
    ));
    let (serving, api) = match api {
        Ok(api) => (Some(api.info().clone()), Some(api)),
        Err(e) => {
            tracing::error!("the local API did not start: {e}");
            (None, None)
        }
    };

    // Open the memory (and load the embedding model) off the main thread, so the first recall is warm.
    let warm = cairn.clone();
    std::thread::spawn(move || {
        if let Err(e) = warm.memory() {
            tracing::error!("the memory store did not open: {e}");
        }
    });

    let shortcut = config.pet_shortcut.clone();
    let launch = config.launch;
    let app = tauri::Builder::default()
        .plugin(
            tauri_plugin_global_shortcut::Builder::new()
                .with_handler(|app, _shortcut, event| {
                    if event.state() == ShortcutState::Pressed {
                        if let Err(e) = windows::toggle_pet(app) {
                            tracing::warn!("cannot toggle the pet: {e}");
                        }
                    }
                })
                .build(),
        )
        .manage(Desktop {
            chat,
            cairn,
            serving,
            api: Mutex::new(api),
            voice: Arc::default(),
            task_to_open: Mutex::default(),
        })
        .manage(sync)
        .invoke_handler(commands::handler())
        .setup(move |app| {
            if let Err(e) = app.global_shortcut().register(shortcut.as_str()) {
                tracing::warn!("cannot register the pet shortcut {shortcut}: {e}");
            }
            // One window at start: the workbench, or the pet alone; the other when asked for.
            if windows::opens_workbench(app.handle(), launch) {
                windows::show_workbench(app.handle())?;
            } else {
                windows::show_pet(app.handle())?;
            }
            stop_on_signals(app.handle().clone());
            forward_published(app.handle().clone(), published);
            if let Err(e) = tray::install(app.handle()) {
                tracing::warn!("no tray icon: {e}");
            }
            Ok(())
        })
        .on_window_event(move |window, event| on_window_event(window, event, launch))
        .build(tauri::generate_context!("../tauri.conf.json"))
        .context("cannot start the desktop app")?;

    app.run(|handle, event| {
        if let RunEvent::Exit = event {
            shut_down(handle);
        }
    });
    Ok(())
}

/// Logs to stderr at the config's level (or `CAIRN_LOG`); the config, or the defaults when the
/// file is invalid (said in the log).
fn start_logging(cairn: &Cairn) -> cairn_config::Config {
    let config = cairn.load_config();
    let level = config
        .as_ref()
        .map(|c| c.log_level.as_str())
        .unwrap_or("info");
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("CAIRN_LOG").unwrap_or_else(|_| {
                tracing_subscriber::EnvFilter::new(format!("warn,cairn={level}"))
            }),
        )
        .with_writer(std::io::stderr)
        .init();
    config.unwrap_or_else(|e| {
        tracing::error!("the config file is invalid, using defaults: {e}");
        cairn_config::Config::default()
    })
}

/// Other agents' history: scanned now, then followed as they write (`[sync] auto`); the tray
/// pauses it.
fn follow_history(cairn: &Cairn, config: &cairn_config::Config) -> tray::HistorySync {
    let sync = tray::HistorySync::default();
    if config.auto_sync {
        let follower = cairn.clone();
        let control = sync.0.clone();
        std::thread::spawn(move || {
            if let Err(e) = follower.follow_sources(None, &control, &mut |_| {}) {
                tracing::warn!("keeping other agents' history in sync stopped: {e}");
            }
        });
    }
    sync
}

fn on_window_event<R: tauri::Runtime>(
    window: &tauri::Window<R>,
    event: &WindowEvent,
    launch: cairn_config::LaunchMode,
) {
    // Wherever the person drags the pet, it comes back there next time.
    if window.label() == windows::PET {
        if let WindowEvent::Moved(position) = event {
            windows::pet_moved(window.app_handle(), *position);
        }
    }
    // Closing the workbench quits Cairn, unless the pet is how the person uses it (launch mode
    // pet or last, with the pet showing): then the workbench hides behind the pet.
    if window.label() == windows::WORKBENCH {
        if let WindowEvent::CloseRequested { api, .. } = event {
            let app = window.app_handle();
            if launch != cairn_config::LaunchMode::Full && windows::pet_showing(app) {
                api.prevent_close();
                let _ = window.hide();
                windows::remember_mode(app, "pet");
            } else {
                windows::remember_mode(app, "full");
                if jobs_running(app) {
                    api.prevent_close();
                }
                quit_or_ask(app);
            }
        }
    }
}

/// Nothing the tasks left running outlives the app; `runtime.json` goes.
fn shut_down<R: tauri::Runtime>(handle: &tauri::AppHandle<R>) {
    let desktop = handle.state::<Desktop>();
    desktop.chat.jobs().stop_all();
    let cairn = desktop.cairn.clone();
    tauri::async_runtime::block_on(cairn.shutdown_language_servers());
    let api = desktop.api.lock().ok().and_then(|mut api| api.take());
    if let Some(api) = api {
        if let Err(e) = tauri::async_runtime::block_on(api.shutdown()) {
            tracing::warn!("cannot remove runtime.json: {e}");
        }
    }
}

/// Whether a task has a background job running.
fn jobs_running<R: tauri::Runtime>(app: &tauri::AppHandle<R>) -> bool {
    app.state::<Desktop>().chat.jobs().running() > 0
}

/// Quits, unless background jobs run: then the workbench asks the person first (`quit_app` is
/// their yes).
pub fn quit_or_ask<R: tauri::Runtime>(app: &tauri::AppHandle<R>) {
    if !jobs_running(app) {
        app.exit(0);
        return;
    }
    if let Err(e) = windows::show_workbench(app) {
        tracing::warn!("cannot show the workbench to ask about quitting: {e}");
        app.exit(0);
        return;
    }
    let _ = tauri::Emitter::emit_to(app, windows::WORKBENCH, "confirm-quit", ());
}

/// What the windows hear as it happens: the turns nobody in the workbench started (a job's
/// wake-up, a task created over the API) as `task-event`s to the workbench, and every change to
/// the task list as `task-changed` to both windows (the workbench's list, the pet's badge).
fn forward_published(
    app: tauri::AppHandle,
    mut published: tokio::sync::broadcast::Receiver<cairn_api::chat::Published>,
) {
    use cairn_api::chat::Published;
    use tokio::sync::broadcast::error::RecvError;
    tauri::async_runtime::spawn(async move {
        loop {
            match published.recv().await {
                Ok(Published::Task {
                    event,
                    attended: false,
                }) => {
                    let _ = tauri::Emitter::emit_to(&app, windows::WORKBENCH, "task-event", event);
                }
                Ok(Published::TaskChanged(change)) => {
                    for window in [windows::WORKBENCH, windows::PET] {
                        let _ = tauri::Emitter::emit_to(&app, window, "task-changed", &change);
                    }
                }
                Ok(_) | Err(RecvError::Lagged(_)) => {}
                Err(RecvError::Closed) => return,
            }
        }
    });
}

/// SIGINT and SIGTERM end the app the same way as closing the workbench, so `runtime.json` goes too.
fn stop_on_signals(app: tauri::AppHandle) {
    tauri::async_runtime::spawn(async move {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{signal, SignalKind};
            if let Ok(mut term) = signal(SignalKind::terminate()) {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            } else {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
        }
        app.exit(0);
    });
}

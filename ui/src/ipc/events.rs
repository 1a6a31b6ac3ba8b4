//! Events the backend emits to this window, outside any command: app-wide signals, the events
//! of turns nobody here started, and the changes to the task list.

use super::bridge::to_api_error;
use cairn_protocol::ApiError;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

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
    on_payload("task-event", handler).await
}

/// Calls `handler` with each change to the task list the backend pushes (a turn started or
/// ended, a task renamed, given a goal, deleted …), in either window.
pub async fn on_task_changed(
    handler: impl FnMut(cairn_protocol::TaskChanged) + 'static,
) -> Result<(), ApiError> {
    on_payload("task-changed", handler).await
}

/// Calls `handler` with the payload of each backend event `event`, read as `T` (one that cannot
/// be read is logged and skipped).
async fn on_payload<T: serde::de::DeserializeOwned>(
    event: &str,
    handler: impl FnMut(T) + 'static,
) -> Result<(), ApiError> {
    let mut handler = handler;
    let name = event.to_owned();
    let closure = Closure::<dyn FnMut(JsValue)>::new(move |event: JsValue| {
        let payload = js_sys::Reflect::get(&event, &JsValue::from_str("payload"));
        if let Ok(payload) = payload.map(serde_wasm_bindgen::from_value) {
            match payload {
                Ok(payload) => handler(payload),
                Err(e) => leptos::logging::warn!("a {name} event was not read: {e}"),
            }
        }
    });
    tauri_listen(event, closure.as_ref().unchecked_ref())
        .await
        .map_err(to_api_error)?;
    closure.forget();
    Ok(())
}

//! The command bridge itself: invoking a Tauri command through the webview's IPC, with or without
//! a streaming channel, and turning its answer or failure into typed values.

use cairn_protocol::{ApiError, ErrorCode};
use serde::de::DeserializeOwned;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_namespace = ["window", "__TAURI_INTERNALS__"], js_name = invoke, catch)]
    async fn tauri_invoke(cmd: &str, args: JsValue) -> Result<JsValue, JsValue>;
}

pub(super) async fn invoke<T: DeserializeOwned>(cmd: &str) -> Result<T, ApiError> {
    invoke_with(cmd, &serde_json::Map::new()).await
}

/// A command with arguments (an object whose keys are the command's camelCase parameters).
pub(super) async fn invoke_with<T: DeserializeOwned, A: serde::Serialize>(
    cmd: &str,
    args: &A,
) -> Result<T, ApiError> {
    let args = encode(cmd, args)?;
    decode(cmd, tauri_invoke(cmd, args).await.map_err(to_api_error)?)
}

/// A command that streams events through a Tauri channel while it runs: `args` as for
/// [`invoke_with`], plus the channel under `channel_arg` (its camelCase parameter). `on_event` sees
/// each event that decodes as `E`, in order; the answer comes when the command has finished.
pub(super) async fn invoke_streaming<E, T, A>(
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
        .map_err(|e| ApiError::new(ErrorCode::Encode, format!("{cmd}: {e}")))
}

/// The command's answer, typed.
fn decode<T: DeserializeOwned>(cmd: &str, value: JsValue) -> Result<T, ApiError> {
    serde_wasm_bindgen::from_value(value).map_err(|e| {
        ApiError::new(
            ErrorCode::Decode,
            format!("unexpected answer from {cmd}: {e}"),
        )
    })
}

pub(super) fn to_api_error(value: JsValue) -> ApiError {
    serde_wasm_bindgen::from_value::<ApiError>(value.clone()).unwrap_or_else(|_| {
        ApiError::new(
            ErrorCode::Ipc,
            value
                .as_string()
                .unwrap_or_else(|| "the app did not answer".to_owned()),
        )
    })
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

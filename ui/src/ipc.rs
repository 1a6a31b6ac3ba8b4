//! The one typed bridge to the backend: Tauri commands invoked through the webview's IPC.

use cairn_protocol::{ApiError, StatusReport};
use serde::de::DeserializeOwned;
use wasm_bindgen::prelude::*;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_namespace = ["window", "__TAURI_INTERNALS__"], js_name = invoke, catch)]
    async fn tauri_invoke(cmd: &str, args: JsValue) -> Result<JsValue, JsValue>;
}

async fn invoke<T: DeserializeOwned>(cmd: &str) -> Result<T, ApiError> {
    let value = tauri_invoke(cmd, js_sys::Object::new().into())
        .await
        .map_err(to_api_error)?;
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

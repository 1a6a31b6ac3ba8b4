//! Files attached to the message being written: picked files read as data URLs, and text made
//! into an attached document.

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

/// A file the person attached to the message being written.
#[derive(Debug, Clone, PartialEq)]
pub struct Attachment {
    pub name: String,
    pub bytes: f64,
    /// `data:<type>;base64,…`
    pub data_url: String,
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

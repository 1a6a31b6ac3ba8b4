//! The page's DOM where the views reach past Leptos: elements found, focused, clicked or
//! scrolled by id, where an event happened, the clipboard, and waiting on the browser's timer.

use wasm_bindgen::JsCast;

use crate::i18n::t;

/// The element with `id` on the page.
pub fn element_by_id(id: &str) -> Option<web_sys::Element> {
    web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.get_element_by_id(id))
}

/// The page's `<html>` element.
pub fn root_element() -> Option<web_sys::Element> {
    web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.document_element())
}

/// The path of the page this module was loaded into (which window it is).
pub fn page_path() -> String {
    web_sys::window()
        .and_then(|w| w.location().pathname().ok())
        .unwrap_or_default()
}

/// The HTML element with `id` on the page.
fn html_element_by_id(id: &str) -> Option<web_sys::HtmlElement> {
    element_by_id(id).and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok())
}

/// Focuses the element with `id`.
pub fn focus_by_id(id: &str) {
    if let Some(element) = html_element_by_id(id) {
        let _ = element.focus();
    }
}

/// Focuses the element with this id once it is on the page (at the next frame).
pub fn focus_soon(id: &'static str) {
    leptos::prelude::request_animation_frame(move || focus_by_id(id));
}

/// Clicks the element with `id` (a hidden file input opened by a visible button).
pub fn click_by_id(id: &str) {
    if let Some(element) = html_element_by_id(id) {
        element.click();
    }
}

/// Whether `event` happened inside the element `#id`.
pub fn event_inside(event: &web_sys::Event, id: &str) -> bool {
    event
        .target()
        .and_then(|target| target.dyn_into::<web_sys::Element>().ok())
        .and_then(|element| element.closest(&format!("#{id}")).ok().flatten())
        .is_some()
}

/// The element an event was bound on (`current_target`), as an element.
pub fn event_element(event: &web_sys::Event) -> Option<web_sys::Element> {
    event
        .current_target()
        .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
}

/// Scrolls the element with `id` to its end.
pub fn scroll_to_end(id: &str) {
    if let Some(element) = element_by_id(id) {
        element.set_scroll_top(element.scroll_height());
    }
}

/// Scrolls the element with `id` to its top.
pub fn scroll_to_top(id: &str) {
    if let Some(element) = element_by_id(id) {
        element.set_scroll_top(0);
    }
}

/// Whether the element `event` (a scroll) happened on is scrolled to less than `margin` pixels
/// from its end; `None` when the event has no element.
pub fn scrolled_near_end(event: &web_sys::Event, margin: i32) -> Option<bool> {
    let element = event
        .target()
        .and_then(|t| t.dyn_into::<web_sys::Element>().ok())?;
    Some(element.scroll_height() - element.scroll_top() - element.client_height() < margin)
}

/// Waits `ms` milliseconds.
pub async fn sleep(ms: i32) {
    let promise = js_sys::Promise::new(&mut |resolve, _| {
        if let Some(window) = web_sys::window() {
            let _ = window.set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, ms);
        }
    });
    let _ = wasm_bindgen_futures::JsFuture::from(promise).await;
}

/// Puts `text` on the clipboard. Runs inside the click that asked, as WebKit lets a page copy
/// only then: a hidden text box, selected and copied; where that is refused, the asynchronous
/// clipboard is asked instead. Whether it was done (or handed to the clipboard).
pub fn copy_to_clipboard(text: &str) -> bool {
    let Some(window) = web_sys::window() else {
        return false;
    };
    if window
        .document()
        .and_then(|document| copy_by_selection(&document, text))
        .unwrap_or(false)
    {
        return true;
    }
    let _ = window.navigator().clipboard().write_text(text);
    true
}

/// The old way, which WebKitGTK honours inside a click: a text box holding `text`, selected,
/// `copy`.
fn copy_by_selection(document: &web_sys::Document, text: &str) -> Option<bool> {
    let area = document
        .create_element("textarea")
        .ok()?
        .dyn_into::<web_sys::HtmlTextAreaElement>()
        .ok()?;
    area.set_value(text);
    let _ = area.set_attribute("readonly", "");
    let _ = area.set_attribute("style", "position:fixed;top:0;left:0;opacity:0;");
    document.body()?.append_child(&area).ok()?;
    area.select();
    let done = document
        .dyn_ref::<web_sys::HtmlDocument>()
        .and_then(|d| d.exec_command("copy").ok())
        .unwrap_or(false);
    area.remove();
    Some(done)
}

/// Shows "Copied" on `button` for two seconds, then its own label again.
pub fn flash_copied(button: &web_sys::Element) {
    let label = button.text_content().unwrap_or_default();
    let copied = button
        .get_attribute("data-copied")
        .unwrap_or_else(|| t("Copied").to_owned());
    button.set_text_content(Some(&copied));
    let _ = button.class_list().add_1("copied");
    let button = button.clone();
    leptos::task::spawn_local(async move {
        sleep(2000).await;
        button.set_text_content(Some(&label));
        let _ = button.class_list().remove_1("copied");
    });
}

/// Runs `then` once, `ms` milliseconds from now; the timer's handle, to cancel it.
pub fn after(ms: i32, then: impl FnOnce() + 'static) -> Option<i32> {
    let window = web_sys::window()?;
    let later = wasm_bindgen::closure::Closure::once_into_js(then);
    window
        .set_timeout_with_callback_and_timeout_and_arguments_0(later.unchecked_ref(), ms)
        .ok()
}

/// Cancels a timer [`after`] set.
pub fn cancel_timer(handle: i32) {
    if let Some(window) = web_sys::window() {
        window.clear_timeout_with_handle(handle);
    }
}

//! The pet window: a small cairn that floats above other windows; double-click opens the workbench,
//! dragging moves it.

use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::ipc;

#[component]
pub fn Pet() -> impl IntoView {
    view! {
        <div
            class="pet"
            data-tauri-drag-region
            title="Cairn — double-click to open the workbench"
            on:dblclick=move |_| {
                spawn_local(async {
                    let _ = ipc::show_workbench().await;
                })
            }
        >
            <div class="pet-stones" data-tauri-drag-region>
                <span class="stone stone-top" data-tauri-drag-region></span>
                <span class="stone stone-mid" data-tauri-drag-region></span>
                <span class="stone stone-base" data-tauri-drag-region></span>
            </div>
        </div>
    }
}

//! The memory panel (being written).

use leptos::prelude::*;

#[component]
pub fn MemoryPage() -> impl IntoView {
    view! { <h1 class="page-title">"Memory"</h1> }
}

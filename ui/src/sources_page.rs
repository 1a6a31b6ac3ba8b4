//! The sources page (being written).

use leptos::prelude::*;

#[component]
pub fn SourcesPage() -> impl IntoView {
    view! { <h1 class="page-title">"Sources"</h1> }
}

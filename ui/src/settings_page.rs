//! The settings page (being written).

use leptos::prelude::*;

#[component]
pub fn SettingsPage() -> impl IntoView {
    view! { <h1 class="page-title">"Settings"</h1> }
}

//! The segmented control the pages share: a radio group shown as joined buttons, one of them on.

use leptos::prelude::*;

/// One button per `(value, label)` of `options`, with the id `{prefix}-{value}`; the one whose
/// value `chosen` holds is checked; a click runs `on_pick(value, label)`. `labelled_by` names the
/// element that labels the group, else `label` is its accessible name.
#[component]
pub fn Segmented(
    prefix: &'static str,
    options: Vec<(&'static str, &'static str)>,
    #[prop(into)] chosen: Signal<String>,
    on_pick: impl Fn(&'static str, &'static str) + Copy + Send + Sync + 'static,
    #[prop(optional)] labelled_by: Option<&'static str>,
    #[prop(optional)] label: Option<&'static str>,
) -> impl IntoView {
    view! {
        <div class="set-segmented" role="radiogroup" aria-labelledby=labelled_by aria-label=label>
            {options
                .into_iter()
                .map(|(value, text)| view! {
                    <button
                        type="button"
                        role="radio"
                        id=format!("{prefix}-{value}")
                        aria-checked=move || (chosen.get() == value).to_string()
                        on:click=move |_| on_pick(value, text)
                    >
                        {text}
                    </button>
                })
                .collect_view()}
        </div>
    }
}

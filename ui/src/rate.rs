//! Thumbs under a finished reply, in the workbench and the pet: the rating goes to memory, where it
//! becomes the episode's reward and lifts (or lowers) the reply in later recalls.

use cairn_protocol::memory::Rating;
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::i18n::t;
use crate::ipc;

/// 👍 / 👎 for the reply captured as `turn_id`; `rated` is how it was rated, `on_rated` hears a
/// rating once memory has it.
#[component]
pub fn Thumbs(
    turn_id: i64,
    #[prop(into)] rated: Signal<Option<Rating>>,
    on_rated: Callback<Rating>,
) -> impl IntoView {
    let error = RwSignal::new(None::<String>);
    let rate = move |choice: Rating| {
        error.set(None);
        spawn_local(async move {
            match ipc::give_feedback(turn_id, choice).await {
                Ok(_) => on_rated.run(choice),
                Err(e) => error.set(Some(e.message)),
            }
        });
    };
    let pressed = move |choice: Rating| move || (rated.get() == Some(choice)).to_string();
    view! {
        <div class="rate" role="group" aria-label=t("Rate this reply")>
            <button class="rate-up" title=t("This helped") aria-label=t("This helped") aria-pressed=pressed(Rating::Up) on:click=move |_| rate(Rating::Up)>"👍"</button>
            <button class="rate-down" title=t("This did not help") aria-label=t("This did not help") aria-pressed=pressed(Rating::Down) on:click=move |_| rate(Rating::Down)>"👎"</button>
            {move || rated.get().map(|_| view! { <span class="rate-noted" role="status">{t("Noted: Cairn will remember how this went.")}</span> })}
            {move || error.get().map(|e| view! { <span class="rate-error" role="alert">{e}</span> })}
        </div>
    }
}

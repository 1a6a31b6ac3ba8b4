//! Notices as people meet them: a short one fades by itself, a longer one stays until dismissed,
//! each stays where it was said, and a library's error text becomes a sentence in the person's
//! words with the original behind it.

use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::i18n::t;

/// How long a one-line notice stays before it fades, in milliseconds.
pub const FADE_MS: i32 = 8_000;

/// Whether a notice fades by itself: a one-line note does; a list or an explanation (several
/// lines: `/help`, `/model`, `/status`) stays until the person dismisses it.
pub fn fades(text: &str) -> bool {
    !text.trim().contains('\n')
}

/// Clears `notice` [`FADE_MS`] after it was set, when [`fades`] says so for its text (`text_of`)
/// and it still says the same.
pub fn fade_in_time<T>(notice: RwSignal<Option<T>>, text_of: fn(&T) -> &str)
where
    T: Clone + PartialEq + Send + Sync + 'static,
{
    Effect::new(move |_| {
        let Some(shown) = notice.get() else { return };
        if !fades(text_of(&shown)) {
            return;
        }
        spawn_local(async move {
            crate::dom::sleep(FADE_MS).await;
            if notice.get_untracked().as_ref() == Some(&shown) {
                notice.set(None);
            }
        });
    });
}

/// An error as the person hears it: a sentence, and the library's own text behind it (`None`
/// when the message is already a sentence for people).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Said {
    pub sentence: String,
    pub details: Option<String>,
}

/// Marks of a text written for programmers, not people: error codes, OS and library names.
const LIBRARY_MARKS: &[&str] = &[
    "os error",
    "ALSA",
    "snd_pcm",
    "errno",
    "ENOENT",
    "EACCES",
    "failed with error",
    "Os {",
    "called `",
    "SQLITE",
    "panicked",
];

/// What to tell the person about the failure `message` (an `ApiError`'s `code` and `message`).
/// The microphone's failures say what to do; another library's text gets a plain sentence, the
/// text itself behind it; a message already in people's words is kept.
pub fn said(code: &str, message: &str) -> Said {
    let lower = message.to_lowercase();
    let technical = LIBRARY_MARKS.iter().any(|m| message.contains(m));
    let sentence = match () {
        _ if code == "voice" && lower.contains("model") => t(
            "Voice input needs its speech model: install it in Settings → Models on this device.",
        ),
        _ if code == "voice"
            && (technical || lower.contains("microphone") || lower.contains("input device")) =>
        {
            t("Cairn cannot hear a microphone on this computer. Connect one (or choose a WAV file in Settings → Voice), then try again.")
        }
        _ if code == "internal" => t(
            "Something went wrong inside Cairn. Try again; if it happens again, Settings → Diagnostics makes a report to share.",
        ),
        _ if technical => t("That did not work; the details say why, in the system's own words."),
        _ => {
            return Said {
                sentence: message.to_owned(),
                details: None,
            }
        }
    };
    Said {
        sentence: sentence.to_owned(),
        details: Some(message.to_owned()).filter(|m| !m.trim().is_empty()),
    }
}

/// A failure said in the person's words, with its details folded underneath.
#[component]
pub fn SaidView(said: Said) -> impl IntoView {
    view! {
        <span class="said">{said.sentence}</span>
        {said.details.map(|details| view! {
            <details class="said-details">
                <summary>{t("Details")}</summary>
                <code>{details}</code>
            </details>
        })}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_notes_fade_and_lists_stay() {
        assert!(fades("Memory #9 deleted: its text has left the database."));
        assert!(fades(
            "Connect a model first (above): your message is kept here.\n"
        ));
        assert!(!fades(
            "mock/long-model  (in use)\nAlso offered by mock: other"
        ));
    }

    /// Issue #48: the microphone's error was ALSA's own text.
    #[test]
    fn a_microphone_library_error_is_said_in_plain_words() {
        let raw = "the microphone cannot be opened: ALSA function 'snd_pcm_open' failed with error 'ENOENT: No such file or directory'";
        let said = said("voice", raw);
        assert!(
            said.sentence.starts_with("Cairn cannot hear a microphone"),
            "{said:?}"
        );
        assert_eq!(said.details.as_deref(), Some(raw));
        let none = super::said("voice", "this machine has no microphone (no input device)");
        assert!(none.sentence.starts_with("Cairn cannot hear a microphone"));
        assert!(super::said("voice", "no whisper model installed")
            .sentence
            .starts_with("Voice input needs its speech model"));
    }

    #[test]
    fn a_sentence_for_people_is_kept_and_library_text_is_put_behind_one() {
        let kept = said("bad_request", "There is no goal for this task.");
        assert_eq!(kept.sentence, "There is no goal for this task.");
        assert_eq!(kept.details, None);
        let os = said(
            "bad_request",
            "cannot read /x: Permission denied (os error 13)",
        );
        assert!(os.sentence.starts_with("That did not work"), "{os:?}");
        assert_eq!(
            said("voice", "Nothing was heard.").sentence,
            "Nothing was heard."
        );
        assert_eq!(
            os.details.as_deref(),
            Some("cannot read /x: Permission denied (os error 13)")
        );
    }
}

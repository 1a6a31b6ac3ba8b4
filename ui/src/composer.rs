//! The composer under the stream: the text box (Enter sends, Shift+Enter adds a line), the slash
//! command palette, attachments (+, drop, paste), the mic (click, hold, Ctrl+Shift+M) with its
//! level meter, Send and Stop.

use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::dom::{click_by_id, focus_by_id, sleep};
use crate::i18n::{t, tf};
use crate::slash::{self, SlashCommand};
use crate::{ipc, present};

/// The mic button's state.
#[derive(Debug, Clone, PartialEq)]
enum Voice {
    Idle,
    /// Capturing since `since` (ms, for push-to-talk), at `level` (0–1).
    Listening {
        since: f64,
        level: f32,
    },
    Transcribing,
    Failed(String),
}

/// Appends `heard` to the draft, separated by a space.
fn with_transcript(draft: &str, heard: &str) -> String {
    let heard = heard.trim();
    if draft.trim().is_empty() {
        heard.to_owned()
    } else if heard.is_empty() {
        draft.to_owned()
    } else {
        format!("{} {heard}", draft.trim_end())
    }
}

/// Puts the caret back in the composer.
pub(crate) fn focus_composer() {
    focus_by_id("composer-input");
}

/// The mic button's state and what it does: click toggles; holding the button (push-to-talk)
/// stops when it is released. What it hears goes into `draft`.
#[derive(Clone, Copy)]
struct Mic {
    voice: RwSignal<Voice>,
    draft: RwSignal<String>,
}

impl Mic {
    fn new(draft: RwSignal<String>) -> Self {
        let voice = RwSignal::new(Voice::Idle);
        // What the mic said when it failed fades, as a notice does.
        Effect::new(move |_| {
            if let Voice::Failed(said) = voice.get() {
                spawn_local(async move {
                    sleep(crate::notice::FADE_MS).await;
                    if voice.get_untracked() == Voice::Failed(said) {
                        voice.set(Voice::Idle);
                    }
                });
            }
        });
        Self { voice, draft }
    }

    fn start(self) {
        let voice = self.voice;
        voice.set(Voice::Listening {
            since: js_sys::Date::now(),
            level: 0.0,
        });
        spawn_local(async move {
            if let Err(e) = ipc::voice_start().await {
                voice.set(Voice::Failed(e.message));
                return;
            }
            // The meter: poll the level while listening.
            while let Voice::Listening { since, .. } = voice.get_untracked() {
                if let Ok(level) = ipc::voice_level().await {
                    if matches!(voice.get_untracked(), Voice::Listening { .. }) {
                        voice.set(Voice::Listening { since, level });
                    }
                }
                sleep(100).await;
            }
        });
    }

    fn stop(self) {
        let Mic { voice, draft } = self;
        voice.set(Voice::Transcribing);
        spawn_local(async move {
            match ipc::voice_stop().await {
                Ok(heard) => {
                    draft.update(|d| *d = with_transcript(d, &heard));
                    voice.set(if heard.trim().is_empty() {
                        Voice::Failed(t("Nothing was heard.").into())
                    } else {
                        Voice::Idle
                    });
                    focus_composer();
                }
                Err(e) => voice.set(Voice::Failed(e.message)),
            }
        });
    }

    fn press(self) {
        match self.voice.get_untracked() {
            Voice::Listening { .. } => self.stop(),
            Voice::Transcribing => {}
            _ => self.start(),
        }
    }

    fn release(self) {
        if let Voice::Listening { since, .. } = self.voice.get_untracked() {
            if js_sys::Date::now() - since > 400.0 {
                self.stop();
            }
        }
    }
}

/// Files picked, dropped or pasted: up to 4, 10 MB each, read in the page.
fn read_files(
    files: web_sys::FileList,
    attached: RwSignal<Vec<ipc::Attachment>>,
    attach_error: RwSignal<Option<String>>,
) {
    attach_error.set(None);
    let files: Vec<web_sys::File> = (0..files.length()).filter_map(|i| files.get(i)).collect();
    spawn_local(async move {
        for file in files {
            if attached.with_untracked(Vec::len) >= present::MAX_ATTACHMENTS {
                attach_error.set(Some(t("At most 4 files per message.").into()));
                break;
            }
            if file.size() > present::MAX_ATTACHMENT_BYTES {
                attach_error.set(Some(tf(
                    "{name} is over 10 MB, the limit for an attachment.",
                    &[("name", &file.name())],
                )));
                continue;
            }
            match ipc::read_data_url(&file).await {
                Ok(data_url) => attached.update(|all| {
                    all.push(ipc::Attachment {
                        name: file.name(),
                        bytes: file.size(),
                        data_url,
                    })
                }),
                Err(message) => attach_error.set(Some(message)),
            }
        }
    });
}

#[component]
pub(crate) fn Composer(
    /// The text being written (the page may put a refused message back).
    draft: RwSignal<String>,
    on_send: impl Fn(String, Vec<ipc::Attachment>) + Copy + Send + Sync + 'static,
    running: Signal<bool>,
    on_stop: impl Fn() + Copy + Send + Sync + 'static,
    on_command: impl Fn(SlashCommand, String) + Copy + Send + Sync + 'static,
) -> impl IntoView {
    // The palette: commands matching the typed word; ↑/↓ pick one, Tab or Enter completes it,
    // Esc closes the palette until the text changes.
    let dismissed = RwSignal::new(None::<String>);
    let palette = Memo::new(move |_| {
        let typed = draft.get();
        if dismissed.get().as_deref() == Some(typed.as_str()) {
            Vec::new()
        } else {
            slash::palette(&typed)
        }
    });
    let picked = RwSignal::new(0usize);
    Effect::new(move |_| {
        palette.track();
        picked.set(0);
    });
    let complete = move || {
        let choices = palette.get_untracked();
        if let Some(command) = choices.get(picked.get_untracked()).or(choices.first()) {
            draft.set(format!("{} ", command.name()));
        }
    };
    let attached = RwSignal::new(Vec::<ipc::Attachment>::new());
    let attach_error = RwSignal::new(None::<String>);
    let add_files = move |files: web_sys::FileList| read_files(files, attached, attach_error);
    let mic = Mic::new(draft);
    let submit = move || {
        let text = draft.get_untracked();
        if text.trim().is_empty() && attached.with_untracked(Vec::is_empty) {
            return;
        }
        match slash::parse(&text) {
            Some(Ok((name, arg))) => on_command(name, arg),
            Some(Err(unknown)) => on_command(SlashCommand::Help, unknown),
            None => on_send(text, attached.get_untracked()),
        }
        draft.set(String::new());
        attached.set(Vec::new());
        attach_error.set(None);
    };
    let on_key = move |ev: &web_sys::KeyboardEvent| {
        let choices = palette.get_untracked().len();
        let exact = slash::parse(&draft.get_untracked()).is_some_and(|p| p.is_ok());
        if choices > 0 && (ev.key() == "ArrowDown" || ev.key() == "ArrowUp") {
            ev.prevent_default();
            let step = if ev.key() == "ArrowDown" {
                1
            } else {
                choices - 1
            };
            picked.update(|p| *p = (*p + step) % choices);
        } else if choices > 0 && ev.key() == "Escape" {
            ev.prevent_default();
            dismissed.set(Some(draft.get_untracked()));
        } else if choices > 0
            && (ev.key() == "Tab" || (ev.key() == "Enter" && !exact && !ev.is_composing()))
        {
            ev.prevent_default();
            complete();
        } else if ev.key() == "Enter" && !ev.shift_key() && !ev.is_composing() {
            ev.prevent_default();
            let is_command = draft.get_untracked().trim_start().starts_with('/');
            if is_command || !running.get_untracked() {
                submit();
            }
        } else if (ev.key() == "m" || ev.key() == "M") && ev.ctrl_key() && ev.shift_key() {
            ev.prevent_default();
            mic.press();
        }
    };
    view! {
        <form
            class="composer"
            on:submit=move |ev| {
                ev.prevent_default();
                submit();
            }
            on:dragover=move |ev: web_sys::DragEvent| ev.prevent_default()
            on:drop=move |ev: web_sys::DragEvent| {
                if let Some(files) = ev.data_transfer().and_then(|d| d.files()) {
                    ev.prevent_default();
                    add_files(files);
                }
            }
        >
            <AttachmentList attached />
            <SlashPalette palette picked draft />
            <textarea
                id="composer-input"
                rows="2"
                placeholder=t("Describe a task…  (Enter sends, Shift+Enter adds a line)")
                prop:value=move || draft.get()
                on:input=move |ev| draft.set(event_target_value(&ev))
                on:keydown=move |ev: web_sys::KeyboardEvent| on_key(&ev)
            ></textarea>
            <input
                id="attach-input"
                type="file"
                multiple
                class="sr-only"
                tabindex="-1"
                accept="image/png,image/jpeg,image/gif,image/webp,.txt,.md,.markdown,.csv,.tsv,.json,.jsonl,.yaml,.yml,.toml,.xml,.html,.css,.js,.ts,.rs,.py,.go,.java,.c,.h,.cpp,.sh,.sql,.log,.ini,.diff,.patch"
                on:change=move |ev| {
                    use wasm_bindgen::JsCast;
                    if let Some(input) = ev.target().and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok()) {
                        if let Some(files) = input.files() {
                            add_files(files);
                        }
                        input.set_value("");
                    }
                }
            />
            <button
                id="attach"
                type="button"
                class="attach"
                title=t("Attach images or text files (up to 4, 10 MB each)")
                aria-label=t("Attach files")
                on:click=move |_| click_by_id("attach-input")
            >
                "+"
            </button>
            <MicButton mic />
            <Show
                when=move || running.get()
                fallback=move || view! {
                    <button id="send" class="primary" type="submit" disabled=move || draft.get().trim().is_empty() && attached.get().is_empty()>
                        {t("Send")}
                    </button>
                }
            >
                <button id="stop" class="primary stop" type="button" on:click=move |_| on_stop()>
                    {t("Stop")}
                </button>
            </Show>
            <p id="voice-status" class="voice-status" aria-live="polite">
                {move || match mic.voice.get() {
                    Voice::Idle => ().into_any(),
                    Voice::Listening { .. } => t("Listening… click the mic again (or release it) to stop.").into_any(),
                    Voice::Transcribing => t("Transcribing on this device…").into_any(),
                    Voice::Failed(message) => view! { <crate::notice::SaidView said=crate::notice::said("voice", &message) /> }.into_any(),
                }}
            </p>
            {move || attach_error.get().map(|message| view! {
                <p id="attach-error" class="attach-error" role="alert">{message}</p>
            })}
        </form>
    }
}

/// The files attached to the message being written, each with its remove button.
#[component]
fn AttachmentList(attached: RwSignal<Vec<ipc::Attachment>>) -> impl IntoView {
    view! {
        <Show when=move || !attached.get().is_empty()>
            <ul id="attachments" class="attachments" aria-label=t("Attached files")>
                {move || attached.get().into_iter().enumerate().map(|(i, a)| view! {
                    <li class="attachment">
                        <span class="attachment-name">{a.name.clone()}</span>
                        <span class="attachment-size">{crate::format::bytes(a.bytes as u64)}</span>
                        <button
                            type="button"
                            class="icon"
                            aria-label=tf("Remove {name}", &[("name", &a.name)])
                            on:click=move |_| attached.update(|all| {
                                if i < all.len() {
                                    all.remove(i);
                                }
                            })
                        >
                            "✕"
                        </button>
                    </li>
                }).collect_view()}
            </ul>
        </Show>
    }
}

/// The slash commands matching what is typed; a click completes one.
#[component]
fn SlashPalette(
    palette: Memo<Vec<SlashCommand>>,
    picked: RwSignal<usize>,
    draft: RwSignal<String>,
) -> impl IntoView {
    view! {
        <Show when=move || !palette.get().is_empty()>
            <ul id="slash-palette" class="slash-palette" role="listbox">
                {move || palette.get().into_iter().enumerate().map(|(i, command)| view! {
                    <li
                        role="option"
                        aria-selected=move || (picked.get() == i).to_string()
                        class=move || if picked.get() == i { "picked" } else { "" }
                    >
                        <button type="button" tabindex="-1" on:click=move |_| {
                            draft.set(format!("{} ", command.name()));
                            focus_composer();
                        }>
                            <span class="slash-name">{command.name()}</span>
                            <span class="slash-args">{command.args()}</span>
                            <span class="slash-help">{command.help()}</span>
                        </button>
                    </li>
                }).collect_view()}
            </ul>
        </Show>
    }
}

/// The mic: click, hold, Enter or Space; its level meter fills while it listens.
#[component]
fn MicButton(mic: Mic) -> impl IntoView {
    let voice = mic.voice;
    view! {
        <button
            id="mic"
            type="button"
            class=move || match voice.get() {
                Voice::Listening { .. } => "mic listening",
                Voice::Transcribing => "mic busy",
                _ => "mic",
            }
            title=t("Speak (click to start and stop, or hold; Ctrl+Shift+M)")
            aria-label=t("Voice input")
            on:pointerdown=move |ev| {
                ev.prevent_default();
                mic.press();
            }
            on:pointerup=move |_| mic.release()
            on:keydown=move |ev: web_sys::KeyboardEvent| {
                if ev.key() == "Enter" || ev.key() == " " {
                    ev.prevent_default();
                    mic.press();
                }
            }
        >
            <svg class="mic-icon" viewBox="0 0 24 24" width="18" height="18" aria-hidden="true">
                <path fill="currentColor" d="M12 14a3 3 0 0 0 3-3V5a3 3 0 0 0-6 0v6a3 3 0 0 0 3 3zm5-3a5 5 0 0 1-10 0H5a7 7 0 0 0 6 6.92V21h2v-3.08A7 7 0 0 0 19 11h-2z"></path>
            </svg>
            <span class="meter" style=move || match voice.get() {
                Voice::Listening { level, .. } => format!("width: {:.0}%", level * 100.0),
                _ => "width: 0%".to_owned(),
            }></span>
        </button>
    }
}

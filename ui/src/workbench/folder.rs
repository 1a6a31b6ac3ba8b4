//! The task's working folder in the stream's header: where the agent's commands and files go,
//! shown by name (the full path on hover), and a picker to move the task elsewhere — a path to
//! type, the folder's subfolders to walk into, its parent to climb to.

use cairn_protocol::settings::FolderListing;
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::i18n::t;
use crate::ipc;

/// The last part of a folder's path (the path itself for `/`).
pub fn folder_name(path: &str) -> &str {
    path.trim_end_matches('/')
        .rsplit('/')
        .next()
        .filter(|name| !name.is_empty())
        .unwrap_or(path)
}

#[component]
pub fn FolderChip(#[prop(into)] session: Signal<String>) -> impl IntoView {
    let folder = RwSignal::new(String::new());
    let open = RwSignal::new(false);
    let typed = RwSignal::new(String::new());
    let listing = RwSignal::new(None::<FolderListing>);
    let error = RwSignal::new(None::<String>);
    // The chip follows the task shown.
    Effect::new(move |_| {
        let session = session.get();
        open.set(false);
        spawn_local(async move {
            if let Ok(path) = ipc::task_folder(&session).await {
                folder.set(path);
            }
        });
    });
    let browse = move |path: String| {
        spawn_local(async move {
            match ipc::folder_listing(&path).await {
                Ok(found) => {
                    typed.set(found.path.clone());
                    listing.set(Some(found));
                    error.set(None);
                }
                Err(e) => error.set(Some(e.message)),
            }
        });
    };
    let use_folder = move || {
        let (session, path) = (session.get_untracked(), typed.get_untracked());
        spawn_local(async move {
            match ipc::task_folder_set(&session, &path).await {
                Ok(used) => {
                    folder.set(used);
                    open.set(false);
                    error.set(None);
                }
                Err(e) => error.set(Some(e.message)),
            }
        });
    };

    view! {
        <span class="folder">
            <button
                id="task-folder"
                class="pill folder-chip"
                title=move || folder.get()
                aria-expanded=move || open.get().to_string()
                on:click=move |_| {
                    let now = !open.get_untracked();
                    open.set(now);
                    if now {
                        browse(folder.get_untracked());
                    }
                }
            >
                "📁 "
                {move || folder_name(&folder.get()).to_owned()}
            </button>
            <Show when=move || open.get()>
                <div id="folder-picker" class="folder-picker" role="dialog" aria-label=t("Where this task works")>
                    <p class="set-muted">{t("Where this task works: its commands run here and its files are written here.")}</p>
                    <div class="folder-path">
                        <input
                            id="folder-path"
                            type="text"
                            autocomplete="off"
                            spellcheck="false"
                            prop:value=move || typed.get()
                            on:input=move |ev| typed.set(event_target_value(&ev))
                            on:keydown=move |ev| {
                                if ev.key() == "Enter" {
                                    ev.prevent_default();
                                    browse(typed.get_untracked());
                                }
                            }
                        />
                        <button
                            id="folder-up"
                            class="secondary"
                            title=t("The folder above")
                            disabled=move || listing.with(|l| l.as_ref().and_then(|l| l.parent.as_ref()).is_none())
                            on:click=move |_| {
                                if let Some(parent) = listing.with_untracked(|l| l.as_ref().and_then(|l| l.parent.clone())) {
                                    browse(parent);
                                }
                            }
                        >
                            "↑"
                        </button>
                    </div>
                    <ul id="folder-list" class="folder-list">
                        {move || listing.get().map(|l| {
                            let base = l.path.clone();
                            l.folders
                                .into_iter()
                                .map(|name| {
                                    let path = format!("{}/{name}", base.trim_end_matches('/'));
                                    view! {
                                        <li>
                                            <button class="folder-entry" on:click=move |_| browse(path.clone())>
                                                "📁 " {name}
                                            </button>
                                        </li>
                                    }
                                })
                                .collect_view()
                        })}
                    </ul>
                    {move || error.get().map(|e| view! { <p id="folder-error" class="set-notice error" role="alert">{e}</p> })}
                    <div class="set-actions">
                        <button class="secondary" id="folder-cancel" on:click=move |_| open.set(false)>{t("Cancel")}</button>
                        <button class="primary" id="folder-use" on:click=move |_| use_folder()>{t("Work here")}</button>
                    </div>
                </div>
            </Show>
        </span>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_is_shown_by_its_last_name() {
        assert_eq!(folder_name("/home/ada/src/garden"), "garden");
        assert_eq!(folder_name("/home/ada/src/garden/"), "garden");
        assert_eq!(folder_name("/"), "/");
        assert_eq!(folder_name(""), "");
    }
}

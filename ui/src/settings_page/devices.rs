//! Settings → Devices: one memory on every device. Connect this device to a hub (its address and
//! a code: the hub operator's for the first device, a pairing code shown on another device for
//! the next), then see how sync is doing, sync now, pause, pair another device, revoke one, or
//! leave the hub. The status reads again every few seconds while the page is open.

use cairn_protocol::sync::SyncView;

use super::*;
use crate::format::ago;

fn now() -> i64 {
    js_sys::Date::now() as i64
}

/// Reads the status (with the hub's device list when `ask_hub`) into `view`.
fn load(view: RwSignal<Option<Result<SyncView, String>>>, ask_hub: bool) {
    spawn_local(async move {
        let answer = ipc::sync_status(ask_hub).await.map_err(|e| e.message);
        // Keep the device list the hub gave last when this read did not ask it.
        let answer = match (answer, view.try_get_untracked().flatten()) {
            (Ok(mut fresh), Some(Ok(before))) if !ask_hub && fresh.devices.is_empty() => {
                fresh.devices = before.devices;
                Ok(fresh)
            }
            (answer, _) => answer,
        };
        let _ = view.try_set(Some(answer));
    });
}

/// Reads the status every five seconds until the page goes.
fn follow(view: RwSignal<Option<Result<SyncView, String>>>) {
    set_timeout(
        move || {
            if view.try_get_untracked().is_some() {
                load(view, false);
                follow(view);
            }
        },
        std::time::Duration::from_secs(5),
    );
}

/// The line that says how sync is doing.
fn state_line(view: &SyncView) -> String {
    if view.paused {
        return t("Paused: nothing is sent or fetched until you resume.").into();
    }
    match (&view.last_error, view.last_ok_ms) {
        (Some(error), _) => tf("Not syncing: {error}", &[("error", error)]),
        (None, Some(at)) => tf("Synced {ago}.", &[("ago", &ago(at, now()))]),
        (None, None) => t("Not synced yet.").into(),
    }
}

#[component]
pub(super) fn DevicesSection() -> impl IntoView {
    let view_state: RwSignal<Option<Result<SyncView, String>>> = RwSignal::new(None);
    let notice: RwSignal<Option<Notice>> = RwSignal::new(None);
    let address = RwSignal::new(String::new());
    let code = RwSignal::new(String::new());
    let name = RwSignal::new(String::new());
    let recovery = RwSignal::new(String::new());
    let pairing: RwSignal<Option<String>> = RwSignal::new(None);
    let busy = RwSignal::new(false);
    let leaving = RwSignal::new(false);
    load(view_state, true);
    follow(view_state);

    // Runs an action that answers the new status; `done` is said when it went through.
    let act = move |action: std::pin::Pin<
        Box<dyn std::future::Future<Output = Result<SyncView, ApiError>>>,
    >,
                    done: String| {
        busy.set(true);
        notice.set(None);
        spawn_local(async move {
            match action.await {
                Ok(fresh) => {
                    view_state.set(Some(Ok(fresh)));
                    notice.set(Some(Notice::Done(done)));
                }
                Err(e) => notice.set(Some(Notice::Failed(e.message))),
            }
            busy.set(false);
        });
    };

    let join = move |_| {
        let (a, c, n, r) = (
            address.get_untracked(),
            code.get_untracked(),
            name.get_untracked(),
            recovery.get_untracked(),
        );
        if a.trim().is_empty() || c.trim().is_empty() {
            notice.set(Some(Notice::Failed(
                t("Give the hub's address and a code.").into(),
            )));
            return;
        }
        act(
            Box::pin(async move { ipc::sync_join(&a, &c, &n, &r).await }),
            t("Connected: this device syncs with the hub.").into(),
        );
        code.set(String::new());
        recovery.set(String::new());
    };

    let joined_view = move |v: SyncView| {
        let paused = v.paused;
        let this = v.device_id.clone().unwrap_or_default();
        let devices = v.devices.clone();
        view! {
            <p class="set-muted" id="sync-where">
                {tf(
                    "{account}'s vault on {hub}, as {device}.",
                    &[
                        ("account", v.account.as_deref().unwrap_or("?")),
                        ("hub", v.hub.as_deref().unwrap_or("?")),
                        ("device", v.device.as_deref().unwrap_or("?")),
                    ],
                )}
            </p>
            <p id="sync-state" class=if v.last_error.is_some() && !paused { "set-notice error" } else { "set-notice ok" }>
                {state_line(&v)}
            </p>
            <p class="set-muted" id="sync-pending">
                {tf("Waiting to be sent: {n}", &[("n", &v.pending.to_string())])}
            </p>
            <div class="set-actions">
                <button
                    class="primary"
                    id="sync-now"
                    disabled=move || busy.get()
                    on:click=move |_| act(Box::pin(ipc::sync_now()), t("Synced.").into())
                >
                    {t("Sync now")}
                </button>
                <button
                    class="secondary"
                    id="sync-pause"
                    disabled=move || busy.get()
                    on:click=move |_| {
                        let done = if paused { t("Sync resumed.") } else { t("Sync paused.") };
                        act(Box::pin(ipc::sync_pause(!paused)), done.into())
                    }
                >
                    {if paused { t("Resume") } else { t("Pause") }}
                </button>
                <button
                    class="secondary"
                    id="sync-pair"
                    disabled=move || busy.get()
                    on:click=move |_| {
                        notice.set(None);
                        spawn_local(async move {
                            match ipc::sync_pair().await {
                                Ok(c) => pairing.set(Some(c)),
                                Err(e) => notice.set(Some(Notice::Failed(e.message))),
                            }
                        });
                    }
                >
                    {t("Pair another device")}
                </button>
            </div>
            {move || pairing.get().map(|c| view! {
                <div class="set-pairing">
                    <p class="set-muted">
                        {t("On the other device, within ten minutes, open Settings → Devices and give this hub's address and this code (or run `cairn sync join ADDRESS CODE`). The code opens your vault: keep it to yourself.")}
                    </p>
                    <p><code id="sync-pair-code" class="set-mono">{c}</code></p>
                </div>
            })}
            <h3>{t("This account's devices")}</h3>
            <ul class="set-providers" id="sync-devices">
                {devices
                    .into_iter()
                    .map(|d| {
                        let me = d.id == this;
                        let id = d.id.clone();
                        let seen = match (d.revoked_ms, d.last_seen_ms) {
                            (Some(at), _) => tf("revoked {ago}", &[("ago", &ago(at, now()))]),
                            (None, Some(at)) => tf("seen {ago}", &[("ago", &ago(at, now()))]),
                            (None, None) => t("never seen").into(),
                        };
                        let live = d.revoked_ms.is_none();
                        view! {
                            <li class="set-provider" data-device=d.name.clone()>
                                <div class="set-provider-head">
                                    <div class="set-provider-id">
                                        <span class="set-provider-name">{d.name.clone()}</span>
                                        {me.then(|| view! { <span class="set-kind">{t("this device")}</span> })}
                                        <span class="set-muted">{seen}</span>
                                    </div>
                                    {(live && !me).then(|| {
                                        let id = id.clone();
                                        view! {
                                            <div class="set-actions">
                                                <button
                                                    class="secondary danger"
                                                    id=format!("sync-revoke-{id}")
                                                    disabled=move || busy.get()
                                                    on:click=move |_| {
                                                        let id = id.clone();
                                                        act(
                                                            Box::pin(async move { ipc::sync_revoke(&id).await }),
                                                            t("Revoked: that device can no longer sync. What it already holds stays on it.").into(),
                                                        )
                                                    }
                                                >
                                                    {t("Revoke")}
                                                </button>
                                            </div>
                                        }
                                    })}
                                </div>
                            </li>
                        }
                    })
                    .collect_view()}
            </ul>
            <div class="set-actions">
                <button
                    class="secondary danger"
                    id="sync-leave"
                    disabled=move || busy.get()
                    on:click=move |_| {
                        if !leaving.get_untracked() {
                            leaving.set(true);
                            return;
                        }
                        leaving.set(false);
                        act(Box::pin(ipc::sync_leave()), t("This device left the hub; its memory stays here.").into())
                    }
                >
                    {move || if leaving.get() { t("Leave the hub: click again to confirm") } else { t("Leave the hub") }}
                </button>
            </div>
        }
    };

    let join_view = move || {
        let field = |id: &'static str,
                     label: &'static str,
                     hint: Option<&'static str>,
                     value: RwSignal<String>,
                     placeholder: &'static str| {
            view! {
                <label for=id>{label}</label>
                <div class="set-field">
                    <input id=id type="text" autocomplete="off" spellcheck="false" placeholder=placeholder
                        prop:value=move || value.get()
                        on:input=move |e| value.set(event_target_value(&e)) />
                    {hint.map(|h| view! { <span class="set-hint">{h}</span> })}
                </div>
            }
        };
        view! {
            <p class="set-muted" id="sync-where">{t("This device is not connected to a hub.")}</p>
            <div class="set-grid" id="sync-join-form">
                {field("sync-address", t("Hub address"), None, address, "https://hub.example.org")}
                {field("sync-code", t("Code"), Some(t("From the hub's operator for your first device; from Pair another device on a connected one for the next.")), code, "XXXX-XXXX-XXXX-XXXX-XXXX")}
                {field("sync-name", t("Name"), Some(t("How the other devices list this one (optional).")), name, "")}
                {field("sync-recovery", t("Recovery key"), Some(t("Only when no other device is left to pair this one.")), recovery, "")}
            </div>
            <div class="set-actions">
                <button class="primary" id="sync-join" disabled=move || busy.get() on:click=join>
                    {t("Connect")}
                </button>
            </div>
        }
    };

    view! {
    <section class="set-section" aria-labelledby="set-devices-title" id="settings-devices">
        <h2 id="set-devices-title">{t("Devices")}</h2>
        <p class="set-muted">
            {t("One memory on every device: this device syncs through a hub. Your memories are encrypted on this device before they leave it; the hub stores only what it cannot read.")}
        </p>
        {move || match view_state.get() {
            None => view! { <p class="set-muted">{t("Loading…")}</p> }.into_any(),
            Some(Err(e)) => view! { <p class="set-notice error" role="alert">{e}</p> }.into_any(),
            Some(Ok(v)) if v.joined => joined_view(v).into_any(),
            Some(Ok(_)) => join_view().into_any(),
        }}
        {notice_view(notice, "sync-notice")}
    </section>
    }
}

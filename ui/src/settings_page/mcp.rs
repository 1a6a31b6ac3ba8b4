//! Settings' MCP servers: the programs whose tools the agent uses (added, edited, turned on and
//! off, removed), each with its state, its tools as the model sees them and its last error, and a
//! restart. Variable and header values are never shown: a name alone keeps the value configured.

use cairn_protocol::settings::{McpServerSettings, McpServerState, McpStatus, McpTransportKind};

use super::mcp_form::{McpForm, McpServerForm};
use super::*;

/// Reads every server's status, again every second while one is starting. `polling` keeps it to
/// one loop however often it is asked for: asked while the loop runs, the loop reads once more.
fn poll_statuses(
    statuses: RwSignal<Option<Result<Vec<McpStatus>, String>>>,
    polling: StoredValue<Poll>,
) {
    match polling.get_value() {
        Poll::Idle => polling.set_value(Poll::Running),
        Poll::Running | Poll::Again => {
            polling.set_value(Poll::Again);
            return;
        }
    }
    poll_once(statuses, polling);
}

#[derive(Clone, Copy, PartialEq)]
enum Poll {
    Idle,
    Running,
    /// Asked again while running.
    Again,
}

fn poll_once(
    statuses: RwSignal<Option<Result<Vec<McpStatus>, String>>>,
    polling: StoredValue<Poll>,
) {
    spawn_local(async move {
        let answer = ipc::mcp_statuses().await.map_err(|e| e.message);
        let starting = answer
            .as_ref()
            .is_ok_and(|all| all.iter().any(|s| s.state == McpServerState::Starting));
        if statuses.try_set(Some(answer)).is_some() {
            // The page has gone.
            return;
        }
        let again = polling.try_get_value() == Some(Poll::Again);
        if starting || again {
            polling.try_set_value(Poll::Running);
            set_timeout(
                move || poll_once(statuses, polling),
                std::time::Duration::from_millis(if again { 0 } else { 1000 }),
            );
        } else {
            polling.try_set_value(Poll::Idle);
        }
    });
}

/// What a server's state says, and its class.
fn state_label(status: Option<&McpStatus>) -> (String, &'static str) {
    let Some(status) = status else {
        return (t("Checking…").to_owned(), "starting");
    };
    match status.state {
        McpServerState::Ready => (
            tf(
                "Running · {n} tools",
                &[("n", &status.tools.len().to_string())],
            ),
            "ready",
        ),
        McpServerState::Starting => (t("Starting…").to_owned(), "starting"),
        McpServerState::Failed => (t("Failed").to_owned(), "failed"),
        McpServerState::Disabled => (t("Off").to_owned(), "disabled"),
        McpServerState::Idle => (t("Not started").to_owned(), "idle"),
    }
}

/// The section's shared state: the server form, the last notice and the servers' statuses (read
/// again after every change, and every second while one is starting).
#[derive(Clone, Copy)]
struct McpPanel {
    page: Page,
    form: McpForm,
    notice: RwSignal<Option<Notice>>,
    statuses: RwSignal<Option<Result<Vec<McpStatus>, String>>>,
    polling: StoredValue<Poll>,
}

impl McpPanel {
    fn new(page: Page) -> Self {
        Self {
            page,
            form: McpForm::new(),
            notice: RwSignal::new(None),
            statuses: RwSignal::new(None),
            polling: StoredValue::new(Poll::Idle),
        }
    }

    fn poll(self) {
        poll_statuses(self.statuses, self.polling);
    }

    /// Every change answers the new settings; the servers' statuses are read again after it.
    fn change(
        self,
        change: SettingsChange,
        done: String,
        on_error: Option<RwSignal<Option<String>>>,
    ) {
        let Self {
            page, form, notice, ..
        } = self;
        notice.set(None);
        spawn_local(async move {
            match ipc::change_settings(change).await {
                Ok(settings) => {
                    page.adopt(settings);
                    form.open.set(false);
                    notice.set(Some(Notice::Done(done)));
                    self.poll();
                }
                Err(e) => match on_error {
                    Some(field) => field.set(Some(e.message)),
                    None => notice.set(Some(Notice::Failed(e.message))),
                },
            }
        });
    }

    fn save(self) {
        let Self { form, .. } = self;
        form.error.set(None);
        match form.input() {
            Ok(input) => {
                let done = tf(
                    "Saved MCP server {name} to config.toml.",
                    &[("name", &input.name)],
                );
                self.change(SettingsChange::SaveMcp(input), done, Some(form.error));
            }
            Err(e) => form.error.set(Some(e)),
        }
    }

    fn restart(self, name: String) {
        let Self { notice, .. } = self;
        notice.set(None);
        spawn_local(async move {
            match ipc::mcp_restart(&name).await {
                Ok(()) => self.poll(),
                Err(e) => notice.set(Some(Notice::Failed(e.message))),
            }
        });
    }

    /// Server `name`'s status, once read.
    fn status_of(self, name: String) -> impl Fn() -> Option<McpStatus> + Clone {
        let Self { statuses, .. } = self;
        move || {
            statuses
                .get()
                .and_then(|all| all.ok()?.into_iter().find(|s| s.name == name))
        }
    }
}

#[component]
pub(super) fn McpSection(page: Page) -> impl IntoView {
    let panel = McpPanel::new(page);
    let McpPanel {
        form,
        notice,
        statuses,
        ..
    } = panel;
    panel.poll();
    let loaded = move || page.loaded();
    let server_list = move || {
        let servers = loaded().map(|s| s.mcp_servers).unwrap_or_default();
        if servers.is_empty() {
            return view! {
                <p class="set-empty" id="settings-no-mcp">
                    {t("No MCP server yet. Add one to give the agent its tools: a command run on this machine (stdio) or an address (streamable HTTP or SSE).")}
                </p>
            }
            .into_any();
        }
        servers
            .into_iter()
            .map(|server| view! { <McpServerItem panel server /> })
            .collect_view()
            .into_any()
    };
    // Read here, so the form shows the server being edited when another's Edit is pressed.
    let server_form = move || {
        form.open
            .get()
            .then(|| view! { <McpServerForm form editing=form.editing.get() save=move || panel.save() /> })
    };

    view! {
    <section class="set-section" aria-labelledby="set-mcp-title">
        <div class="set-section-head">
            <div>
                <h2 id="set-mcp-title">{t("MCP servers")}</h2>
                <p class="set-muted">{t("Programs that give the agent more tools. Their tools appear to the model as mcp__server__tool.")}</p>
            </div>
            <button class="primary" id="settings-add-mcp" on:click=move |_| form.start(None)>
                {t("Add an MCP server")}
            </button>
        </div>
        {server_form}
        <ul class="set-providers" id="mcp-servers">{server_list}</ul>
        {move || match statuses.get() {
            Some(Err(e)) => Some(view! { <p class="set-notice error" role="alert">{e}</p> }),
            _ => None,
        }}
        {notice_view(notice, "settings-mcp-notice")}
    </section>
    }
}

/// One configured server: its transport, state and tools, its buttons and its last error.
#[component]
fn McpServerItem(panel: McpPanel, server: McpServerSettings) -> impl IntoView {
    let McpPanel { form, .. } = panel;
    let change = move |change, done, on_error| panel.change(change, done, on_error);
    let restart = move |name| panel.restart(name);
    let name = server.name.clone();
    let status = panel.status_of(name.clone());
    let edit_with = server.clone();
    let (restart_name, toggle_name, remove_name) = (name.clone(), name.clone(), name.clone());
    let enabled = server.enabled;
    let stdio = server.kind == McpTransportKind::Stdio;
    let reached = if stdio {
        std::iter::once(server.command.clone())
            .chain(server.args.iter().cloned())
            .collect::<Vec<_>>()
            .join(" ")
    } else {
        server.url.clone()
    };
    let secrets = if stdio {
        (t("Environment"), server.env.clone())
    } else {
        (t("Headers"), server.headers.clone())
    };
    let status_for_label = status.clone();
    let status_for_tools = status.clone();
    let tools_server = name.clone();
    view! {
        <li class="set-provider mcp-server" data-mcp=name.clone()>
            <div class="set-provider-head">
                <div class="set-provider-id">
                    <span class="set-provider-name">{name.clone()}</span>
                    <span class="set-kind">{server.kind.as_str().replace('_', " ")}</span>
                    {move || {
                        let (label, class) = state_label(status_for_label().as_ref());
                        view! {
                            <span class=format!("mcp-state {class}") data-state=class role="status">
                                {label}
                            </span>
                        }
                    }}
                </div>
                <div class="set-actions">
                    <button
                        class="secondary mcp-restart"
                        disabled=!enabled
                        on:click=move |_| restart(restart_name.clone())
                    >
                        {t("Restart")}
                    </button>
                    <button
                        class="secondary mcp-toggle"
                        on:click=move |_| {
                            let name = toggle_name.clone();
                            let done = if enabled {
                                tf("Turned {name} off.", &[("name", &name)])
                            } else {
                                tf("Turned {name} on.", &[("name", &name)])
                            };
                            change(SettingsChange::EnableMcp { name, on: !enabled }, done, None)
                        }
                    >
                        {if enabled { t("Turn off") } else { t("Turn on") }}
                    </button>
                    <button
                        class="secondary mcp-edit"
                        on:click=move |_| form.start(Some(&edit_with))
                    >
                        {t("Edit")}
                    </button>
                    <button
                        class="secondary danger mcp-remove"
                        on:click=move |_| {
                            let name = remove_name.clone();
                            let done = tf("Removed MCP server {name}.", &[("name", &name)]);
                            change(SettingsChange::RemoveMcp(name), done, None)
                        }
                    >
                        {t("Remove")}
                    </button>
                </div>
            </div>
            <dl class="set-facts">
                <dt>{if stdio { t("Command") } else { t("Address") }}</dt>
                <dd class="set-mono mcp-reached">{reached}</dd>
                {(!secrets.1.is_empty()).then(|| view! {
                    <dt>{secrets.0}</dt>
                    <dd class="set-mono">{secrets.1.join(", ")}</dd>
                })}
                <dt>{t("Tools")}</dt>
                <dd class="set-chips mcp-tools">
                    {move || {
                        let tools = status_for_tools().map(|s| s.tools).unwrap_or_default();
                        if tools.is_empty() {
                            view! { <span class="set-muted">{t("None yet")}</span> }.into_any()
                        } else {
                            let prefix = format!("mcp__{}__", tools_server);
                            tools
                                .into_iter()
                                .map(|tool| {
                                    // The server's own name for it; the model's in the tooltip.
                                    let short = tool.strip_prefix(&prefix).unwrap_or(&tool).to_owned();
                                    view! { <span class="set-chip" title=tool.clone() data-tool=tool.clone()>{short}</span> }
                                })
                                .collect_view()
                                .into_any()
                        }
                    }}
                </dd>
            </dl>
            {move || status().and_then(|s| s.error).map(|error| view! {
                <p class="set-notice error mcp-error" role="alert">{error}</p>
            })}
        </li>
    }
}

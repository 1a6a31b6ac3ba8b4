//! Settings' MCP servers: the programs whose tools the agent uses (added, edited, turned on and
//! off, removed), each with its state, its tools as the model sees them and its last error, and a
//! restart. Variable and header values are never shown: a name alone keeps the value configured.

use cairn_protocol::settings::{
    McpServerInput, McpServerSettings, McpServerState, McpStatus, McpTransportKind,
};

use super::*;

/// The server form's fields.
#[derive(Clone, Copy)]
struct McpForm {
    /// `Some(name)` when editing that server; `None` when adding.
    editing: RwSignal<Option<String>>,
    open: RwSignal<bool>,
    name: RwSignal<String>,
    kind: RwSignal<McpTransportKind>,
    command: RwSignal<String>,
    /// One argument per line.
    args: RwSignal<String>,
    cwd: RwSignal<String>,
    url: RwSignal<String>,
    /// `NAME=value` per line.
    env: RwSignal<String>,
    headers: RwSignal<String>,
    enabled: RwSignal<bool>,
    startup_timeout: RwSignal<String>,
    tool_timeout: RwSignal<String>,
    /// Comma-separated.
    enabled_tools: RwSignal<String>,
    disabled_tools: RwSignal<String>,
    error: RwSignal<Option<String>>,
}

impl McpForm {
    fn new() -> Self {
        Self {
            editing: RwSignal::new(None),
            open: RwSignal::new(false),
            name: RwSignal::new(String::new()),
            kind: RwSignal::new(McpTransportKind::Stdio),
            command: RwSignal::new(String::new()),
            args: RwSignal::new(String::new()),
            cwd: RwSignal::new(String::new()),
            url: RwSignal::new(String::new()),
            env: RwSignal::new(String::new()),
            headers: RwSignal::new(String::new()),
            enabled: RwSignal::new(true),
            startup_timeout: RwSignal::new(String::new()),
            tool_timeout: RwSignal::new(String::new()),
            enabled_tools: RwSignal::new(String::new()),
            disabled_tools: RwSignal::new(String::new()),
            error: RwSignal::new(None),
        }
    }

    fn start(self, server: Option<&McpServerSettings>) {
        let text = |f: fn(&McpServerSettings) -> String| server.map(f).unwrap_or_default();
        self.editing.set(server.map(|s| s.name.clone()));
        self.name.set(text(|s| s.name.clone()));
        self.kind
            .set(server.map_or(McpTransportKind::Stdio, |s| s.kind));
        self.command.set(text(|s| s.command.clone()));
        self.args.set(text(|s| s.args.join("\n")));
        self.cwd.set(text(|s| s.cwd.clone()));
        self.url.set(text(|s| s.url.clone()));
        self.env.set(text(|s| s.env.join("\n")));
        self.headers.set(text(|s| s.headers.join("\n")));
        self.enabled.set(server.is_none_or(|s| s.enabled));
        let seconds = |s: Option<f64>| s.map(|s| s.to_string()).unwrap_or_default();
        self.startup_timeout
            .set(seconds(server.and_then(|s| s.startup_timeout)));
        self.tool_timeout
            .set(seconds(server.and_then(|s| s.tool_timeout)));
        self.enabled_tools.set(text(|s| s.enabled_tools.join(", ")));
        self.disabled_tools
            .set(text(|s| s.disabled_tools.join(", ")));
        self.error.set(None);
        self.open.set(true);
    }

    /// The form as the command takes it, or what is wrong with a timeout.
    fn input(self) -> Result<McpServerInput, String> {
        let lines = |s: RwSignal<String>| -> Vec<String> {
            s.get_untracked()
                .lines()
                .map(|l| l.trim().to_owned())
                .filter(|l| !l.is_empty())
                .collect()
        };
        let names = |s: RwSignal<String>| -> Vec<String> {
            s.get_untracked()
                .split([',', '\n'])
                .map(|n| n.trim().to_owned())
                .filter(|n| !n.is_empty())
                .collect()
        };
        let seconds = |s: RwSignal<String>, what: &'static str| -> Result<Option<f64>, String> {
            let text = s.get_untracked();
            let text = text.trim();
            if text.is_empty() {
                return Ok(None);
            }
            match text.parse::<f64>() {
                Ok(n) if n > 0.0 && n.is_finite() => Ok(Some(n)),
                _ => Err(what.to_owned()),
            }
        };
        Ok(McpServerInput {
            name: self.name.get_untracked().trim().to_owned(),
            kind: self.kind.get_untracked(),
            command: self.command.get_untracked(),
            args: lines(self.args),
            cwd: self.cwd.get_untracked(),
            url: self.url.get_untracked(),
            env: lines(self.env),
            headers: lines(self.headers),
            enabled: self.enabled.get_untracked(),
            startup_timeout: seconds(
                self.startup_timeout,
                t("The start timeout is a number of seconds."),
            )?,
            tool_timeout: seconds(
                self.tool_timeout,
                t("The tool timeout is a number of seconds."),
            )?,
            enabled_tools: names(self.enabled_tools),
            disabled_tools: names(self.disabled_tools),
        })
    }
}

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

#[component]
pub(super) fn McpSection(page: Page) -> impl IntoView {
    let form = McpForm::new();
    let notice = RwSignal::new(None::<Notice>);
    let statuses = RwSignal::new(None::<Result<Vec<McpStatus>, String>>);
    let polling = StoredValue::new(Poll::Idle);
    let poll = move || poll_statuses(statuses, polling);
    poll();
    let loaded = move || page.loaded();
    // Every change answers the new settings; the servers' statuses are read again after it.
    let change =
        move |change: SettingsChange, done: String, on_error: Option<RwSignal<Option<String>>>| {
            notice.set(None);
            spawn_local(async move {
                match ipc::change_settings(change).await {
                    Ok(settings) => {
                        page.adopt(settings);
                        form.open.set(false);
                        notice.set(Some(Notice::Done(done)));
                        poll();
                    }
                    Err(e) => match on_error {
                        Some(field) => field.set(Some(e.message)),
                        None => notice.set(Some(Notice::Failed(e.message))),
                    },
                }
            });
        };
    let save = move || {
        form.error.set(None);
        match form.input() {
            Ok(input) => {
                let done = tf(
                    "Saved MCP server {name} to config.toml.",
                    &[("name", &input.name)],
                );
                change(SettingsChange::SaveMcp(input), done, Some(form.error));
            }
            Err(e) => form.error.set(Some(e)),
        }
    };
    let restart = move |name: String| {
        notice.set(None);
        spawn_local(async move {
            match ipc::mcp_restart(&name).await {
                Ok(()) => poll(),
                Err(e) => notice.set(Some(Notice::Failed(e.message))),
            }
        });
    };

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
            .map(|server| {
                let name = server.name.clone();
                let status = {
                    let name = name.clone();
                    move || {
                        statuses.get().and_then(|all| {
                            all.ok()?.into_iter().find(|s| s.name == name)
                        })
                    }
                };
                let edit_with = server.clone();
                let (restart_name, toggle_name, remove_name) =
                    (name.clone(), name.clone(), name.clone());
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
            })
            .collect_view()
            .into_any()
    };

    let server_form = move || {
        form.open.get().then(|| {
            let editing = form.editing.get();
            let title = match &editing {
                Some(name) => tf("Edit MCP server {name}", &[("name", name)]),
                None => t("Add an MCP server").to_owned(),
            };
            let stdio = move || form.kind.get() == McpTransportKind::Stdio;
            let area = |id: &'static str, signal: RwSignal<String>, placeholder: &'static str| {
                view! {
                    <textarea
                        id=id
                        rows="3"
                        spellcheck="false"
                        placeholder=placeholder
                        prop:value=move || signal.get()
                        on:input=move |ev| signal.set(event_target_value(&ev))
                    ></textarea>
                }
            };
            let line = |id: &'static str, signal: RwSignal<String>, placeholder: &'static str| {
                view! {
                    <input
                        id=id
                        type="text"
                        autocomplete="off"
                        spellcheck="false"
                        placeholder=placeholder
                        prop:value=move || signal.get()
                        on:input=move |ev| signal.set(event_target_value(&ev))
                    />
                }
            };
            view! {
                <form
                    class="set-form"
                    id="mcp-form"
                    on:submit=move |ev| {
                        ev.prevent_default();
                        save();
                    }
                >
                    <h3>{title}</h3>
                    <div class="set-grid">
                        <label for="mcp-name">{t("Name")}</label>
                        <input
                            id="mcp-name"
                            type="text"
                            placeholder="github"
                            autocomplete="off"
                            disabled=editing.is_some()
                            prop:value=move || form.name.get()
                            on:input=move |ev| form.name.set(event_target_value(&ev))
                        />
                        <label for="mcp-kind">{t("Transport")}</label>
                        <select
                            id="mcp-kind"
                            prop:value=move || form.kind.get().as_str()
                            on:change=move |ev| {
                                if let Ok(kind) = event_target_value(&ev).parse::<McpTransportKind>() {
                                    form.kind.set(kind);
                                }
                            }
                        >
                            <option value=McpTransportKind::Stdio.as_str()>{t("A command (stdio)")}</option>
                            <option value=McpTransportKind::StreamableHttp.as_str()>{t("An address (streamable HTTP)")}</option>
                            <option value=McpTransportKind::Sse.as_str()>{t("An address (SSE, older servers)")}</option>
                        </select>
                        {move || if stdio() {
                            view! {
                                <label for="mcp-command">{t("Command")}</label>
                                {line("mcp-command", form.command, "npx")}
                                <label for="mcp-args">{t("Arguments")}</label>
                                <div class="set-field">
                                    {area("mcp-args", form.args, "-y\n@modelcontextprotocol/server-everything")}
                                    <span class="set-hint">{t("One per line.")}</span>
                                </div>
                                <label for="mcp-cwd">{t("Working folder")}</label>
                                {line("mcp-cwd", form.cwd, "")}
                                <label for="mcp-env">{t("Environment")}</label>
                                <div class="set-field">
                                    {area("mcp-env", form.env, "GITHUB_TOKEN=${GITHUB_TOKEN}")}
                                    <span class="set-hint">{t("NAME=value per line, added to your own environment. A name alone keeps the value already configured; values are never shown. Prefer a reference such as ${GITHUB_TOKEN}.")}</span>
                                </div>
                            }
                            .into_any()
                        } else {
                            view! {
                                <label for="mcp-url">{t("Address")}</label>
                                {line("mcp-url", form.url, "http://127.0.0.1:3001/mcp")}
                                <label for="mcp-headers">{t("Headers")}</label>
                                <div class="set-field">
                                    {area("mcp-headers", form.headers, "Authorization=Bearer ${DOCS_TOKEN}")}
                                    <span class="set-hint">{t("NAME=value per line. A name alone keeps the value already configured; values are never shown.")}</span>
                                </div>
                            }
                            .into_any()
                        }}
                        <label for="mcp-enabled-tools">{t("Only these tools")}</label>
                        <div class="set-field">
                            {line("mcp-enabled-tools", form.enabled_tools, "")}
                            <span class="set-hint">{t("Comma-separated tool names; empty offers every tool.")}</span>
                        </div>
                        <label for="mcp-disabled-tools">{t("Never these tools")}</label>
                        {line("mcp-disabled-tools", form.disabled_tools, "")}
                        <label for="mcp-startup-timeout">{t("Start timeout (s)")}</label>
                        {line("mcp-startup-timeout", form.startup_timeout, "120")}
                        <label for="mcp-tool-timeout">{t("Tool timeout (s)")}</label>
                        {line("mcp-tool-timeout", form.tool_timeout, "120")}
                        <span></span>
                        <label class="set-check">
                            <input
                                type="checkbox"
                                id="mcp-enabled"
                                prop:checked=move || form.enabled.get()
                                on:change=move |ev| form.enabled.set(event_target_checked(&ev))
                            />
                            {t("On: start it and offer its tools")}
                        </label>
                    </div>
                    {move || form.error.get().map(|e| view! { <p class="set-notice error" id="mcp-form-error" role="alert">{e}</p> })}
                    <div class="set-actions end">
                        <button type="button" class="secondary" on:click=move |_| form.open.set(false)>
                            {t("Cancel")}
                        </button>
                        <button type="submit" class="primary" id="mcp-save">
                            {t("Save server")}
                        </button>
                    </div>
                </form>
            }
        })
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

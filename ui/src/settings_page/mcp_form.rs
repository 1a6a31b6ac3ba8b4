//! Settings' MCP server form: its fields (a command and its environment, or an address and its
//! headers; the tools offered; the timeouts), filled from a server to edit it, and what it sends.

use cairn_protocol::settings::{McpServerInput, McpServerSettings, McpTransportKind};

use super::*;

/// The server form's fields.
#[derive(Clone, Copy)]
pub(super) struct McpForm {
    /// `Some(name)` when editing that server; `None` when adding.
    pub(super) editing: RwSignal<Option<String>>,
    pub(super) open: RwSignal<bool>,
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
    pub(super) error: RwSignal<Option<String>>,
}

impl McpForm {
    pub(super) fn new() -> Self {
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

    pub(super) fn start(self, server: Option<&McpServerSettings>) {
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
    pub(super) fn input(self) -> Result<McpServerInput, String> {
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

/// The form that adds a server (`editing` is `None`) or edits server `editing`; `save` sends it.
#[component]
pub(super) fn McpServerForm(
    form: McpForm,
    editing: Option<String>,
    save: impl Fn() + Copy + Send + Sync + 'static,
) -> impl IntoView {
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
}

//! Plain functions that turn data into what the UI shows; unit-tested on the host.

use cairn_protocol::StatusReport;

use crate::i18n::{t, tf};

/// Whether the module was loaded by the pet window's page.
pub fn is_pet_page(path: &str) -> bool {
    path.trim_end_matches('/').ends_with("pet.html")
}

/// One line for the status bar, e.g. "Cairn 0.1.0 · API on 127.0.0.1:4242".
pub fn status_line(report: &StatusReport) -> String {
    let api = match (&report.api.url, report.api.running) {
        (Some(url), true) => tf(
            "API on {url}",
            &[("url", url.trim_start_matches("http://"))],
        ),
        _ => t("API not running").to_owned(),
    };
    if report.config.kept {
        return format!(
            "Cairn {} · {api} · {}",
            report.version,
            t("the config file has an error: the settings before it stay in use")
        );
    }
    match report.sync.as_ref().filter(|s| s.joined) {
        Some(sync) => format!("Cairn {} · {api} · {}", report.version, sync_words(sync)),
        None => format!("Cairn {} · {api}", report.version),
    }
}

/// Sync in a few words, for the status line.
pub fn sync_words(sync: &cairn_protocol::sync::SyncView) -> String {
    if sync.paused {
        return t("sync paused").to_owned();
    }
    match (&sync.last_error, sync.last_ok_ms) {
        (Some(_), _) => t("sync: not syncing (see Settings → Devices)").to_owned(),
        (None, Some(at)) => tf(
            "synced {ago}",
            &[("ago", &crate::format::ago(at, js_sys::Date::now() as i64))],
        ),
        (None, None) => t("not synced yet").to_owned(),
    }
}

/// The model pill: the default model, or what is missing.
pub fn model_label(report: &StatusReport) -> String {
    if !report.config.valid && !report.config.kept {
        return t("Config has an error").to_owned();
    }
    match report.default_model.as_deref() {
        Some(model) => match model.strip_prefix("local/") {
            Some(own) => tf("{model} · on this device", &[("model", own)]),
            None => model.to_owned(),
        },
        None => t("No model configured").to_owned(),
    }
}

/// What the reply says while a failed model request waits to be sent again.
pub fn retrying_text(reason: &str, after_ms: u64) -> String {
    let seconds = format!("{:.1}", after_ms as f64 / 1000.0);
    tf(
        "Trying again in {seconds} s — {reason}",
        &[("seconds", &seconds), ("reason", reason)],
    )
}

/// What the person can do about a failed reply, in a sentence (`None` when the message says it).
pub fn failure_hint(kind: cairn_protocol::FailureKind) -> Option<&'static str> {
    use cairn_protocol::FailureKind as K;
    Some(match kind {
        K::Auth => t("The model server did not accept the key: check it in Settings, then retry."),
        K::RateLimited => t("The model server asks to slow down: retry in a moment."),
        K::Context => t("This conversation no longer fits the model: /compact it, or start a new task."),
        K::Connection => t("Cairn could not reach the model server: check that it runs and its address in Settings, then retry."),
        K::Rejected => t("The model server refused the request: check the model's name in Settings."),
        K::Generation => t("The model's reply could not be used: retry, or put the request differently."),
        K::LocalModel => t("Cairn's own model could not run on this computer: install Cairn again, or pick another model in Settings."),
        K::Storage => t("Cairn could not save this task: make room on the disk, then retry."),
        K::Other => return None,
    })
}

/// The config snippet shown to a person who has not configured a model yet.
pub fn setup_snippet(config_path: &str) -> String {
    format!(
        "# {config_path}\n[agent]\nmodel = \"openai/gpt-4o\"\n\n[providers.openai]\nkind = \"openai\"   # or anthropic, ollama\napi_key = \"${{OPENAI_API_KEY}}\"\nmodels = [\"gpt-4o\"]"
    )
}

/// Attachments per message, and the size of each (as the backend checks them too).
pub const MAX_ATTACHMENTS: usize = 4;
pub const MAX_ATTACHMENT_BYTES: f64 = 10.0 * 1024.0 * 1024.0;

/// A task's title from its first message: the first line, at most 48 characters.
pub fn task_title(message: &str) -> String {
    let first = message.trim().lines().next().unwrap_or_default().trim();
    let mut title: String = first.chars().take(48).collect();
    if first.chars().count() > 48 {
        title = title.trim_end().to_owned();
        title.push('…');
    }
    if title.is_empty() {
        t("New task").to_owned()
    } else {
        title
    }
}

/// Whether a tool's output says the person stopped it (the runtime's cancellation text, after
/// the result's id header).
pub fn was_stopped(output: &str) -> bool {
    let body = match output.split_once('\n') {
        Some((first, rest)) if first.starts_with("[#") => rest,
        _ => output,
    };
    body.trim() == "[error: cancelled]"
}

/// A tool's output as the card shows it: the id header left out, at most 400 lines.
pub fn fold_output(output: &str) -> String {
    let body = match output.split_once('\n') {
        Some((first, rest)) if first.starts_with("[#") => rest,
        _ if output.starts_with("[#") => "",
        _ => output,
    };
    let lines: Vec<&str> = body.lines().collect();
    if lines.len() <= 400 {
        return body.to_owned();
    }
    format!(
        "{}\n{}",
        lines[..400].join("\n"),
        tf(
            "… {n} more lines",
            &[("n", &(lines.len() - 400).to_string())]
        )
    )
}

/// The class of one line of an edit's diff (`+ 3 │ …` added, `- 3 │ …` removed, `@@` a hunk).
pub fn diff_line_class(line: &str) -> &'static str {
    if line.starts_with("@@") {
        "diff-hunk"
    } else if line.starts_with('+') && !line.starts_with("+++") {
        "diff-add"
    } else if line.starts_with('-') && !line.starts_with("---") {
        "diff-del"
    } else {
        "diff-line"
    }
}

/// `/status`: version, API, config, model, data home.
pub fn status_text(report: &StatusReport) -> String {
    let problem = match (&report.config.error, report.config.kept) {
        (_, _) if report.config.valid => String::new(),
        (Some(error), true) => tf(
            " has an error, and the settings before it stay in use: {error}",
            &[("error", error)],
        ),
        (Some(error), false) => format!(" {}: {error}", t("has an error")),
        (None, _) => t(" (has an error)").to_owned(),
    };
    format!(
        "{}\n{}\n{}\n{}",
        status_line(report),
        tf(
            "Config: {path}{problem}",
            &[("path", &report.paths.config), ("problem", &problem)]
        ),
        tf("Model: {model}", &[("model", &model_label(report))]),
        tf("Data: {path}", &[("path", &report.paths.home)])
    )
}

/// A dream as `/dream` and `/dream-log` show it: its line (number, date, state, what it
/// changed), what it left and how to undo it; with `changes`, each change and why.
pub fn dream_text(dream: &cairn_protocol::memory::Dream, changes: bool) -> String {
    use cairn_protocol::memory::{DreamChangeKind, DreamState};
    let count = |kind| {
        dream
            .changes
            .iter()
            .filter(|c| c.kind == kind)
            .count()
            .to_string()
    };
    let state = match dream.state {
        DreamState::Running => t("running"),
        DreamState::Done => t("done"),
        DreamState::DryRun => t("dry run, nothing changed"),
        DreamState::Interrupted => t("interrupted, nothing changed"),
        DreamState::Failed => t("failed, nothing changed"),
    };
    let mut out = tf(
        "Dream {id} ({date}, {state}): {merged} merged, {notes} episode notes, {archived} archived.",
        &[
            ("id", &dream.id.to_string()),
            ("date", &cairn_protocol::calendar::date(dream.started_at)),
            ("state", state),
            ("merged", &count(DreamChangeKind::Merged)),
            ("notes", &count(DreamChangeKind::Noted)),
            ("archived", &count(DreamChangeKind::Archived)),
        ],
    );
    if let Some(undone) = &dream.undone {
        out.push(' ');
        out.push_str(&tf(
            "Undone by restoring dream {id}.",
            &[("id", &undone.by_restore_of.to_string())],
        ));
    } else if dream.state == DreamState::Done && dream.restore_point_bytes > 0 {
        out.push(' ');
        out.push_str(&tf(
            "Undo: /dream-restore {id}",
            &[("id", &dream.id.to_string())],
        ));
    }
    for line in dream.error.iter().chain(&dream.left) {
        out.push_str("\n  ");
        out.push_str(line);
    }
    if changes {
        for change in &dream.changes {
            let kind = match change.kind {
                DreamChangeKind::Merged => t("merged"),
                DreamChangeKind::Noted => t("noted"),
                DreamChangeKind::Archived => t("archived"),
            };
            out.push_str(&format!("\n  {kind} #{} — {}", change.memory, change.why));
        }
    }
    out
}

/// `/model` without a name: the configured models, the default marked.
pub fn models_text(report: &StatusReport, offered: &[(String, Vec<String>)]) -> String {
    let mut out = String::new();
    let in_use = |name: &str| report.default_model.as_deref() == Some(name);
    for provider in &report.providers {
        for model in &provider.models {
            let name = format!("{}/{model}", provider.name);
            let mark = if in_use(&name) {
                format!("  ({})", t("in use"))
            } else {
                String::new()
            };
            out.push_str(&format!("{name}{mark}\n"));
        }
    }
    // The model in use may be one of Cairn's own, which no provider table lists.
    if let Some(model) = report.default_model.as_deref() {
        if !out
            .lines()
            .any(|l| l.split_whitespace().next() == Some(model))
        {
            out.insert_str(0, &format!("{model}  ({})\n", t("in use")));
        }
    }
    for (provider, models) in offered {
        let configured = report
            .providers
            .iter()
            .find(|p| &p.name == provider)
            .map(|p| p.models.as_slice())
            .unwrap_or_default();
        let more: Vec<&str> = models
            .iter()
            .filter(|m| !configured.contains(m))
            .map(String::as_str)
            .collect();
        if !more.is_empty() {
            out.push_str(&tf(
                "Also offered by {provider}: {models}\n",
                &[("provider", provider), ("models", &more.join(", "))],
            ));
        }
    }
    if out.is_empty() {
        return t("No model is configured: add a provider to the config (see Connect a model).")
            .into();
    }
    out.push_str(t("Switch with /model provider/model."));
    out
}

/// The task list's groups, in order.
pub const TASK_GROUPS: [&str; 6] = [
    "Pinned",
    "Today",
    "Yesterday",
    "Last 7 days",
    "Older",
    "Archived",
];

/// A task group's name as the task list shows it, in the current language.
pub fn group_label(group: &str) -> &'static str {
    match group {
        "Pinned" => t("Pinned"),
        "Today" => t("Today"),
        "Yesterday" => t("Yesterday"),
        "Last 7 days" => t("Last 7 days"),
        "Older" => t("Older"),
        "Archived" => t("Archived"),
        _ => "",
    }
}

/// The group of a task last active at `updated_ms`, seen at `now_ms` in a time zone
/// `offset_minutes` behind UTC (JavaScript's `getTimezoneOffset`).
pub fn task_group(
    updated_ms: f64,
    now_ms: f64,
    offset_minutes: f64,
    pinned: bool,
    archived: bool,
) -> &'static str {
    if archived {
        return "Archived";
    }
    if pinned {
        return "Pinned";
    }
    let day = |ms: f64| ((ms - offset_minutes * 60_000.0) / 86_400_000.0).floor();
    match day(now_ms) - day(updated_ms) {
        d if d <= 0.0 => "Today",
        d if d <= 1.0 => "Yesterday",
        d if d < 7.0 => "Last 7 days",
        _ => "Older",
    }
}

/// The plain "why" of a recalled memory, for people: the question's words it holds and whether
/// it is close in meaning ("Matches your words “staging database” and is close in meaning"). The
/// ranking's numbers go behind a disclosure.
pub fn recall_why(words: &[String], close_in_meaning: bool) -> String {
    let quoted = words.join(" ");
    match (words.is_empty(), close_in_meaning) {
        (false, true) => tf(
            "Matches your words “{words}” and is close in meaning",
            &[("words", &quoted)],
        ),
        (false, false) => tf("Matches your words “{words}”", &[("words", &quoted)]),
        (true, true) => t("Close in meaning to what you asked").to_owned(),
        (true, false) => t("Related to what you asked").to_owned(),
    }
}

/// Where and when a recalled memory comes from: "From Claude Code, 3 days ago". `day` and
/// `today` are `YYYY-MM-DD`.
pub fn recall_origin(source: &str, day: &str, today: &str) -> String {
    let days = |d: &str| -> Option<i64> {
        let mut parts = d.split('-').map(|p| p.parse::<i64>().ok());
        let (y, m, d) = (parts.next()??, parts.next()??, parts.next()??);
        Some(cairn_protocol::calendar::days_from_civil(y, m, d))
    };
    let when = match days(today).zip(days(day)).map(|(t, d)| t - d) {
        Some(0) => t("today").to_owned(),
        Some(1) => t("yesterday").to_owned(),
        Some(n) if (2..=30).contains(&n) => tf("{n} days ago", &[("n", &n.to_string())]),
        _ => tf("on {date}", &[("date", day)]),
    };
    tf(
        "From {source}, {when}",
        &[("source", &source_name(source)), ("when", &when)],
    )
}

/// A memory's source as people know it ("claude-code" → "Claude Code").
pub fn source_name(source: &str) -> String {
    match source {
        "cairn" => "Cairn",
        "claude-code" => "Claude Code",
        "codex" => "Codex",
        "cursor" => "Cursor",
        "opencode" => "OpenCode",
        "hermes" => "Hermes",
        "openclaw" => "OpenClaw",
        "pi" => "Pi",
        "workbuddy" => "WorkBuddy",
        "gemini" => "Gemini CLI",
        other => other,
    }
    .to_owned()
}

/// The reply's status line while no words come: what the turn does and for how long ("Reading
/// 1,840 tokens of context… 45% · 12 s").
pub fn turn_status_text(status: &cairn_protocol::TurnStatus, elapsed_ms: f64) -> String {
    use cairn_protocol::TurnStatus;
    let what = match status {
        TurnStatus::LoadingModel { model } => tf("Loading {model}…", &[("model", model)]),
        TurnStatus::ReadingContext { tokens, done } => {
            let percent = (done.saturating_mul(100) / (*tokens).max(1)).min(100);
            tf(
                "Reading {tokens} tokens of context… {percent}%",
                &[
                    ("tokens", &thousands(*tokens)),
                    ("percent", &percent.to_string()),
                ],
            )
        }
        TurnStatus::Waiting { model } => tf("Waiting for {model}…", &[("model", model)]),
        TurnStatus::Thinking => t("Thinking…").to_owned(),
        TurnStatus::RunningTool { name } => tf("Running {tool}…", &[("tool", name)]),
    };
    let seconds = (elapsed_ms.max(0.0) / 1000.0).floor() as u64;
    format!("{what} · {}", tf("{n} s", &[("n", &seconds.to_string())]))
}

/// 1840 → "1,840".
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use cairn_protocol::{ApiStatus, ConfigStatus, Paths};

    use super::*;

    #[test]
    fn a_dream_says_what_it_changed_and_how_to_undo_it() {
        use cairn_protocol::memory::{CaughtUp, Dream, DreamChange, DreamChangeKind, DreamState};
        let mut dream = Dream {
            id: 4,
            started_at: 1_760_000_000_000,
            finished_at: Some(1_760_000_002_000),
            state: DreamState::Done,
            trigger: "app".into(),
            caught_up: CaughtUp::default(),
            changes: vec![DreamChange {
                kind: DreamChangeKind::Merged,
                memory: 7,
                from: vec![9],
                why: "says what memory 9 says".into(),
            }],
            left: vec!["2 finished episodes have no note: no summary model is set".into()],
            restore_point_bytes: 4096,
            freed_bytes: 0,
            error: None,
            undone: None,
        };
        let text = dream_text(&dream, true);
        assert!(text.starts_with("Dream 4 ("), "{text}");
        assert!(
            text.contains("done): 1 merged, 0 episode notes, 0 archived. Undo: /dream-restore 4"),
            "{text}"
        );
        assert!(
            text.contains("\n  2 finished episodes have no note"),
            "{text}"
        );
        assert!(
            text.ends_with("\n  merged #7 — says what memory 9 says"),
            "{text}"
        );
        dream.state = DreamState::DryRun;
        let text = dream_text(&dream, false);
        assert!(
            text.contains("dry run, nothing changed") && !text.contains("Undo"),
            "{text}"
        );
        assert!(!text.contains("#7"), "{text}");
    }

    #[test]
    fn a_stopped_call_reads_as_stopped_not_failed() {
        assert!(was_stopped("[#0003]\n[error: cancelled]"));
        assert!(was_stopped("[error: cancelled]"));
        assert!(!was_stopped("[#0003]\n[error: command failed]"));
        assert!(!was_stopped("[#0003]\nok"));
    }

    fn report() -> StatusReport {
        StatusReport {
            sync: None,
            version: "0.1.0".into(),
            paths: Paths {
                home: "/h".into(),
                config: "/h/config.toml".into(),
                runtime: "/h/runtime.json".into(),
                logs: "/h/logs".into(),
                models: "/h/models".into(),
                data: "/h/data".into(),
            },
            config: ConfigStatus {
                exists: false,
                valid: true,
                error: None,
                kept: false,
            },
            api: ApiStatus {
                running: true,
                url: Some("http://127.0.0.1:4242".into()),
                pid: Some(9),
            },
            default_model: None,
            providers: vec![],
        }
    }

    #[test]
    fn pet_page_is_recognised() {
        assert!(is_pet_page("/pet.html"));
        assert!(!is_pet_page("/index.html"));
        assert!(!is_pet_page("/"));
    }

    #[test]
    fn status_line_names_version_and_api() {
        assert_eq!(
            status_line(&report()),
            "Cairn 0.1.0 · API on 127.0.0.1:4242"
        );
        let mut stopped = report();
        stopped.api.running = false;
        assert_eq!(status_line(&stopped), "Cairn 0.1.0 · API not running");
    }

    #[test]
    fn the_model_list_marks_the_model_in_use_and_adds_what_servers_offer() {
        let mut r = report();
        r.default_model = Some("local/qwen2.5-coder-1.5b".into());
        r.providers.push(cairn_protocol::ProviderStatus {
            name: "lab".into(),
            kind: cairn_protocol::settings::ProviderKind::Openai,
            base_url: "http://127.0.0.1:8080/v1".into(),
            models: vec!["small".into()],
            api_key_set: false,
        });
        let offered = vec![(
            "lab".to_owned(),
            vec!["small".to_owned(), "large".to_owned()],
        )];
        let text = models_text(&r, &offered);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "local/qwen2.5-coder-1.5b  (in use)");
        assert_eq!(lines[1], "lab/small");
        assert_eq!(lines[2], "Also offered by lab: large");
        r.default_model = Some("lab/small".into());
        assert!(models_text(&r, &[]).starts_with("lab/small  (in use)\n"));
    }

    #[test]
    fn model_label_says_what_is_missing() {
        assert_eq!(model_label(&report()), "No model configured");
        let mut r = report();
        r.default_model = Some("openai/gpt-4o".into());
        assert_eq!(model_label(&r), "openai/gpt-4o");
        r.config.valid = false;
        assert_eq!(model_label(&r), "Config has an error");
        // An edit broke the file: the settings before it run on, and say so.
        r.config.kept = true;
        r.config.error = Some("/h/config.toml:3: unknown key `modle`".into());
        assert_eq!(model_label(&r), "openai/gpt-4o");
        assert!(r.can_chat());
        assert!(status_line(&r).ends_with("the settings before it stay in use"));
        assert!(
            status_text(&r).contains("has an error, and the settings before it stay in use: /h/config.toml:3: unknown key `modle`"),
            "{}",
            status_text(&r)
        );
    }

    #[test]
    fn task_titles_are_short_first_lines() {
        assert_eq!(task_title("  Fix the build\nthen test"), "Fix the build");
        assert_eq!(task_title(""), "New task");
        let long = "word ".repeat(20);
        let title = task_title(&long);
        assert!(
            title.ends_with('…') && title.chars().count() <= 49,
            "{title}"
        );
    }

    #[test]
    fn the_setup_snippet_references_the_key_by_env() {
        let snippet = setup_snippet("/h/config.toml");
        assert!(snippet.starts_with("# /h/config.toml"));
        assert!(snippet.contains("api_key = \"${OPENAI_API_KEY}\""));
    }

    #[test]
    fn tool_output_drops_the_id_header() {
        assert_eq!(fold_output("[#0001]\nhello\n"), "hello\n");
        assert_eq!(
            fold_output("[#0002 a.txt sha 1234abcd]\nfn a() {}"),
            "fn a() {}"
        );
        assert_eq!(fold_output("plain"), "plain");
    }

    #[test]
    fn tasks_group_by_local_day_with_pins_and_archive_first() {
        let day = 86_400_000.0;
        let now = 20_000.0 * day + 10.0 * 3_600_000.0; // 10:00 UTC
        assert_eq!(
            task_group(now - 3_600_000.0, now, 0.0, false, false),
            "Today"
        );
        assert_eq!(
            task_group(now - 11.0 * 3_600_000.0, now, 0.0, false, false),
            "Yesterday"
        );
        // 11 hours ago is still today in UTC+12 (offset -720).
        assert_eq!(
            task_group(now - 11.0 * 3_600_000.0, now, -720.0, false, false),
            "Today"
        );
        assert_eq!(
            task_group(now - 3.0 * day, now, 0.0, false, false),
            "Last 7 days"
        );
        assert_eq!(
            task_group(now - 30.0 * day, now, 0.0, false, false),
            "Older"
        );
        assert_eq!(
            task_group(now - 30.0 * day, now, 0.0, true, false),
            "Pinned"
        );
        assert_eq!(task_group(now, now, 0.0, true, true), "Archived");
    }

    #[test]
    fn diff_lines_are_told_apart() {
        assert_eq!(diff_line_class("@@ -1,7 +1,8 @@"), "diff-hunk");
        assert_eq!(diff_line_class("+ 3 │ port = 9090"), "diff-add");
        assert_eq!(diff_line_class("- 3 │ port = 8080"), "diff-del");
        assert_eq!(diff_line_class("  1 │ [server]"), "diff-line");
        assert_eq!(
            diff_line_class("Edited settings.ini: 2 edits applied"),
            "diff-line"
        );
    }

    #[test]
    fn a_recall_says_why_in_plain_words() {
        let words = vec!["staging".to_owned(), "database".to_owned()];
        assert_eq!(
            recall_why(&words, true),
            "Matches your words “staging database” and is close in meaning"
        );
        assert_eq!(
            recall_why(&words, false),
            "Matches your words “staging database”"
        );
        assert_eq!(recall_why(&[], true), "Close in meaning to what you asked");
        assert_eq!(
            recall_origin("claude-code", "2026-12-04", "2026-12-07"),
            "From Claude Code, 3 days ago"
        );
        assert_eq!(
            recall_origin("cairn", "2026-12-07", "2026-12-07"),
            "From Cairn, today"
        );
        assert_eq!(
            recall_origin("codex", "2025-01-02", "2026-12-07"),
            "From Codex, on 2025-01-02"
        );
        crate::i18n::set_language("zh-CN");
        let chinese = recall_why(&words, true);
        crate::i18n::set_language("en");
        assert!(
            chinese.contains("staging database") && !chinese.contains("Matches"),
            "{chinese}"
        );
    }

    #[test]
    fn the_status_line_says_what_the_turn_does_and_for_how_long() {
        use cairn_protocol::TurnStatus;
        assert_eq!(
            turn_status_text(
                &TurnStatus::ReadingContext {
                    tokens: 1840,
                    done: 828
                },
                12_400.0
            ),
            "Reading 1,840 tokens of context… 45% · 12 s"
        );
        assert_eq!(
            turn_status_text(&TurnStatus::Thinking, 999.0),
            "Thinking… · 0 s"
        );
        assert_eq!(
            turn_status_text(
                &TurnStatus::RunningTool {
                    name: "bash".into()
                },
                41_000.0
            ),
            "Running bash… · 41 s"
        );
        assert_eq!(
            turn_status_text(
                &TurnStatus::Waiting {
                    model: "mock/long-model".into()
                },
                3_000.0
            ),
            "Waiting for mock/long-model… · 3 s"
        );
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(thousands(999), "999");
    }
}

//! Plain functions that turn data into what the UI shows; unit-tested on the host.

use cairn_protocol::StatusReport;

/// Whether the module was loaded by the pet window's page.
pub fn is_pet_page(path: &str) -> bool {
    path.trim_end_matches('/').ends_with("pet.html")
}

/// One line for the status bar, e.g. "Cairn 0.1.0 · API on 127.0.0.1:4242".
pub fn status_line(report: &StatusReport) -> String {
    let api = match (&report.api.url, report.api.running) {
        (Some(url), true) => format!("API on {}", url.trim_start_matches("http://")),
        _ => "API not running".to_owned(),
    };
    format!("Cairn {} · {api}", report.version)
}

/// The model pill: the default model, or what is missing.
pub fn model_label(report: &StatusReport) -> String {
    if !report.config.valid {
        return "Config has an error".to_owned();
    }
    report
        .default_model
        .clone()
        .unwrap_or_else(|| "No model configured".to_owned())
}

/// The config snippet shown to a person who has not configured a model yet.
pub fn setup_snippet(config_path: &str) -> String {
    format!(
        "# {config_path}\n[agent]\nmodel = \"openai/gpt-4o\"\n\n[providers.openai]\nkind = \"openai\"   # or anthropic, ollama\napi_key = \"${{OPENAI_API_KEY}}\"\nmodels = [\"gpt-4o\"]"
    )
}

/// A task's title from its first message: the first line, at most 48 characters.
pub fn task_title(message: &str) -> String {
    let first = message.trim().lines().next().unwrap_or_default().trim();
    let mut title: String = first.chars().take(48).collect();
    if first.chars().count() > 48 {
        title = title.trim_end().to_owned();
        title.push('…');
    }
    if title.is_empty() {
        "New task".to_owned()
    } else {
        title
    }
}

/// Markdown as HTML for a reply: CommonMark with tables, strikethrough and task lists. Raw HTML
/// in the text is shown as text, never interpreted (a model's output is not trusted markup), and
/// links keep only http(s) and mailto targets.
pub fn markdown_html(text: &str) -> String {
    use pulldown_cmark::{CowStr, Event, Options, Parser, Tag};
    let options =
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    let safe_url = |url: &CowStr<'_>| {
        let lower = url.to_ascii_lowercase();
        lower.starts_with("http://")
            || lower.starts_with("https://")
            || lower.starts_with("mailto:")
            || lower.starts_with('#')
    };
    let events = Parser::new_ext(text, options).map(|event| match event {
        Event::Html(html) | Event::InlineHtml(html) => Event::Text(html),
        Event::Start(Tag::Link {
            link_type,
            dest_url,
            title,
            id,
        }) if !safe_url(&dest_url) => Event::Start(Tag::Link {
            link_type,
            dest_url: CowStr::Borrowed(""),
            title,
            id,
        }),
        Event::Start(Tag::Image {
            link_type,
            dest_url,
            title,
            id,
        }) if !safe_url(&dest_url) => Event::Start(Tag::Image {
            link_type,
            dest_url: CowStr::Borrowed(""),
            title,
            id,
        }),
        other => other,
    });
    let mut html = String::new();
    pulldown_cmark::html::push_html(&mut html, events);
    html
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
        "{}\n… {} more lines",
        lines[..400].join("\n"),
        lines.len() - 400
    )
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

#[cfg(test)]
mod tests {
    use cairn_protocol::{ApiStatus, ConfigStatus, Paths};

    use super::*;

    fn report() -> StatusReport {
        StatusReport {
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
    fn model_label_says_what_is_missing() {
        assert_eq!(model_label(&report()), "No model configured");
        let mut r = report();
        r.default_model = Some("openai/gpt-4o".into());
        assert_eq!(model_label(&r), "openai/gpt-4o");
        r.config.valid = false;
        assert_eq!(model_label(&r), "Config has an error");
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
}

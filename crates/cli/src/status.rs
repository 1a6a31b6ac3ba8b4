//! `cairn status`: the report as aligned text for people or as JSON for scripts.

use std::fmt::Write;

use cairn_api::Cairn;
use cairn_protocol::StatusReport;

pub async fn print(cairn: &Cairn, json: bool) -> anyhow::Result<std::process::ExitCode> {
    let report = cairn.status(None).await;
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", render(&report));
    }
    Ok(if report.config.valid {
        std::process::ExitCode::SUCCESS
    } else {
        std::process::ExitCode::from(1)
    })
}

/// The human-readable report.
pub fn render(report: &StatusReport) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "Cairn {}", report.version);
    let line = |out: &mut String, label: &str, value: &str| {
        let _ = writeln!(out, "  {label:<10}{value}");
    };
    line(&mut out, "home", &report.paths.home);
    let config = match (&report.config.error, report.config.exists) {
        (Some(error), _) => format!("{} — INVALID\n            {error}", report.paths.config),
        (None, true) => format!("{} — ok", report.paths.config),
        (None, false) => format!("{} — not found, using defaults", report.paths.config),
    };
    line(&mut out, "config", &config);
    let api = match (&report.api.url, report.api.pid) {
        (Some(url), Some(pid)) if report.api.running => format!("running at {url} (pid {pid})"),
        _ => "not running (start the desktop app or `cairn serve`)".to_owned(),
    };
    line(&mut out, "api", &api);
    let model = report.default_model.clone().unwrap_or_else(|| {
        "none — set [agent] model = \"provider/model\" in the config file".to_owned()
    });
    line(&mut out, "model", &model);
    if report.providers.is_empty() {
        line(&mut out, "providers", "none configured");
    } else {
        for (i, p) in report.providers.iter().enumerate() {
            let models = if p.models.is_empty() {
                "no models listed".to_owned()
            } else {
                p.models.join(", ")
            };
            let key = if p.api_key_set { "key set" } else { "no key" };
            let text = format!("{} ({}, {}, {key}): {models}", p.name, p.kind, p.base_url);
            line(&mut out, if i == 0 { "providers" } else { "" }, &text);
        }
    }
    out
}

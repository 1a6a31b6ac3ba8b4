//! A scan as the page follows it: its phase, one row per source, the streamed events applied in
//! order (never moving backwards) and the headline above the bars.

use cairn_protocol::{ApiError, ScanProgress, SourceReport};

use crate::i18n::{t, tf};

#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Phase {
    Running,
    Paused,
    Stopping,
    Done,
    Stopped,
    Failed,
}

/// One source's line in the progress panel.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Row {
    pub(super) source: String,
    pub(super) label: String,
    pub(super) files: usize,
    pub(super) done: usize,
    pub(super) report: SourceReport,
    pub(super) finished: bool,
}

impl Row {
    pub(super) fn percent(&self) -> f64 {
        if self.files == 0 {
            return if self.finished { 100.0 } else { 0.0 };
        }
        (self.done.min(self.files) as f64 * 100.0 / self.files as f64).round()
    }
}

/// A scan, from the click to its summary.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Scan {
    pub(super) full: bool,
    /// The one source scanned (its label), or all.
    pub(super) only: Option<String>,
    pub(super) phase: Phase,
    pub(super) rows: Vec<Row>,
    /// Why it failed.
    pub(super) error: Option<String>,
}

impl Scan {
    pub(super) fn new(only: Option<String>, full: bool) -> Self {
        Self {
            full,
            only,
            phase: Phase::Running,
            rows: Vec::new(),
            error: None,
        }
    }

    pub(super) fn running(&self) -> bool {
        matches!(self.phase, Phase::Running | Phase::Paused | Phase::Stopping)
    }

    /// Applies one streamed event; `label` names a source. Events may arrive after the summary,
    /// so nothing here moves backwards.
    pub(super) fn apply(&mut self, event: ScanProgress, label: impl Fn(&str) -> String) {
        match event {
            ScanProgress::SourceStarted { source, files } => {
                if !self.rows.iter().any(|r| r.source == source) {
                    self.rows.push(Row {
                        label: label(&source),
                        report: SourceReport {
                            source: source.clone(),
                            ..SourceReport::default()
                        },
                        source,
                        files,
                        done: 0,
                        finished: false,
                    });
                }
            }
            ScanProgress::File {
                source,
                done,
                files,
                report,
            } => {
                if let Some(row) = self.rows.iter_mut().find(|r| r.source == source) {
                    row.files = files;
                    if done >= row.done && !row.finished {
                        row.done = done;
                        row.report = report;
                    }
                }
            }
            ScanProgress::SourceDone { report } => {
                if let Some(row) = self.rows.iter_mut().find(|r| r.source == report.source) {
                    row.done = row.files;
                    row.finished = true;
                    row.report = report;
                }
            }
            ScanProgress::Stopped => {
                if self.phase != Phase::Failed {
                    self.phase = Phase::Stopped;
                }
            }
        }
    }

    /// The command returned: the reports are final.
    pub(super) fn finish(
        &mut self,
        outcome: Result<Vec<SourceReport>, ApiError>,
        label: impl Fn(&str) -> String,
    ) {
        match outcome {
            Ok(reports) => {
                let stopped = matches!(self.phase, Phase::Stopping | Phase::Stopped);
                for report in reports {
                    match self.rows.iter_mut().find(|r| r.source == report.source) {
                        Some(row) => {
                            if !stopped {
                                row.done = row.files;
                                row.finished = true;
                            }
                            row.report = report;
                        }
                        None => self.rows.push(Row {
                            label: label(&report.source),
                            source: report.source.clone(),
                            files: 0,
                            done: 0,
                            report,
                            finished: !stopped,
                        }),
                    }
                }
                self.phase = if stopped { Phase::Stopped } else { Phase::Done };
            }
            Err(e) => {
                self.phase = Phase::Failed;
                self.error = Some(e.message);
            }
        }
    }

    pub(super) fn total(&self) -> SourceReport {
        let mut total = SourceReport::default();
        for r in self.rows.iter().map(|r| &r.report) {
            total.add(r);
        }
        total
    }

    /// The one-line state above the bars.
    pub(super) fn headline(&self) -> String {
        let kind = if self.full { t("Deep scan") } else { t("Scan") };
        let args = [("kind", kind)];
        match self.phase {
            Phase::Running => match self.rows.iter().rev().find(|r| !r.finished) {
                Some(row) => tf(
                    "{kind}: reading {name}…",
                    &[("kind", kind), ("name", &row.label)],
                ),
                None => tf("{kind}: looking for history…", &args),
            },
            Phase::Paused => tf("{kind} paused", &args),
            Phase::Stopping => tf("{kind}: stopping after the current file…", &args),
            Phase::Done => tf("{kind} finished", &args),
            Phase::Stopped => tf("{kind} stopped: what was read so far is kept", &args),
            Phase::Failed => tf(
                "{kind} failed: {error}",
                &[
                    ("kind", kind),
                    ("error", self.error.as_deref().unwrap_or(t("unknown error"))),
                ],
            ),
        }
    }
}

/// "3 turns", "1 turn".
pub(super) fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::ago;

    fn label(name: &str) -> String {
        match name {
            "claude-code" => "Claude Code".into(),
            other => other.into(),
        }
    }

    fn report(source: &str, added: usize) -> SourceReport {
        SourceReport {
            source: source.into(),
            conversations: 3,
            turns_seen: added,
            turns_added: added,
            ..SourceReport::default()
        }
    }

    #[test]
    fn a_scan_follows_its_events_and_ends_with_the_reports() {
        let mut scan = Scan::new(None, false);
        assert_eq!(scan.headline(), "Scan: looking for history…");
        scan.apply(
            ScanProgress::SourceStarted {
                source: "claude-code".into(),
                files: 3,
            },
            label,
        );
        scan.apply(
            ScanProgress::File {
                source: "claude-code".into(),
                done: 2,
                files: 3,
                report: report("claude-code", 8),
            },
            label,
        );
        assert_eq!(scan.rows[0].done, 2);
        assert_eq!(scan.rows[0].percent(), 67.0);
        assert_eq!(scan.headline(), "Scan: reading Claude Code…");
        // The summary may arrive before the last events: they do not move it back.
        scan.finish(Ok(vec![report("claude-code", 12)]), label);
        scan.apply(
            ScanProgress::File {
                source: "claude-code".into(),
                done: 2,
                files: 3,
                report: report("claude-code", 8),
            },
            label,
        );
        assert_eq!(scan.phase, Phase::Done);
        assert_eq!(scan.rows[0].done, 3);
        assert_eq!(scan.total().turns_added, 12);
        assert_eq!(scan.headline(), "Scan finished");
    }

    #[test]
    fn a_stopped_scan_says_so() {
        let mut scan = Scan::new(Some("Claude Code".into()), true);
        scan.apply(
            ScanProgress::SourceStarted {
                source: "claude-code".into(),
                files: 10,
            },
            label,
        );
        scan.phase = Phase::Stopping;
        scan.apply(ScanProgress::Stopped, label);
        scan.finish(Ok(vec![report("claude-code", 4)]), label);
        assert_eq!(scan.phase, Phase::Stopped);
        assert!(!scan.rows[0].finished);
        assert!(scan.headline().starts_with("Deep scan stopped"));
        let mut failed = Scan::new(None, false);
        failed.finish(
            Err(ApiError::new(
                cairn_protocol::ErrorCode::Internal,
                "disk full",
            )),
            label,
        );
        assert_eq!(failed.headline(), "Scan failed: disk full");
    }

    #[test]
    fn times_read_as_people_say_them() {
        let now = 1_772_400_000_000;
        assert_eq!(ago(now - 5_000, now), "just now");
        assert_eq!(ago(now - 90_000, now), "a minute ago");
        assert_eq!(ago(now - 12 * 60_000, now), "12 minutes ago");
        assert_eq!(ago(now - 3 * 3_600_000, now), "3 hours ago");
        assert_eq!(ago(now - 30 * 3_600_000, now), "yesterday");
        assert_eq!(ago(now - 5 * 86_400_000, now), "5 days ago");
        assert_eq!(ago(951_782_400_000, now), "on 2000-02-29");
        assert_eq!(count(1, "turn", "turns"), "1 turn");
        assert_eq!(count(0, "turn", "turns"), "0 turns");
    }
}

//! edit_file's engine: finds each edit's `old` in the original text (the `exact`, then the
//! `edges`, then the `indent` pass), enforces uniqueness and non-overlap, re-indents `new` to the
//! file (`indentation`), applies the edits and words the report or the refusal (`refusals`).
//! Pure text in, text out: the caller reads and writes the file (and answers for a missing one).
//!
//! Matching follows agent-tools.md, *How `old` is matched*: the first pass that finds anything
//! at all wins, a loose match must still be unique, and `new` is re-indented to the file's own
//! base indent and unit whenever the match was loose and covered whole lines.

mod edges;
mod exact;
mod indent;
mod indentation;
mod refusals;
mod view;

use std::borrow::Cow;
use std::fmt::Write as _;
use std::ops::Range;

use crate::diff;
use refusals::{conflict, not_found, refusal_text};
use view::{FileView, Found, Padding};

/// One replacement asked by the model: `old` must be found exactly once in the original text.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
pub struct Edit {
    pub old: String,
    #[serde(default)]
    pub new: String,
}

/// A successful edit_file call: what to write and what to tell the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edited {
    /// The new file content (line endings as the original file had them).
    pub text: String,
    /// The headline line, then a newline, then the numbered diff.
    pub report: String,
}

/// Applies `edits` (all resolved against `original`) to the file shown as `path`; Err = the refusal text, nothing to write.
pub fn edit_text(path: &str, original: &str, edits: &[Edit]) -> Result<Edited, String> {
    if edits.is_empty() {
        return Err(format!(
            "{path}: no edits given — send at least one {{\"old\": …, \"new\": …}} pair in edits"
        ));
    }

    let (bom, body) = match original.strip_prefix('\u{feff}') {
        Some(rest) => ("\u{feff}", rest),
        None => ("", original),
    };
    let crlf = mostly_crlf(body);
    let text: Cow<'_, str> = if crlf {
        Cow::Owned(body.replace("\r\n", "\n"))
    } else {
        Cow::Borrowed(body)
    };
    let file = FileView::new(&text);

    let mut resolved = Vec::with_capacity(edits.len());
    let mut refusals = Vec::new();
    for (index, edit) in edits.iter().enumerate() {
        let number = index + 1;
        let old = edit.old.replace("\r\n", "\n");
        let new = edit.new.replace("\r\n", "\n");
        match resolve(&file, &old, &new) {
            Ok(found) => resolved.push((number, found)),
            Err(why) => refusals.push(format!("{path}: edit #{number}: {why}")),
        }
    }
    if refusals.is_empty() {
        if let Err(why) = sort_and_check_overlaps(&file, &mut resolved) {
            refusals.push(format!("{path}: {why}"));
        }
    }
    if !refusals.is_empty() {
        return Err(refusal_text(&refusals, edits.len()));
    }

    let mut out = String::with_capacity(text.len() + 64);
    let mut pos = 0;
    for (_, found) in &resolved {
        out.push_str(text.get(pos..found.start).unwrap_or_default());
        out.push_str(&found.replacement);
        pos = found.end;
    }
    out.push_str(text.get(pos..).unwrap_or_default());

    if out == *text {
        return Err(format!(
            "{path}: the edits change nothing — the file already reads that way"
        ));
    }

    let spans = changed_spans(&text, &resolved);
    let summary = diff::diff_summary_in(&text, &out, &spans);
    let count = edits.len();
    let relaxed = resolved.iter().filter(|(_, found)| found.relaxed).count();
    let mut report = format!(
        "Edited {path}: {count} edit{} applied, +{} -{} lines",
        if count == 1 { "" } else { "s" },
        summary.added,
        summary.deleted
    );
    if let Some(line) = summary.first_change {
        let _ = write!(report, ", first change at line {line}");
    }
    if relaxed > 0 {
        let _ = write!(report, " · {relaxed} matched ignoring whitespace");
    }
    report.push('\n');
    report.push_str(&summary.diff);

    let out = if crlf { out.replace('\n', "\r\n") } else { out };
    let text = if bom.is_empty() {
        out
    } else {
        format!("{bom}{out}")
    };
    Ok(Edited { text, report })
}

/// The byte ranges of the original and of the edited text that hold the edits, widened to whole
/// lines (edits sharing a line share a range), for the diff to look only there.
fn changed_spans(text: &str, found: &[(usize, Found)]) -> Vec<(Range<usize>, Range<usize>)> {
    let mut spans = Vec::new();
    let Some((_, first)) = found.first() else {
        return spans;
    };
    let before = text.get(..first.start).unwrap_or_default();
    let lo = before.rfind('\n').map_or(0, |nl| nl + 1);
    let (mut old_lo, mut new_lo) = (lo, lo);
    let mut shift: isize = 0;
    for (k, (_, edit)) in found.iter().enumerate() {
        shift += edit.replacement.len() as isize - (edit.end - edit.start) as isize;
        let new_end = (edit.end as isize + shift) as usize;
        let gap_end = found.get(k + 1).map_or(text.len(), |(_, next)| next.start);
        let gap = text.get(edit.end..gap_end).unwrap_or_default();
        match gap.find('\n') {
            Some(first_nl) => {
                spans.push((
                    old_lo..edit.end + first_nl + 1,
                    new_lo..new_end + first_nl + 1,
                ));
                let last_nl = gap.rfind('\n').unwrap_or(first_nl);
                old_lo = edit.end + last_nl + 1;
                new_lo = new_end + last_nl + 1;
            }
            None if k + 1 == found.len() => {
                spans.push((old_lo..edit.end + gap.len(), new_lo..new_end + gap.len()));
            }
            None => {}
        }
    }
    spans
}

/// A file is written back with CRLF when most of its line breaks are CRLF.
fn mostly_crlf(text: &str) -> bool {
    let crlf = text.matches("\r\n").count();
    crlf > 0 && crlf * 2 >= text.matches('\n').count()
}

/// Finds one edit in the file: the three passes, strictest first; the first that finds anything
/// decides.
fn resolve(file: &FileView<'_>, old: &str, new: &str) -> Result<Found, String> {
    if old.is_empty() {
        return Err(
            "old is empty — old must quote text that is in the file: to add lines, put the \
             line next to where they go in old and repeat it in new with the addition; to create \
             a file, use write_file"
                .to_owned(),
        );
    }
    if old == new {
        return Err(
            "old and new are the same — nothing would change; put the replacement text in new"
                .to_owned(),
        );
    }
    let pad = Padding::of(old);

    // 1. Exact.
    if let Some(found) = exact::find(file, &pad, old, new) {
        return found;
    }
    if pad.core.is_empty() {
        return Err(
            "old text not found — old holds nothing but whitespace (spaces, tabs, line \
             breaks) and the file has no such run; quote a line of the file that has text on it"
                .to_owned(),
        );
    }
    // 2. Edges: the whitespace around old.
    if let Some(found) = edges::find(file, &pad, old, new) {
        return found;
    }
    // 3. Indent: every line's leading and trailing whitespace, whole lines only.
    if let Some(found) = indent::find(file, &pad, old, new) {
        return found;
    }
    Err(not_found(file, old))
}

/// Sorts the found edits by position and refuses two that overlap, nest or repeat.
fn sort_and_check_overlaps(
    file: &FileView<'_>,
    found: &mut [(usize, Found)],
) -> Result<(), String> {
    found.sort_by(|(na, a), (nb, b)| {
        a.start
            .cmp(&b.start)
            .then(b.end.cmp(&a.end))
            .then(na.cmp(nb))
    });
    let mut reach: Option<usize> = None;
    for k in 0..found.len() {
        if let (Some(r), Some((nb, b))) = (reach, found.get(k)) {
            if let Some((na, a)) = found.get(r) {
                if b.start < a.end {
                    return Err(conflict(file, (*na, a), (*nb, b)));
                }
            }
        }
        let further = match (reach.and_then(|r| found.get(r)), found.get(k)) {
            (Some((_, a)), Some((_, b))) => b.end > a.end,
            _ => true,
        };
        if further {
            reach = Some(k);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    fn edit(old: &str, new: &str) -> Edit {
        Edit {
            old: old.to_owned(),
            new: new.to_owned(),
        }
    }

    #[test]
    fn no_edits_and_empty_old_are_refused() {
        let err = edit_text("a.txt", "x\n", &[]).unwrap_err();
        assert!(err.starts_with("a.txt: no edits given"), "{err}");
        let err = edit_text("a.txt", "x\n", &[edit("", "y")]).unwrap_err();
        assert!(err.starts_with("a.txt: edit #1: old is empty"), "{err}");
    }
    #[test]
    fn multibyte_text_never_splits_a_char() {
        let original = "héllo wörld — 日本語 🎉\nsecond ñ line\n";
        let done = edit_text("u.txt", original, &[edit("日本語 🎉", "中文 🚀")]).unwrap();
        assert_eq!(done.text, "héllo wörld — 中文 🚀\nsecond ñ line\n");
        let done = edit_text("u.txt", original, &[edit("  second ñ line", "2nd")]).unwrap();
        assert_eq!(done.text, "héllo wörld — 日本語 🎉\n2nd\n");
        assert!(done.report.ends_with("· 1 matched ignoring whitespace\n@@ -1,2 +1,2 @@\n  1 │ héllo wörld — 日本語 🎉\n- 2 │ second ñ line\n+ 2 │ 2nd"), "{}", done.report);
    }
    #[test]
    fn a_common_old_lists_ten_lines_and_counts_all() {
        let err = edit_text("a.txt", &"a\n".repeat(30), &[edit("a", "b")]).unwrap_err();
        assert!(
            err.starts_with(
                "a.txt: edit #1: old text appears 30 times (lines 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, …) — "
            ),
            "{err}"
        );
        let err = edit_text("a.txt", "x := 1; y := 1\n", &[edit(":= 1", ":= 2")]).unwrap_err();
        assert!(err.contains("appears 2 times (line 1)"), "{err}");
    }
    #[test]
    fn whitespace_only_old() {
        let done = edit_text("a.txt", "a\n\n\nb\n", &[edit("\n\n\n", "\n\n")]).unwrap();
        assert_eq!(done.text, "a\n\nb\n");
        let err = edit_text("a.txt", "a b", &[edit("\n", "x")]).unwrap_err();
        assert!(err.contains("nothing but whitespace"), "{err}");
    }
    #[test]
    fn bom_is_kept() {
        let done = edit_text("b.txt", "\u{feff}one\ntwo\n", &[edit("one", "1")]).unwrap();
        assert_eq!(done.text, "\u{feff}1\ntwo\n");
    }
    #[test]
    fn edges_deletion_removes_the_whole_line() {
        let original = "a\n\tb()\nc\n";
        let done = edit_text("d.go", original, &[edit("    b()\n", "")]).unwrap();
        assert_eq!(done.text, "a\nc\n");
        let done = edit_text("d.go", "a\nb", &[edit("b\n", "")]).unwrap();
        assert_eq!(done.text, "a");
    }
    #[test]
    fn edges_inline_keeps_the_rest_of_the_line() {
        let done = edit_text(
            "i.rs",
            "let x = foo(1); // keep\n",
            &[edit("\nlet x = foo(1);", "let x = foo(2);")],
        )
        .unwrap();
        assert_eq!(done.text, "let x = foo(2); // keep\n");
    }
}

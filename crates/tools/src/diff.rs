//! Diffs shown to the model after write_file and edit_file: a unified-style diff with real line
//! numbers, and the count of lines added and deleted.
//!
//! Shape of the diff (`│` is U+2502; context and added lines carry their number in the new text,
//! deleted lines their number in the old text):
//!
//! ```text
//! @@ -3,4 +3,4 @@
//!   3 │ func main() {
//! - 4 │     count := 1
//! + 4 │     count := 2
//!   5 │     print(count)
//! ```

use std::fmt::Write as _;
use std::ops::Range;
use std::time::{Duration, Instant};

use similar::{capture_diff_deadline, group_diff_ops, Algorithm, DiffOp, DiffTag};

/// Lines of unchanged text shown around each change.
const CONTEXT: usize = 3;

/// Past this, the diff algorithm settles for a correct but possibly longer diff.
const DIFF_TIMEOUT: Duration = Duration::from_millis(500);

/// Everything one diff computation yields, so a caller needing both the text and the counts
/// diffs only once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffSummary {
    /// The numbered diff (empty when the texts are identical); no trailing newline.
    pub diff: String,
    /// Lines added.
    pub added: usize,
    /// Lines deleted.
    pub deleted: usize,
    /// 1-based line, in the new text, of the first changed line; `None` when nothing changed.
    pub first_change: Option<usize>,
}

/// Unified-style diff with line numbers of `old` → `new`, a few lines of context, for the model to read.
///
/// An empty `old` (a new file) shows every line as added; identical texts give an empty string.
pub fn numbered_diff(old: &str, new: &str) -> String {
    diff_summary(old, new).diff
}

/// Lines added and deleted between old and new.
pub fn line_changes(old: &str, new: &str) -> (usize, usize) {
    let summary = diff_summary(old, new);
    (summary.added, summary.deleted)
}

/// The numbered diff, the line counts and the first changed line, from one diff computation.
///
/// Lines both texts share at their start and end are set aside before the diff algorithm runs,
/// so a small change in a large file costs little more than reading it.
pub fn diff_summary(old: &str, new: &str) -> DiffSummary {
    let old_lines = split_lines(old);
    let new_lines = split_lines(new);
    let prefix = old_lines
        .iter()
        .zip(&new_lines)
        .take_while(|(a, b)| a == b)
        .count();
    let room = old_lines.len().min(new_lines.len()) - prefix;
    let suffix = old_lines
        .iter()
        .rev()
        .zip(new_lines.iter().rev())
        .take(room)
        .take_while(|(a, b)| a == b)
        .count();
    let span = (
        prefix..old_lines.len() - suffix,
        prefix..new_lines.len() - suffix,
    );
    summarize(&old_lines, &new_lines, &[span])
}

/// [`diff_summary`] when the caller knows where the changes are: `spans` are byte ranges of
/// `old` and of `new` (sorted, disjoint, each starting at a line start and ending at a line
/// start or the end of the text) outside which the two texts are the same, piece for piece.
/// Only the spans are diffed, so several edits far apart in a large file stay cheap.
pub(crate) fn diff_summary_in(
    old: &str,
    new: &str,
    spans: &[(Range<usize>, Range<usize>)],
) -> DiffSummary {
    let old_lines = split_lines(old);
    let new_lines = split_lines(new);
    let old_starts = line_offsets(&old_lines);
    let new_starts = line_offsets(&new_lines);
    let line_spans: Vec<_> = spans
        .iter()
        .map(|(o, n)| {
            (
                line_at(&old_starts, o.start)..line_at(&old_starts, o.end),
                line_at(&new_starts, n.start)..line_at(&new_starts, n.end),
            )
        })
        .collect();
    summarize(&old_lines, &new_lines, &line_spans)
}

/// Lines with their line breaks, as the diff compares them.
fn split_lines(text: &str) -> Vec<&str> {
    text.split_inclusive('\n').collect()
}

/// Byte offset of each line's start, then the text's length.
fn line_offsets(lines: &[&str]) -> Vec<usize> {
    let mut offsets = Vec::with_capacity(lines.len() + 1);
    let mut at = 0;
    offsets.push(0);
    for line in lines {
        at += line.len();
        offsets.push(at);
    }
    offsets
}

/// Index of the line starting at byte `at`; the line count for the end of the text.
fn line_at(offsets: &[usize], at: usize) -> usize {
    offsets.partition_point(|&start| start < at)
}

/// Diffs each pair of line ranges, takes everything outside them as equal, and renders the lot.
fn summarize(
    old_lines: &[&str],
    new_lines: &[&str],
    spans: &[(Range<usize>, Range<usize>)],
) -> DiffSummary {
    let deadline = Instant::now() + DIFF_TIMEOUT;
    let mut ops: Vec<DiffOp> = Vec::new();
    let (mut old_at, mut new_at) = (0, 0);
    for (old_span, new_span) in spans {
        push_equal(
            &mut ops,
            old_at,
            new_at,
            old_span.start.saturating_sub(old_at),
        );
        ops.extend(capture_diff_deadline(
            Algorithm::Myers,
            old_lines,
            old_span.clone(),
            new_lines,
            new_span.clone(),
            Some(deadline),
        ));
        old_at = old_span.end;
        new_at = new_span.end;
    }
    push_equal(
        &mut ops,
        old_at,
        new_at,
        old_lines.len().saturating_sub(old_at),
    );
    let ops = merge_equal_runs(ops);

    let (mut added, mut deleted) = (0, 0);
    let mut first_change = None;
    for op in &ops {
        let (tag, old_range, new_range) = op.as_tag_tuple();
        if tag == DiffTag::Equal {
            continue;
        }
        first_change.get_or_insert(new_range.start + 1);
        if matches!(tag, DiffTag::Delete | DiffTag::Replace) {
            deleted += old_range.len();
        }
        if matches!(tag, DiffTag::Insert | DiffTag::Replace) {
            added += new_range.len();
        }
    }

    let width = digits(old_lines.len().max(new_lines.len()));
    let mut out = String::new();
    for group in group_diff_ops(ops, CONTEXT) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        let old_span = first.old_range().start..last.old_range().end;
        let new_span = first.new_range().start..last.new_range().end;
        if !out.is_empty() {
            out.push('\n');
        }
        let _ = write!(
            out,
            "@@ -{} +{} @@",
            hunk_range(&old_span),
            hunk_range(&new_span)
        );
        for op in &group {
            let (tag, old_range, new_range) = op.as_tag_tuple();
            match tag {
                DiffTag::Equal => push_lines(&mut out, ' ', new_lines, new_range, width),
                DiffTag::Delete => push_lines(&mut out, '-', old_lines, old_range, width),
                DiffTag::Insert => push_lines(&mut out, '+', new_lines, new_range, width),
                DiffTag::Replace => {
                    push_lines(&mut out, '-', old_lines, old_range, width);
                    push_lines(&mut out, '+', new_lines, new_range, width);
                }
            }
        }
    }

    DiffSummary {
        diff: out,
        added,
        deleted,
        first_change,
    }
}

fn push_equal(ops: &mut Vec<DiffOp>, old_index: usize, new_index: usize, len: usize) {
    if len > 0 {
        ops.push(DiffOp::Equal {
            old_index,
            new_index,
            len,
        });
    }
}

/// One Equal op per run of unchanged lines, as the grouping expects.
fn merge_equal_runs(ops: Vec<DiffOp>) -> Vec<DiffOp> {
    let mut merged: Vec<DiffOp> = Vec::with_capacity(ops.len());
    for op in ops {
        if let (Some(DiffOp::Equal { len, .. }), DiffOp::Equal { len: more, .. }) =
            (merged.last_mut(), &op)
        {
            *len += *more;
            continue;
        }
        merged.push(op);
    }
    merged
}

/// `start,len` as unified diffs write it: 1-based, or the line before when the range is empty.
fn hunk_range(range: &Range<usize>) -> String {
    if range.is_empty() {
        format!("{},0", range.start)
    } else {
        format!("{},{}", range.start + 1, range.len())
    }
}

/// One diff line per slice in `range`: marker, right-aligned 1-based number, `│`, the text.
fn push_lines(out: &mut String, marker: char, lines: &[&str], range: Range<usize>, width: usize) {
    for index in range {
        let Some(raw) = lines.get(index) else {
            continue;
        };
        let text = raw.strip_suffix('\n').unwrap_or(raw);
        let text = text.strip_suffix('\r').unwrap_or(text);
        let _ = write!(out, "\n{marker} {:>width$} │", index + 1);
        if !text.is_empty() {
            out.push(' ');
            out.push_str(text);
        }
        if marker != ' ' && !raw.ends_with('\n') {
            out.push_str("\n\\ no newline at end of file");
        }
    }
}

fn digits(mut n: usize) -> usize {
    let mut count = 1;
    while n >= 10 {
        n /= 10;
        count += 1;
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identical_texts_give_no_diff() {
        let summary = diff_summary("a\nb\n", "a\nb\n");
        assert_eq!(summary.diff, "");
        assert_eq!((summary.added, summary.deleted), (0, 0));
        assert_eq!(summary.first_change, None);
    }

    #[test]
    fn new_file_is_every_line_added() {
        assert_eq!(
            numbered_diff("", "one\ntwo\n"),
            "@@ -0,0 +1,2 @@\n+ 1 │ one\n+ 2 │ two"
        );
        assert_eq!(line_changes("", "one\ntwo\n"), (2, 0));
    }

    #[test]
    fn changed_line_with_context_and_numbers() {
        let old = "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\n";
        let new = "a\nb\nc\nd\ne\nF\ng\nh\ni\nj\nk\n";
        assert_eq!(
            numbered_diff(old, new),
            "@@ -3,7 +3,7 @@\n   3 │ c\n   4 │ d\n   5 │ e\n-  6 │ f\n+  6 │ F\n   7 │ g\n   8 │ h\n   9 │ i"
        );
        let summary = diff_summary(old, new);
        assert_eq!(summary.first_change, Some(6));
        assert_eq!((summary.added, summary.deleted), (1, 1));
    }

    #[test]
    fn separate_hunks_and_missing_final_newline() {
        let old: String = (1..=20).map(|n| format!("line {n}\n")).collect();
        let new = old.replace("line 2\n", "line two\n") + "tail";
        let diff = numbered_diff(&old, &new);
        assert!(diff.contains("@@ -1,5 +1,5 @@"), "{diff}");
        assert!(diff.contains("@@ -18,3 +18,4 @@"), "{diff}");
        assert!(
            diff.ends_with("+ 21 │ tail\n\\ no newline at end of file"),
            "{diff}"
        );
        assert_eq!(line_changes(&old, &new), (2, 1));
    }
}

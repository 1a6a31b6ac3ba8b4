//! The words of edit_file's refusals: an `old` that appears several times (with its lines), one
//! not found (echoed, with the closest region of the file), two edits that share text, and
//! several refusals given at once.

use std::collections::HashMap;
use std::fmt::Write as _;

use super::view::{FileView, Found};

/// Line numbers listed in an "appears N times" refusal before the list is cut.
const MAX_LISTED_LINES: usize = 10;
/// Lines of `old` echoed back in a "not found" refusal before the echo is cut.
const MAX_ECHOED_LINES: usize = 40;

/// Several refusals are all given at once, so the model can fix them in one go.
pub(super) fn refusal_text(refusals: &[String], edit_count: usize) -> String {
    let mut text = refusals.join("\n\n");
    if edit_count > 1 {
        let which = if refusals.len() == 1 {
            "this one"
        } else {
            "these"
        };
        let _ = write!(
            text,
            "\n\nnone of the {edit_count} edits was applied — send them all again with {which} fixed"
        );
    }
    text
}

/// "appears N times (lines …)" with the 1-based lines of the `count` matches.
/// Lines are numbered lazily and only until the list is full: a one-letter `old` may match a
/// large file a million times.
pub(super) fn ambiguous(count: usize, lines: impl Iterator<Item = usize>) -> String {
    let mut unique: Vec<usize> = Vec::with_capacity(MAX_LISTED_LINES + 1);
    for line in lines {
        if unique.last() != Some(&line) {
            unique.push(line);
            if unique.len() > MAX_LISTED_LINES {
                break;
            }
        }
    }
    let mut listed = unique
        .iter()
        .take(MAX_LISTED_LINES)
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    if unique.len() > MAX_LISTED_LINES {
        listed.push_str(", …");
    }
    let noun = if unique.len() == 1 { "line" } else { "lines" };
    format!(
        "old text appears {count} times ({noun} {listed}) — to change ONE of them, include its \
         surrounding lines in old until the text is unique; to change several, send one edit per \
         place, each with enough surrounding lines to be unique"
    )
}

/// "old text not found", old echoed back, and the closest region of the file when half its
/// lines line up.
pub(super) fn not_found(file: &FileView<'_>, old: &str) -> String {
    let mut text = "old text not found — it must match the file exactly, including indentation \
                    and line breaks:"
        .to_owned();
    let shown: Vec<&str> = old
        .trim_end()
        .split('\n')
        .skip_while(|line| line.trim().is_empty())
        .collect();
    for line in shown.iter().take(MAX_ECHOED_LINES) {
        push_bar_line(&mut text, "", line);
    }
    if shown.len() > MAX_ECHOED_LINES {
        let _ = write!(
            text,
            "\n  │ … ({} more lines)",
            shown.len() - MAX_ECHOED_LINES
        );
    }

    let trimmed: Vec<&str> = shown.iter().map(|line| line.trim()).collect();
    if let Some(first) = closest_region(file, &trimmed) {
        text.push_str("\nthe closest the file comes to it — copy these lines:");
        let last = first + trimmed.len();
        let width = last.to_string().len();
        for line in first..last {
            let number = format!("{:>width$} │", line + 1);
            push_bar_line(&mut text, &number, file.line(line));
        }
    }
    text
}

/// `\n  │ <prefix> <line>`, without a trailing space when the line is empty.
fn push_bar_line(text: &mut String, prefix: &str, line: &str) {
    text.push_str("\n  │");
    if !prefix.is_empty() {
        text.push(' ');
        text.push_str(prefix);
    }
    if !line.is_empty() {
        text.push(' ');
        text.push_str(line);
    }
}

/// First line (0-based) of the window of `old_lines.len()` file lines where the most lines are
/// equal after trimming, when at least half of old's non-blank lines line up there.
fn closest_region(file: &FileView<'_>, old_lines: &[&str]) -> Option<usize> {
    let (n, m) = (file.line_count(), old_lines.len());
    let wanted = old_lines.iter().filter(|line| !line.is_empty()).count();
    if m == 0 || m > n || wanted == 0 {
        return None;
    }
    let mut positions: HashMap<&str, Vec<usize>> = HashMap::new();
    for (j, line) in old_lines.iter().enumerate() {
        if !line.is_empty() {
            positions.entry(line).or_default().push(j);
        }
    }
    let windows = n - m + 1;
    let mut scores = vec![0usize; windows];
    for i in 0..n {
        let line = file.line(i).trim();
        if line.is_empty() {
            continue;
        }
        if let Some(js) = positions.get(line) {
            for &j in js {
                if let Some(score) = i.checked_sub(j).and_then(|w| scores.get_mut(w)) {
                    *score += 1;
                }
            }
        }
    }
    let (mut best_start, mut best) = (0, 0);
    for (start, &score) in scores.iter().enumerate() {
        if score > best {
            (best_start, best) = (start, score);
        }
    }
    (best > 0 && best * 2 >= wanted).then_some(best_start)
}

/// The refusal for two edits that share text, worded from the later edit's point of view.
pub(super) fn conflict(file: &FileView<'_>, x: (usize, &Found), y: (usize, &Found)) -> String {
    let ((early, e), (late, l)) = if x.0 < y.0 { (x, y) } else { (y, x) };
    let lines = |found: &Found| {
        let (from, to) = file.line_span(found.start, found.end);
        if from == to {
            format!("line {from}")
        } else {
            format!("lines {from}-{to}")
        }
    };
    if e.start == l.start && e.end == l.end {
        format!(
            "edit #{late}: repeats edit #{early} — both match the same text ({}); send each \
             change once",
            lines(l)
        )
    } else if e.start <= l.start && l.end <= e.end {
        format!(
            "edit #{late}: lies inside edit #{early} — its text ({}) is part of edit #{early}'s \
             ({}); edits must not nest: make this change in edit #{early}'s new instead",
            lines(l),
            lines(e)
        )
    } else if l.start <= e.start && e.end <= l.end {
        format!(
            "edit #{late}: contains edit #{early} — edit #{early}'s text ({}) is part of this \
             one's ({}); edits must not nest: make that change in this edit's new instead",
            lines(e),
            lines(l)
        )
    } else {
        format!(
            "edit #{late}: overlaps edit #{early} — this one covers {}, edit #{early} {}; edits \
             must not overlap: merge them into one edit",
            lines(l),
            lines(e)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closest_region_needs_half_the_lines() {
        let file = FileView::new("a\nb\nc\nd\n");
        assert_eq!(closest_region(&file, &["b", "x", "d"]), Some(1));
        assert_eq!(closest_region(&file, &["b", "x", "y"]), None);
        assert_eq!(closest_region(&file, &["q", "b", "c", "z"]), Some(0));
    }
}

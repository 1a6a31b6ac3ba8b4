//! The third pass: `old` of two lines or more matched line by line with each line's leading and
//! trailing whitespace ignored, whole lines only; and the block replacement both loose passes use,
//! `new` re-indented to the file.

use super::indentation::{indent_of, reindent, IndentStats};
use super::refusals::ambiguous;
use super::view::{FileView, Found, Padding};

/// `old`'s lines found with their indents ignored; `None` when old is one line or the file has no
/// such run of lines.
pub(super) fn find(
    file: &FileView<'_>,
    pad: &Padding<'_>,
    old: &str,
    new: &str,
) -> Option<Result<Found, String>> {
    let old_lines: Vec<&str> = pad.core.split('\n').map(str::trim).collect();
    if old_lines.len() < 2 {
        return None;
    }
    let hits = find_lines(file, &old_lines);
    let &first = hits.first()?;
    if hits.len() > 1 {
        return Some(Err(ambiguous(hits.len(), hits.iter().map(|&h| h + 1))));
    }
    let last = first + old_lines.len() - 1;
    Some(Ok(block_replacement(file, first, last, pad, old, new)))
}

/// Starting lines (0-based) where every line of the file equals, trimmed, the trimmed `old_lines`.
fn find_lines(file: &FileView<'_>, old_lines: &[&str]) -> Vec<usize> {
    let (n, m) = (file.line_count(), old_lines.len());
    if m == 0 || m > n {
        return Vec::new();
    }
    (0..=n - m)
        .filter(|&first| {
            old_lines
                .iter()
                .enumerate()
                .all(|(j, want)| file.line(first + j).trim() == *want)
        })
        .collect()
}

/// Replaces lines `first..=last` (0-based) with `new` re-indented to the file: the model's base
/// indent (old's first line) becomes the file's, the model's unit the file's, blank lines stay
/// empty. An empty `new` deletes the lines, line breaks included.
pub(super) fn block_replacement(
    file: &FileView<'_>,
    first: usize,
    last: usize,
    pad: &Padding<'_>,
    old: &str,
    new: &str,
) -> Found {
    let mut start = file.line_start(first);
    let mut end = file.line_end(last);
    if new.is_empty() {
        if end < file.text.len() {
            end += 1;
        } else {
            // The last line has no line break of its own: the one before it goes instead.
            start = start.saturating_sub(1);
        }
        return Found {
            start,
            end,
            replacement: String::new(),
            relaxed: true,
        };
    }

    let body = pad.strip_lines(new);
    let file_base = indent_of(file.line(first));
    let model_base = pad.lead_indent();
    // A new whose first line dropped the indent old had is taken as written from that indent.
    let model_base = match body.split('\n').find(|line| !line.trim().is_empty()) {
        Some(line) if !model_base.is_empty() && indent_of(line).is_empty() => "",
        _ => model_base,
    };
    let model_unit = IndentStats::of(&[old, new]).model_unit(file.unit());
    let file_unit = file.unit().unwrap_or(model_unit);

    let replacement = body
        .split('\n')
        .map(|line| reindent(line, model_base, model_unit, file_base, file_unit))
        .collect::<Vec<_>>()
        .join("\n");
    Found {
        start,
        end,
        replacement,
        relaxed: true,
    }
}

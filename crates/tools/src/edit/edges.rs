//! The second pass: `old`'s text with the whitespace around it loosened — leading whitespace
//! matches only at the start of a line, trailing only at its end. A match of whole lines is
//! replaced as a re-indented block; one sharing its line replaces just the text.

use super::exact::find_all;
use super::indent::block_replacement;
use super::refusals::ambiguous;
use super::view::{FileView, Found, Padding};

/// `old`'s text found between blank edges; `None` when old has no whitespace around its text or
/// the file has no such place.
pub(super) fn find(
    file: &FileView<'_>,
    pad: &Padding<'_>,
    old: &str,
    new: &str,
) -> Option<Result<Found, String>> {
    if pad.lead.is_empty() && pad.trail.is_empty() {
        return None;
    }
    let text = file.text;
    let hits: Vec<usize> = find_all(text, pad.core)
        .into_iter()
        .filter(|&at| {
            (pad.lead.is_empty() || blank_before(text, at))
                && (pad.trail.is_empty() || blank_after(text, at + pad.core.len()))
        })
        .collect();
    let &start = hits.first()?;
    if hits.len() > 1 {
        let lines = hits.iter().map(|&h| file.line_of(h) + 1);
        return Some(Err(ambiguous(hits.len(), lines)));
    }
    Some(Ok(edges_replacement(file, pad, old, start, new)))
}

/// Only whitespace between the start of the line and `at`.
fn blank_before(text: &str, at: usize) -> bool {
    let before = text.get(..at).unwrap_or_default();
    let line_start = before.rfind('\n').map_or(0, |nl| nl + 1);
    before
        .get(line_start..)
        .is_some_and(|s| s.trim().is_empty())
}

/// Only whitespace between `at` and the end of the line.
fn blank_after(text: &str, at: usize) -> bool {
    let after = text.get(at..).unwrap_or_default();
    let line_end = after.find('\n').unwrap_or(after.len());
    after.get(..line_end).is_some_and(|s| s.trim().is_empty())
}

/// An edges-pass match: whole lines are replaced as a re-indented block; a match sharing its
/// line with other text replaces just the text, new shorn of old's padding.
fn edges_replacement(
    file: &FileView<'_>,
    pad: &Padding<'_>,
    old: &str,
    start: usize,
    new: &str,
) -> Found {
    let end = start + pad.core.len();
    if blank_before(file.text, start) && blank_after(file.text, end) {
        let first = file.line_of(start);
        let last = file.line_of(end.saturating_sub(1));
        return block_replacement(file, first, last, pad, old, new);
    }
    let mut body = pad.strip_lines(new);
    if !pad.lead_indent().is_empty() {
        body = body.trim_start_matches([' ', '\t']);
    }
    if !pad.trail_indent().is_empty() {
        body = body.trim_end_matches([' ', '\t']);
    }
    Found {
        start,
        end,
        replacement: body.to_owned(),
        relaxed: true,
    }
}

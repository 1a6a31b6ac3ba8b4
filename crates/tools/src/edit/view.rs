//! What the matching passes work on: the (LF-normalised) file with its line index and
//! indentation unit, `old` split from the whitespace around it, and where an edit lands.

use std::cell::OnceCell;

use super::indentation::{IndentStats, Unit};

/// The (LF-normalised) original text with its line index and indentation unit, computed on demand.
pub(super) struct FileView<'a> {
    pub(super) text: &'a str,
    /// Byte offset of each line's start; a final newline does not open a line of its own.
    line_starts: OnceCell<Vec<usize>>,
    unit: OnceCell<Option<Unit>>,
}

impl<'a> FileView<'a> {
    pub(super) fn new(text: &'a str) -> Self {
        Self {
            text,
            line_starts: OnceCell::new(),
            unit: OnceCell::new(),
        }
    }

    pub(super) fn line_starts(&self) -> &[usize] {
        self.line_starts.get_or_init(|| {
            let len = self.text.len();
            std::iter::once(0)
                .chain(
                    self.text
                        .match_indices('\n')
                        .map(|(at, _)| at + 1)
                        .filter(|&start| start < len),
                )
                .collect()
        })
    }

    pub(super) fn line_count(&self) -> usize {
        self.line_starts().len()
    }

    /// 0-based line holding byte `pos`.
    pub(super) fn line_of(&self, pos: usize) -> usize {
        self.line_starts()
            .partition_point(|&start| start <= pos)
            .saturating_sub(1)
    }

    pub(super) fn line_start(&self, line: usize) -> usize {
        self.line_starts()
            .get(line)
            .copied()
            .unwrap_or(self.text.len())
    }

    /// End of `line`, its newline excluded.
    pub(super) fn line_end(&self, line: usize) -> usize {
        match self.line_starts().get(line + 1) {
            Some(&next) => next - 1,
            None => self
                .text
                .strip_suffix('\n')
                .map_or(self.text.len(), str::len),
        }
    }

    pub(super) fn line(&self, line: usize) -> &'a str {
        self.text
            .get(self.line_start(line)..self.line_end(line))
            .unwrap_or_default()
    }

    /// 1-based first and last line of the non-blank part of a byte range.
    pub(super) fn line_span(&self, start: usize, end: usize) -> (usize, usize) {
        let slice = self.text.get(start..end).unwrap_or_default();
        let content_start = start + (slice.len() - slice.trim_start().len());
        let content_end = start + slice.trim_end().len();
        let (from, to) = if content_start < content_end {
            (content_start, content_end)
        } else {
            (start, end)
        };
        (
            self.line_of(from) + 1,
            self.line_of(to.saturating_sub(1).max(from)) + 1,
        )
    }

    pub(super) fn unit(&self) -> Option<Unit> {
        *self
            .unit
            .get_or_init(|| IndentStats::of(&[self.text]).file_unit())
    }
}

/// Where an edit lands in the original text and what replaces it.
#[derive(Debug)]
pub(super) struct Found {
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) replacement: String,
    /// Matched by the edges or the indent pass.
    pub(super) relaxed: bool,
}

/// `old` split into the whitespace around it and what it says.
pub(super) struct Padding<'a> {
    pub(super) lead: &'a str,
    pub(super) core: &'a str,
    pub(super) trail: &'a str,
}

impl<'a> Padding<'a> {
    pub(super) fn of(old: &'a str) -> Self {
        let core = old.trim();
        if core.is_empty() {
            return Self {
                lead: old,
                core,
                trail: "",
            };
        }
        let lead_len = old.len() - old.trim_start().len();
        let core_end = lead_len + core.len();
        Self {
            lead: old.get(..lead_len).unwrap_or_default(),
            core,
            trail: old.get(core_end..).unwrap_or_default(),
        }
    }

    pub(super) fn lead_newlines(&self) -> usize {
        self.lead.matches('\n').count()
    }

    pub(super) fn trail_newlines(&self) -> usize {
        self.trail.matches('\n').count()
    }

    /// The indent of old's first line of text.
    pub(super) fn lead_indent(&self) -> &'a str {
        match self.lead.rfind('\n') {
            Some(at) => self.lead.get(at + 1..).unwrap_or_default(),
            None => self.lead,
        }
    }

    /// Whitespace after old's text on its last line.
    pub(super) fn trail_indent(&self) -> &'a str {
        match self.trail.find('\n') {
            Some(at) => self.trail.get(..at).unwrap_or_default(),
            None => self.trail,
        }
    }

    /// `new` without the padding old had, where new carries it: up to as many leading and
    /// trailing blank lines as old had around its text.
    pub(super) fn strip_lines<'n>(&self, new: &'n str) -> &'n str {
        let mut body = new;
        for _ in 0..self.lead_newlines() {
            match body.find('\n') {
                Some(at) if body.get(..at).is_some_and(|l| l.trim().is_empty()) => {
                    body = body.get(at + 1..).unwrap_or_default();
                }
                _ => break,
            }
        }
        for _ in 0..self.trail_newlines() {
            match body.rfind('\n') {
                Some(at) if body.get(at + 1..).is_some_and(|l| l.trim().is_empty()) => {
                    body = body.get(..at).unwrap_or_default();
                }
                _ => break,
            }
        }
        body
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn padding_splits_old_and_strips_new() {
        let pad = Padding::of("\n\tfoo()\n");
        assert_eq!((pad.lead, pad.core, pad.trail), ("\n\t", "foo()", "\n"));
        assert_eq!(pad.lead_indent(), "\t");
        assert_eq!(pad.strip_lines("\n\tbar()\n"), "\tbar()");
        assert_eq!(pad.strip_lines("\n\n\tbar()\n\n"), "\n\tbar()\n");
        assert_eq!(pad.strip_lines("bar()"), "bar()");
    }
    #[test]
    fn line_index_ignores_final_newline() {
        let file = FileView::new("a\nbb\n");
        assert_eq!(file.line_count(), 2);
        assert_eq!(file.line(1), "bb");
        assert_eq!(file.line_of(3), 1);
        assert_eq!(file.line_end(1), 4);
        let file = FileView::new("a\nbb");
        assert_eq!(file.line_end(1), 4);
    }
}

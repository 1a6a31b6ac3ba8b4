//! edit_file's engine: finds each edit's `old` in the original text (exact, then edges, then
//! indent pass), enforces uniqueness and non-overlap, re-indents `new` to the file, applies the
//! edits and words the report or the refusal. Pure text in, text out: the caller reads and
//! writes the file (and answers for a missing one).
//!
//! Matching follows agent-tools.md, *How `old` is matched*: the first pass that finds anything
//! at all wins, a loose match must still be unique, and `new` is re-indented to the file's own
//! base indent and unit whenever the match was loose and covered whole lines.

use std::borrow::Cow;
use std::cell::OnceCell;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::ops::Range;

use crate::diff;

/// Line numbers listed in an "appears N times" refusal before the list is cut.
const MAX_LISTED_LINES: usize = 10;
/// Lines of `old` echoed back in a "not found" refusal before the echo is cut.
const MAX_ECHOED_LINES: usize = 40;
/// Columns a tab counts for when indents mixing tabs and spaces are compared.
const TAB_COLUMNS: usize = 4;

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

/// Several refusals are all given at once, so the model can fix them in one go.
fn refusal_text(refusals: &[String], edit_count: usize) -> String {
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

/// A file is written back with CRLF when most of its line breaks are CRLF.
fn mostly_crlf(text: &str) -> bool {
    let crlf = text.matches("\r\n").count();
    crlf > 0 && crlf * 2 >= text.matches('\n').count()
}

/// The (LF-normalised) original text with its line index and indentation unit, computed on demand.
struct FileView<'a> {
    text: &'a str,
    /// Byte offset of each line's start; a final newline does not open a line of its own.
    line_starts: OnceCell<Vec<usize>>,
    unit: OnceCell<Option<Unit>>,
}

impl<'a> FileView<'a> {
    fn new(text: &'a str) -> Self {
        Self {
            text,
            line_starts: OnceCell::new(),
            unit: OnceCell::new(),
        }
    }

    fn line_starts(&self) -> &[usize] {
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

    fn line_count(&self) -> usize {
        self.line_starts().len()
    }

    /// 0-based line holding byte `pos`.
    fn line_of(&self, pos: usize) -> usize {
        self.line_starts()
            .partition_point(|&start| start <= pos)
            .saturating_sub(1)
    }

    fn line_start(&self, line: usize) -> usize {
        self.line_starts()
            .get(line)
            .copied()
            .unwrap_or(self.text.len())
    }

    /// End of `line`, its newline excluded.
    fn line_end(&self, line: usize) -> usize {
        match self.line_starts().get(line + 1) {
            Some(&next) => next - 1,
            None => self
                .text
                .strip_suffix('\n')
                .map_or(self.text.len(), str::len),
        }
    }

    fn line(&self, line: usize) -> &'a str {
        self.text
            .get(self.line_start(line)..self.line_end(line))
            .unwrap_or_default()
    }

    /// 1-based first and last line of the non-blank part of a byte range.
    fn line_span(&self, start: usize, end: usize) -> (usize, usize) {
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

    fn unit(&self) -> Option<Unit> {
        *self
            .unit
            .get_or_init(|| IndentStats::of(&[self.text]).file_unit())
    }
}

/// Where an edit lands in the original text and what replaces it.
#[derive(Debug)]
struct Found {
    start: usize,
    end: usize,
    replacement: String,
    /// Matched by the edges or the indent pass.
    relaxed: bool,
}

/// `old` split into the whitespace around it and what it says.
struct Padding<'a> {
    lead: &'a str,
    core: &'a str,
    trail: &'a str,
}

impl<'a> Padding<'a> {
    fn of(old: &'a str) -> Self {
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

    fn lead_newlines(&self) -> usize {
        self.lead.matches('\n').count()
    }

    fn trail_newlines(&self) -> usize {
        self.trail.matches('\n').count()
    }

    /// The indent of old's first line of text.
    fn lead_indent(&self) -> &'a str {
        match self.lead.rfind('\n') {
            Some(at) => self.lead.get(at + 1..).unwrap_or_default(),
            None => self.lead,
        }
    }

    /// Whitespace after old's text on its last line.
    fn trail_indent(&self) -> &'a str {
        match self.trail.find('\n') {
            Some(at) => self.trail.get(..at).unwrap_or_default(),
            None => self.trail,
        }
    }

    /// `new` without the padding old had, where new carries it: up to as many leading and
    /// trailing blank lines as old had around its text.
    fn strip_lines<'n>(&self, new: &'n str) -> &'n str {
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

/// Finds one edit in the file: the three passes, strictest first.
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
    let text = file.text;
    let pad = Padding::of(old);

    // 1. Exact.
    let hits = find_all(text, old);
    if let Some(&start) = hits.first() {
        if hits.len() > 1 {
            let skip = if pad.core.is_empty() {
                0
            } else {
                pad.lead.len()
            };
            let lines = hits.iter().map(|&h| file.line_of(h + skip) + 1);
            return Err(ambiguous(hits.len(), lines));
        }
        return Ok(Found {
            start,
            end: start + old.len(),
            replacement: new.to_owned(),
            relaxed: false,
        });
    }
    if pad.core.is_empty() {
        return Err(
            "old text not found — old holds nothing but whitespace (spaces, tabs, line \
             breaks) and the file has no such run; quote a line of the file that has text on it"
                .to_owned(),
        );
    }

    // 2. Edges: the whitespace around old.
    if !pad.lead.is_empty() || !pad.trail.is_empty() {
        let hits: Vec<usize> = find_all(text, pad.core)
            .into_iter()
            .filter(|&at| {
                (pad.lead.is_empty() || blank_before(text, at))
                    && (pad.trail.is_empty() || blank_after(text, at + pad.core.len()))
            })
            .collect();
        if let Some(&start) = hits.first() {
            if hits.len() > 1 {
                let lines = hits.iter().map(|&h| file.line_of(h) + 1);
                return Err(ambiguous(hits.len(), lines));
            }
            return Ok(edges_replacement(file, &pad, old, start, new));
        }
    }

    // 3. Indent: every line's leading and trailing whitespace, whole lines only.
    let old_lines: Vec<&str> = pad.core.split('\n').map(str::trim).collect();
    if old_lines.len() >= 2 {
        let hits = find_lines(file, &old_lines);
        if let Some(&first) = hits.first() {
            if hits.len() > 1 {
                return Err(ambiguous(hits.len(), hits.iter().map(|&h| h + 1)));
            }
            let last = first + old_lines.len() - 1;
            return Ok(block_replacement(file, first, last, &pad, old, new));
        }
    }

    Err(not_found(file, old))
}

/// Every start of `needle` in `haystack`, overlapping ones included.
fn find_all(haystack: &str, needle: &str) -> Vec<usize> {
    let mut hits = Vec::new();
    let mut from = 0;
    while let Some(found) = haystack.get(from..).and_then(|rest| rest.find(needle)) {
        let at = from + found;
        hits.push(at);
        let step = haystack
            .get(at..)
            .and_then(|rest| rest.chars().next())
            .map_or(1, char::len_utf8);
        from = at + step;
    }
    hits
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

/// Replaces lines `first..=last` (0-based) with `new` re-indented to the file: the model's base
/// indent (old's first line) becomes the file's, the model's unit the file's, blank lines stay
/// empty. An empty `new` deletes the lines, line breaks included.
fn block_replacement(
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

/// An indentation unit: a tab, or a number of spaces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unit {
    Tab,
    Spaces(usize),
}

impl Unit {
    fn columns(self) -> usize {
        match self {
            Unit::Tab => TAB_COLUMNS,
            Unit::Spaces(width) => width.max(1),
        }
    }

    fn push_to(self, out: &mut String, levels: usize) {
        for _ in 0..levels {
            match self {
                Unit::Tab => out.push('\t'),
                Unit::Spaces(width) => out.extend(std::iter::repeat_n(' ', width.max(1))),
            }
        }
    }
}

/// The leading spaces and tabs of a line.
fn indent_of(line: &str) -> &str {
    let rest = line.trim_start_matches([' ', '\t']);
    line.get(..line.len() - rest.len()).unwrap_or_default()
}

/// Width of an indent in columns, a tab counting one `unit`.
fn columns(indent: &str, unit: Unit) -> usize {
    indent
        .chars()
        .map(|c| if c == '\t' { unit.columns() } else { 1 })
        .sum()
}

/// `line` moved from the model's indentation (`model_base`, `model_unit`) to the file's.
fn reindent(
    line: &str,
    model_base: &str,
    model_unit: Unit,
    file_base: &str,
    file_unit: Unit,
) -> String {
    if line.trim().is_empty() {
        return String::new();
    }
    let indent = indent_of(line);
    let text = line.get(indent.len()..).unwrap_or_default();
    let relative = columns(indent, model_unit) as isize - columns(model_base, model_unit) as isize;
    let step = model_unit.columns() as isize;
    let levels = relative.div_euclid(step);
    let extra = relative.rem_euclid(step) as usize;

    let mut out = String::with_capacity(line.len() + file_base.len());
    if levels >= 0 {
        out.push_str(file_base);
        file_unit.push_to(&mut out, levels as usize);
    } else {
        let target = columns(file_base, file_unit) as isize + levels * file_unit.columns() as isize;
        let target = target.max(0) as usize;
        match file_unit {
            Unit::Tab => {
                file_unit.push_to(&mut out, target / TAB_COLUMNS);
                out.extend(std::iter::repeat_n(' ', target % TAB_COLUMNS));
            }
            Unit::Spaces(_) => out.extend(std::iter::repeat_n(' ', target)),
        }
    }
    out.extend(std::iter::repeat_n(' ', extra));
    out.push_str(text);
    out
}

/// How a text indents: lines starting with a tab or a space, and the usual step between levels.
#[derive(Debug, Default)]
struct IndentStats {
    tab_lines: usize,
    space_lines: usize,
    /// Most frequent increase of a space indent from one line to the next (1..=8).
    step: Option<usize>,
    /// Smallest space indent seen.
    smallest: Option<usize>,
}

impl IndentStats {
    fn of(texts: &[&str]) -> Self {
        let mut stats = Self::default();
        let mut steps = [0usize; 9];
        for text in texts {
            let mut previous: Option<usize> = None;
            for line in text.split('\n') {
                if line.trim().is_empty() {
                    continue;
                }
                let indent = indent_of(line);
                if indent.starts_with('\t') {
                    stats.tab_lines += 1;
                } else if indent.starts_with(' ') {
                    stats.space_lines += 1;
                }
                if indent.contains('\t') {
                    previous = None;
                    continue;
                }
                let width = indent.len();
                if width > 0 {
                    stats.smallest = Some(stats.smallest.map_or(width, |s| s.min(width)));
                }
                if let Some(before) = previous {
                    if let Some(slot) = width.checked_sub(before).and_then(|d| steps.get_mut(d)) {
                        *slot += 1;
                    }
                }
                previous = Some(width);
            }
        }
        let mut best = 0;
        for (delta, &count) in steps.iter().enumerate().skip(1) {
            if count > best {
                best = count;
                stats.step = Some(delta);
            }
        }
        stats
    }

    /// The file's own unit; `None` when nothing in it is indented.
    fn file_unit(&self) -> Option<Unit> {
        if self.tab_lines == 0 && self.space_lines == 0 {
            None
        } else if self.tab_lines > self.space_lines {
            Some(Unit::Tab)
        } else {
            let width = self.step.or(self.smallest).unwrap_or(4);
            Some(Unit::Spaces(width.clamp(1, 8)))
        }
    }

    /// The unit the model typed old and new with; when its text does not tell, the file's.
    fn model_unit(&self, file: Option<Unit>) -> Unit {
        if self.tab_lines > 0 && self.tab_lines >= self.space_lines {
            Unit::Tab
        } else if self.space_lines > 0 {
            let fallback = match file {
                Some(Unit::Spaces(width)) => width,
                _ => 4,
            };
            Unit::Spaces(self.step.unwrap_or(fallback))
        } else {
            file.unwrap_or(Unit::Tab)
        }
    }
}

/// "appears N times (lines …)" with the 1-based lines of the `count` matches.
/// Lines are numbered lazily and only until the list is full: a one-letter `old` may match a
/// large file a million times.
fn ambiguous(count: usize, lines: impl Iterator<Item = usize>) -> String {
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
fn not_found(file: &FileView<'_>, old: &str) -> String {
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

/// The refusal for two edits that share text, worded from the later edit's point of view.
fn conflict(file: &FileView<'_>, x: (usize, &Found), y: (usize, &Found)) -> String {
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
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    fn edit(old: &str, new: &str) -> Edit {
        Edit {
            old: old.to_owned(),
            new: new.to_owned(),
        }
    }

    #[test]
    fn find_all_counts_overlapping_matches() {
        assert_eq!(find_all("}\n}\n}", "}\n}"), vec![0, 2]);
        assert_eq!(find_all("ééé", "éé"), vec![0, 2]);
        assert!(find_all("abc", "x").is_empty());
    }

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
    fn reindent_moves_spaces_to_tabs_and_keeps_blank_lines_empty() {
        let model = Unit::Spaces(4);
        assert_eq!(
            reindent("    x := 1", "    ", model, "\t", Unit::Tab),
            "\tx := 1"
        );
        assert_eq!(
            reindent("        y()", "    ", model, "\t", Unit::Tab),
            "\t\ty()"
        );
        assert_eq!(reindent("}", "    ", model, "\t\t", Unit::Tab), "\t}");
        assert_eq!(reindent("      ", "    ", model, "\t", Unit::Tab), "");
        assert_eq!(reindent("      z", "    ", model, "\t", Unit::Tab), "\t  z");
        assert_eq!(
            reindent("\t\tw", "\t", Unit::Tab, "  ", Unit::Spaces(2)),
            "    w"
        );
    }

    #[test]
    fn unit_detection() {
        let go = "func f() {\n\tif x {\n\t\ty()\n\t}\n}\n";
        assert_eq!(IndentStats::of(&[go]).file_unit(), Some(Unit::Tab));
        let py = "def f():\n  if x:\n    y()\n  return 1\n";
        assert_eq!(IndentStats::of(&[py]).file_unit(), Some(Unit::Spaces(2)));
        assert_eq!(IndentStats::of(&["a\nb\n"]).file_unit(), None);
        assert_eq!(
            IndentStats::of(&["    a\n    b"]).model_unit(Some(Unit::Tab)),
            Unit::Spaces(4)
        );
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

    #[test]
    fn closest_region_needs_half_the_lines() {
        let file = FileView::new("a\nb\nc\nd\n");
        assert_eq!(closest_region(&file, &["b", "x", "d"]), Some(1));
        assert_eq!(closest_region(&file, &["b", "x", "y"]), None);
        assert_eq!(closest_region(&file, &["q", "b", "c", "z"]), Some(0));
    }
}

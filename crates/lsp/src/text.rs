//! Positions and names: 1-based character columns at the tool's boundary, 0-based UTF-16 on the
//! wire; files as `file://` URIs; symbols cleaned of what a model writes around them, and found in
//! the file's text.

use std::path::{Path, PathBuf};

use crate::LspError;

/// `file://` URI of a path.
pub(crate) fn uri_of(path: &Path) -> Result<String, LspError> {
    url::Url::from_file_path(path)
        .map(String::from)
        .map_err(|()| LspError::BadAnswer(format!("{} is not an absolute path", path.display())))
}

/// The path of a `file://` URI.
pub(crate) fn path_of(uri: &str) -> Option<PathBuf> {
    url::Url::parse(uri).ok()?.to_file_path().ok()
}

/// A document's lines, for converting positions.
pub(crate) struct Lines<'a> {
    text: &'a str,
    /// The byte offset where each line starts; a final newline opens one more (empty) line.
    starts: Vec<usize>,
}

impl<'a> Lines<'a> {
    pub(crate) fn new(text: &'a str) -> Self {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        Self { text, starts }
    }

    /// Lines as a person counts them (a final newline does not start another).
    pub(crate) fn count(&self) -> usize {
        if self.text.ends_with('\n') {
            self.starts.len() - 1
        } else {
            self.starts.len()
        }
    }

    /// Line `index` (0-based) without its terminator; empty past the end.
    pub(crate) fn line(&self, index: usize) -> &'a str {
        let Some(&start) = self.starts.get(index) else {
            return "";
        };
        let end = self
            .starts
            .get(index + 1)
            .map_or(self.text.len(), |next| next - 1);
        let line = &self.text[start..end];
        line.strip_suffix('\r').unwrap_or(line)
    }

    /// The UTF-16 offset of character `column` (0-based) of line `index`.
    pub(crate) fn utf16_of(&self, index: usize, column: usize) -> u32 {
        let units: usize = self
            .line(index)
            .chars()
            .take(column)
            .map(char::len_utf16)
            .sum();
        u32::try_from(units).unwrap_or(u32::MAX)
    }

    /// The character column (0-based) at a UTF-16 offset of line `index`, clamped to the line.
    pub(crate) fn column_of(&self, index: usize, utf16: u32) -> usize {
        let mut units = 0usize;
        for (column, c) in self.line(index).chars().enumerate() {
            if units >= utf16 as usize {
                return column;
            }
            units += c.len_utf16();
        }
        self.line(index).chars().count()
    }

    /// The byte offset of a wire position, clamped to the end of its line and of the text (some
    /// servers send positions one past a line's end, or a line past the last one).
    pub(crate) fn byte_of(&self, position: lsp_types::Position) -> usize {
        let index = position.line as usize;
        let Some(&start) = self.starts.get(index) else {
            return self.text.len();
        };
        let line = self.line(index);
        let mut units = 0usize;
        for (offset, c) in line.char_indices() {
            if units >= position.character as usize {
                return start + offset;
            }
            units += c.len_utf16();
        }
        start + line.len()
    }
}

fn is_identifier_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$'
}

/// An identifier as a model may write it: stray quotes and punctuation cut off, a `receiver.` or
/// `pkg.` prefix (or `pkg::`, `obj->`) dropped. `Greet', ` and `person.Greet` both give `Greet`.
pub(crate) fn clean_symbol(raw: &str) -> String {
    let trimmed = raw.trim_matches(|c: char| !is_identifier_char(c));
    let last = trimmed
        .rsplit(['.', ':', '>'])
        .find(|part| part.chars().any(is_identifier_char))
        .unwrap_or(trimmed);
    last.trim_matches(|c: char| !is_identifier_char(c))
        .to_owned()
}

/// `(symbol, new name)` from a string holding several words (`Greet 1 12 Hello`: a small model
/// writing symbol, line, column and new name into one): the first identifier and the last.
pub(crate) fn symbol_and_new_name(raw: &str) -> Option<(String, String)> {
    let identifiers: Vec<String> = raw
        .split_whitespace()
        .map(clean_symbol)
        .filter(|w| w.chars().next().is_some_and(|c| !c.is_ascii_digit()))
        .collect();
    match identifiers.as_slice() {
        [first, .., last] => Some((first.clone(), last.clone())),
        _ => None,
    }
}

/// Where `symbol` occurs as a whole word, as `(line, column)` 0-based in characters: code lines
/// first, comment lines last, each in file order; on line `only` (0-based) when given.
pub(crate) fn occurrences(
    lines: &Lines<'_>,
    symbol: &str,
    only: Option<usize>,
) -> Vec<(usize, usize)> {
    let wanted: Vec<char> = symbol.chars().collect();
    if wanted.is_empty() {
        return Vec::new();
    }
    let (mut code, mut comments) = (Vec::new(), Vec::new());
    for index in 0..lines.count() {
        if only.is_some_and(|only| only != index) {
            continue;
        }
        let chars: Vec<char> = lines.line(index).chars().collect();
        let found = (0..chars.len().saturating_sub(wanted.len() - 1)).filter(|&at| {
            chars[at..at + wanted.len()] == wanted[..]
                && (at == 0 || !is_identifier_char(chars[at - 1]))
                && chars
                    .get(at + wanted.len())
                    .is_none_or(|c| !is_identifier_char(*c))
        });
        let target = if is_comment(lines.line(index)) {
            &mut comments
        } else {
            &mut code
        };
        target.extend(found.map(|column| (index, column)));
    }
    code.extend(comments);
    code
}

fn is_comment(line: &str) -> bool {
    let line = line.trim_start();
    ["//", "#", "/*", "*", "--", ";", "<!--"]
        .iter()
        .any(|mark| line.starts_with(mark))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symbols_are_cleaned_like_a_model_writes_them() {
        assert_eq!(clean_symbol("Greet', "), "Greet");
        assert_eq!(clean_symbol("person.Greet"), "Greet");
        assert_eq!(clean_symbol("`fmt::Display`"), "Display");
        assert_eq!(clean_symbol("self->name;"), "name");
        assert_eq!(clean_symbol("  greet()"), "greet");
        assert_eq!(
            symbol_and_new_name("Greet 1 12 Hello"),
            Some(("Greet".into(), "Hello".into()))
        );
        assert_eq!(symbol_and_new_name("Greet"), None);
    }

    #[test]
    fn positions_convert_through_utf16() {
        let lines = Lines::new("a = '😀' + greet\r\nb\n");
        assert_eq!(lines.count(), 2);
        assert_eq!(lines.line(0), "a = '😀' + greet");
        // The emoji is one character and two UTF-16 units.
        assert_eq!(lines.utf16_of(0, 10), 11);
        assert_eq!(lines.column_of(0, 11), 10);
        let at = lines.byte_of(lsp_types::Position::new(0, 11));
        assert_eq!(&"a = '😀' + greet"[at..], "greet");
        // Past the end of a line or of the text: clamped.
        assert_eq!(lines.byte_of(lsp_types::Position::new(1, 40)), 21);
        assert_eq!(lines.byte_of(lsp_types::Position::new(9, 0)), 22);
    }

    #[test]
    fn occurrences_are_whole_words_with_comments_last() {
        let text = "# greet people\ndef greet(n):\n    return greeting(n) + greet\n";
        let lines = Lines::new(text);
        assert_eq!(
            occurrences(&lines, "greet", None),
            [(1, 4), (2, 25), (0, 2)]
        );
        assert_eq!(occurrences(&lines, "greet", Some(2)), [(2, 25)]);
        assert!(occurrences(&lines, "nobody", None).is_empty());
    }
}

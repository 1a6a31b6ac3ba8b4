//! Indentation as the passes compare and rewrite it: the unit a text indents by (a tab or some
//! spaces), an indent's width in columns, and a line moved from the model's indentation to the
//! file's.

/// Columns a tab counts for when indents mixing tabs and spaces are compared.
const TAB_COLUMNS: usize = 4;

/// An indentation unit: a tab, or a number of spaces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Unit {
    Tab,
    Spaces(usize),
}

impl Unit {
    pub(super) fn columns(self) -> usize {
        match self {
            Unit::Tab => TAB_COLUMNS,
            Unit::Spaces(width) => width.max(1),
        }
    }

    pub(super) fn push_to(self, out: &mut String, levels: usize) {
        for _ in 0..levels {
            match self {
                Unit::Tab => out.push('\t'),
                Unit::Spaces(width) => out.extend(std::iter::repeat_n(' ', width.max(1))),
            }
        }
    }
}

/// The leading spaces and tabs of a line.
pub(super) fn indent_of(line: &str) -> &str {
    let rest = line.trim_start_matches([' ', '\t']);
    line.get(..line.len() - rest.len()).unwrap_or_default()
}

/// Width of an indent in columns, a tab counting one `unit`.
pub(super) fn columns(indent: &str, unit: Unit) -> usize {
    indent
        .chars()
        .map(|c| if c == '\t' { unit.columns() } else { 1 })
        .sum()
}

/// `line` moved from the model's indentation (`model_base`, `model_unit`) to the file's.
pub(super) fn reindent(
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
pub(super) struct IndentStats {
    tab_lines: usize,
    space_lines: usize,
    /// Most frequent increase of a space indent from one line to the next (1..=8).
    step: Option<usize>,
    /// Smallest space indent seen.
    smallest: Option<usize>,
}

impl IndentStats {
    pub(super) fn of(texts: &[&str]) -> Self {
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
    pub(super) fn file_unit(&self) -> Option<Unit> {
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
    pub(super) fn model_unit(&self, file: Option<Unit>) -> Unit {
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

#[cfg(test)]
mod tests {
    use super::*;

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
}

//! The first pass: `old` exactly as written, anywhere in the file — it must appear once.

use super::refusals::ambiguous;
use super::view::{FileView, Found, Padding};

/// `old` found exactly; `None` when it is nowhere in the file.
pub(super) fn find(
    file: &FileView<'_>,
    pad: &Padding<'_>,
    old: &str,
    new: &str,
) -> Option<Result<Found, String>> {
    let hits = find_all(file.text, old);
    let &start = hits.first()?;
    if hits.len() > 1 {
        let skip = if pad.core.is_empty() {
            0
        } else {
            pad.lead.len()
        };
        let lines = hits.iter().map(|&h| file.line_of(h + skip) + 1);
        return Some(Err(ambiguous(hits.len(), lines)));
    }
    Some(Ok(Found {
        start,
        end: start + old.len(),
        replacement: new.to_owned(),
        relaxed: false,
    }))
}

/// Every start of `needle` in `haystack`, overlapping ones included.
pub(super) fn find_all(haystack: &str, needle: &str) -> Vec<usize> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn find_all_counts_overlapping_matches() {
        assert_eq!(find_all("}\n}\n}", "}\n}"), vec![0, 2]);
        assert_eq!(find_all("ééé", "éé"), vec![0, 2]);
        assert!(find_all("abc", "x").is_empty());
    }
}

//! The dates a question names ("on 3 June, 2023", "October 13, 2023", "in August 2023", "in
//! June", "in 2023", "the week before August 11, 2023"; in Chinese "2023年6月3日", "六月",
//! "二〇二三年") as windows of time: recall favours what was said inside them. Relative dates
//! ("last week") are left to the words: what they mean depends on when the memory was said, not
//! on when the question is asked.

use std::sync::OnceLock;

use cairn_protocol::calendar::{civil_from_days, days_from_civil};
use regex::Regex;

const DAY_MS: i64 = 86_400_000;
/// A day named in a question is widened by a day on each side: the memory's clock and the
/// person's time zone need not agree.
const DAY_SLACK_MS: i64 = DAY_MS;
/// "The week before August 11" or "two weeks before it": what was said up to this long before.
const BEFORE_MS: i64 = 14 * DAY_MS;
/// A month or a day named without its year is looked for in this many years up to now.
const YEARS_BACK: i64 = 10;

const MONTHS: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

/// A span of time in milliseconds since the epoch, `from` included, `to` excluded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Window {
    pub from: i64,
    pub to: i64,
}

impl Window {
    pub(crate) fn holds(&self, at: i64) -> bool {
        self.from <= at && at < self.to
    }

    /// A day, widened by [`DAY_SLACK_MS`] on each side.
    fn day(year: i64, month: i64, day: i64) -> Self {
        let start = days_from_civil(year, month, day) * DAY_MS;
        Self {
            from: start - DAY_SLACK_MS,
            to: start + DAY_MS + DAY_SLACK_MS,
        }
    }

    fn month(year: i64, month: i64) -> Self {
        let (next_year, next_month) = if month == 12 {
            (year + 1, 1)
        } else {
            (year, month + 1)
        };
        Self {
            from: days_from_civil(year, month, 1) * DAY_MS,
            to: days_from_civil(next_year, next_month, 1) * DAY_MS,
        }
    }

    fn year(year: i64) -> Self {
        Self {
            from: days_from_civil(year, 1, 1) * DAY_MS,
            to: days_from_civil(year + 1, 1, 1) * DAY_MS,
        }
    }
}

/// The year named, or each of the last [`YEARS_BACK`] years up to this one when none is.
fn years(named: Option<i64>, this_year: i64) -> Vec<i64> {
    match named {
        Some(year) => vec![year],
        None => (this_year - YEARS_BACK..=this_year).collect(),
    }
}

/// The windows of time the dates in `query` name; `now` places a month or day given without
/// its year.
pub(crate) fn windows(query: &str, now: i64) -> Vec<Window> {
    let words: Vec<String> = query
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    let this_year = civil_from_days(now.div_euclid(DAY_MS)).0;
    let mut out = Vec::new();
    let mut used = vec![false; words.len()];
    for (i, word) in words.iter().enumerate() {
        let Some(month) = month_of(word) else {
            continue;
        };
        let day_before = i
            .checked_sub(1)
            .and_then(|j| day_of(&words[j]).map(|d| (j, d)));
        let day_after = words.get(i + 1).and_then(|w| day_of(w)).map(|d| (i + 1, d));
        let day = day_before.or(day_after);
        let after_day = day.map_or(i, |(j, _)| j.max(i));
        let year = words
            .get(after_day + 1)
            .and_then(|w| year_of(w))
            .map(|y| (after_day + 1, y));
        // "may" alone is a verb; a month needs a day or a year beside it, or "in" before it.
        let in_before = i > 0 && matches!(words[i - 1].as_str(), "in" | "during" | "of");
        if day.is_none() && year.is_none() && (month == 5 || !in_before) {
            continue;
        }
        let first = day.map_or(i, |(j, _)| j.min(i));
        let last = year.map_or(after_day, |(j, _)| j);
        used[first..=last].iter_mut().for_each(|u| *u = true);
        let before = first > 0 && matches!(words[first - 1].as_str(), "before" | "prior");
        for y in years(year.map(|(_, y)| y), this_year) {
            let window = match day {
                Some((_, d)) => Window::day(y, month, d),
                None => Window::month(y, month),
            };
            out.push(if before {
                Window {
                    from: window.from - BEFORE_MS,
                    to: window.to,
                }
            } else {
                window
            });
        }
    }
    out.extend(chinese_windows(query, this_year));
    // A year on its own: "in 2023".
    for (i, word) in words.iter().enumerate() {
        if used[i] || i == 0 || !matches!(words[i - 1].as_str(), "in" | "during" | "of") {
            continue;
        }
        if let Some(y) = year_of(word) {
            out.push(Window::year(y));
        }
    }
    out
}

/// Dates written the Chinese way, in digits or numerals: "2023年6月3日" (or 号), "6月3日",
/// "2023年6月", "6月", "六月", "十月二十一日", "二〇二三年". A duration ("3个月") names none.
fn chinese_windows(query: &str, this_year: i64) -> Vec<Window> {
    static DATE: OnceLock<Option<Regex>> = OnceLock::new();
    let Some(date) = DATE
        .get_or_init(|| {
            Regex::new(concat!(
                r"(?:([\d〇零一二三四五六七八九]{4})\s*年\s*)?",
                r"(?:([\d一二三四五六七八九十]{1,3})\s*月",
                r"(?:\s*([\d一二三四五六七八九十]{1,3})\s*[日号])?)?"
            ))
            .ok()
        })
        .as_ref()
    else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for found in date.captures_iter(query) {
        let number = |at: usize| found.get(at).and_then(|m| chinese_number(m.as_str()));
        let year = number(1);
        let month = number(2).filter(|m| (1..=12).contains(m));
        let day = number(3).filter(|d| (1..=31).contains(d));
        if year.is_none() && month.is_none() {
            continue;
        }
        for y in years(year, this_year) {
            out.push(match (month, day) {
                (Some(m), Some(d)) => Window::day(y, m, d),
                (Some(m), None) => Window::month(y, m),
                (None, _) => Window::year(y),
            });
        }
    }
    out
}

/// A number written in digits or Chinese numerals: "12", "十二", "二十一", "二〇二三" (a year,
/// digit by digit).
fn chinese_number(text: &str) -> Option<i64> {
    if text.chars().all(|c| c.is_ascii_digit()) {
        return text.parse().ok();
    }
    let digit = |c: char| -> Option<i64> {
        "〇一二三四五六七八九"
            .chars()
            .position(|d| d == c)
            .or((c == '零').then_some(0))
            .map(|d| d as i64)
    };
    let chars: Vec<char> = text.chars().collect();
    match chars.iter().position(|&c| c == '十') {
        Some(at) => {
            let tens = match &chars[..at] {
                [] => 1,
                [d] => digit(*d)?,
                _ => return None,
            };
            let ones = match &chars[at + 1..] {
                [] => 0,
                [d] => digit(*d)?,
                _ => return None,
            };
            Some(tens * 10 + ones)
        }
        None if chars.len() == 1 || chars.len() == 4 => chars
            .iter()
            .try_fold(0, |number, &c| Some(number * 10 + digit(c)?)),
        None => None,
    }
}

/// A month's number from its name or its three-letter abbreviation ("oct", "sept" too).
fn month_of(word: &str) -> Option<i64> {
    let index = if word == "sept" {
        8
    } else if word.len() == 3 {
        MONTHS.iter().position(|m| m.starts_with(word))?
    } else {
        MONTHS.iter().position(|m| *m == word)?
    };
    Some(index as i64 + 1)
}

/// A day of the month: "3", "03", "3rd", "21st".
fn day_of(word: &str) -> Option<i64> {
    let digits = word.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let suffix = &word[digits.len()..];
    if !matches!(suffix, "" | "st" | "nd" | "rd" | "th") || digits.len() > 2 {
        return None;
    }
    let day: i64 = digits.parse().ok()?;
    (1..=31).contains(&day).then_some(day)
}

fn year_of(word: &str) -> Option<i64> {
    let year: i64 = (word.len() == 4).then(|| word.parse().ok()).flatten()?;
    (1900..=2200).contains(&year).then_some(year)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2026-12-05, noon.
    const NOW: i64 = 1_796_472_000_000;

    fn day(y: i64, m: i64, d: i64) -> i64 {
        days_from_civil(y, m, d) * DAY_MS
    }

    #[test]
    fn a_day_with_its_year_is_that_day_and_a_day_either_side() {
        let expected = vec![Window {
            from: day(2023, 6, 2),
            to: day(2023, 6, 5),
        }];
        for query in [
            "What did Maria start, as mentioned on 3 June, 2023?",
            "What happened on June 3, 2023?",
            "what happened on june 3rd 2023",
        ] {
            assert_eq!(windows(query, NOW), expected, "{query}");
        }
    }

    #[test]
    fn a_month_with_its_year_is_the_whole_month() {
        assert_eq!(
            windows("What did Maria donate in December 2023?", NOW),
            vec![Window {
                from: day(2023, 12, 1),
                to: day(2024, 1, 1),
            }]
        );
    }

    #[test]
    fn a_month_alone_is_that_month_of_each_recent_year() {
        let found = windows("When did Melanie go camping in June?", NOW);
        assert_eq!(found.len(), 11);
        assert!(found.iter().any(|w| w.holds(day(2023, 6, 20))));
        assert!(!found.iter().any(|w| w.holds(day(2023, 7, 1))));
    }

    #[test]
    fn before_a_date_reaches_two_weeks_back() {
        let found = windows("What did John do the week before August 3, 2023?", NOW);
        assert_eq!(found.len(), 1);
        assert!(found[0].holds(day(2023, 7, 22)));
        assert!(found[0].holds(day(2023, 8, 3)));
        assert!(!found[0].holds(day(2023, 8, 10)));
    }

    #[test]
    fn a_year_alone_after_in_is_that_year() {
        assert_eq!(
            windows("How many times has Melanie gone to the beach in 2023?", NOW),
            vec![Window {
                from: day(2023, 1, 1),
                to: day(2024, 1, 1),
            }]
        );
    }

    #[test]
    fn chinese_dates_are_read() {
        assert_eq!(
            windows("我们在2024年3月12日决定了什么？", NOW),
            vec![Window {
                from: day(2024, 3, 11),
                to: day(2024, 3, 14),
            }]
        );
        assert_eq!(
            windows("2023年12月捐了什么", NOW),
            vec![Window {
                from: day(2023, 12, 1),
                to: day(2024, 1, 1),
            }]
        );
        assert_eq!(windows("6月去哪里露营了？", NOW).len(), 11);
        assert_eq!(
            windows("2023年的发布", NOW),
            vec![Window {
                from: day(2023, 1, 1),
                to: day(2024, 1, 1),
            }]
        );
        assert_eq!(
            windows("二〇二三年十月二十一日做了什么", NOW),
            vec![Window {
                from: day(2023, 10, 20),
                to: day(2023, 10, 23),
            }]
        );
        assert_eq!(windows("六月去哪里露营了？", NOW).len(), 11);
        assert_eq!(
            windows("2023年十二月", NOW),
            vec![Window {
                from: day(2023, 12, 1),
                to: day(2024, 1, 1),
            }]
        );
        assert!(windows("三个月以后", NOW).is_empty());
        assert!(windows("十三月", NOW).is_empty());
        assert!(windows("端口是8080吗？", NOW).is_empty());
        assert!(windows("3个月以后", NOW).is_empty());
        assert!(windows("第13月", NOW).is_empty());
    }

    #[test]
    fn words_that_only_look_like_dates_name_no_time() {
        for query in [
            "May I ask what you think?",
            "what did she say about the 2023 budget",
            "the march to the sea",
            "Which port does the server use, 8080?",
            "I may go",
        ] {
            assert!(windows(query, NOW).is_empty(), "{query}");
        }
    }
}

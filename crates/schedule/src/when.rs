//! "When" as people write it, read into a cron expression (minute hour day month weekday): the
//! common cases in plain English, or cron itself.

use std::str::FromStr;

use croner::Cron;

use crate::ScheduleError;

/// What to say when a "when" cannot be read.
const EXAMPLES: &str =
    "write it like \"every weekday at 9\", \"every monday and thursday at 14:30\", \
\"every day at 7pm\", \"every 15 minutes\", \"every hour\", or as cron (\"0 9 * * 1-5\")";

const DAYS: [(&str, u8); 7] = [
    ("sunday", 0),
    ("monday", 1),
    ("tuesday", 2),
    ("wednesday", 3),
    ("thursday", 4),
    ("friday", 5),
    ("saturday", 6),
];

/// `when` as a cron expression, checked.
pub fn to_cron(when: &str) -> Result<String, ScheduleError> {
    let text = when.trim().to_lowercase();
    if text.is_empty() {
        return Err(ScheduleError::When(format!("say when it runs: {EXAMPLES}")));
    }
    let cron = match english(&text) {
        Some(cron) => cron?,
        None => text.clone(),
    };
    Cron::from_str(&cron).map_err(|e| {
        ScheduleError::When(format!(
            "cannot read {when:?} as a schedule ({e}): {EXAMPLES}"
        ))
    })?;
    if cron.split_whitespace().count() != 5 {
        return Err(ScheduleError::When(format!(
            "{when:?}: cron here has five fields, minute hour day month weekday: {EXAMPLES}"
        )));
    }
    Ok(cron)
}

/// A cron expression in words ("At 09:00 on Monday through Friday"), or itself.
pub fn describe(cron: &str) -> String {
    Cron::from_str(cron).map_or_else(|_| cron.to_owned(), |c| c.describe())
}

/// Plain English: `None` when it does not read as English (then it may be cron).
fn english(text: &str) -> Option<Result<String, ScheduleError>> {
    let words: Vec<&str> = text
        .split(|c: char| c.is_whitespace() || c == ',')
        .filter(|w| !w.is_empty() && !matches!(*w, "and" | "on" | "each"))
        .collect();
    let first = *words.first()?;
    if !matches!(
        first,
        "every" | "daily" | "hourly" | "weekdays" | "at" | "weekly"
    ) && !DAYS.iter().any(|(d, _)| first.trim_end_matches('s') == *d)
    {
        return None;
    }
    Some(read_english(text, &words))
}

fn read_english(text: &str, words: &[&str]) -> Result<String, ScheduleError> {
    let unreadable =
        || ScheduleError::When(format!("cannot read {text:?} as a schedule: {EXAMPLES}"));
    // "at TIME" anywhere; the rest says which days.
    let (time, rest): (Option<(u8, u8)>, Vec<&str>) = match words.iter().position(|w| *w == "at") {
        Some(at) => {
            let spoken: Vec<&str> = words[at + 1..]
                .iter()
                .take_while(|w| !is_day_word(w))
                .copied()
                .collect();
            let time = clock(&spoken.join(" ")).ok_or_else(unreadable)?;
            let rest = words[..at]
                .iter()
                .chain(&words[at + 1 + spoken.len()..])
                .copied()
                .collect();
            (Some(time), rest)
        }
        None => (None, words.to_vec()),
    };
    let rest: Vec<&str> = rest.into_iter().filter(|w| *w != "every").collect();
    match rest.as_slice() {
        ["minute"] | ["1", "minute"] => Ok("* * * * *".into()),
        [n, "minutes"] => {
            let n: u8 = n.parse().map_err(|_| unreadable())?;
            (1..=59)
                .contains(&n)
                .then(|| format!("*/{n} * * * *"))
                .ok_or_else(unreadable)
        }
        ["hour"] | ["hourly"] => Ok("0 * * * *".into()),
        [n, "hours"] => {
            let n: u8 = n.parse().map_err(|_| unreadable())?;
            (1..=23)
                .contains(&n)
                .then(|| format!("0 */{n} * * *"))
                .ok_or_else(unreadable)
        }
        days => {
            let Some((hour, minute)) = time else {
                return Err(ScheduleError::When(format!(
                    "say at what time {text:?} runs (\"… at 9\"): {EXAMPLES}"
                )));
            };
            let weekdays = match days {
                [] | ["day"] | ["daily"] => "*".to_owned(),
                ["weekday"] | ["weekdays"] => "1-5".to_owned(),
                ["weekend"] | ["weekends"] => "0,6".to_owned(),
                named => {
                    let mut numbers: Vec<u8> = Vec::new();
                    for word in named {
                        let day = DAYS
                            .iter()
                            .find(|(d, _)| word.trim_end_matches('s') == *d)
                            .ok_or_else(unreadable)?
                            .1;
                        if !numbers.contains(&day) {
                            numbers.push(day);
                        }
                    }
                    numbers.sort_unstable();
                    numbers
                        .iter()
                        .map(u8::to_string)
                        .collect::<Vec<_>>()
                        .join(",")
                }
            };
            Ok(format!("{minute} {hour} * * {weekdays}"))
        }
    }
}

fn is_day_word(word: &str) -> bool {
    matches!(
        word,
        "every" | "day" | "daily" | "weekday" | "weekdays" | "weekend" | "weekends"
    ) || DAYS.iter().any(|(d, _)| word.trim_end_matches('s') == *d)
}

/// "9", "9am", "9 am", "9:30", "21:15", "7pm", "7:45 pm", "noon", "midnight": (hour, minute).
fn clock(spoken: &str) -> Option<(u8, u8)> {
    let spoken = spoken.replace([' ', '.'], "");
    match spoken.as_str() {
        "noon" | "midday" => return Some((12, 0)),
        "midnight" => return Some((0, 0)),
        _ => {}
    }
    let (digits, pm) = if let Some(d) = spoken.strip_suffix("pm") {
        (d, Some(true))
    } else if let Some(d) = spoken.strip_suffix("am") {
        (d, Some(false))
    } else {
        (spoken.as_str(), None)
    };
    let (hour, minute) = match digits.split_once(':') {
        Some((h, m)) => (h.parse::<u8>().ok()?, m.parse::<u8>().ok()?),
        None => (digits.parse::<u8>().ok()?, 0),
    };
    let hour = match pm {
        Some(_) if !(1..=12).contains(&hour) => return None,
        Some(true) if hour < 12 => hour + 12,
        Some(false) if hour == 12 => 0,
        _ => hour,
    };
    (hour < 24 && minute < 60).then_some((hour, minute))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_english_reads_as_cron() -> Result<(), ScheduleError> {
        for (when, cron) in [
            ("every weekday at 9", "0 9 * * 1-5"),
            ("Every weekday at 9am", "0 9 * * 1-5"),
            ("at 9:30 every weekday", "30 9 * * 1-5"),
            ("every day at 7pm", "0 19 * * *"),
            ("daily at 07:45", "45 7 * * *"),
            ("every monday and thursday at 14:30", "30 14 * * 1,4"),
            ("mondays at noon", "0 12 * * 1"),
            ("every weekend at 10 am", "0 10 * * 0,6"),
            ("every 15 minutes", "*/15 * * * *"),
            ("every hour", "0 * * * *"),
            ("every 2 hours", "0 */2 * * *"),
            ("every day at midnight", "0 0 * * *"),
            ("every friday at 12am", "0 0 * * 5"),
            ("0 9 * * 1-5", "0 9 * * 1-5"),
            ("*/5 * * * *", "*/5 * * * *"),
        ] {
            assert_eq!(to_cron(when)?, cron, "{when}");
        }
        Ok(())
    }

    #[test]
    fn what_cannot_be_read_says_how_to_write_it() {
        for when in [
            "",
            "every day",
            "every weekday at 25",
            "every blursday at 9",
            "every 90 minutes",
            "sometimes",
            "0 9 * *",
            "0 0 9 * * 1-5",
        ] {
            let error = to_cron(when)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default();
            assert!(error.contains("every weekday at 9"), "{when:?}: {error}");
        }
    }

    #[test]
    fn a_cron_expression_is_described_in_words() {
        assert!(
            describe("0 9 * * 1-5").contains("09:00"),
            "{}",
            describe("0 9 * * 1-5")
        );
    }
}

//! The UI's one way to write sizes, durations and dates for people.

use crate::i18n::{t, tf};
use cairn_protocol::calendar::{civil_from_days, day_name, days_from_civil};

/// A size: "900 B", "4.0 KB", "180 KB", "3.3 MB", "1.0 GB" (binary units; one decimal below 10).
pub fn bytes(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KB", "MB", "GB", "TB"];
    let bytes = bytes as f64;
    if bytes < 1024.0 {
        return format!("{bytes:.0} B");
    }
    let mut value = bytes / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    if value < 10.0 {
        format!("{value:.1} {}", UNITS[unit])
    } else {
        format!("{value:.0} {}", UNITS[unit])
    }
}

/// A duration: "4.2 ms", "350 ms", "1.5 s".
pub fn duration_ms(ms: f64) -> String {
    if ms < 10.0 {
        format!("{ms:.1} ms")
    } else if ms < 1000.0 {
        format!("{ms:.0} ms")
    } else {
        format!("{:.1} s", ms / 1000.0)
    }
}

/// A moment in local time, as the page shows it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Moment {
    pub year: i32,
    /// 1–12.
    pub month: u32,
    pub day: u32,
    pub hour: u32,
    pub minute: u32,
}

/// `ms` (Unix) in the local time zone, through the webview's clock.
pub fn local(ms: i64) -> Moment {
    let date = js_sys::Date::new(&wasm_bindgen::JsValue::from_f64(ms as f64));
    Moment {
        year: date.get_full_year() as i32,
        month: date.get_month() + 1,
        day: date.get_date(),
        hour: date.get_hours(),
        minute: date.get_minutes(),
    }
}

pub fn month(m: u32) -> &'static str {
    match m.max(1) {
        1 => t("Jan"),
        2 => t("Feb"),
        3 => t("Mar"),
        4 => t("Apr"),
        5 => t("May"),
        6 => t("Jun"),
        7 => t("Jul"),
        8 => t("Aug"),
        9 => t("Sep"),
        10 => t("Oct"),
        11 => t("Nov"),
        12 => t("Dec"),
        _ => "?",
    }
}

/// "14:05" today, "3 Mar" this year, "3 Mar 2024" before.
pub fn short_moment(at: Moment, now: Moment) -> String {
    let time = format!("{:02}:{:02}", at.hour, at.minute);
    let day = at.day.to_string();
    if (at.year, at.month, at.day) == (now.year, now.month, now.day) {
        tf("Today {time}", &[("time", &time)])
    } else if at.year == now.year {
        tf(
            "{day} {month}",
            &[("day", &day), ("month", month(at.month))],
        )
    } else {
        tf(
            "{day} {month} {year}",
            &[
                ("day", &day),
                ("month", month(at.month)),
                ("year", &at.year.to_string()),
            ],
        )
    }
}

pub fn long_moment(at: Moment) -> String {
    tf(
        "{day} {month} {year}, {time}",
        &[
            ("day", &at.day.to_string()),
            ("month", month(at.month)),
            ("year", &at.year.to_string()),
            ("time", &format!("{:02}:{:02}", at.hour, at.minute)),
        ],
    )
}

pub fn short_date(ms: i64) -> String {
    short_moment(local(ms), local(js_sys::Date::now() as i64))
}

pub fn long_date(ms: i64) -> String {
    long_moment(local(ms))
}

/// `YYYY-MM-DD` as a day number.
pub fn parse_day(day: &str) -> Option<i64> {
    let mut parts = day.trim().splitn(3, '-');
    let year = parts.next()?.parse::<i64>().ok()?;
    let month = parts.next()?.parse::<i64>().ok()?;
    let day = parts.next()?.parse::<i64>().ok()?;
    ((1..=12).contains(&month) && (1..=31).contains(&day))
        .then(|| days_from_civil(year, month, day))
}

pub fn day_label(days: i64) -> String {
    let (_, m, d) = civil_from_days(days);
    tf(
        "{day} {month}",
        &[("day", &d.to_string()), ("month", month(m as u32))],
    )
}

/// A past moment as people say it: "just now", "5 minutes ago", "yesterday", or the date.
pub fn ago(then_ms: i64, now_ms: i64) -> String {
    let seconds = (now_ms - then_ms).max(0) / 1000;
    let minutes = seconds / 60;
    let hours = minutes / 60;
    let days = hours / 24;
    match () {
        _ if seconds < 45 => t("just now").to_owned(),
        _ if minutes < 2 => t("a minute ago").to_owned(),
        _ if hours < 1 => tf("{n} minutes ago", &[("n", &minutes.to_string())]),
        _ if hours < 2 => t("an hour ago").to_owned(),
        _ if days < 1 => tf("{n} hours ago", &[("n", &hours.to_string())]),
        _ if days < 2 => t("yesterday").to_owned(),
        _ if days < 14 => tf("{n} days ago", &[("n", &days.to_string())]),
        _ => tf("on {date}", &[("date", &date(then_ms))]),
    }
}

/// `2026-03-01` (UTC) from milliseconds since the epoch.
pub fn date(ms: i64) -> String {
    day_name(ms.div_euclid(86_400_000))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_in_the_largest_whole_unit() {
        assert_eq!(bytes(0), "0 B");
        assert_eq!(bytes(900), "900 B");
        assert_eq!(bytes(4096), "4.0 KB");
        assert_eq!(bytes(180 * 1024), "180 KB");
        assert_eq!(bytes(3 * 1024 * 1024 + 300_000), "3.3 MB");
        assert_eq!(bytes(1_117_320_768), "1.0 GB");
    }

    #[test]
    fn durations_keep_a_decimal_when_short() {
        assert_eq!(duration_ms(4.21), "4.2 ms");
        assert_eq!(duration_ms(350.4), "350 ms");
        assert_eq!(duration_ms(1500.0), "1.5 s");
    }
}

//! Time: the current time in unix milliseconds and the civil date (UTC) of a time.

/// The current time in unix milliseconds.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// Today's date (UTC) as `YYYY-MM-DD`.
pub fn today() -> String {
    date(now_ms())
}

pub use cairn_protocol::calendar::date;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_civil() {
        assert_eq!(date(0), "1970-01-01");
        assert_eq!(date(1_683_554_160_000), "2023-05-08");
        assert_eq!(date(951_782_400_000), "2000-02-29");
    }
}

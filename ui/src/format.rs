//! The UI's one way to write sizes and durations for people.

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

//! The names the model sees: `mcp__<server>__<tool>`, cleaned to the characters every provider
//! accepts (`[A-Za-z0-9_-]`), at most 64 characters, and made unique when two clean alike.

/// Providers' limit on a tool name's length.
pub const MAX_NAME: usize = 64;

fn clean(part: &str) -> String {
    part.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The exposed name of each `(server, tool)`, in the same order; the first of two that clean to
/// the same name keeps it, the next gets `_2`, `_3`… (still within 64 characters).
pub fn exposed_names(tools: &[(&str, &str)]) -> Vec<String> {
    let mut taken: Vec<String> = Vec::with_capacity(tools.len());
    for (server, tool) in tools {
        let base: String = format!("mcp__{}__{}", clean(server), clean(tool))
            .chars()
            .take(MAX_NAME)
            .collect();
        let mut name = base.clone();
        let mut n = 2;
        while taken.contains(&name) {
            let suffix = format!("_{n}");
            let keep = MAX_NAME.saturating_sub(suffix.len()).min(base.len());
            name = format!("{}{suffix}", &base[..keep]);
            n += 1;
        }
        taken.push(name);
    }
    taken
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_cleaned_cut_and_unique() {
        let long = "t".repeat(80);
        let names = exposed_names(&[
            ("files", "read_file"),
            ("my server", "get.weather"),
            ("my_server", "get weather"),
            ("x", &long),
            ("x", &format!("{long}2")),
        ]);
        assert_eq!(names[0], "mcp__files__read_file");
        assert_eq!(names[1], "mcp__my_server__get_weather");
        assert_eq!(names[2], "mcp__my_server__get_weather_2");
        assert_eq!(names[3].len(), MAX_NAME);
        assert_eq!(names[4].len(), MAX_NAME);
        assert!(names[4].ends_with("_2"), "{}", names[4]);
    }
}

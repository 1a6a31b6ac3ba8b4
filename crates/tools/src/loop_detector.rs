//! The loop detector: the same (tool, input, output) three times in a row gets a notice, six
//! stops the turn; and a tool call whose streamed arguments run away stops the generation.

use crate::texts::{
    fill, LOOP_DETECTED, LOOP_STOPPED, LOOP_STOPPED_DONE, RUNAWAY, RUNAWAY_TOO_LONG,
};

/// Identical calls in a row before the notice, and before the stop.
const NOTICE_AT: usize = 3;
const STOP_AT: usize = 6;

#[derive(Debug, Default)]
pub struct LoopDetector {
    last: Option<(String, String, String)>,
    count: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoopVerdict {
    Fine,
    /// Append this line to the output.
    Notice(&'static str),
    /// End the turn with this error instead of the output.
    Stop(String),
}

impl LoopDetector {
    /// Records a call and says what to do with its output (`failed`: the output is an error).
    pub fn record(&mut self, tool: &str, input: &str, output: &str, failed: bool) -> LoopVerdict {
        let triple = (tool.to_owned(), input.to_owned(), output.to_owned());
        if self.last.as_ref() == Some(&triple) {
            self.count += 1;
        } else {
            self.last = Some(triple);
            self.count = 1;
        }
        if self.count >= STOP_AT {
            let text = if failed {
                LOOP_STOPPED
            } else {
                LOOP_STOPPED_DONE
            };
            LoopVerdict::Stop(fill(text, &[("tool", tool)]))
        } else if self.count >= NOTICE_AT {
            LoopVerdict::Notice(LOOP_DETECTED)
        } else {
            LoopVerdict::Fine
        }
    }

    /// `/new` starts again.
    pub fn reset(&mut self) {
        *self = Self::default();
    }
}

/// Arguments longer than this stop the generation.
const MAX_ARGUMENTS: usize = 256 * 1024;
/// The window examined for a repeated pattern, and the pattern's lengths.
const WINDOW: usize = 256;
const PATTERN: std::ops::RangeInclusive<usize> = 4..=64;

/// The error that stops a generation whose tool-call `arguments` (as streamed so far) ran away.
pub fn runaway(arguments: &str) -> Option<String> {
    let n = arguments.chars().count();
    let excerpt = |text: &str| -> String {
        let tail: Vec<char> = text.chars().rev().take(40).collect();
        tail.into_iter().rev().collect()
    };
    if arguments.len() > MAX_ARGUMENTS {
        return Some(fill(
            RUNAWAY_TOO_LONG,
            &[("n", &n.to_string()), ("excerpt", &excerpt(arguments))],
        ));
    }
    if n < WINDOW {
        return None;
    }
    let window: Vec<char> = arguments.chars().skip(n - WINDOW).collect();
    let repeats = PATTERN
        .into_iter()
        .any(|len| (len..WINDOW).all(|i| window[i] == window[i - len]));
    repeats.then(|| {
        fill(
            RUNAWAY,
            &[("n", &n.to_string()), ("excerpt", &excerpt(arguments))],
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_in_a_row_notice_six_stop_and_a_different_call_resets() {
        let mut d = LoopDetector::default();
        assert_eq!(d.record("edit_file", "{}", "no", true), LoopVerdict::Fine);
        assert_eq!(d.record("edit_file", "{}", "no", true), LoopVerdict::Fine);
        assert_eq!(
            d.record("edit_file", "{}", "no", true),
            LoopVerdict::Notice(LOOP_DETECTED)
        );
        assert_eq!(
            d.record("edit_file", "{}", "no", true),
            LoopVerdict::Notice(LOOP_DETECTED)
        );
        assert_eq!(
            d.record("edit_file", "{}", "no", true),
            LoopVerdict::Notice(LOOP_DETECTED)
        );
        assert_eq!(
            d.record("edit_file", "{}", "no", true),
            LoopVerdict::Stop("[error: the model repeated the same edit_file call 6 times in a row with the same failing result — turn stopped by the loop detector; rephrase the request, or fix what the tool kept reporting]".into())
        );
        assert_eq!(
            d.record("edit_file", "{}", "other", true),
            LoopVerdict::Fine
        );
    }

    #[test]
    fn a_call_that_succeeded_six_times_is_not_called_failing() {
        let mut d = LoopDetector::default();
        let verdicts: Vec<LoopVerdict> = (0..6)
            .map(|_| d.record("write_file", "{}", "Created, 1 lines.", false))
            .collect();
        assert_eq!(
            verdicts[5],
            LoopVerdict::Stop("[error: the model repeated the same write_file call 6 times in a row with the same result — turn stopped by the loop detector; the call had already done its work, so rephrase the request if something else is needed]".into())
        );
    }

    #[test]
    fn a_repeating_pattern_or_a_huge_argument_runs_away() {
        assert_eq!(runaway(r#"{"command": "ls -la"}"#), None);
        let mut seed = 7u32;
        let varied: String = (0..400)
            .map(|_| {
                seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                char::from(b'a' + ((seed >> 16) % 26) as u8)
            })
            .collect();
        assert_eq!(runaway(&varied), None);
        let looping = format!("{{\"content\": \"{}", "abcabcabcXYZ ".repeat(40));
        let text = runaway(&looping).unwrap_or_default();
        assert!(
            text.starts_with(
                "[error: the model's tool call ran away: its arguments repeat the same pattern ("
            ),
            "{text}"
        );
        assert!(runaway(&"x".repeat(300 * 1024)).is_some());
    }
}

//! What a turn has spent against its budgets: steps, output, completion tokens, and the time
//! it waited on the person (which is not counted). Shared by the turn and its tool calls.

use std::time::Duration;

/// What a turn has spent so far (time waiting for the person is not counted).
#[derive(Default)]
pub(crate) struct Spent {
    pub steps: usize,
    pub waited: Duration,
    pub output_bytes: u64,
    pub completion_tokens: u64,
}

//! Every text the runtime says to the model, in one place (agent-loop.json where it gives them).

/// agent-loop.json `wrap_up.message`; `{{limit}}` names the limit reached.
pub const WRAP_UP: &str = "The {{limit}} for this prompt has been reached and the tools have been withdrawn. Answer now from what you have: what is done, what is not, and what would come next.";

/// Asked after a reply that held only thinking.
pub const NUDGE_THINKING_ONLY: &str =
    "Your last reply held only thinking and no answer. Give your answer now.";

/// Asked after a reply with nothing in it: no text, no thinking, no call.
pub const NUDGE_EMPTY: &str =
    "Your last reply was empty. Answer the person now, or call one of the tools.";

/// The turn's error when the nudges ran out on a reply still cut off: a fragment is no answer.
pub const CUT_OFF_ERROR: &str = "The model's reply was cut off at the output limit again after being asked to continue; the fragment was not taken as an answer.";
/// The turn's error when the nudges ran out on an empty reply.
pub const EMPTY_ERROR: &str =
    "The model gave no answer: its replies stayed empty after being asked again.";

/// How [`NUDGE_FAILED_CALL`] begins (what marks it as the runtime's in a stored session).
const FAILED_CALL_OPENING: &str = "Your last tool call (";

/// Asked once a turn when the model answers while its last tool call failed (ours): the failure
/// again with what to do, so that a failed edit or command is not reported as done.
pub const NUDGE_FAILED_CALL: &str = "Your last tool call ({{tool}}) failed, so what it was to do is not done:\n{{error}}\nDo not say that it worked. Fix the cause and call a tool again (before editing a file, read it and copy the exact text to replace; before running a script, write it), or, if it cannot be done, say plainly what did not work.";

/// Asked once a turn when the answer says that something was changed while no tool changed
/// anything in the turn (ours): a small model describes the change instead of making it.
pub const NUDGE_UNDONE_CLAIM: &str = "Your answer says that something was changed, but no tool changed anything in this turn. Do it now with a tool (write_file, edit_file or bash), or say plainly that it is not done.";

/// Put under an answer that still says so after [`NUDGE_UNDONE_CLAIM`] (ours).
pub const NOT_CHANGED: &str =
    "⚠ Unresolved: the answer says something was changed, but no tool changed anything.";

/// Put under an answer that, asked again with a tool call required, still only announces the
/// step it is about to take (ours).
pub const NOT_STARTED: &str =
    "⚠ Unresolved: the answer says what would be done, but no tool was called.";

/// Why the model was asked again after announcing a step it did not take.
pub const ANNOUNCED_REASON: &str = "a step announced but not taken";

/// Why the model was asked again after answering over a failed call: the reply "was {reason}".
pub const FAILED_CALL_REASON: &str = "written over a failed tool call";
/// Why the model was asked again after claiming a change no tool made.
pub const UNDONE_CLAIM_REASON: &str = "a change no tool made";

/// Put under an answer given while the last tool call still failed, after [`NUDGE_FAILED_CALL`]
/// (ours): the reply says what did not work whatever the model claimed.
pub const NOT_DONE: &str = "⚠ Unresolved: the last {{tool}} call failed ({{error}}).";

/// Asked after a reply cut off at the output limit.
pub const NUDGE_CUT_OFF: &str =
    "Your last reply was cut off at the output limit. Continue exactly where it stopped.";

/// agent-loop.json `context.env.project`.
pub const ENV_PROJECT: &str = "Project: {{name}} (paths are relative to its root)";

/// Carried on the next message after the person moves a task to another folder (ours).
pub const NOTE_FOLDER: &str =
    "The task now works in the folder {{name}}: paths are relative to it, commands run there.";

/// agent-loop.json `context.env.started`.
pub const ENV_STARTED: &str = "Started in: {{path}} (relative to the project root)";

/// agent-loop.json `context.note.date`.
pub const NOTE_DATE: &str = "Today is {{date}}.";

/// The limit named in the wrap-up when the step backstop is reached.
pub const STEP_LIMIT: &str = "step limit";

/// The limits named in the wrap-up when a budget is spent.
pub const TIME_LIMIT: &str = "time limit";
pub const OUTPUT_LIMIT: &str = "tool-output limit";
pub const TOKEN_LIMIT: &str = "token limit";

/// agent-loop.json `context`: result headers and stubs.
pub const READ_HEADER: &str = "[{{id}} {{path}} lines {{from}}-{{to}} of {{of}} sha {{sha}}]";
pub const READ_HEADER_EMPTY: &str = "[{{id}} {{path}} empty sha {{sha}}]";
pub const EDIT_HEADER: &str = "[{{id}} {{path}} sha {{sha}}]";
pub const HEADER: &str = "[{{id}}]";
pub const UNCHANGED: &str =
    "Unchanged since {{earlier}}, which already shows lines {{from}}-{{to}}.";
pub const SAME_RESULT: &str = "Same result as {{earlier}}.";
pub const CAP_ELIDED: &str = "[{{n}} lines elided, full output {{id}}]";
pub const NO_RESULT: &str = "No stored result {{target}} in this session.";
pub const RECALL_HEADER: &str = "[{{id}} recall {{target}} lines {{from}}-{{to}} of {{of}}]";
pub const COMPACTION_HEADING: &str = "## Files read before this summary";
pub const COMPACTION_LINE: &str =
    "Read a file again for its content; recall shows a result by its id.";

/// agent-loop.json `context.note.mode`.
/// agent-loop.json `note.mcp`.
pub const NOTE_MCP: &str =
    "Instructions from an MCP server that connected since the session began:\n{{instructions}}";
pub const NOTE_MODE: &str = "The permission mode is now {{mode}}:\n{{mode_text}}";
pub const MODE_YOLO: &str = "Tool calls run without asking the person.";
pub const MODE_ASK: &str = "Calls that change files or run commands wait for the person's approval; a refused call answers that it was rejected.";

/// Asked of the model to compact a conversation.
pub const COMPACT_REQUEST: &str = "Summarise this conversation so far for yourself, to continue the work from the summary alone: the person's goal and requests, decisions taken, what was done (files changed, commands run, results), what remains to do, and any names, paths, numbers or errors that matter. Reply with the summary only.";
/// The user message that carries a compaction summary.
pub const COMPACT_SUMMARY: &str =
    "[Summary of the conversation so far, written when it was compacted:]";
/// The assistant's acknowledgement after a summary.
pub const COMPACT_ACK: &str = "Understood: I continue from this summary.";
/// A tool call not run because the turn was stopped, or because the wrap-up withdrew the tools.
pub const NOT_RUN_STOPPED: &str = "[error: cancelled]";
pub const NOT_RUN_WRAP_UP: &str = "[not run: the tools have been withdrawn]";
/// The transcript's mark of a turn ended early.
pub const MARK_WRAPPED: &str =
    "[the prompt was stopped: the {{limit}} was reached; the answer was given from what was done]";
pub const MARK_STOPPED: &str = "[the turn was stopped by the person]";
/// An unknown tool.
pub const UNKNOWN_TOOL: &str = "[unknown tool \"{{name}}\" — tools: {{names}}]";
/// Arguments that are not JSON.
pub const BAD_ARGUMENTS: &str =
    "[{{name}}: the arguments are not valid JSON ({{error}}) — call {{name}} again with a JSON object]";

/// The summary a compaction left in `content`, when it is the message that carries one.
pub fn compaction_summary(content: &str) -> Option<&str> {
    content.strip_prefix(COMPACT_SUMMARY).map(str::trim)
}

/// Whether `content` is the reply the runtime writes after a compaction summary.
pub fn is_compaction_ack(content: &str) -> bool {
    content == COMPACT_ACK
}

/// Whether a stored user message is one the runtime wrote (a nudge, the wrap-up, a compaction
/// summary), not the person's words.
pub fn is_runtime_text(content: &str) -> bool {
    content == NUDGE_CUT_OFF
        || content.starts_with(FAILED_CALL_OPENING)
        || content == NUDGE_UNDONE_CLAIM
        || content == NUDGE_THINKING_ONLY
        || content == NUDGE_EMPTY
        || content.starts_with(COMPACT_SUMMARY)
        || content.starts_with(COMPACT_REQUEST)
        || is_wrap_up(content)
        || is_job_note(content)
}

/// Whether `content` is the wrap-up message, whatever limit it names.
fn is_wrap_up(content: &str) -> bool {
    match WRAP_UP.split_once("{{limit}}") {
        Some((before, after)) => {
            content.len() > before.len() + after.len()
                && content.starts_with(before)
                && content.ends_with(after)
        }
        None => content == WRAP_UP,
    }
}

/// Whether `words` are a background job's note to the model (they begin with a jobs mark).
pub fn is_job_note(words: &str) -> bool {
    use cairn_tools::texts::{MARK_COMMAND, MARK_MESSAGE, MARK_SUBAGENT, MARK_TO_SUBAGENT};
    let words = words.trim_start();
    [MARK_COMMAND, MARK_SUBAGENT, MARK_MESSAGE, MARK_TO_SUBAGENT]
        .iter()
        .any(|mark| words.starts_with(mark))
        || words.starts_with("[Team message from ")
        || words.starts_with("[Team report from ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use cairn_tools::texts::fill;

    #[test]
    fn the_runtime_knows_its_own_messages() {
        assert!(is_runtime_text(
            &WRAP_UP.replace("{{limit}}", "tool-output limit")
        ));
        assert!(is_runtime_text(NUDGE_CUT_OFF));
        assert!(is_runtime_text(&fill(
            NUDGE_FAILED_CALL,
            &[("tool", "edit_file"), ("error", "old text not found")]
        )));
        assert!(!is_runtime_text(
            "The step limit is what I want to talk about."
        ));
        assert!(!is_runtime_text("Plan my garden"));
    }
}

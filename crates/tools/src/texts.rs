//! Every text the tools say to the model or the terminal, word for word from agent-tools.md where
//! it gives them, so a test can hold them against the spec.

/// bash: the output's last line after the 30 s timeout (`{{timeout}}` like `30s`).
pub const TIMEOUT: &str = "[error: {{timeout}} timeout exceeded]";
/// bash and declared tools: a command killed because the turn was stopped.
pub const CANCELLED: &str = "[error: cancelled]";
/// bash: between the two ends of an output too large to read back whole.
pub const TOO_LARGE: &str = "[... output too large to read back in full ...]";
/// bash: a non-zero exit.
pub const EXIT_CODE: &str = "[exit code: exit status {{code}}]";
/// Declared tools: the program cannot be started.
pub const CANNOT_START: &str = "[error: {{program}} cannot be started: {{reason}}]";
/// After an output cut to `maxOutput` characters.
pub const TRUNCATED: &str = "[... output truncated to {{n}} characters ...]";

/// A refusal of a call that needed permission.
pub const REJECTED: &str = "[{{tool}} rejected by the user]";
/// A refusal of a bash command.
pub const COMMAND_REJECTED: &str = "[command rejected by the user]";

/// The first line of `read_file` on a folder (ours): what follows is one entry per line.
pub const FOLDER_LISTING: &str = "[{{path}} is a folder with {{count}} entries:]";

/// read_file on a missing file.
pub const MISSING_FILE: &str = "{{path}} does not exist. Create it with write_file";

/// read_skill: the fixed sentence before the catalogue.
pub const SKILL_DESCRIPTION: &str = "Read a skill: the instructions for a kind of task, written for you in advance. Read the one that fits before doing that kind of task. Skills:";
/// read_skill: an unknown name.
pub const UNKNOWN_SKILL: &str = "No skill named \"{{name}}\". Available skills: {{names}}";

/// ask_user results.
pub const ANSWERED: &str = "The user answered:";
pub const DECLINED: &str =
    "[the user declined to answer: do not ask the same thing again; go on without it or stop]";
pub const QUESTION_CANCELLED: &str = "[the question was cancelled before the user answered]";
pub const NOBODY_TO_ASK: &str =
    "[the user cannot be asked in this mode: make a reasonable assumption, say which, and go on]";
/// ask_user errors.
pub const NO_QUESTION: &str =
    "[ask_user: no question — send questions: [{question, type, options}]]";
pub const TOO_MANY_QUESTIONS: &str = "[ask_user: {{n}} questions — ask at most 4 at a time]";
pub const QUESTION_WITHOUT_TEXT: &str = "[ask_user: question {{n}} has no text]";
pub const TOO_FEW_OPTIONS: &str =
    "[ask_user: question {{n}} is a {{type}} question — give it at least two options]";
pub const BAD_QUESTION_TYPE: &str =
    "[ask_user: question {{n}} has type \"{{type}}\" — use choice, multi, text or confirm]";

/// save_answer texts.
pub const SAVE_EXISTS: &str =
    "[save_answer: {{path}} already exists — nothing was written. Pick another name, or ask the user]";
pub const SAVE_NOTHING: &str = "[save_answer: there is no answer to save yet — write the answer in your reply first, then call save_answer with the file name]";
pub const SAVED: &str = "saved {{which}} to {{path}} ({{n}} bytes), starting with: {{first}}";
pub const THIS_ANSWER: &str = "this answer";
pub const PREVIOUS_ANSWER: &str = "the previous answer";

/// fetch_content texts.
pub const FETCH_FAILED: &str = "[fetch_content: error {{code}} ({{class}}) — {{reason}}]";
pub const FETCH_SAVED: &str = "[fetch_content: saved {{lines}} lines of Markdown ({{bytes}} bytes) from {{url}} to {{file}} — the content is not shown]";
pub const FETCH_EMPTY: &str = "[fetch_content: {{url}} has no text content once scripts, navigation and ads are removed — nothing saved]";

/// unload_model results.
pub const UNLOADED: &str = "unloaded {{model}}";
pub const NOT_LOADED: &str = "{{model}} was not loaded: nothing to unload";
pub const CANNOT_UNLOAD: &str = "cannot unload {{model}}: {{reason}}";

/// search_memory texts.
pub const SEARCH_HITS: &str = "🔎 {{n}} hit(s) for \"{{query}}\" in {{dir}}";
pub const SEARCH_NO_HIT: &str = "🔎 no hit for \"{{query}}\" in {{dir}}\nThe search matches words, not meanings: try again with other words — synonyms, or the words in the language the earlier conversation was likely held in (often English).";
pub const SEARCH_EMPTY: &str = "⚠️ nothing to search: give one or more words";

/// Declared tools: an invalid call.
pub const INVALID_CALL: &str = "[{{name}}: invalid call, nothing was run — {{faults}}. You sent: {{input}}. Expected: {{expected}}. Call {{name}} again with each parameter as its own field.]";

/// Loop detection.
pub const LOOP_DETECTED: &str = "[LOOP_DETECTED: You have attempted the same action multiple times with the same result. Please try a different approach or provide more information.]";
/// The same stop for a call whose repeated result was not an error: the spec's wording names a
/// failing result, which would send the model (and the person) looking for a fault.
pub const LOOP_STOPPED_DONE: &str = "[error: the model repeated the same {{tool}} call 6 times in a row with the same result — turn stopped by the loop detector; the call had already done its work, so rephrase the request if something else is needed]";
pub const LOOP_STOPPED: &str = "[error: the model repeated the same {{tool}} call 6 times in a row with the same failing result — turn stopped by the loop detector; rephrase the request, or fix what the tool kept reporting]";
pub const RUNAWAY: &str = "[error: the model's tool call ran away: its arguments repeat the same pattern ({{n}} characters so far: {{excerpt}}) — generation stopped; rephrase the request, or try another model]";
pub const RUNAWAY_TOO_LONG: &str = "[error: the model's tool call ran away: its arguments passed 256 KB ({{n}} characters so far: {{excerpt}}) — generation stopped; rephrase the request, or try another model]";

/// Fills `{{key}}` placeholders.
pub fn fill(template: &str, values: &[(&str, &str)]) -> String {
    let mut out = template.to_owned();
    for (key, value) in values {
        out = out.replace(&format!("{{{{{key}}}}}"), value);
    }
    out
}

/// The refusal text for `tool` (bash has its own).
pub fn rejected(tool: &str) -> String {
    if tool == "bash" {
        COMMAND_REJECTED.to_owned()
    } else {
        fill(REJECTED, &[("tool", tool)])
    }
}

/// Background jobs (agent-loop.json `jobs.marks`): the first line of every wake-up message.
pub const MARK_COMMAND: &str = "[A background job you started has finished:]";
pub const MARK_SUBAGENT: &str = "[A subagent you started has finished:]";
pub const MARK_MESSAGE: &str = "[A message from a subagent you started:]";
pub const MARK_TO_SUBAGENT: &str =
    "[The main agent sent this while you were working — take it into account from here:]";

/// bash `background: true`: the job started.
pub const JOB_STARTED: &str = "Started {{id}} in the background: {{command}}\nRead its output with job_output, stop it with job_stop. You will be told when it ends.";
/// bash: a command still running at its timeout goes on as a job (after the timeout line).
pub const JOB_MOVED: &str = "[the command is still running: it goes on in the background as {{id}}. Read its output with job_output, stop it with job_stop. You will be told when it ends.]";
/// bash: too many background commands.
pub const JOBS_FULL: &str = "[error: {{n}} background commands are already running in this session: stop one with job_stop or wait for one to end]";
/// A finished command's wake-up (after [`MARK_COMMAND`]).
pub const JOB_ENDED: &str = "{{id}} ({{command}}) {{how}} after {{elapsed}}.";
/// …then its unread output, or this.
pub const JOB_NO_NEW_OUTPUT: &str = "(no output since you last read it)";
/// job_list with no job.
pub const NO_JOBS: &str = "No background jobs in this session.";
/// job_output, job_stop: an unknown id.
pub const UNKNOWN_JOB: &str = "[error: no job {{id}} in this session: job_list shows them]";
/// job_stop.
pub const JOB_STOPPED: &str = "Stopped {{id}}.";
pub const JOB_ALREADY_ENDED: &str = "{{id}} had already ended: it {{how}}.";
/// task `background: true`: the subagent started.
pub const SUBAGENT_STARTED: &str = "Started {{id}}, a subagent working on: {{description}}\nIts report comes to you when it finishes. Read what it has done so far with job_output, tell it something with job_send, stop it with job_stop.";
/// A subagent's report follows its end line in its wake-up (after [`MARK_SUBAGENT`]).
pub const SUBAGENT_REPORT: &str = "Its report:";
/// A subagent's own background commands stop with it.
pub const SUBAGENT_JOBS_STOPPED: &str =
    "(its background commands were stopped when it ended: {{ids}})";
/// job_send.
pub const JOB_SENT: &str = "Sent to {{id}}: it reads the message at its next step.";
pub const JOB_SEND_NOT_SUBAGENT: &str =
    "[error: {{id}} is a command, not a subagent: job_send writes to subagents only]";
pub const JOB_SEND_ENDED: &str = "[error: {{id}} has ended: it {{how}}. Start another subagent with task if there is more to do]";
pub const JOB_SEND_EMPTY: &str = "[error: the message is empty: say what {{id}} should know]";

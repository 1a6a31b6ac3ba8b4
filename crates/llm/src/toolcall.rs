//! Tool calls written in a model's own syntax — by Cairn's own models, and by any model whose server
//! passes them on as text — read back into the runtime's calls: Qwen's and
//! Hermes' `<tool_call>{…}</tool_call>`, Mistral's `[TOOL_CALLS] […]`, Llama's bare
//! `{"name": …, "parameters": …}` reply, and a ```json block naming an offered tool (what small
//! models write when they forget the tags). A block that names no readable call is still a call:
//! the runtime answers it with the invalid-call text, so the model learns what went wrong.

use serde_json::Value;

/// A call as the model wrote it: `arguments` is JSON text (or, for a malformed call, what was
/// written, which the runtime refuses with its invalid-call text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WrittenCall {
    pub name: String,
    pub arguments: String,
}

/// A finished reply split into what the person reads and the calls the model made.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Reply {
    pub text: String,
    pub calls: Vec<WrittenCall>,
}

const OPEN: &str = "<tool_call>";
const CLOSE: &str = "</tool_call>";
const MISTRAL: &str = "[TOOL_CALLS]";

/// The markers after which everything is a call, for streaming: text before them is shown as it
/// comes, text from them on is held until the reply ends.
pub const CALL_MARKERS: &[&str] = &[OPEN, MISTRAL, "```json", "```tool", "{\"name\""];

/// Splits a whole reply. `offered` are the tools the model was given: only calls to those are
/// read out of a plain JSON reply or a fenced block, so JSON meant for the person stays text.
pub fn parse(output: &str, offered: &[String]) -> Reply {
    read_reply(output, offered, false)
}

/// [`parse`]; `keep_repeats` keeps a call written again right after itself (to notice a burst).
fn read_reply(output: &str, offered: &[String], keep_repeats: bool) -> Reply {
    if let Some(at) = output.find(OPEN) {
        let mut calls = Vec::new();
        let mut rest = &output[at..];
        while let Some(start) = rest.find(OPEN) {
            let body_start = start + OPEN.len();
            let (body, next) = match rest[body_start..].find(CLOSE) {
                Some(end) => (
                    &rest[body_start..body_start + end],
                    &rest[body_start + end + CLOSE.len()..],
                ),
                None => (&rest[body_start..], ""),
            };
            let call = read_call(body);
            if keep_repeats || calls.last() != Some(&call) {
                calls.push(call);
            }
            rest = next;
        }
        return Reply {
            text: output[..at].trim_end().to_owned(),
            calls,
        };
    }
    if let Some(at) = output.find(MISTRAL) {
        let body = output[at + MISTRAL.len()..].trim();
        let calls = match serde_json::from_str::<Value>(body) {
            Ok(Value::Array(items)) => items.iter().map(call_from_value).collect(),
            Ok(value) => vec![call_from_value(&value)],
            Err(_) => vec![read_call(body)],
        };
        return Reply {
            text: output[..at].trim_end().to_owned(),
            calls,
        };
    }
    if let Some(reply) = fenced_call(output, offered) {
        return reply;
    }
    if let Some(reply) = bare_calls(output, offered, keep_repeats) {
        return reply;
    }
    Reply {
        text: output.to_owned(),
        calls: Vec::new(),
    }
}

/// Whether the reply so far already repeats one call: a weak model that starts writing the same
/// call again and again never stops by itself, so generation ends there.
pub fn repeats_a_call(output: &str, offered: &[String]) -> bool {
    let calls = read_reply(output, offered, true).calls;
    calls.windows(2).any(|pair| pair[0] == pair[1])
}

/// A reply that starts with one or more JSON calls to offered tools (`{"name": …}` one after the
/// other, as small models write them without their tags). What follows the last whole call (a
/// stray brace, an imagined result) is not the person's text and is dropped; a repeated call is
/// made once.
fn bare_calls(output: &str, offered: &[String], keep_repeats: bool) -> Option<Reply> {
    let mut trimmed = output.trim_start();
    if !trimmed.starts_with('{') {
        return None;
    }
    // `{{"name": …}}`: a template's escaped braces copied into the call.
    if trimmed.starts_with("{{") {
        trimmed = &trimmed[1..];
    }
    let repaired = repair_escapes(trimmed);
    let mut calls: Vec<WrittenCall> = Vec::new();
    for value in serde_json::Deserializer::from_str(&repaired).into_iter::<Value>() {
        let Ok(value) = value else {
            break;
        };
        let call = call_from_value(&value);
        if !offered.contains(&call.name) {
            break;
        }
        if keep_repeats || calls.last() != Some(&call) {
            calls.push(call);
        }
    }
    (!calls.is_empty()).then(|| Reply {
        text: String::new(),
        calls,
    })
}

/// The longest end of `text` that could be the start of a call marker: held back while
/// streaming, so a marker split across tokens is never shown.
pub fn held_suffix_len(text: &str) -> usize {
    let mut longest = 0;
    for marker in CALL_MARKERS {
        for len in 1..marker.len() {
            if len > longest && text.ends_with(&marker[..len]) {
                longest = len;
            }
        }
    }
    longest
}

/// Where the first call marker starts in `text`, if any; `at_reply_start` when nothing but
/// whitespace came before `text`, where a `{` may open a call written over several lines.
pub fn first_marker(text: &str, at_reply_start: bool) -> Option<usize> {
    let json = at_reply_start
        .then(|| text.find(|c: char| !c.is_whitespace()))
        .flatten()
        .filter(|&at| text[at..].starts_with('{'));
    CALL_MARKERS
        .iter()
        .filter_map(|m| text.find(m))
        .chain(json)
        .min()
}

/// A ```json (or ```tool_call) block holding a call to an offered tool.
fn fenced_call(output: &str, offered: &[String]) -> Option<Reply> {
    let start = output.find("```")?;
    let after = &output[start + 3..];
    let newline = after.find('\n')?;
    let lang = after[..newline].trim();
    if !matches!(lang, "json" | "tool_call" | "tool" | "") {
        return None;
    }
    let body_end = after[newline..]
        .find("```")
        .map_or(after.len(), |e| newline + e);
    let body = after[newline + 1..body_end].trim();
    let text = output[..start].trim_end().to_owned();
    let Ok(value) = serde_json::from_str::<Value>(&repair_escapes(body)) else {
        // A broken call to an offered tool is still a call: the runtime says what is wrong.
        let name = name_in(body).filter(|n| offered.contains(n))?;
        return Some(Reply {
            text,
            calls: vec![WrittenCall {
                name,
                arguments: body.to_owned(),
            }],
        });
    };
    let items = match value {
        Value::Array(items) => items,
        value => vec![value],
    };
    let calls: Vec<WrittenCall> = items.iter().map(call_from_value).collect();
    if calls.is_empty() || !calls.iter().all(|c| offered.contains(&c.name)) {
        return None;
    }
    Some(Reply { text, calls })
}

/// `text` with the escapes JSON does not have dropped from its strings (`\'`, as in shell
/// quoting, which small models write inside JSON); everything else as it was.
fn repair_escapes(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains("\\'") {
        return text.into();
    }
    let mut out = String::with_capacity(text.len());
    let mut in_string = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' => in_string = !in_string,
            '\\' if in_string => match chars.peek() {
                Some(&next) if "\"\\/bfnrtu".contains(next) => {
                    out.push(c);
                    out.extend(chars.next());
                    continue;
                }
                _ => continue,
            },
            _ => {}
        }
        out.push(c);
    }
    out.into()
}

/// One call's JSON body; when it is not JSON, the name is still read if it can be, and the body
/// becomes the arguments, which the runtime refuses with the invalid-call text.
fn read_call(body: &str) -> WrittenCall {
    let body = body.trim();
    match serde_json::from_str::<Value>(body) {
        Ok(value) => call_from_value(&value),
        Err(_) => WrittenCall {
            name: name_in(body).unwrap_or_default(),
            arguments: body.to_owned(),
        },
    }
}

/// `{"name": …, "arguments" | "parameters": {…} | "…"}`, also nested under `"function"`.
fn call_from_value(value: &Value) -> WrittenCall {
    let value = value.get("function").unwrap_or(value);
    let name = value["name"].as_str().unwrap_or_default().to_owned();
    let arguments = match value.get("arguments").or_else(|| value.get("parameters")) {
        Some(Value::String(text)) => text.clone(),
        Some(other) => other.to_string(),
        None => "{}".to_owned(),
    };
    WrittenCall { name, arguments }
}

/// The value of `"name": "…"` in text that does not parse.
fn name_in(body: &str) -> Option<String> {
    let at = body.find("\"name\"")?;
    let rest = body[at + 6..].trim_start().strip_prefix(':')?.trim_start();
    let rest = rest.strip_prefix('"')?;
    Some(rest[..rest.find('"')?].to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offered() -> Vec<String> {
        vec!["write_file".into(), "bash".into()]
    }

    fn call(name: &str, arguments: &str) -> WrittenCall {
        WrittenCall {
            name: name.into(),
            arguments: arguments.into(),
        }
    }

    #[test]
    fn qwen_tags_with_text_before_them() {
        let reply = parse(
            "I will write it.\n<tool_call>\n{\"name\": \"write_file\", \"arguments\": {\"path\": \"a.txt\", \"content\": \"hi\"}}\n</tool_call>",
            &offered(),
        );
        assert_eq!(reply.text, "I will write it.");
        assert_eq!(
            reply.calls,
            vec![call("write_file", r#"{"path":"a.txt","content":"hi"}"#)]
        );
    }

    #[test]
    fn two_calls_and_an_unclosed_last_one() {
        let reply = parse(
            "<tool_call>{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}</tool_call>\n<tool_call>{\"name\": \"bash\", \"arguments\": {\"command\": \"pwd\"}}",
            &offered(),
        );
        assert_eq!(reply.calls.len(), 2);
        assert_eq!(reply.calls[1], call("bash", r#"{"command":"pwd"}"#));
    }

    #[test]
    fn a_malformed_call_keeps_its_name_and_its_text() {
        let reply = parse(
            "<tool_call>{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"</tool_call>",
            &offered(),
        );
        assert_eq!(
            reply.calls,
            vec![call(
                "bash",
                r#"{"name": "bash", "arguments": {"command": "ls""#
            )]
        );
    }

    #[test]
    fn mistral_and_bare_json_and_fenced_blocks() {
        let mistral = parse(
            "[TOOL_CALLS] [{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}]",
            &offered(),
        );
        assert_eq!(mistral.calls, vec![call("bash", r#"{"command":"ls"}"#)]);
        let bare = parse(
            "{\"name\": \"bash\", \"parameters\": {\"command\": \"ls\"}}",
            &offered(),
        );
        assert_eq!(bare.calls, vec![call("bash", r#"{"command":"ls"}"#)]);
        let fenced = parse(
            "Let me look.\n```json\n{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}\n```",
            &offered(),
        );
        assert_eq!(fenced.text, "Let me look.");
        assert_eq!(fenced.calls.len(), 1);
    }

    #[test]
    fn json_for_the_person_stays_text() {
        let text = "Here is the config:\n```json\n{\"name\": \"cairn\", \"version\": 1}\n```";
        assert_eq!(parse(text, &offered()).text, text);
        let bare = "{\"name\": \"Ada\", \"age\": 36}";
        assert_eq!(parse(bare, &offered()).calls, vec![]);
    }

    #[test]
    fn calls_written_one_after_another_without_tags_are_read_and_repeats_made_once() {
        let repeated = "{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}\n".repeat(3);
        let reply = parse(&format!("{repeated}{{\"name"), &offered());
        assert_eq!(reply.calls, vec![call("bash", r#"{"command":"ls"}"#)]);
        assert!(repeats_a_call(&repeated, &offered()));
        // A stray closing brace and an imagined result after the call are dropped.
        let stray = parse(
            "{\"name\": \"write_file\", \"arguments\": {\"path\": \"a\", \"content\": \"b\"}}}\nCreated, 1 lines.",
            &offered(),
        );
        assert_eq!(stray.text, "");
        assert_eq!(
            stray.calls,
            vec![call("write_file", r#"{"path":"a","content":"b"}"#)]
        );
        let doubled = parse(
            "{{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}}}",
            &offered(),
        );
        assert_eq!(doubled.calls, vec![call("bash", r#"{"command":"ls"}"#)]);
        assert!(!repeats_a_call(
            "<tool_call>{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}</tool_call>",
            &offered()
        ));
    }

    #[test]
    fn shell_quoting_inside_json_is_read_and_a_broken_fenced_call_is_still_a_call() {
        let quoted = parse(
            "```json\n{\"name\": \"bash\", \"arguments\": {\"command\": \"echo 'it\\'s' \\\\'x\"}}\n```",
            &offered(),
        );
        assert_eq!(
            quoted.calls,
            vec![call("bash", r#"{"command":"echo 'it's' \\'x"}"#)]
        );
        let broken = parse(
            "Saving it.\n```json\n{\"name\": \"write_file\", \"arguments\": {\"path\": \"a\"\n```",
            &offered(),
        );
        assert_eq!(broken.text, "Saving it.");
        assert_eq!(
            broken.calls,
            vec![call(
                "write_file",
                r#"{"name": "write_file", "arguments": {"path": "a""#
            )]
        );
        // A broken block naming no offered tool is the person's text.
        let other = "```json\n{\"name\": \"cairn\", \"v\": \n```";
        assert_eq!(parse(other, &offered()).text, other);
    }

    #[test]
    fn a_marker_split_across_tokens_is_held_back() {
        assert_eq!(held_suffix_len("Sure <tool_"), 6);
        assert_eq!(held_suffix_len("Sure."), 0);
        assert_eq!(held_suffix_len("ok `"), 1);
        assert_eq!(first_marker("a <tool_call>", false), Some(2));
        assert_eq!(first_marker("\n{\n\"name\"", true), Some(1));
        assert_eq!(first_marker("fn main() {", true), None);
        assert_eq!(first_marker("{", false), None);
    }
}

//! The grammar (llama.cpp's GBNF) that holds a tool call to the tools offered. A model whose
//! template writes calls as `<tool_call>{"name": …, "arguments": …}</tool_call>` (Qwen, Hermes)
//! decodes freely until it opens a call; from the `<tool_call>` on (or a fenced JSON object that
//! begins with `"name"`, as a small model writes a call when it forgets the tag), only a JSON
//! object that names an offered tool, with arguments of that tool's parameters and types, then
//! the closing tag (and more calls, or the end) can be written. A small model then never calls a tool that does not
//! exist, misspells a parameter or writes broken JSON.
//!
//! The JSON part is written here rather than by llama.cpp's schema converter: that one sorts a
//! schema's properties by name, which would make the model write `"arguments"` before `"name"`
//! and a file's content before its path. Here the call's name comes first, and an object's
//! required properties come in the order its schema gives them, then any of the others, each of
//! its own type.

use cairn_llm::ToolSpec;
use serde_json::Value;

/// The text that opens a call in the templates this grammar is for.
pub const TRIGGER: &str = "<tool_call>";
/// What generation is free until (regular expressions; the grammar takes over from the first
/// group): the call tag, or a fenced JSON object that begins with a `"name"`, which is how a small
/// model writes a call when it forgets the tag.
pub const TRIGGER_PATTERNS: &[&str] = &["<tool_call>", "(```json)\\s*\\{\\s*\"name\""];
/// The grammar's start rule.
pub const ROOT: &str = "tool-calls";
/// How deep a schema is followed; below, any JSON value is allowed.
const MAX_DEPTH: usize = 6;

/// The JSON rules every grammar shares.
const JSON_RULES: &str = r#"ws ::= [ \t\n]{0,8}
string ::= "\"" char* "\""
char ::= [^"\\\x7F\x00-\x1F] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4})
integer ::= "-"? ("0" | [1-9] [0-9]{0,17})
number ::= integer ("." [0-9]{1,17})? ([eE] [-+]? [0-9]{1,4})?
boolean ::= "true" | "false"
null ::= "null"
value ::= object | array | string | number | boolean | null
object ::= "{" ws (string ws ":" ws value (ws "," ws string ws ":" ws value)*)? ws "}"
array ::= "[" ws (value (ws "," ws value)*)? ws "]"
"#;

/// The GBNF for one or more calls of `tools`, each between the call tags (start rule [`ROOT`]);
/// `None` when no tool is offered.
pub fn for_tools(tools: &[ToolSpec]) -> Option<String> {
    if tools.is_empty() {
        return None;
    }
    let mut rules = Rules::default();
    let calls: Vec<String> = tools
        .iter()
        .enumerate()
        .map(|(i, tool)| {
            let name = format!("t{i}-{}", rule_name(&tool.name));
            let arguments = rules.object(&tool.parameters, &format!("{name}-args"), 0);
            rules.add(
                &format!("{name}-call"),
                format!(
                    "{} ws \",\" ws \"\\\"arguments\\\"\" ws \":\" ws {arguments}",
                    literal(&Value::from(tool.name.as_str()).to_string())
                ),
            )
        })
        .collect();
    Some(format!(
        "{ROOT} ::= tool-call (ws tool-call)* ws | \"```json\" ws call ws \"```\"\n\
         tool-call ::= {open} ws call ws \"</tool_call>\"\n\
         call ::= \"{{\" ws \"\\\"name\\\"\" ws \":\" ws ({calls}) ws \"}}\"\n\
         {rules}{JSON_RULES}",
        open = literal(TRIGGER),
        calls = calls.join(" | "),
        rules = rules.text,
    ))
}

/// The rules written for the tools' schemas so far.
#[derive(Default)]
struct Rules {
    text: String,
}

impl Rules {
    /// Adds `name ::= body`; returns `name`.
    fn add(&mut self, name: &str, body: String) -> String {
        self.text.push_str(&format!("{name} ::= {body}\n"));
        name.to_owned()
    }

    /// The expression for a value of `schema`.
    fn value(&mut self, schema: &Value, name: &str, depth: usize) -> String {
        if depth > MAX_DEPTH {
            return "value".into();
        }
        if let Some(constant) = schema.get("const") {
            return literal(&constant.to_string());
        }
        if let Some(choices) = schema.get("enum").and_then(Value::as_array) {
            if !choices.is_empty() {
                let alternatives: Vec<String> =
                    choices.iter().map(|c| literal(&c.to_string())).collect();
                return format!("({})", alternatives.join(" | "));
            }
        }
        match schema.get("type").and_then(Value::as_str) {
            Some("string") => "string".into(),
            Some("integer") => "integer".into(),
            Some("number") => "number".into(),
            Some("boolean") => "boolean".into(),
            Some("null") => "null".into(),
            Some("array") => match schema.get("items") {
                Some(items) if items.is_object() => {
                    let rule = format!("{name}-item");
                    let mut item = self.value(items, &rule, depth + 1);
                    if item.contains(' ') {
                        item = self.add(&rule, item);
                    }
                    format!("\"[\" ws ({item} (ws \",\" ws {item})*)? ws \"]\"")
                }
                _ => "array".into(),
            },
            Some("object") => self.object(schema, name, depth),
            // Several types, anyOf, a reference: any JSON value.
            _ => "value".into(),
        }
    }

    /// The rule for an object of `schema`'s properties: the required ones first, in the order
    /// the schema gives them, then any of the others; any object when it names none. Returns the
    /// rule's name.
    fn object(&mut self, schema: &Value, name: &str, depth: usize) -> String {
        let properties = match schema.get("properties").and_then(Value::as_object) {
            Some(properties) if !properties.is_empty() && depth <= MAX_DEPTH => properties,
            _ => return "object".into(),
        };
        let required: Vec<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut first = Vec::new();
        let mut others = Vec::new();
        for (i, (key, property)) in properties.iter().enumerate() {
            let value = self.value(property, &format!("{name}-{i}"), depth + 1);
            let pair = format!(
                "{} ws \":\" ws {value}",
                literal(&Value::from(key.as_str()).to_string())
            );
            if required.contains(&key.as_str()) {
                first.push(pair);
            } else {
                others.push(pair);
            }
        }
        let optional =
            (!others.is_empty()).then(|| self.add(&format!("{name}-kv"), others.join(" | ")));
        let body = match (first.is_empty(), optional) {
            (true, Some(kv)) => format!("({kv} (ws \",\" ws {kv})*)?"),
            (true, None) => String::new(),
            (false, optional) => {
                let mut body = first.join(" ws \",\" ws ");
                if let Some(kv) = optional {
                    body.push_str(&format!(" (ws \",\" ws {kv})*"));
                }
                body
            }
        };
        self.add(name, format!("\"{{\" ws {body} ws \"}}\""))
    }
}

/// `text` as a GBNF string literal.
fn literal(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A tool's name as a part of a rule name (letters, digits and dashes).
fn rule_name(name: &str) -> String {
    name.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(name: &str, parameters: Value) -> ToolSpec {
        ToolSpec {
            name: name.into(),
            description: String::new(),
            parameters,
        }
    }

    #[test]
    fn the_call_names_an_offered_tool_first_then_its_typed_arguments() -> Result<(), String> {
        let grammar = for_tools(&[
            tool(
                "write_file",
                json!({"type": "object", "properties": {
                    "path": {"type": "string"},
                    "content": {"type": "string"},
                    "mode": {"enum": ["create", "append"]},
                    "lines": {"type": "array", "items": {"type": "integer"}}
                }, "required": ["path", "content"]}),
            ),
            tool("mcp.list jobs", Value::Null),
        ])
        .ok_or("no grammar")?;
        let line = |start: &str| {
            grammar
                .lines()
                .find(|l| l.starts_with(start))
                .map(str::to_owned)
                .unwrap_or_default()
        };
        assert_eq!(
            line("tool-calls ::="),
            r#"tool-calls ::= tool-call (ws tool-call)* ws | "```json" ws call ws "```""#
        );
        assert_eq!(
            line("tool-call ::="),
            r#"tool-call ::= "<tool_call>" ws call ws "</tool_call>""#
        );
        assert_eq!(
            line("call ::="),
            r#"call ::= "{" ws "\"name\"" ws ":" ws (t0-write-file-call | t1-mcp-list-jobs-call) ws "}""#
        );
        assert_eq!(
            line("t0-write-file-call ::="),
            r#"t0-write-file-call ::= "\"write_file\"" ws "," ws "\"arguments\"" ws ":" ws t0-write-file-args"#
        );
        // The required properties first, in the schema's order, then any of the others, each
        // with its type.
        assert_eq!(
            line("t0-write-file-args ::="),
            r#"t0-write-file-args ::= "{" ws "\"path\"" ws ":" ws string ws "," ws "\"content\"" ws ":" ws string (ws "," ws t0-write-file-args-kv)* ws "}""#
        );
        assert_eq!(
            line("t0-write-file-args-kv ::="),
            r#"t0-write-file-args-kv ::= "\"mode\"" ws ":" ws ("\"create\"" | "\"append\"") | "\"lines\"" ws ":" ws "[" ws (integer (ws "," ws integer)*)? ws "]""#
        );
        // A tool without parameters takes any object.
        assert_eq!(
            line("t1-mcp-list-jobs-call ::="),
            r#"t1-mcp-list-jobs-call ::= "\"mcp.list jobs\"" ws "," ws "\"arguments\"" ws ":" ws object"#
        );
        assert_eq!(for_tools(&[]), None);
        Ok(())
    }

    #[test]
    fn literals_escape_quotes_and_line_breaks() {
        assert_eq!(literal("a\"b\\c\nd"), r#""a\"b\\c\nd""#);
        assert_eq!(rule_name("mcp__fs.read"), "mcp--fs-read");
    }
}

//! Config error messages that never quote a value: a TOML syntax or type error becomes
//! `file:line: \`key.path\`: what was wrong`, built from the error's span, the key found at that
//! span and serde's message with every value it quotes taken out. The `toml` crate's own `Display`
//! (which prints the offending source line) and serde's `invalid type: string "…"` (which prints
//! the value) never reach a message, as the value may be an API key or a bearer token.

use std::ops::Range;
use std::path::{Path, PathBuf};

use toml::de::{DeTable, DeValue};
use toml::Spanned;

use crate::ConfigError;

/// Words that make a key (or a command-line flag) hold a secret.
const SECRET_WORDS: [&str; 11] = [
    "key",
    "token",
    "secret",
    "password",
    "passwd",
    "auth",
    "credential",
    "cookie",
    "bearer",
    "headers",
    "env",
];

/// Whether a key name (`api_key`, `X-Api-Key`, `GITHUB_TOKEN`, `--password`) holds a secret, so its
/// value is never shown.
pub(crate) fn is_secret_key(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    SECRET_WORDS.iter().any(|word| key.contains(word))
}

/// Whether any segment of a dotted key path holds a secret (`mcp.servers.a.args` counts: an
/// argument is often a token).
fn is_secret_path(path: &str) -> bool {
    is_secret_key(path) || path.split(['.', '[']).any(|segment| segment == "args")
}

/// The 1-based line of byte `offset` in `text`.
pub(crate) fn line_at(text: &str, offset: usize) -> usize {
    let end = offset.min(text.len());
    text.as_bytes()[..end]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

/// The error for a TOML syntax or type error: its `message` (from `toml` or serde) and `span`, told
/// as the file, the line, the key at that place and the message without any value it quoted.
pub(crate) fn toml_error(
    text: &str,
    file: &Path,
    message: &str,
    span: Option<Range<usize>>,
) -> ConfigError {
    let offset = span.map_or(0, |span| span.start);
    let line = line_at(text, offset);
    let path = key_path_at(text, offset, line);
    let message = match &path {
        Some(path) => format!(
            "`{path}`: {}",
            without_values(message.trim(), is_secret_path(path))
        ),
        None => without_values(message.trim(), true),
    };
    ConfigError::Invalid {
        file: PathBuf::from(file),
        line,
        message,
    }
}

/// The dotted path of the key written at byte `offset` (or, failing that, the last key written on
/// `line`), found in the document as far as it parses.
fn key_path_at(text: &str, offset: usize, line: usize) -> Option<String> {
    let (doc, _) = DeTable::parse_recoverable(text);
    let mut found = Found::default();
    walk(
        doc.get_ref(),
        &mut Vec::new(),
        text,
        offset,
        line,
        &mut found,
    );
    found.at_offset.or(found.on_line).map(|path| path.join("."))
}

/// The deepest key paths matched so far.
#[derive(Default)]
struct Found {
    /// A key whose name or value spans the offset.
    at_offset: Option<Vec<String>>,
    /// A key written on the error's line.
    on_line: Option<Vec<String>>,
}

fn deeper(slot: &mut Option<Vec<String>>, path: &[String]) {
    if slot.as_ref().is_none_or(|old| path.len() >= old.len()) {
        *slot = Some(path.to_vec());
    }
}

fn walk(
    table: &DeTable<'_>,
    path: &mut Vec<String>,
    text: &str,
    offset: usize,
    line: usize,
    found: &mut Found,
) {
    for (key, value) in table.iter() {
        path.push(key.get_ref().to_string());
        visit(key.span(), value, path, text, offset, line, found);
        path.pop();
    }
}

fn visit(
    key_span: Range<usize>,
    value: &Spanned<DeValue<'_>>,
    path: &mut Vec<String>,
    text: &str,
    offset: usize,
    line: usize,
    found: &mut Found,
) {
    let contains =
        |span: Range<usize>| span.start <= offset && offset < span.end.max(span.start + 1);
    if contains(key_span.clone()) || contains(value.span()) {
        deeper(&mut found.at_offset, path);
    }
    if key_span.end > key_span.start && line_at(text, key_span.start) == line {
        deeper(&mut found.on_line, path);
    }
    match value.get_ref() {
        DeValue::Table(table) => walk(table, path, text, offset, line, found),
        DeValue::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                let Some(last) = path.pop() else { return };
                path.push(format!("{last}[{index}]"));
                visit(0..0, item, path, text, offset, line, found);
                path.pop();
                path.push(last);
            }
        }
        _ => {}
    }
}

/// What serde and `toml` said, with each value taken out: `string "…"` becomes `a string`,
/// ``integer `7` `` becomes `an integer`, and so on; a variant name (``unknown variant `gemini` ``)
/// is kept unless `secret` (the key holds a secret), and any other double-quoted text is dropped.
pub(crate) fn without_values(message: &str, secret: bool) -> String {
    const BACKTICKED: [(&str, &str); 5] = [
        ("boolean `", "a boolean"),
        ("integer `", "an integer"),
        ("floating point `", "a number"),
        ("character `", "a character"),
        ("unknown variant `", "an unknown variant"),
    ];
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    'scan: while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix("string \"") {
            out.push_str("a string");
            rest = after_quoted(after);
            continue;
        }
        if rest.starts_with('"') {
            out.push('…');
            rest = after_quoted(&rest[1..]);
            continue;
        }
        for (prefix, replacement) in BACKTICKED {
            if let Some(after) = rest.strip_prefix(prefix) {
                let Some(end) = after.char_indices().skip(1).find(|(_, c)| *c == '`') else {
                    out.push_str(replacement);
                    break 'scan;
                };
                let keep_variant = prefix.starts_with("unknown variant") && !secret;
                if keep_variant {
                    out.push_str(&rest[..prefix.len() + end.0 + 1]);
                } else {
                    out.push_str(replacement);
                }
                rest = &after[end.0 + 1..];
                continue 'scan;
            }
        }
        let mut chars = rest.chars();
        if let Some(c) = chars.next() {
            out.push(c);
        }
        rest = chars.as_str();
    }
    out
}

/// The text after a `Debug`-quoted string whose opening quote is already consumed (`\"` and `\\`
/// inside it are skipped); all of it when the quote never closes.
fn after_quoted(text: &str) -> &str {
    let mut escaped = false;
    for (i, c) in text.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '"' => return &text[i + 1..],
            _ => {}
        }
    }
    ""
}

/// Said after "must start with http:// or https://": the scheme the value has instead, if it has
/// a plain one, and nothing else of it (an address may carry a token).
pub(crate) fn scheme_hint(value: &str) -> String {
    let scheme = value
        .trim()
        .split_once("://")
        .map(|(scheme, _)| scheme)
        .filter(|s| {
            !s.is_empty()
                && s.len() <= 16
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        });
    match scheme {
        Some(scheme) => format!(" (it starts with {scheme}://)"),
        None => " (it has no scheme)".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error_text(text: &str) -> String {
        let env = |name: &str| (name == "GH").then(|| "ghp_from_env_123".to_owned());
        match crate::Config::parse(text, Path::new("/home/ada/.cairn/config.toml"), env) {
            Ok(config) => format!("unexpectedly valid: {config:?}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn a_string_where_the_keys_list_belongs_is_not_quoted() {
        let err = error_text("[api]\nport = 1\nkeys = \"sk-live-abcdef1234567890\"\n");
        assert!(!err.contains("sk-live"), "{err}");
        assert!(err.starts_with("/home/ada/.cairn/config.toml:3: "), "{err}");
        assert!(err.contains("`api.keys`"), "{err}");
        assert!(
            err.contains("invalid type: a string, expected a sequence"),
            "{err}"
        );
    }

    #[test]
    fn a_string_where_the_headers_table_belongs_is_not_quoted() {
        let err = error_text(
            "[mcp.servers.github]\ntype = \"streamable_http\"\nurl = \"https://x.example/mcp\"\nheaders = \"Bearer ghp_secret_1234\"\n",
        );
        assert!(!err.contains("ghp_secret"), "{err}");
        assert!(!err.contains("Bearer"), "{err}");
        assert!(err.contains("config.toml:4: "), "{err}");
        assert!(err.contains("`mcp.servers.github.headers`"), "{err}");
        assert!(err.contains("expected a map"), "{err}");
    }

    #[test]
    fn a_syntax_error_on_a_secret_line_names_the_key_not_the_line_text() {
        let err = error_text("[providers.x]\napi_key = \"sk-secret-998877\nmodels = []\n");
        assert!(!err.contains("sk-secret"), "{err}");
        assert!(err.contains("config.toml:2: "), "{err}");
        assert!(err.contains("`providers.x.api_key`"), "{err}");
    }

    #[test]
    fn other_wrong_types_and_bad_values_are_not_quoted_either() {
        let cases = [
            ("[providers.x]\napi_key = 12345678901\n", "12345678901"),
            (
                "[providers.x]\napi_key = \"${sk-inline-4455}\"\n",
                "sk-inline-4455",
            ),
            (
                "[providers.x]\nbase_url = \"ftp://ada:pw-5566@host/?key=tok-7788\"\n",
                "5566",
            ),
            ("[providers.x]\nbase_url = \"${GH}\"\n", "ghp_from_env"),
            ("[models]\nindex = \"sk-pasted-here-3344\"\n", "sk-pasted"),
            (
                "[mcp.servers.a]\ntype = \"sse\"\nurl = \"${GH}/mcp\"\n",
                "ghp_from_env",
            ),
            (
                "[mcp.servers.a]\ncommand = \"x\"\nargs = \"--token t-9911\"\n",
                "t-9911",
            ),
            (
                "[mcp.servers.a]\ncommand = \"x\"\nenv = [\"T=t-9922\"]\n",
                "t-9922",
            ),
            ("[api]\nkeys = [\"sk-short\"]\n", "sk-short"),
        ];
        for (text, secret) in cases {
            let err = error_text(text);
            assert!(!err.contains(secret), "{text:?}: {err}");
            assert!(
                err.contains("config.toml:2: ") || err.contains("config.toml:3: "),
                "{err}"
            );
            assert!(err.contains('`'), "names no key: {err}");
        }
    }

    #[test]
    fn serde_values_are_taken_out_of_messages() {
        let cases = [
            (
                r#"invalid type: string "sk-live-1", expected a sequence"#,
                "invalid type: a string, expected a sequence",
            ),
            (
                r#"invalid type: string "a \"q\" b", expected a map"#,
                "invalid type: a string, expected a map",
            ),
            (
                "invalid value: integer `70000`, expected u16",
                "invalid value: an integer, expected u16",
            ),
            (
                "invalid type: floating point `1.5`, expected a string",
                "invalid type: a number, expected a string",
            ),
            (
                "invalid type: boolean `true`, expected a string",
                "invalid type: a boolean, expected a string",
            ),
            (r#"bad "quoted" thing"#, "bad … thing"),
        ];
        for (message, expected) in cases {
            assert_eq!(without_values(message, false), expected);
        }
        assert_eq!(
            without_values("unknown variant `gemini`, expected `openai`", false),
            "unknown variant `gemini`, expected `openai`"
        );
        assert_eq!(
            without_values("unknown variant `sk-1`, expected `openai`", true),
            "an unknown variant, expected `openai`"
        );
        assert_eq!(
            without_values("unknown field `modle`, expected `model`", true),
            "unknown field `modle`, expected `model`"
        );
    }

    #[test]
    fn a_scheme_is_all_that_is_said_of_a_bad_address() {
        assert_eq!(scheme_hint("ftp://u:p@host"), " (it starts with ftp://)");
        assert_eq!(scheme_hint("sk-live-secret"), " (it has no scheme)");
    }

    #[test]
    fn the_key_path_is_found_from_the_span() {
        let text = "[api]\nport = 1\nkeys = \"x\"\n\n[mcp.servers.gh]\nheaders = \"y\"\n";
        let at = |needle: &str| text.find(needle).map_or(0, |i| i);
        assert_eq!(
            key_path_at(text, at("\"x\""), 3).as_deref(),
            Some("api.keys")
        );
        assert_eq!(
            key_path_at(text, at("\"y\""), 6).as_deref(),
            Some("mcp.servers.gh.headers")
        );
    }
}

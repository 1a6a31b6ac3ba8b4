//! The config text as the diagnostics report shows it: secrets replaced by `<redacted>`, the rest
//! as written. A value is a secret by its key's name (`api_key`, `X-Api-Key`, `GITHUB_TOKEN`), by
//! where it is (everything under a `headers` or `env` table, which hold tokens whatever their keys
//! are called), or by its shape: the value after `--token` or `--api-key=` in command arguments,
//! after `Bearer`, a word that looks like a key (`sk-…`, `ghp_…`, a long run of letters and digits
//! in arguments), and the user-info and query of any URL. A value that only names environment
//! variables (`${OPENAI_API_KEY}`) is kept: it holds no secret and helps with diagnosing.

use toml_edit::{DocumentMut, Item, TableLike, Value};

use crate::errors::is_secret_key;

/// What replaces a secret.
const REDACTED: &str = "<redacted>";

/// Tables whose every value is a secret, whatever its key is called.
const SECRET_TABLES: [&str; 3] = ["headers", "env", "environment"];

/// Keys whose values are a command line, read word by word.
const COMMAND_KEYS: [&str; 2] = ["args", "command"];

/// Prefixes of well-known API key and token formats.
const KEY_PREFIXES: [&str; 21] = [
    "sk-",
    "sk_",
    "pk_live_",
    "rk_live_",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "glpat-",
    "xoxb-",
    "xoxp-",
    "xoxa-",
    "xapp-",
    "hf_",
    "npm_",
    "pypi-",
    "AKIA",
    "AIza",
    "eyJ",
];

/// Config text with every secret value replaced by `<redacted>` (see the module documentation).
/// Text that does not parse is redacted line by line: a line whose key holds a secret, or any line
/// inside a `headers` or `env` table, loses its whole value.
pub fn redact_config_text(text: &str) -> String {
    match text.parse::<DocumentMut>() {
        Ok(mut doc) => {
            redact_table(doc.as_table_mut(), Place::Plain);
            doc.to_string()
        }
        Err(_) => redact_lines(text),
    }
}

/// Where a value sits, which decides how it is redacted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    /// An ordinary value: only URLs' user-info and queries, `Bearer …`, `--token …` and words with
    /// a known key prefix go.
    Plain,
    /// A command line (`args`, `command`): as plain, and any word that looks like a key.
    Command,
    /// The value of a key named like a secret (`api_key`, `keys`): a string goes whole, a number
    /// stays (a `completion_tokens` limit is no secret).
    SecretName,
    /// Under a `headers` or `env` table: the whole value goes, whatever it is.
    Secret,
}

impl Place {
    /// Where the value of `key` sits, inside a value (or table) at `self`.
    fn of(self, key: &str) -> Self {
        let key = key.to_ascii_lowercase();
        if self == Self::Secret || SECRET_TABLES.contains(&key.as_str()) {
            Self::Secret
        } else if is_secret_key(&key) {
            Self::SecretName
        } else if COMMAND_KEYS.contains(&key.as_str()) {
            Self::Command
        } else {
            Self::Plain
        }
    }

    /// Where the entries of the table `key` sit: a table is all secret only under `headers` or
    /// `env` (a provider named `mykeys` keeps its `base_url`).
    fn of_table(self, key: &str) -> Self {
        let key = key.to_ascii_lowercase();
        if self == Self::Secret || SECRET_TABLES.contains(&key.as_str()) {
            Self::Secret
        } else {
            Self::Plain
        }
    }
}

fn redact_table(table: &mut dyn TableLike, place: Place) {
    for (key, item) in table.iter_mut() {
        let key = key.get();
        match item {
            Item::Table(t) => redact_table(t, place.of_table(key)),
            Item::ArrayOfTables(tables) => tables
                .iter_mut()
                .for_each(|t| redact_table(t, place.of_table(key))),
            Item::Value(Value::InlineTable(t)) => redact_table(t, place.of_table(key)),
            Item::Value(value) => redact_value(value, place.of(key)),
            Item::None => {}
        }
    }
}

fn redact_value(value: &mut Value, place: Place) {
    match value {
        Value::InlineTable(t) => redact_table(t, place),
        Value::Array(items) => {
            let mut words = Words::new(place);
            for item in items.iter_mut() {
                match item {
                    Value::String(_) => {
                        let text = item.as_str().unwrap_or_default().to_owned();
                        let redacted = words.element(&text);
                        if redacted != text {
                            set(item, &redacted);
                        }
                    }
                    other => redact_value(other, place),
                }
            }
        }
        Value::String(s) => {
            let text = s.value().clone();
            let redacted = Words::new(place).element(&text);
            if redacted != text {
                set(value, &redacted);
            }
        }
        // A number or a date is a secret only under `headers` or `env`.
        _ if place == Place::Secret => set(value, REDACTED),
        _ => {}
    }
}

/// Replaces a value, keeping the spaces and comments around it.
fn set(value: &mut Value, text: &str) {
    let decor = value.decor().clone();
    *value = Value::from(text);
    *value.decor_mut() = decor;
}

/// Whether a value only names environment variables (`${A}` or `${A}${B}`).
fn only_env_references(value: &str) -> bool {
    let mut rest = value.trim();
    if rest.is_empty() {
        return false;
    }
    while let Some(after) = rest.strip_prefix("${") {
        match after.find('}') {
            Some(end) => rest = &after[end + 1..],
            None => return false,
        }
    }
    rest.is_empty()
}

/// Redacts strings word by word; a flag such as `--token` at the end of one element of an
/// argument list makes the next element its value.
struct Words {
    place: Place,
    /// The next element is a flag's value (the flag ended the previous element).
    value_element_next: bool,
}

impl Words {
    fn new(place: Place) -> Self {
        Self {
            place,
            value_element_next: false,
        }
    }

    /// One string (a whole value, or one element of a list), redacted.
    fn element(&mut self, text: &str) -> String {
        if only_env_references(text) {
            self.value_element_next = false;
            return text.to_owned();
        }
        if matches!(self.place, Place::Secret | Place::SecretName) {
            return REDACTED.to_owned();
        }
        if std::mem::take(&mut self.value_element_next) && !text.starts_with('-') {
            return REDACTED.to_owned();
        }
        let mut out = String::with_capacity(text.len());
        let mut pending = false;
        let mut rest = text;
        while !rest.is_empty() {
            let space = rest.len() - rest.trim_start().len();
            out.push_str(&rest[..space]);
            rest = &rest[space..];
            let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
            let (word, after) = rest.split_at(end);
            rest = after;
            out.push_str(&self.word(word, &mut pending));
        }
        self.value_element_next = pending;
        out
    }

    /// One word; `pending` says the word before was a flag or header name whose value this is.
    fn word(&self, word: &str, pending: &mut bool) -> String {
        let bare = word.trim_matches(|c: char| matches!(c, '"' | '\'' | ',' | ';'));
        if std::mem::take(pending) && !bare.starts_with('-') {
            // `Authorization: Bearer <token>`: the scheme stays, the token after it goes.
            if is_auth_scheme(bare) {
                *pending = true;
                return word.to_owned();
            }
            return if only_env_references(bare) {
                word.to_owned()
            } else {
                REDACTED.to_owned()
            };
        }
        if is_auth_scheme(bare) {
            *pending = true;
            return word.to_owned();
        }
        if let Some(name) = bare.strip_suffix(':').filter(|n| is_header_name(n)) {
            *pending = is_secret_key(name) || name.eq_ignore_ascii_case("authorization");
            return word.to_owned();
        }
        if let Some(flag) = bare.strip_prefix('-') {
            let flag = flag.trim_start_matches('-');
            match flag.split_once('=') {
                Some((name, value)) if is_secret_key(name) && !only_env_references(value) => {
                    return format!("{}{name}={REDACTED}", &bare[..bare.len() - flag.len()]);
                }
                Some(_) => return redact_urls(word),
                None => {
                    *pending = is_secret_key(flag) || flag == "H" || flag == "header";
                    return word.to_owned();
                }
            }
        }
        if let Some((name, value)) = bare.split_once('=') {
            if is_header_name(name) && is_secret_key(name) && !only_env_references(value) {
                return format!("{name}={REDACTED}");
            }
        }
        if looks_like_key(bare, self.place == Place::Command) {
            return REDACTED.to_owned();
        }
        redact_urls(word)
    }
}

/// `Bearer`, `Basic` or `token` before a credential.
fn is_auth_scheme(word: &str) -> bool {
    ["bearer", "basic", "token"]
        .iter()
        .any(|s| word.eq_ignore_ascii_case(s))
}

/// A header or variable name: letters, digits, `-` and `_`.
fn is_header_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// Whether a word looks like a key: a well-known prefix with enough after it, or (in a command
/// line, when `by_shape`) a run of 20 or more letters and digits with both in it.
fn looks_like_key(word: &str, by_shape: bool) -> bool {
    let prefixed = KEY_PREFIXES.iter().any(|prefix| {
        word.strip_prefix(prefix).is_some_and(|rest| {
            rest.len() >= 8
                && rest
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        })
    });
    prefixed
        || by_shape
            && word.split(|c: char| !c.is_ascii_alphanumeric()).any(|run| {
                run.len() >= 20
                    && run.chars().any(|c| c.is_ascii_digit())
                    && run.chars().any(|c| c.is_ascii_alphabetic())
            })
}

/// `text` with the user-info (`user:pass@`) and the query and fragment of each URL in it
/// replaced.
pub(crate) fn redact_urls(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(found) = rest.find("://") {
        let (before, after) = rest.split_at(found + 3);
        out.push_str(before);
        let end = after
            .find(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '<' | '>' | '`'))
            .unwrap_or(after.len());
        let (url, tail) = after.split_at(end);
        let authority_end = url.find(['/', '?', '#']).unwrap_or(url.len());
        let (authority, path) = url.split_at(authority_end);
        match authority.rfind('@') {
            Some(at) => {
                out.push_str(REDACTED);
                out.push_str(&authority[at..]);
            }
            None => out.push_str(authority),
        }
        match path.find(['?', '#']) {
            Some(query) => {
                out.push_str(&path[..=query]);
                out.push_str(REDACTED);
            }
            None => out.push_str(path),
        }
        rest = tail;
    }
    out.push_str(rest);
    out
}

/// Text that does not parse, redacted a line at a time.
fn redact_lines(text: &str) -> String {
    let mut in_secret_table = false;
    text.lines()
        .map(|line| {
            let trimmed = line.trim_start();
            if trimmed.starts_with('[') {
                let header = trimmed.trim_matches(|c: char| matches!(c, '[' | ']' | ' '));
                let last = header
                    .rsplit('.')
                    .next()
                    .unwrap_or(header)
                    .trim_matches('"');
                in_secret_table = SECRET_TABLES.contains(&last.to_ascii_lowercase().as_str());
                return line.to_owned();
            }
            match line.split_once('=') {
                Some((key, _))
                    if in_secret_table
                        || Place::Plain.of(key.trim().trim_matches('"')) != Place::Plain =>
                {
                    format!("{key}= \"{REDACTED}\"")
                }
                _ => Words::new(Place::Plain).element(line),
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_redacted_but_env_references_kept() {
        let text = "[providers.a]\napi_key = \"sk-live-123\"\n\n[providers.b]\napi_key = \"${B_KEY}\"\n\n[[agent.tools]]\nname = \"t\"\nenv = { API_TOKEN = \"tok-9\" }\n";
        let out = redact_config_text(text);
        assert!(!out.contains("sk-live-123"), "{out}");
        assert!(!out.contains("tok-9"), "{out}");
        assert!(out.contains("${B_KEY}"), "{out}");
        assert!(out.contains("<redacted>"), "{out}");
        let broken = redact_config_text("[providers.a\napi_key = \"sk-live-123\"\n");
        assert!(!broken.contains("sk-live-123"), "{broken}");
    }

    const MCP: &str = r#"
[mcp.servers.remote]
type = "streamable_http"
url = "https://mcp.example/v1?access_token=qtok-1111&x=2#frag-2222"
headers = { X-Custom = "hdr-3333", Accept = "application/json-4444", Authorization = "Bearer ${GH}" }

[mcp.servers.local]
command = "npx --auth-token inl-5555"
args = ["-y", "server", "--token", "arg-6666", "--api-key=arg-7777", "-H", "Authorization: Bearer arg-8888", "abcdefghij0123456789klmn", "http://ada:pw-9999@db.example:5432/x"]

[mcp.servers.local.env]
DATABASE = "env-1010"
PORT = 5432
"#;

    fn redacted_mcp() -> String {
        redact_config_text(MCP)
    }

    #[test]
    fn every_header_value_goes_whatever_its_name() {
        let out = redacted_mcp();
        assert!(!out.contains("hdr-3333"), "{out}");
        assert!(!out.contains("json-4444"), "{out}");
        assert!(out.contains("Authorization = \"<redacted>\""), "{out}");
    }

    #[test]
    fn every_env_value_goes_whatever_its_name() {
        let out = redacted_mcp();
        assert!(!out.contains("env-1010"), "{out}");
        assert!(!out.contains("5432\n"), "{out}");
        assert!(out.contains("DATABASE = \"<redacted>\""), "{out}");
    }

    #[test]
    fn tokens_in_arguments_go_and_the_flags_stay() {
        let out = redacted_mcp();
        for secret in [
            "inl-5555",
            "arg-6666",
            "arg-7777",
            "arg-8888",
            "abcdefghij0123456789klmn",
        ] {
            assert!(!out.contains(secret), "{secret}: {out}");
        }
        assert!(out.contains("\"--token\", \"<redacted>\""), "{out}");
        assert!(out.contains("\"--api-key=<redacted>\""), "{out}");
        assert!(out.contains("\"-y\", \"server\""), "{out}");
        assert!(out.contains("npx --auth-token <redacted>"), "{out}");
    }

    #[test]
    fn url_queries_and_user_info_go_everywhere() {
        let out = redacted_mcp();
        for secret in ["qtok-1111", "frag-2222", "pw-9999", "ada:"] {
            assert!(!out.contains(secret), "{secret}: {out}");
        }
        assert!(
            out.contains("url = \"https://mcp.example/v1?<redacted>\""),
            "{out}"
        );
        assert!(out.contains("http://<redacted>@db.example:5432/x"), "{out}");
        let plain =
            redact_config_text("[models]\nindex = \"https://u:p@pypi.example/simple?t=1\"\n");
        assert!(
            plain.contains("\"https://<redacted>@pypi.example/simple?<redacted>\""),
            "{plain}"
        );
    }

    #[test]
    fn ordinary_values_are_kept() {
        let text = "[agent]\nmodel = \"claude/claude-3-5-sonnet-20241022\"\ncompletion_tokens = 4000\n\n[providers.claude]\nkind = \"anthropic\"\nbase_url = \"https://api.anthropic.com\"\n\n[mcp.servers.fs]\ncommand = \"npx\"\nargs = [\"-y\", \"@modelcontextprotocol/server-filesystem\", \"/home/ada/projects\"]\n";
        assert_eq!(redact_config_text(text), text);
    }

    #[test]
    fn broken_text_loses_header_and_env_values_and_url_secrets() {
        let text = "[mcp.servers.a\nurl = \"https://h.example/?k=q-1212\"\n[mcp.servers.a.headers]\nX-Custom = \"hdr-1313\"\n[mcp.servers.a.env]\nDB = \"env-1414\"\n";
        let out = redact_config_text(text);
        for secret in ["q-1212", "hdr-1313", "env-1414"] {
            assert!(!out.contains(secret), "{secret}: {out}");
        }
    }
}

//! Secret redaction, applied to everything before it is stored: private keys, bearer tokens, API
//! keys of the common providers, JWTs, `password=`-style and `"token": "…"`-style assignments,
//! huge base64 payloads, and the secrets this process knows of (its configured keys, its API
//! token: [`set_known_secrets`]) whatever they look like. Things that only look random (git SHAs,
//! paths, UUIDs) are left alone.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::{OnceLock, RwLock};

use regex::{Captures, Regex, RegexSet};

struct Rule {
    re: Regex,
    /// `None`: replace the whole match with `[REDACTED:<kind>]`; `Some(n)`: keep groups 1..=n and
    /// replace the rest.
    keep_groups: Option<usize>,
    kind: &'static str,
}

/// Word boundaries are ASCII (`(?-u:\b)`): every key format is ASCII, and a Unicode boundary
/// would push the regex engine onto its slowest path for any text holding one non-ASCII letter.
fn rules() -> &'static Rules {
    static RULES: OnceLock<Rules> = OnceLock::new();
    RULES.get_or_init(|| {
        let specs: &[(&str, Option<usize>, &str)] = &[
            (r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\z)", None, "private-key"),
            (r"(?i)(authorization\s*:\s*bearer\s+|(?-u:\b)bearer\s+)[A-Za-z0-9._~+/=-]{8,}", Some(1), "token"),
            (r"(?-u:\b)sk-ant-[A-Za-z0-9_-]{16,}", None, "anthropic-key"),
            (r"(?-u:\b)sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}", None, "openai-key"),
            (r"(?-u:\b)AIza[0-9A-Za-z_-]{30,}", None, "google-key"),
            (r"(?-u:\b)gh[pousr]_[A-Za-z0-9]{30,}", None, "github-token"),
            (r"(?-u:\b)github_pat_[A-Za-z0-9_]{22,}", None, "github-token"),
            (r"(?-u:\b)(?:AKIA|ASIA)[0-9A-Z]{16}(?-u:\b)", None, "aws-key"),
            (r#"(?i)(aws_secret_access_key\s*[=:]\s*["']?)[A-Za-z0-9/+=]{40}"#, Some(1), "aws-secret"),
            (r"(?-u:\b)xox[abposr]-[A-Za-z0-9-]{10,}", None, "slack-token"),
            (r"(?-u:\b)(?:sk|rk)_live_[A-Za-z0-9]{16,}", None, "stripe-key"),
            (r"(?-u:\b)eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}", None, "jwt"),
            (r#"(?i)((?-u:\b)[A-Za-z0-9_-]*(?:password|passwd|pwd|passphrase|secret|api[_-]?key|access[_-]?token|auth[_-]?token|client[_-]?secret|private[_-]?key)(?-u:\b)["']?\s*[=:]\s*["']?)[^\s"',;<\[][^\s"',;]{3,}"#, Some(1), "secret"),
            (r#"(?i)((?-u:\b)[A-Za-z0-9_-]*token["']?\s*[=:]\s*["']?)[A-Za-z0-9._~+/=-]{16,}"#, Some(1), "token"),
            (r"[A-Za-z0-9+/]{256,}={0,2}", None, "base64"),
        ];
        let each: Vec<Rule> = specs
            .iter()
            .filter_map(|(pattern, keep_groups, kind)| match Regex::new(pattern) {
                Ok(re) => Some(Rule { re, keep_groups: *keep_groups, kind }),
                Err(e) => {
                    tracing::error!("bad redaction pattern for {kind}: {e}");
                    None
                }
            })
            .collect();
        let any = RegexSet::new(each.iter().map(|rule| rule.re.as_str()))
            .map_err(|e| tracing::error!("bad redaction pattern set: {e}"))
            .ok();
        Rules { each, any }
    })
}

/// The redaction rules, and all of them as one set: most text holds no secret, and one pass of
/// the set says so (fourteen passes did, one per rule, at a third of an import's reading time).
struct Rules {
    each: Vec<Rule>,
    any: Option<RegexSet>,
}

/// Secrets known by their value, by who told them (`config`, `api-token`…).
fn known() -> &'static RwLock<BTreeMap<String, Vec<String>>> {
    static KNOWN: OnceLock<RwLock<BTreeMap<String, Vec<String>>>> = OnceLock::new();
    KNOWN.get_or_init(RwLock::default)
}

/// Secrets shorter than this are not looked for: they would match ordinary words.
const SHORTEST_KNOWN: usize = 8;

/// Tells the redactor the secrets `owner` holds now (the config's provider keys, `[api] keys`
/// and MCP header and environment values; the local API's token), replacing what `owner` told
/// before: each is redacted as `[REDACTED:configured-secret]` wherever it appears, whatever its
/// shape.
pub fn set_known_secrets(owner: &str, secrets: impl IntoIterator<Item = String>) {
    let mut secrets: Vec<String> = secrets
        .into_iter()
        .map(|s| s.trim().to_owned())
        .filter(|s| s.len() >= SHORTEST_KNOWN)
        .collect();
    // The longest first, so a secret that contains another is replaced whole.
    secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
    secrets.dedup();
    let mut all = known().write().unwrap_or_else(|e| e.into_inner());
    all.insert(owner.to_owned(), secrets);
}

/// Returns `text` with every secret replaced by `[REDACTED:<kind>]`.
pub fn redact(text: &str) -> Cow<'_, str> {
    let rules = rules();
    let candidates = rules.any.as_ref().map(|set| set.matches(text));
    let mut out = Cow::Borrowed(text);
    {
        let all = known().read().unwrap_or_else(|e| e.into_inner());
        for secret in all.values().flatten() {
            if out.contains(secret.as_str()) {
                out = Cow::Owned(out.replace(secret.as_str(), "[REDACTED:configured-secret]"));
            }
        }
    }
    for (index, rule) in rules.each.iter().enumerate() {
        // A replacement brings no secret of another kind in: a rule the text did not match
        // does not match after one.
        if candidates.as_ref().is_some_and(|hits| !hits.matched(index)) || !rule.re.is_match(&out) {
            continue;
        }
        let replaced = rule
            .re
            .replace_all(&out, |caps: &Captures<'_>| {
                let whole = caps.get(0).map_or("", |m| m.as_str());
                if rule.kind == "base64" && !looks_like_base64(whole) {
                    return whole.to_owned();
                }
                let mut kept = String::new();
                for group in 1..=rule.keep_groups.unwrap_or(0) {
                    kept.push_str(caps.get(group).map_or("", |m| m.as_str()));
                }
                format!("{kept}[REDACTED:{}]", rule.kind)
            })
            .into_owned();
        out = Cow::Owned(replaced);
    }
    out
}

/// A long run of one letter is not a payload: real base64 mixes cases and digits.
fn looks_like_base64(run: &str) -> bool {
    run.bytes().any(|b| b.is_ascii_uppercase())
        && run.bytes().any(|b| b.is_ascii_lowercase())
        && run.bytes().any(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_secret_kind_is_redacted() {
        let secrets = [
            "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----",
            "Authorization: Bearer abcdef0123456789abcdef",
            "sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz012345",
            "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUv",
            "AIzaSyA1234567890abcdefghijklmnopqrstuv",
            "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
            "github_pat_11ABCDEFG0123456789_abcdefghijklmnop",
            "AKIAIOSFODNN7EXAMPLE",
            "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "xoxb-123456789012-abcdefghij",
            "sk_live_abcdefghijklmnop1234",
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
            "password=hunter2hunter2",
            "DB_PASSWORD: \"correct-horse-battery\"",
        ];
        for secret in secrets {
            let text = format!("before {secret} after");
            let clean = redact(&text);
            assert!(clean.contains("[REDACTED:"), "{secret} → {clean}");
            assert!(
                clean.starts_with("before ") && clean.ends_with(" after"),
                "{clean}"
            );
            let sensitive_tail = &secret[secret.len() - 6..];
            assert!(
                !clean.contains(sensitive_tail),
                "{secret} leaked in {clean}"
            );
        }
    }

    #[test]
    fn things_that_only_look_random_are_kept() {
        let text =
            "commit 3f786850e387550fdab836ed7e6dc881de23001b in /home/ada/src/cairn/main.rs \
                    for request 123e4567-e89b-12d3-a456-426614174000 (task-sk-1)";
        assert_eq!(redact(text), text);
    }

    #[test]
    fn huge_base64_payloads_go() {
        let long_word = "a".repeat(300);
        assert_eq!(redact(&long_word), long_word);
        let blob = "QUJDZGVm0123".repeat(30);
        let text = format!("image: {blob}");
        let clean = redact(&text);
        assert_eq!(clean, "image: [REDACTED:base64]");
    }

    #[test]
    fn a_bare_token_field_is_redacted_but_counts_of_tokens_are_not() {
        let runtime = r#"{"api_url": "http://127.0.0.1:4123", "token": "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", "pid": 7}"#;
        let clean = redact(runtime);
        assert!(!clean.contains("9f86d081884c7d65"), "{clean}");
        assert!(clean.contains(r#""token": "[REDACTED:token]"#), "{clean}");
        let usage = r#"{"prompt_tokens": 1234, "completion_tokens": 5678, "max_tokens": 4096}"#;
        assert_eq!(redact(usage), usage);
        assert_eq!(redact("the next token: hello"), "the next token: hello");
    }

    #[test]
    fn known_secrets_are_redacted_whatever_they_look_like() {
        let plain = "mcp header value is plainword-7c1e and the key hunter2hunter2x";
        assert_eq!(redact(plain), plain);
        set_known_secrets(
            "redact-test",
            [
                "plainword-7c1e".to_owned(),
                "short".to_owned(),
                "hunter2hunter2x".to_owned(),
            ],
        );
        let clean = redact(plain);
        set_known_secrets("redact-test", []);
        assert_eq!(
            clean,
            "mcp header value is [REDACTED:configured-secret] and the key [REDACTED:configured-secret]"
        );
        assert_eq!(
            redact("too short to look for: short"),
            "too short to look for: short"
        );
        assert_eq!(redact(plain), plain, "forgotten once the owner says so");
    }

    #[test]
    fn what_is_already_redacted_stays_as_it_is() {
        for text in [
            "api_key = \"<redacted>\"",
            "password: [REDACTED:secret]",
            "DB_PASSWORD=[REDACTED:configured-secret]",
        ] {
            assert_eq!(redact(text), text);
        }
        let once = redact("password=hunter2hunter2 and sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz012345");
        assert_eq!(redact(&once), once);
    }
}

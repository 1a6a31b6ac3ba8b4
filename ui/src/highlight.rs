//! Code blocks' tokens marked for colour (keywords, strings, comments, numbers) in the languages
//! replies use most, and the HTML escaping both the highlighter and the Markdown writer rely on.

/// `text` safe inside HTML text and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// How a language writes its comments, strings and keywords.
struct Syntax {
    line_comments: &'static [&'static str],
    block_comment: Option<(&'static str, &'static str)>,
    quotes: &'static [char],
    keywords: &'static [&'static str],
}

const C_LIKE_COMMENTS: &[&str] = &["//"];
const HASH_COMMENTS: &[&str] = &["#"];

/// The keywords of Rust.
const RUST_KEYWORDS: &[&str] = &[
    "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum", "extern",
    "false", "fn", "for", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub",
    "ref", "return", "self", "Self", "static", "struct", "super", "trait", "true", "type",
    "unsafe", "use", "where", "while",
];

/// The keywords of Python.
const PYTHON_KEYWORDS: &[&str] = &[
    "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del", "elif",
    "else", "except", "False", "finally", "for", "from", "global", "if", "import", "in", "is",
    "lambda", "None", "nonlocal", "not", "or", "pass", "raise", "return", "True", "try", "while",
    "with", "yield",
];

/// The keywords of JavaScript and TypeScript.
const JS_KEYWORDS: &[&str] = &[
    "async",
    "await",
    "break",
    "case",
    "catch",
    "class",
    "const",
    "continue",
    "default",
    "delete",
    "do",
    "else",
    "export",
    "extends",
    "false",
    "finally",
    "for",
    "from",
    "function",
    "if",
    "import",
    "in",
    "instanceof",
    "interface",
    "let",
    "new",
    "null",
    "of",
    "return",
    "static",
    "switch",
    "this",
    "throw",
    "true",
    "try",
    "type",
    "typeof",
    "undefined",
    "var",
    "void",
    "while",
    "yield",
];

/// The keywords of Go.
const GO_KEYWORDS: &[&str] = &[
    "break",
    "case",
    "chan",
    "const",
    "continue",
    "default",
    "defer",
    "else",
    "false",
    "for",
    "func",
    "go",
    "if",
    "import",
    "interface",
    "map",
    "nil",
    "package",
    "range",
    "return",
    "select",
    "struct",
    "switch",
    "true",
    "type",
    "var",
];

/// The keywords of C, C++, Java, Kotlin, C# and Swift.
const C_FAMILY_KEYWORDS: &[&str] = &[
    "auto",
    "bool",
    "break",
    "case",
    "catch",
    "char",
    "class",
    "const",
    "continue",
    "default",
    "delete",
    "do",
    "double",
    "else",
    "enum",
    "extends",
    "false",
    "final",
    "float",
    "for",
    "fun",
    "func",
    "if",
    "implements",
    "import",
    "int",
    "interface",
    "let",
    "long",
    "namespace",
    "new",
    "null",
    "nullptr",
    "package",
    "private",
    "protected",
    "public",
    "return",
    "short",
    "static",
    "struct",
    "switch",
    "template",
    "this",
    "throw",
    "true",
    "try",
    "typedef",
    "unsigned",
    "using",
    "val",
    "var",
    "void",
    "while",
];

/// The keywords of the shells.
const SHELL_KEYWORDS: &[&str] = &[
    "case", "do", "done", "elif", "else", "esac", "export", "fi", "for", "function", "if", "in",
    "local", "return", "then", "until", "while",
];

/// The keywords of SQL, in either case.
const SQL_KEYWORDS: &[&str] = &[
    "and", "as", "by", "create", "delete", "desc", "from", "group", "insert", "into", "join",
    "left", "limit", "not", "null", "on", "or", "order", "select", "set", "table", "update",
    "values", "where", "AND", "AS", "BY", "CREATE", "DELETE", "DESC", "FROM", "GROUP", "INSERT",
    "INTO", "JOIN", "LEFT", "LIMIT", "NOT", "NULL", "ON", "OR", "ORDER", "SELECT", "SET", "TABLE",
    "UPDATE", "VALUES", "WHERE",
];

/// The literals of JSON, TOML, YAML and INI.
const DATA_LITERALS: &[&str] = &["true", "false", "null"];

/// The syntax of `lang` (lowercase), if it is one the highlighter knows.
fn syntax(lang: &str) -> Option<Syntax> {
    let c_block = Some(("/*", "*/"));
    Some(match lang {
        "rust" | "rs" => Syntax {
            line_comments: C_LIKE_COMMENTS,
            block_comment: c_block,
            quotes: &['"'],
            keywords: RUST_KEYWORDS,
        },
        "python" | "py" => Syntax {
            line_comments: HASH_COMMENTS,
            block_comment: None,
            quotes: &['"', '\''],
            keywords: PYTHON_KEYWORDS,
        },
        "javascript" | "js" | "jsx" | "typescript" | "ts" | "tsx" | "mjs" => Syntax {
            line_comments: C_LIKE_COMMENTS,
            block_comment: c_block,
            quotes: &['"', '\'', '`'],
            keywords: JS_KEYWORDS,
        },
        "go" | "golang" => Syntax {
            line_comments: C_LIKE_COMMENTS,
            block_comment: c_block,
            quotes: &['"', '\'', '`'],
            keywords: GO_KEYWORDS,
        },
        "c" | "h" | "cpp" | "c++" | "cc" | "hpp" | "java" | "kotlin" | "kt" | "cs" | "csharp"
        | "swift" => Syntax {
            line_comments: C_LIKE_COMMENTS,
            block_comment: c_block,
            quotes: &['"', '\''],
            keywords: C_FAMILY_KEYWORDS,
        },
        "sh" | "bash" | "shell" | "zsh" | "console" => Syntax {
            line_comments: HASH_COMMENTS,
            block_comment: None,
            quotes: &['"', '\''],
            keywords: SHELL_KEYWORDS,
        },
        "sql" => Syntax {
            line_comments: &["--"],
            block_comment: c_block,
            quotes: &['\'', '"'],
            keywords: SQL_KEYWORDS,
        },
        "json" | "jsonc" => Syntax {
            line_comments: C_LIKE_COMMENTS,
            block_comment: None,
            quotes: &['"'],
            keywords: DATA_LITERALS,
        },
        "toml" | "yaml" | "yml" | "ini" => Syntax {
            line_comments: HASH_COMMENTS,
            block_comment: None,
            quotes: &['"', '\''],
            keywords: DATA_LITERALS,
        },
        _ => return None,
    })
}

/// `code` as HTML with its tokens in spans: `tok-kw` keywords, `tok-str` strings, `tok-com`
/// comments, `tok-num` numbers. A language it does not know stays plain (escaped).
pub fn highlight(lang: &str, code: &str) -> String {
    let Some(syntax) = syntax(&lang.to_ascii_lowercase()) else {
        return escape(code);
    };
    let mut out = String::with_capacity(code.len() * 2);
    let span = |out: &mut String, class: &str, text: &str| {
        out.push_str("<span class=\"");
        out.push_str(class);
        out.push_str("\">");
        out.push_str(&escape(text));
        out.push_str("</span>");
    };
    let mut rest = code;
    while let Some(c) = rest.chars().next() {
        if let Some(prefix) = syntax.line_comments.iter().find(|p| rest.starts_with(**p)) {
            // `#` starts a comment only at a word's start (not `$#` or `a#b`).
            let starts_word = *prefix != "#"
                || out
                    .chars()
                    .next_back()
                    .is_none_or(|p| p.is_whitespace() || p == '>');
            if starts_word {
                let end = rest.find('\n').unwrap_or(rest.len());
                span(&mut out, "tok-com", &rest[..end]);
                rest = &rest[end..];
                continue;
            }
        }
        if let Some((open, close)) = syntax.block_comment {
            if rest.starts_with(open) {
                let end = rest[open.len()..]
                    .find(close)
                    .map_or(rest.len(), |e| open.len() + e + close.len());
                span(&mut out, "tok-com", &rest[..end]);
                rest = &rest[end..];
                continue;
            }
        }
        if syntax.quotes.contains(&c) {
            let mut end = rest.len();
            let mut escaped = false;
            for (at, ch) in rest.char_indices().skip(1) {
                if escaped {
                    escaped = false;
                } else if ch == '\\' {
                    escaped = true;
                } else if ch == c {
                    end = at + ch.len_utf8();
                    break;
                } else if ch == '\n' && c != '`' {
                    end = at;
                    break;
                }
            }
            span(&mut out, "tok-str", &rest[..end]);
            rest = &rest[end..];
            continue;
        }
        if c.is_alphanumeric() || c == '_' {
            let end = rest
                .find(|ch: char| {
                    !(ch.is_alphanumeric() || ch == '_' || (ch == '.' && c.is_ascii_digit()))
                })
                .unwrap_or(rest.len());
            let word = &rest[..end];
            if c.is_ascii_digit() {
                span(&mut out, "tok-num", word);
            } else if syntax.keywords.contains(&word) {
                span(&mut out, "tok-kw", word);
            } else {
                out.push_str(&escape(word));
            }
            rest = &rest[end..];
            continue;
        }
        out.push_str(&escape(&rest[..c.len_utf8()]));
        rest = &rest[c.len_utf8()..];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn highlighting_marks_keywords_strings_comments_and_numbers() {
        assert_eq!(
            highlight("python", "def f(x):  # twice\n    return \"x<y\" * 2"),
            "<span class=\"tok-kw\">def</span> f(x):  <span class=\"tok-com\"># twice</span>\n    <span class=\"tok-kw\">return</span> <span class=\"tok-str\">&quot;x&lt;y&quot;</span> * <span class=\"tok-num\">2</span>"
        );
        assert_eq!(
            highlight("js", "const a = `t` /* c */ // end"),
            "<span class=\"tok-kw\">const</span> a = <span class=\"tok-str\">`t`</span> <span class=\"tok-com\">/* c */</span> <span class=\"tok-com\">// end</span>"
        );
        // Inside a word, `#` is not a comment; an escaped quote does not end the string.
        assert_eq!(
            highlight("bash", "echo $# \"a\\\"b\""),
            "echo $# <span class=\"tok-str\">&quot;a\\&quot;b&quot;</span>"
        );
        // Names that merely contain a keyword stay plain; 1.5 is one number.
        assert_eq!(
            highlight("rust", "let format_in = 1.5;"),
            "<span class=\"tok-kw\">let</span> format_in = <span class=\"tok-num\">1.5</span>;"
        );
        assert_eq!(highlight("nonesuch", "if <b>"), "if &lt;b&gt;");
    }
}

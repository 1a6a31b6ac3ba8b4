//! Replies' Markdown as HTML: CommonMark laid out tight (no stray line breaks between blocks), code
//! blocks with a Copy button and their keywords, strings, comments and numbers marked for colour.

use pulldown_cmark::{CodeBlockKind, CowStr, Event, Options, Parser, Tag, TagEnd};

use crate::i18n::t;

/// Markdown as HTML for a reply: CommonMark with tables, strikethrough and task lists. Raw HTML
/// in the text is shown as text, never interpreted (a model's output is not trusted markup), and
/// links keep only http(s) and mailto targets. A line break in a paragraph stays a line break;
/// between blocks there is no whitespace, so a list item never starts with an empty line (its
/// marker alone on it) and lists keep no gaps. Code blocks come with a Copy button.
pub fn html(text: &str) -> String {
    let options =
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    let safe_url = |url: &CowStr<'_>| {
        let lower = url.to_ascii_lowercase();
        lower.starts_with("http://")
            || lower.starts_with("https://")
            || lower.starts_with("mailto:")
            || lower.starts_with('#')
    };
    let mut events = Vec::new();
    // The code block being read: its language and text.
    let mut code: Option<(String, String)> = None;
    for event in Parser::new_ext(text, options) {
        if let Some((lang, body)) = code.as_mut() {
            match event {
                Event::End(TagEnd::CodeBlock) => {
                    events.push(Event::Html(code_block(lang, body).into()));
                    code = None;
                }
                Event::Text(more) | Event::Html(more) => body.push_str(&more),
                _ => {}
            }
            continue;
        }
        events.push(match event {
            Event::Start(Tag::CodeBlock(kind)) => {
                let lang = match kind {
                    CodeBlockKind::Fenced(info) => info
                        .split(|c: char| c.is_whitespace() || c == ',')
                        .next()
                        .unwrap_or_default()
                        .to_owned(),
                    CodeBlockKind::Indented => String::new(),
                };
                code = Some((lang, String::new()));
                continue;
            }
            Event::Html(html) | Event::InlineHtml(html) => Event::Text(html),
            Event::SoftBreak => Event::HardBreak,
            Event::Start(Tag::Link {
                link_type,
                dest_url,
                title,
                id,
            }) if !safe_url(&dest_url) => Event::Start(Tag::Link {
                link_type,
                dest_url: CowStr::Borrowed(""),
                title,
                id,
            }),
            Event::Start(Tag::Image {
                link_type,
                dest_url,
                title,
                id,
            }) if !safe_url(&dest_url) => Event::Start(Tag::Image {
                link_type,
                dest_url: CowStr::Borrowed(""),
                title,
                id,
            }),
            other => other,
        });
    }
    // A block cut off by the end of a streaming reply still shows.
    if let Some((lang, body)) = code {
        events.push(Event::Html(code_block(&lang, &body).into()));
    }
    let mut html = String::new();
    pulldown_cmark::html::push_html(&mut html, events.into_iter());
    tighten(&html)
}

/// A code block: its language, a Copy button, and the code with its tokens marked.
fn code_block(lang: &str, code: &str) -> String {
    let lang = lang.to_ascii_lowercase();
    let class = if lang.is_empty() {
        String::new()
    } else {
        format!(" class=\"language-{}\"", escape(&lang))
    };
    format!(
        "<div class=\"code-block\"><div class=\"code-head\"><span class=\"code-lang\">{}</span><button type=\"button\" class=\"code-copy\" data-copied=\"{}\">{}</button></div><pre><code{class}>{}</code></pre></div>",
        escape(&lang),
        escape(t("Copied")),
        escape(t("Copy")),
        highlight(&lang, code),
    )
}

/// The newlines the HTML writer puts between tags, outside `<pre>`: under `white-space: normal`
/// they are nothing, but copied or shown pre-wrapped they become empty lines.
fn tighten(html: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut in_pre = 0usize;
    let mut rest = html;
    while let Some(at) = rest.find(['<', '\n']) {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        if rest.starts_with('\n') {
            if in_pre > 0 || !out.ends_with('>') {
                out.push('\n');
            }
            rest = &rest[1..];
            continue;
        }
        if rest.starts_with("<pre") {
            in_pre += 1;
        } else if rest.starts_with("</pre") {
            in_pre = in_pre.saturating_sub(1);
        }
        let end = rest.find('>').map_or(rest.len(), |e| e + 1);
        out.push_str(&rest[..end]);
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

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

fn syntax(lang: &str) -> Option<Syntax> {
    let c_block = Some(("/*", "*/"));
    Some(match lang {
        "rust" | "rs" => Syntax {
            line_comments: C_LIKE_COMMENTS,
            block_comment: c_block,
            quotes: &['"'],
            keywords: &[
                "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else",
                "enum", "extern", "false", "fn", "for", "if", "impl", "in", "let", "loop", "match",
                "mod", "move", "mut", "pub", "ref", "return", "self", "Self", "static", "struct",
                "super", "trait", "true", "type", "unsafe", "use", "where", "while",
            ],
        },
        "python" | "py" => Syntax {
            line_comments: HASH_COMMENTS,
            block_comment: None,
            quotes: &['"', '\''],
            keywords: &[
                "and", "as", "assert", "async", "await", "break", "class", "continue", "def",
                "del", "elif", "else", "except", "False", "finally", "for", "from", "global", "if",
                "import", "in", "is", "lambda", "None", "nonlocal", "not", "or", "pass", "raise",
                "return", "True", "try", "while", "with", "yield",
            ],
        },
        "javascript" | "js" | "jsx" | "typescript" | "ts" | "tsx" | "mjs" => Syntax {
            line_comments: C_LIKE_COMMENTS,
            block_comment: c_block,
            quotes: &['"', '\'', '`'],
            keywords: &[
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
            ],
        },
        "go" | "golang" => Syntax {
            line_comments: C_LIKE_COMMENTS,
            block_comment: c_block,
            quotes: &['"', '\'', '`'],
            keywords: &[
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
            ],
        },
        "c" | "h" | "cpp" | "c++" | "cc" | "hpp" | "java" | "kotlin" | "kt" | "cs" | "csharp"
        | "swift" => Syntax {
            line_comments: C_LIKE_COMMENTS,
            block_comment: c_block,
            quotes: &['"', '\''],
            keywords: &[
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
            ],
        },
        "sh" | "bash" | "shell" | "zsh" | "console" => Syntax {
            line_comments: HASH_COMMENTS,
            block_comment: None,
            quotes: &['"', '\''],
            keywords: &[
                "case", "do", "done", "elif", "else", "esac", "export", "fi", "for", "function",
                "if", "in", "local", "return", "then", "until", "while",
            ],
        },
        "sql" => Syntax {
            line_comments: &["--"],
            block_comment: c_block,
            quotes: &['\'', '"'],
            keywords: &[
                "and", "as", "by", "create", "delete", "desc", "from", "group", "insert", "into",
                "join", "left", "limit", "not", "null", "on", "or", "order", "select", "set",
                "table", "update", "values", "where", "AND", "AS", "BY", "CREATE", "DELETE",
                "DESC", "FROM", "GROUP", "INSERT", "INTO", "JOIN", "LEFT", "LIMIT", "NOT", "NULL",
                "ON", "OR", "ORDER", "SELECT", "SET", "TABLE", "UPDATE", "VALUES", "WHERE",
            ],
        },
        "json" | "jsonc" => Syntax {
            line_comments: C_LIKE_COMMENTS,
            block_comment: None,
            quotes: &['"'],
            keywords: &["true", "false", "null"],
        },
        "toml" | "yaml" | "yml" | "ini" => Syntax {
            line_comments: HASH_COMMENTS,
            block_comment: None,
            quotes: &['"', '\''],
            keywords: &["true", "false", "null"],
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

/// Puts `text` on the clipboard. Runs inside the click that asked, as WebKit lets a page copy
/// only then: a hidden text box, selected and copied; where that is refused, the asynchronous
/// clipboard is asked instead. Whether it was done (or handed to the clipboard).
pub fn copy_to_clipboard(text: &str) -> bool {
    let Some(window) = web_sys::window() else {
        return false;
    };
    if window
        .document()
        .and_then(|document| copy_by_selection(&document, text))
        .unwrap_or(false)
    {
        return true;
    }
    let _ = window.navigator().clipboard().write_text(text);
    true
}

/// The old way, which WebKitGTK honours inside a click: a text box holding `text`, selected,
/// `copy`.
fn copy_by_selection(document: &web_sys::Document, text: &str) -> Option<bool> {
    use wasm_bindgen::JsCast;
    let area = document
        .create_element("textarea")
        .ok()?
        .dyn_into::<web_sys::HtmlTextAreaElement>()
        .ok()?;
    area.set_value(text);
    let _ = area.set_attribute("readonly", "");
    let _ = area.set_attribute("style", "position:fixed;top:0;left:0;opacity:0;");
    document.body()?.append_child(&area).ok()?;
    area.select();
    let done = document
        .dyn_ref::<web_sys::HtmlDocument>()
        .and_then(|d| d.exec_command("copy").ok())
        .unwrap_or(false);
    area.remove();
    Some(done)
}

/// A click on a code block's Copy button (anywhere in the page; the blocks are HTML the page did
/// not build) copies its code and says "Copied" for a moment.
pub fn install_code_copy() {
    use wasm_bindgen::JsCast;
    let _ = leptos::prelude::window_event_listener(leptos::ev::click, |ev| {
        let Some(button) = ev
            .target()
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
            .and_then(|e| e.closest(".code-copy").ok().flatten())
        else {
            return;
        };
        let code = button
            .closest(".code-block")
            .ok()
            .flatten()
            .and_then(|block| block.query_selector("pre").ok().flatten())
            .and_then(|pre| pre.text_content())
            .unwrap_or_default();
        if copy_to_clipboard(&code) {
            flash_copied(&button);
        }
    });
}

/// Shows "Copied" on `button` for two seconds, then its own label again.
pub fn flash_copied(button: &web_sys::Element) {
    let label = button.text_content().unwrap_or_default();
    let copied = button
        .get_attribute("data-copied")
        .unwrap_or_else(|| t("Copied").to_owned());
    button.set_text_content(Some(&copied));
    let _ = button.class_list().add_1("copied");
    let button = button.clone();
    leptos::task::spawn_local(async move {
        crate::workbench::gloo_sleep(2000).await;
        button.set_text_content(Some(&label));
        let _ = button.class_list().remove_1("copied");
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_renders_code_and_never_passes_raw_html() {
        let html = html(
            "Run `ls`:\n\n```sh\nls -la\n```\n\n<script>alert(1)</script>\n\n[x](javascript:alert(1)) [y](https://example.com)",
        );
        assert!(html.contains("<code>ls</code>"), "{html}");
        assert!(
            html.contains("<pre><code class=\"language-sh\">ls -la"),
            "{html}"
        );
        assert!(!html.contains("<script>"), "{html}");
        assert!(html.contains("&lt;script&gt;"), "{html}");
        assert!(!html.contains("href=\"javascript"), "{html}");
        assert!(html.contains("href=\"https://example.com\""), "{html}");
    }

    /// Issue #48: a loose nested list put each item's marker on a line of its own ("◦") and
    /// lists had gaps, from the newlines between tags shown pre-wrapped.
    #[test]
    fn lists_have_no_newlines_between_their_tags() {
        let html = html("1. **Plan**\n\n   - first step\n\n   - second step\n\n2. Done\n");
        assert!(!html.contains(">\n<"), "{html}");
        assert!(!html.contains("<li>\n"), "{html}");
        assert!(
            html.contains("<li><p><strong>Plan</strong></p><ul><li><p>first step</p></li>"),
            "{html}"
        );
    }

    #[test]
    fn a_line_break_in_a_paragraph_stays_one() {
        let html = html("line one\nline two");
        assert_eq!(html, "<p>line one<br />line two</p>");
    }

    #[test]
    fn code_blocks_keep_their_lines_and_get_a_copy_button() {
        let html = html("```rust\nfn main() {\n    let x = 1;\n}\n```\n");
        assert!(
            html.contains("<button type=\"button\" class=\"code-copy\""),
            "{html}"
        );
        assert!(
            html.contains("data-copied=\"Copied\">Copy</button>"),
            "{html}"
        );
        assert!(
            html.contains("<span class=\"tok-kw\">fn</span> main() {\n    <span class=\"tok-kw\">let</span> x = <span class=\"tok-num\">1</span>;\n}\n"),
            "{html}"
        );
        // An unclosed block (a reply still streaming) shows what it has.
        let open = super::html("Look:\n```py\nprint('hi')");
        assert!(
            open.contains("<span class=\"tok-str\">&#39;hi&#39;</span>"),
            "{open}"
        );
    }

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

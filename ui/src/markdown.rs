//! Replies' Markdown as HTML: CommonMark laid out tight (no stray line breaks between blocks), code
//! blocks with a Copy button and their keywords, strings, comments and numbers marked for colour.

use pulldown_cmark::{CodeBlockKind, CowStr, Event, Options, Parser, Tag, TagEnd};

use crate::dom::{copy_to_clipboard, flash_copied};
use crate::highlight::{escape, highlight};
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
}

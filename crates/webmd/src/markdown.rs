//! HTML → Markdown as fetch_content writes it (agent-tools.md, "Conversion", "Escaping"): the page
//! is parsed (and repaired) by html5ever, furniture dropped (`clean`), then written block by block.
//! A block is a paragraph, heading, list, quote, code block or table; blocks are separated by one
//! blank line, and an element that renders to nothing leaves no trace.

use scraper::node::Node;
use scraper::{ElementRef, Html};
use url::Url;

use crate::clean::{is_checkbox, is_removed, kept_attributes};

/// How tables with spanned cells or nested tables are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Tables {
    /// As raw (cleaned) HTML.
    #[default]
    Html,
    /// As a GFM table, a spanned cell copied into every slot it covers.
    Flatten,
}

impl Tables {
    /// The tool's `tables` value.
    pub fn parse(value: &str) -> Option<Self> {
        match value.trim() {
            "" | "html" => Some(Self::Html),
            "flatten" => Some(Self::Flatten),
            _ => None,
        }
    }
}

/// The conversion's options (fetch_content's fields).
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Relative links and image sources are resolved against it; kept as written without one.
    pub base: Option<Url>,
    pub tables: Tables,
    /// `<del>`, `<s>`, `<strike>` → `~~text~~` (else the plain text).
    pub strikethrough: bool,
    /// A list item starting with a checkbox → `[ ]` / `[x]` (else the checkbox is dropped).
    pub task_list: bool,
}

/// The page's content as Markdown, ending with exactly one newline; empty when nothing is left.
pub fn to_markdown(html: &str, options: &Options) -> String {
    let document = Html::parse_document(html);
    let writer = Writer { options };
    let mut blocks = Vec::new();
    writer.container(document.root_element(), &mut blocks);
    let markdown = blocks.join("\n\n");
    let markdown = markdown.trim_end();
    if markdown.trim().is_empty() {
        String::new()
    } else {
        format!("{markdown}\n")
    }
}

/// Elements that start a block of their own.
const BLOCK_TAGS: &[&str] = &[
    "address",
    "article",
    "aside",
    "blockquote",
    "body",
    "caption",
    "center",
    "dd",
    "details",
    "dialog",
    "div",
    "dl",
    "dt",
    "fieldset",
    "figcaption",
    "figure",
    "footer",
    "form",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "head",
    "header",
    "hgroup",
    "hr",
    "html",
    "legend",
    "li",
    "main",
    "menu",
    "nav",
    "ol",
    "p",
    "pre",
    "section",
    "summary",
    "table",
    "tbody",
    "td",
    "tfoot",
    "th",
    "thead",
    "tr",
    "ul",
];

/// Elements known to flow inside a line; any other unknown element is a container when it holds a
/// block, inline otherwise.
const INLINE_TAGS: &[&str] = &[
    "a", "abbr", "audio", "b", "bdi", "bdo", "big", "br", "cite", "code", "data", "del", "dfn",
    "em", "font", "i", "img", "input", "ins", "kbd", "label", "mark", "meter", "nobr", "output",
    "picture", "progress", "q", "rp", "rt", "ruby", "s", "samp", "small", "source", "span",
    "strike", "strong", "sub", "sup", "time", "tt", "u", "var", "video", "wbr",
];

/// Written out without a closing tag in raw HTML.
const VOID_TAGS: &[&str] = &["br", "hr", "img", "input", "wbr", "source", "col"];

/// A hard line break inside a paragraph.
const HARD_BREAK: &str = "\\\n";

struct Writer<'o> {
    options: &'o Options,
}

impl Writer<'_> {
    /// The blocks of `node`'s children: runs of inline content become paragraphs.
    fn container(&self, node: ElementRef<'_>, out: &mut Vec<String>) {
        let mut line = String::new();
        for child in node.children() {
            match child.value() {
                Node::Text(text) => push_inline(&mut line, &escape_text(&collapse(text))),
                Node::Element(_) => {
                    let Some(el) = ElementRef::wrap(child) else {
                        continue;
                    };
                    if is_removed(el) {
                        continue;
                    }
                    if is_block(el) {
                        flush_paragraph(&mut line, out);
                        self.block(el, out);
                    } else {
                        let inline = self.inline(el);
                        push_inline(&mut line, &inline);
                    }
                }
                _ => {}
            }
        }
        flush_paragraph(&mut line, out);
    }

    fn block(&self, el: ElementRef<'_>, out: &mut Vec<String>) {
        let name = el.value().name();
        match name {
            "h1" | "h2" | "h3" | "h4" | "h5" | "h6" => {
                let level = usize::from(name.as_bytes()[1] - b'0');
                let text = one_line(&self.inline_children(el));
                if !text.is_empty() {
                    out.push(format!("{} {text}", "#".repeat(level)));
                }
            }
            "pre" => out.extend(self.code_block(el)),
            "blockquote" => {
                let mut inner = Vec::new();
                self.container(el, &mut inner);
                if !inner.is_empty() {
                    let quoted: Vec<String> = inner
                        .join("\n\n")
                        .lines()
                        .map(|l| {
                            if l.is_empty() {
                                ">".into()
                            } else {
                                format!("> {l}")
                            }
                        })
                        .collect();
                    out.push(quoted.join("\n"));
                }
            }
            "hr" => out.push("---".into()),
            "ul" | "ol" | "menu" => out.extend(self.list(el)),
            "li" => {
                let body = self.item_body(el);
                if !body.is_empty() {
                    out.push(indent_item("- ", &body));
                }
            }
            "table" => self.table(el, out),
            _ => self.container(el, out),
        }
    }

    /// `el` written inside a line.
    fn inline(&self, el: ElementRef<'_>) -> String {
        let e = el.value();
        match e.name() {
            "br" => HARD_BREAK.into(),
            "strong" | "b" => emphasis("**", &self.inline_children(el)),
            "em" | "i" => emphasis("*", &self.inline_children(el)),
            "del" | "s" | "strike" if self.options.strikethrough => {
                emphasis("~~", &self.inline_children(el))
            }
            "code" | "kbd" | "samp" | "tt" => code_span(&collapse(&raw_text(el))),
            "a" => self.link(el),
            "img" => self.image(el),
            "input" => String::new(),
            // A block met inside a line (a heading's div, a cell's paragraph) is flattened.
            name if BLOCK_TAGS.contains(&name) => format!(" {} ", self.inline_children(el)),
            _ => self.inline_children(el),
        }
    }

    /// `el`'s children written inside a line, blocks flattened.
    fn inline_children(&self, el: ElementRef<'_>) -> String {
        let mut line = String::new();
        for child in el.children() {
            match child.value() {
                Node::Text(text) => push_inline(&mut line, &escape_text(&collapse(text))),
                Node::Element(_) => {
                    if let Some(child) = ElementRef::wrap(child).filter(|c| !is_removed(*c)) {
                        let inline = self.inline(child);
                        push_inline(&mut line, &inline);
                    }
                }
                _ => {}
            }
        }
        line
    }

    fn link(&self, el: ElementRef<'_>) -> String {
        let text = one_line(&self.inline_children(el));
        let href = el.value().attr("href").map(str::trim).unwrap_or("");
        if href.is_empty() || href.to_ascii_lowercase().starts_with("javascript:") {
            return text;
        }
        let url = link_destination(&self.resolve(href));
        if text.is_empty() {
            url
        } else {
            format!("[{text}]({url})")
        }
    }

    fn image(&self, el: ElementRef<'_>) -> String {
        let e = el.value();
        let alt = escape_text(collapse(e.attr("alt").unwrap_or("")).trim());
        let src = e.attr("src").map(str::trim).unwrap_or("");
        if src.is_empty() || src.to_ascii_lowercase().starts_with("data:") {
            return alt;
        }
        format!("![{alt}]({})", link_destination(&self.resolve(src)))
    }

    fn resolve(&self, href: &str) -> String {
        match &self.options.base {
            Some(base) => base
                .join(href)
                .map_or_else(|_| href.to_owned(), String::from),
            None => href.to_owned(),
        }
    }

    /// `<pre>` as a fenced block, its language from a `language-x` / `lang-x` class.
    fn code_block(&self, el: ElementRef<'_>) -> Option<String> {
        let text = raw_text(el);
        let text = text.strip_prefix('\n').unwrap_or(&text).trim_end();
        if text.trim().is_empty() {
            return None;
        }
        let language = std::iter::once(el)
            .chain(
                el.descendants()
                    .filter_map(ElementRef::wrap)
                    .filter(|d| d.value().name() == "code"),
            )
            .flat_map(|e| e.value().classes())
            .find_map(|c| {
                c.strip_prefix("language-")
                    .or_else(|| c.strip_prefix("lang-"))
            })
            .unwrap_or("");
        let fence = "`".repeat((longest_run(text, '`') + 1).max(3));
        Some(format!("{fence}{language}\n{text}\n{fence}"))
    }

    fn list(&self, el: ElementRef<'_>) -> Option<String> {
        let ordered = el.value().name() == "ol";
        let mut number: i64 = el
            .value()
            .attr("start")
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(1);
        let mut items: Vec<String> = Vec::new();
        let mut last_marker_width = 2;
        for child in el.children().filter_map(ElementRef::wrap) {
            if is_removed(child) {
                continue;
            }
            // A list written straight inside a list (invalid, common) belongs to the item before.
            if matches!(child.value().name(), "ul" | "ol") {
                if let (Some(sub), Some(last)) = (self.list(child), items.last_mut()) {
                    let pad = " ".repeat(last_marker_width);
                    for line in sub.lines() {
                        last.push('\n');
                        if !line.is_empty() {
                            last.push_str(&pad);
                        }
                        last.push_str(line);
                    }
                }
                continue;
            }
            let body = self.item_body(child);
            if body.is_empty() {
                continue;
            }
            let marker = if ordered {
                format!("{number}. ")
            } else {
                "- ".to_owned()
            };
            number += 1;
            last_marker_width = marker.len();
            items.push(indent_item(&marker, &body));
        }
        (!items.is_empty()).then(|| items.join("\n"))
    }

    /// A list item's content; its blocks on consecutive lines unless it holds paragraphs.
    fn item_body(&self, li: ElementRef<'_>) -> String {
        let mut blocks = Vec::new();
        self.container(li, &mut blocks);
        let loose = li
            .children()
            .filter_map(ElementRef::wrap)
            .any(|c| c.value().name() == "p");
        let body = blocks.join(if loose { "\n\n" } else { "\n" });
        match self
            .options
            .task_list
            .then(|| leading_checkbox(li))
            .flatten()
        {
            Some(checked) => {
                let mark = if checked { "[x]" } else { "[ ]" };
                format!("{mark} {body}").trim_end().to_owned()
            }
            None => body,
        }
    }

    fn table(&self, table: ElementRef<'_>, out: &mut Vec<String>) {
        let rows = table_rows(table);
        let complex = rows.iter().any(|row| {
            cells(*row).any(|cell| {
                span(cell, "colspan") > 1
                    || span(cell, "rowspan") > 1
                    || cell
                        .descendants()
                        .filter_map(ElementRef::wrap)
                        .any(|d| d.value().name() == "table")
            })
        });
        if complex && self.options.tables == Tables::Html {
            let mut html = String::new();
            self.raw_html(table, &mut html);
            out.push(html);
            return;
        }
        if let Some(caption) = table
            .children()
            .filter_map(ElementRef::wrap)
            .find(|c| c.value().name() == "caption")
        {
            let text = one_line(&self.inline_children(caption));
            if !text.is_empty() {
                out.push(text);
            }
        }
        // Every cell placed in the grid, a spanned one in each slot it covers.
        let mut grid: Vec<Vec<Option<String>>> = vec![Vec::new(); rows.len()];
        for (r, row) in rows.iter().enumerate() {
            let mut col = 0;
            for cell in cells(*row) {
                while grid[r].get(col).is_some_and(Option::is_some) {
                    col += 1;
                }
                let text = self.cell_text(cell);
                let rowspan = span(cell, "rowspan").min(rows.len() - r);
                let colspan = span(cell, "colspan");
                for line in grid.iter_mut().skip(r).take(rowspan) {
                    if line.len() < col + colspan {
                        line.resize(col + colspan, None);
                    }
                    for slot in line.iter_mut().skip(col).take(colspan) {
                        *slot = Some(text.clone());
                    }
                }
                col += colspan;
            }
        }
        let width = grid.iter().map(Vec::len).max().unwrap_or(0);
        if width == 0 || grid.iter().flatten().flatten().all(String::is_empty) {
            return;
        }
        let line = |cells: &[Option<String>]| {
            let texts: Vec<&str> = (0..width)
                .map(|i| cells.get(i).and_then(Option::as_deref).unwrap_or(""))
                .collect();
            format!("| {} |", texts.join(" | "))
        };
        let mut lines = Vec::with_capacity(grid.len() + 1);
        for (i, row) in grid.iter().enumerate() {
            lines.push(line(row));
            if i == 0 {
                lines.push(format!("| {} |", vec!["---"; width].join(" | ")));
            }
        }
        out.push(lines.join("\n"));
    }

    /// A cell on one line: `|` escaped, line breaks as `<br>`.
    fn cell_text(&self, cell: ElementRef<'_>) -> String {
        let text = self.inline_children(cell).replace(HARD_BREAK, "<br>");
        collapse(&text).trim().replace('|', "\\|")
    }

    /// `el` as cleaned HTML on one line (a table Markdown cannot hold).
    fn raw_html(&self, el: ElementRef<'_>, out: &mut String) {
        let e = el.value();
        out.push('<');
        out.push_str(e.name());
        for (name, value) in kept_attributes(e) {
            let value = if matches!(name, "href" | "src") {
                self.resolve(&value)
            } else {
                value
            };
            out.push_str(&format!(" {name}=\"{}\"", escape_html(&value, true)));
        }
        out.push('>');
        if VOID_TAGS.contains(&e.name()) {
            return;
        }
        for child in el.children() {
            match child.value() {
                Node::Text(text) => {
                    let text = collapse(text);
                    if !text.trim().is_empty() {
                        out.push_str(&escape_html(&text, false));
                    }
                }
                Node::Element(_) => {
                    if let Some(child) = ElementRef::wrap(child).filter(|c| !is_removed(*c)) {
                        self.raw_html(child, out);
                    }
                }
                _ => {}
            }
        }
        out.push_str(&format!("</{}>", e.name()));
    }
}

fn is_block(el: ElementRef<'_>) -> bool {
    let name = el.value().name();
    if BLOCK_TAGS.contains(&name) {
        return true;
    }
    !INLINE_TAGS.contains(&name)
        && el
            .descendants()
            .skip(1)
            .filter_map(ElementRef::wrap)
            .any(|d| BLOCK_TAGS.contains(&d.value().name()) && !is_removed(d))
}

/// Appends inline text, never doubling a space nor starting a line with one (the space before an
/// element's first word is kept: the paragraph trims it when it is the paragraph's own start).
fn push_inline(line: &mut String, text: &str) {
    let text = if line.ends_with(' ') || line.ends_with('\n') {
        text.trim_start_matches(' ')
    } else {
        text
    };
    if text == HARD_BREAK && (line.is_empty() || line.ends_with(HARD_BREAK)) {
        return;
    }
    line.push_str(text);
}

/// Ends the paragraph being written: spaces around its lines trimmed, a final hard break dropped,
/// a line that would read as Markdown syntax escaped.
fn flush_paragraph(line: &mut String, out: &mut Vec<String>) {
    let text = std::mem::take(line);
    let mut lines: Vec<&str> = text.split('\n').map(|l| l.trim_matches(' ')).collect();
    let mut ended_with_break = false;
    while lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
        ended_with_break = true;
    }
    let count = lines.len();
    let paragraph: Vec<String> = lines
        .into_iter()
        .enumerate()
        .map(|(i, l)| {
            // The last line's backslash was the hard break before the removed empty line.
            let l = if ended_with_break && i + 1 == count {
                l.strip_suffix('\\').unwrap_or(l).trim_end()
            } else {
                l
            };
            escape_line_start(l)
        })
        .collect();
    let paragraph = paragraph.join("\n");
    if !paragraph.trim().is_empty() {
        out.push(paragraph);
    }
}

/// Runs of HTML whitespace as one space.
fn collapse(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_space = false;
    for c in text.chars() {
        if matches!(c, ' ' | '\t' | '\n' | '\r' | '\x0C') {
            if !in_space {
                out.push(' ');
            }
            in_space = true;
        } else {
            out.push(c);
            in_space = false;
        }
    }
    out
}

/// Inline text with its hard breaks turned into spaces (headings, link texts).
fn one_line(text: &str) -> String {
    collapse(&text.replace(HARD_BREAK, " ")).trim().to_owned()
}

/// Backslash, `*`, backtick, brackets, `<`, and a `_` not inside a word.
fn escape_text(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len() + 8);
    for (i, &c) in chars.iter().enumerate() {
        match c {
            '\\' | '*' | '`' | '[' | ']' | '<' => out.push('\\'),
            '_' => {
                let inside_word = i > 0
                    && chars[i - 1].is_alphanumeric()
                    && chars.get(i + 1).is_some_and(|n| n.is_alphanumeric());
                if !inside_word {
                    out.push('\\');
                }
            }
            _ => {}
        }
        out.push(c);
    }
    out
}

/// A line starting with `#`, `>`, `-`, `+`, `=`, `|` or `N.` gets a backslash.
fn escape_line_start(line: &str) -> String {
    if line.starts_with(['#', '>', '-', '+', '=', '|']) {
        return format!("\\{line}");
    }
    let digits = line.len() - line.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    if digits > 0 && line[digits..].starts_with('.') {
        return format!("{}\\{}", &line[..digits], &line[digits..]);
    }
    line.to_owned()
}

/// `marker` around `inner`, its outer spaces kept outside; nothing for empty content.
fn emphasis(marker: &str, inner: &str) -> String {
    let trimmed = inner.trim();
    if trimmed.is_empty() {
        return if inner.is_empty() {
            String::new()
        } else {
            " ".into()
        };
    }
    let lead = if inner.starts_with(' ') { " " } else { "" };
    let trail = if inner.ends_with(' ') { " " } else { "" };
    format!("{lead}{marker}{trimmed}{marker}{trail}")
}

/// A backtick span, its fence longer than any backtick run inside.
fn code_span(text: &str) -> String {
    let text = text.trim();
    if text.is_empty() {
        return String::new();
    }
    let fence = "`".repeat(longest_run(text, '`') + 1);
    let pad = if text.starts_with('`') || text.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{text}{pad}{fence}")
}

fn longest_run(text: &str, c: char) -> usize {
    let mut longest = 0;
    let mut run = 0;
    for ch in text.chars() {
        run = if ch == c { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    longest
}

/// The text under `el` as written, `<br>` as a newline, removed elements left out.
fn raw_text(el: ElementRef<'_>) -> String {
    let mut out = String::new();
    for child in el.children() {
        match child.value() {
            Node::Text(text) => out.push_str(text),
            Node::Element(e) if e.name() == "br" => out.push('\n'),
            Node::Element(_) => {
                if let Some(child) = ElementRef::wrap(child).filter(|c| !is_removed(*c)) {
                    out.push_str(&raw_text(child));
                }
            }
            _ => {}
        }
    }
    out
}

/// A URL safe inside `(…)`.
fn link_destination(url: &str) -> String {
    url.replace(' ', "%20")
        .replace('(', "%28")
        .replace(')', "%29")
}

/// `body` after `marker`, its following lines indented by the marker's width.
fn indent_item(marker: &str, body: &str) -> String {
    let pad = " ".repeat(marker.len());
    let mut out = String::new();
    for (i, line) in body.lines().enumerate() {
        if i == 0 {
            out.push_str(marker);
        } else {
            out.push('\n');
            if !line.is_empty() {
                out.push_str(&pad);
            }
        }
        out.push_str(line);
    }
    out
}

/// Whether a list item opens with a checkbox (before any text), and whether it is ticked.
fn leading_checkbox(li: ElementRef<'_>) -> Option<bool> {
    for node in li.descendants().skip(1) {
        match node.value() {
            Node::Text(text) if !text.trim().is_empty() => return None,
            Node::Element(e) if is_checkbox(e) => return Some(e.attr("checked").is_some()),
            _ => {}
        }
    }
    None
}

/// The rows of a table, its own (not those of a table nested in a cell).
fn table_rows(table: ElementRef<'_>) -> Vec<ElementRef<'_>> {
    let mut rows = Vec::new();
    for child in table.children().filter_map(ElementRef::wrap) {
        match child.value().name() {
            "tr" => rows.push(child),
            "thead" | "tbody" | "tfoot" => rows.extend(
                child
                    .children()
                    .filter_map(ElementRef::wrap)
                    .filter(|r| r.value().name() == "tr"),
            ),
            _ => {}
        }
    }
    rows
}

fn cells(row: ElementRef<'_>) -> impl Iterator<Item = ElementRef<'_>> {
    row.children()
        .filter_map(ElementRef::wrap)
        .filter(|c| matches!(c.value().name(), "td" | "th"))
}

/// A cell's `colspan`/`rowspan`, at least 1 and at most 1000.
fn span(cell: ElementRef<'_>, attr: &str) -> usize {
    cell.value()
        .attr(attr)
        .and_then(|v| v.trim().parse::<usize>().ok())
        .unwrap_or(1)
        .clamp(1, 1000)
}

fn escape_html(text: &str, attribute: bool) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' if attribute => out.push_str("&quot;"),
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn md(html: &str) -> String {
        to_markdown(html, &Options::default())
    }

    #[test]
    fn escapes_what_markdown_would_read() {
        assert_eq!(
            md("<p>a*b [c] snake_case _x_ 1<2</p>"),
            "a\\*b \\[c\\] snake_case \\_x\\_ 1\\<2\n"
        );
        assert_eq!(
            md("<p># not a heading</p><p>1. not a list</p>"),
            "\\# not a heading\n\n1\\. not a list\n"
        );
    }

    #[test]
    fn a_hard_break_never_ends_a_paragraph() {
        assert_eq!(md("<p>one<br>two<br><br></p>"), "one\\\ntwo\n");
    }
}

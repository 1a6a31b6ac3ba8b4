//! HTML → Markdown, compared whole.

use cairn_webmd::{to_markdown, Options, Tables};
use url::Url;

fn md(html: &str) -> String {
    to_markdown(html, &Options::default())
}

#[test]
fn an_article_keeps_its_content_and_loses_the_page_furniture() {
    let html = include_str!("pages/article.html");
    let options = Options {
        base: Url::parse("https://example.com/notes/page.html").ok(),
        ..Options::default()
    };
    assert_eq!(
        to_markdown(html, &options),
        include_str!("pages/article.md")
    );
}

#[test]
fn a_page_of_furniture_only_is_empty() {
    let html = "<html><head><title>x</title><script>a()</script></head><body>\
        <nav>Home</nav><div class='ad-slot'>Buy</div><footer>© me</footer></body></html>";
    assert_eq!(md(html), "");
}

#[test]
fn furniture_holding_the_main_content_is_kept() {
    let html = "<div class='content-with-sidebar'><h1>Title</h1><p>Body</p></div>";
    assert_eq!(md(html), "# Title\n\nBody\n");
}

#[test]
fn tables_with_spans_stay_html_or_are_flattened() {
    let html = "<table><tr><th colspan='2' class='x' style='y'>Both</th></tr>\
        <tr><td rowspan='2'>A</td><td>1</td></tr><tr><td>2</td></tr></table>";
    assert_eq!(
        md(html),
        "<table><tbody><tr><th colspan=\"2\">Both</th></tr><tr><td rowspan=\"2\">A</td><td>1</td></tr><tr><td>2</td></tr></tbody></table>\n"
    );
    let flat = Options {
        tables: Tables::Flatten,
        ..Options::default()
    };
    assert_eq!(
        to_markdown(html, &flat),
        "| Both | Both |\n| --- | --- |\n| A | 1 |\n| A | 2 |\n"
    );
}

#[test]
fn strikethrough_and_task_lists_are_options() {
    let html =
        "<p>was <del>10.0.3.5</del> now</p><ul><li><input type='checkbox' checked> done</li>\
        <li><input type='checkbox'> todo</li></ul>";
    assert_eq!(md(html), "was 10.0.3.5 now\n\n- done\n- todo\n");
    let options = Options {
        strikethrough: true,
        task_list: true,
        ..Options::default()
    };
    assert_eq!(
        to_markdown(html, &options),
        "was ~~10.0.3.5~~ now\n\n- [x] done\n- [ ] todo\n"
    );
}

#[test]
fn text_that_markdown_would_read_as_syntax_is_escaped() {
    let html = "<p>a*b [c] `d` \\e snake_case _x_ 1&lt;2</p><p># not a heading</p>\
        <p>12. not a list</p><p>- not an item</p><p>| not a table</p>";
    assert_eq!(
        md(html),
        "a\\*b \\[c\\] \\`d\\` \\\\e snake_case \\_x\\_ 1\\<2\n\n\\# not a heading\n\n12\\. not a list\n\n\\- not an item\n\n\\| not a table\n"
    );
}

#[test]
fn code_keeps_its_text_and_outgrows_its_backticks() {
    let html = "<p>use <code>a*b `c`</code></p><pre class='lang-rust'>let x = \"```\";</pre>";
    assert_eq!(
        md(html),
        "use `` a*b `c` ``\n\n````rust\nlet x = \"```\";\n````\n"
    );
}

#[test]
fn broken_html_is_repaired_then_converted() {
    let html = "<p>one <b>two <i>three</p><p>four</b> five<div>six";
    assert_eq!(
        md(html),
        "one **two *three***\n\n***four*** *five*\n\n*six*\n"
    );
}

#[test]
fn unknown_elements_are_containers_or_text() {
    let html = "<x-card><x-title>Hello <x-em>there</x-em></x-title><p>Body</p></x-card>";
    assert_eq!(md(html), "Hello there\n\nBody\n");
}

//! What of a page is not content: the elements, roles, classes and attributes fetch_content drops
//! before converting (agent-tools.md, "Removed" and "Attributes").

use scraper::node::Element;
use scraper::ElementRef;

/// Elements dropped with everything inside them.
const REMOVED_TAGS: &[&str] = &[
    "script", "style", "noscript", "template", "meta", "link", "base", "title", "svg", "canvas",
    "iframe", "object", "embed", "nav", "aside", "dialog", "button", "select", "textarea",
];

/// ARIA roles of page furniture.
const REMOVED_ROLES: &[&str] = &[
    "navigation",
    "banner",
    "complementary",
    "search",
    "contentinfo",
    "dialog",
];

/// Words of a class or id that mark furniture, with their common variants.
const FURNITURE_WORDS: &[&str] = &[
    "ad",
    "ads",
    "advert",
    "adverts",
    "advertisement",
    "advertising",
    "adsbygoogle",
    "sponsor",
    "sponsors",
    "sponsored",
    "promo",
    "promos",
    "promoted",
    "cookie",
    "cookies",
    "consent",
    "gdpr",
    "newsletter",
    "subscribe",
    "popup",
    "modal",
    "share",
    "sharing",
    "social",
    "breadcrumb",
    "breadcrumbs",
    "nav",
    "navbar",
    "navigation",
    "menu",
    "sidebar",
    "skiplink",
    "skiplinks",
];

/// Classes that hide text from the eye.
const HIDDEN_CLASSES: &[&str] = &["sr-only", "visually-hidden", "screen-reader-text"];

/// Whether `el` (and all it holds) is left out of the Markdown.
pub fn is_removed(el: ElementRef<'_>) -> bool {
    let e = el.value();
    let name = e.name();
    if REMOVED_TAGS.contains(&name) {
        return true;
    }
    if name == "input" {
        return !is_checkbox(e);
    }
    if name == "footer"
        && !el
            .ancestors()
            .filter_map(ElementRef::wrap)
            .any(|a| matches!(a.value().name(), "article" | "main"))
    {
        return true;
    }
    if e.attr("hidden").is_some()
        || e.attr("aria-hidden")
            .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
        || e.attr("role").is_some_and(|role| {
            role.split_ascii_whitespace()
                .any(|r| REMOVED_ROLES.contains(&r.to_ascii_lowercase().as_str()))
        })
    {
        return true;
    }
    if e.classes()
        .any(|c| HIDDEN_CLASSES.contains(&c.to_ascii_lowercase().as_str()))
    {
        return true;
    }
    // The page's frame is never furniture, whatever its classes say ("has-sidebar" on <body>).
    if matches!(name, "html" | "body" | "main" | "article") {
        return false;
    }
    let furniture = e.classes().any(is_furniture_name) || e.id().is_some_and(is_furniture_name);
    furniture && !holds_content(el)
}

/// An `<input type="checkbox">`, the only input kept (task lists).
pub fn is_checkbox(e: &Element) -> bool {
    e.name() == "input"
        && e.attr("type")
            .is_some_and(|t| t.trim().eq_ignore_ascii_case("checkbox"))
}

/// A class or id naming furniture: the whole name, one of its `-`/`_` words, or the name with its
/// separators removed (`skip-link`).
fn is_furniture_name(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    let is_word = |w: &str| FURNITURE_WORDS.contains(&w);
    is_word(&name) || name.split(['-', '_']).any(is_word) || is_word(&name.replace(['-', '_'], ""))
}

/// A furniture-classed element holding the page's main content is kept.
fn holds_content(el: ElementRef<'_>) -> bool {
    el.descendants()
        .filter_map(ElementRef::wrap)
        .any(|d| matches!(d.value().name(), "main" | "article" | "h1"))
}

/// The attributes kept when an element is written out as HTML (a complex table).
pub fn kept_attributes(e: &Element) -> Vec<(&str, String)> {
    let name = e.name();
    let keep = |attr: &str| -> bool {
        matches!(
            (name, attr),
            ("a", "href")
                | ("img", "src" | "alt")
                | ("td" | "th", "colspan" | "rowspan")
                | ("ol", "start")
                | ("input", "type" | "checked")
        )
    };
    let mut kept: Vec<(&str, String)> = e
        .attrs()
        .filter(|(attr, _)| keep(attr))
        .map(|(attr, value)| (attr, value.to_owned()))
        .collect();
    if matches!(name, "pre" | "code") {
        let languages: Vec<&str> = e
            .classes()
            .filter(|c| c.starts_with("language-") || c.starts_with("lang-"))
            .collect();
        if !languages.is_empty() {
            kept.push(("class", languages.join(" ")));
        }
    }
    kept
}

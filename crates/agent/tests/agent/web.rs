//! fetch_content through the loop: a scripted model asks for pages served on 127.0.0.1, and the
//! results are compared whole.

use axum::http::header;
use axum::routing::get;
use axum::Router;
use cairn_agent::{Event, Runtime};
use cairn_test_support::{serve, text_reply, tool_calls_reply, MockServer};
use cairn_tools::ToolboxOptions;
use serde_json::json;
use tempfile::TempDir;

use crate::support::{results, run, run_approving, Setup};

type TestResult = Result<(), Box<dyn std::error::Error>>;

const PAGE: &str = "<html><head><title>T</title></head><body><nav>Menu</nav>\
    <h1>Release notes</h1><p>Version <b>2.1</b> ships the <a href='/docs'>new docs</a>.</p></body></html>";

async fn site() -> Result<String, std::io::Error> {
    let html = |body: &'static str| async move { ([(header::CONTENT_TYPE, "text/html")], body) };
    serve(
        Router::new()
            .route(
                "/robots.txt",
                get(|| async { "User-agent: *\nDisallow: /private\n" }),
            )
            .route("/notes", get(move || html(PAGE)))
            .route("/private/notes", get(move || html(PAGE)))
            .route(
                "/empty",
                get(move || html("<script>x()</script><nav>Home</nav>")),
            ),
    )
    .await
}

#[tokio::test]
async fn fetch_content_returns_or_saves_the_page_and_says_what_went_wrong() -> TestResult {
    let dir = TempDir::new()?;
    let origin = site().await?;
    let server = MockServer::start(vec![
        tool_calls_reply(
            "",
            &[
                (
                    "c1",
                    "fetch_content",
                    json!({"url": format!("{origin}/notes")}),
                ),
                (
                    "c2",
                    "fetch_content",
                    json!({"url": format!("{origin}/notes"), "output": "web/notes.md"}),
                ),
                (
                    "c3",
                    "fetch_content",
                    json!({"url": format!("{origin}/empty"), "output": "web/empty.md"}),
                ),
                (
                    "c4",
                    "fetch_content",
                    json!({"url": format!("{origin}/private/notes")}),
                ),
                (
                    "c5",
                    "fetch_content",
                    json!({"url": "ftp://example.com/file"}),
                ),
                (
                    "c6",
                    "fetch_content",
                    json!({"url": format!("{origin}/notes"), "tables": "grid"}),
                ),
            ],
        ),
        text_reply("Read it."),
    ])
    .await?;
    let runtime = Runtime::new(
        Setup::new(&server, dir.path())
            .tools(ToolboxOptions {
                // The pages are served on this computer: allowed, as a person allows a local docs site.
                fetch_allow_hosts: vec!["127.0.0.1".into()],
                ..ToolboxOptions::default()
            })
            .settings(),
        None,
    );
    let out = results(&run(&runtime, "s", "read the release notes").await);
    let markdown =
        format!("# Release notes\n\nVersion **2.1** ships the [new docs]({origin}/docs).\n");
    assert_eq!(out[0], format!("[#0001]\n{markdown}"));
    assert_eq!(
        out[1],
        format!("[#0002]\n[fetch_content: saved 3 lines of Markdown ({} bytes) from {origin}/notes to web/notes.md — the content is not shown]", markdown.len())
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("web/notes.md"))?,
        markdown
    );
    assert_eq!(
        out[2],
        format!("[#0003]\n[fetch_content: {origin}/empty has no text content once scripts, navigation and ads are removed — nothing saved]")
    );
    assert!(!dir.path().join("web/empty.md").exists());
    assert_eq!(
        out[3],
        format!("[#0004]\n[fetch_content: error 2 (input) — robots.txt of {origin} forbids /private/notes]")
    );
    assert_eq!(
        out[4],
        "[#0005]\n[fetch_content: error 3 (usage) — \"ftp://example.com/file\" uses ftp: — only http and https pages can be fetched]"
    );
    assert_eq!(
        out[5],
        "[#0006]\n[fetch_content: error 3 (usage) — tables is \"grid\" — use html or flatten]"
    );
    let declared = &server.requests()[0]["tools"];
    assert!(
        declared.to_string().contains("\"fetch_content\""),
        "{declared}"
    );
    Ok(())
}

#[tokio::test]
async fn fetch_content_asks_before_writing_a_file_only() -> TestResult {
    let dir = TempDir::new()?;
    let origin = site().await?;
    let server = MockServer::start(vec![
        tool_calls_reply(
            "",
            &[
                (
                    "c1",
                    "fetch_content",
                    json!({"url": format!("{origin}/notes")}),
                ),
                (
                    "c2",
                    "fetch_content",
                    json!({"url": format!("{origin}/notes"), "output": "notes.md"}),
                ),
            ],
        ),
        text_reply("ok"),
    ])
    .await?;
    let mut settings = Setup::new(&server, dir.path())
        .tools(ToolboxOptions {
            // The pages are served on this computer: allowed, as a person allows a local docs site.
            fetch_allow_hosts: vec!["127.0.0.1".into()],
            ..ToolboxOptions::default()
        })
        .settings();
    settings.yolo = false;
    let runtime = Runtime::new(settings, None);
    let seen = run_approving(&runtime, "s", "go", |_| false).await?;
    let asked: Vec<&str> = seen
        .iter()
        .filter_map(|e| match e {
            Event::ApprovalRequest { tool, .. } => Some(tool.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(asked, ["fetch_content"]);
    let out = results(&seen);
    assert!(out[0].starts_with("[#0001]\n# Release notes"), "{}", out[0]);
    assert_eq!(out[1], "[#0002]\n[fetch_content rejected by the user]");
    assert!(!dir.path().join("notes.md").exists());
    Ok(())
}

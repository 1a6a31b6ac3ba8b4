//! Fetching from a server on 127.0.0.1: each test starts its own, so robots.txt answers (cached per
//! origin) never leak between tests. The fetcher allows 127.0.0.1, which is otherwise refused.

use std::time::Duration;

use axum::body::Body;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use cairn_test_support::serve;
use cairn_webmd::{parse_url, Error, Fetcher};

type TestResult = Result<(), Box<dyn std::error::Error>>;

fn html(content_type: &'static str, body: impl Into<Body>) -> Response {
    ([(header::CONTENT_TYPE, content_type)], body.into()).into_response()
}

fn robots(rules: &'static str) -> Router {
    Router::new().route("/robots.txt", get(move || async move { rules }))
}

/// The default fetcher, with the test servers' 127.0.0.1 allowed.
fn fetcher() -> Fetcher {
    Fetcher {
        allow_hosts: vec!["127.0.0.1".into()],
        ..Fetcher::default()
    }
}

async fn fetch(url: &str) -> Result<cairn_webmd::Page, Error> {
    fetcher().fetch(&parse_url(url)?).await
}

#[tokio::test]
async fn pages_are_decoded_in_the_specs_order() -> TestResult {
    let app = robots("")
        // A BOM wins over everything.
        .route("/bom", get(|| async {
            let mut body = vec![0xFF, 0xFE];
            for unit in "<p>h\u{e9}</p>".encode_utf16() {
                body.extend_from_slice(&unit.to_le_bytes());
            }
            html("text/html; charset=iso-8859-2", body)
        }))
        // The header's charset (latin-1 means windows-1252).
        .route("/header", get(|| async { html("text/html; charset=ISO-8859-1", b"<p>caf\xe9 \x80</p>".to_vec()) }))
        // An unknown header charset is skipped; the <meta> says Shift_JIS.
        .route("/meta", get(|| async {
            html("text/html; charset=klingon", b"<meta charset=\"shift_jis\"><p>\x93\xfa\x96\x7b</p>".to_vec())
        }))
        .route("/http-equiv", get(|| async {
            html("text/html", b"<meta http-equiv=\"Content-Type\" content=\"text/html; charset=koi8-r\"><p>\xf0\xd2\xc9\xd7\xc5\xd4</p>".to_vec())
        }))
        // Valid UTF-8 without a declaration, then invalid bytes read as windows-1252.
        .route("/utf8", get(|| async { html("text/html", "<p>日本 — ok</p>") }))
        .route("/invalid", get(|| async { html("text/html", b"<p>na\xefve \x93quoted\x94</p>".to_vec()) }));
    let origin = serve(app).await?;
    for (path, text) in [
        ("/bom", "hé"),
        ("/header", "café €"),
        ("/meta", "日本"),
        ("/http-equiv", "Привет"),
        ("/utf8", "日本 — ok"),
        ("/invalid", "naïve “quoted”"),
    ] {
        let page = fetch(&format!("{origin}{path}")).await?;
        assert!(page.html.contains(text), "{path}: {:?}", page.html);
    }
    Ok(())
}

#[tokio::test]
async fn robots_txt_rules_are_obeyed_longest_match_first() -> TestResult {
    let app = robots(
        "User-agent: *\nDisallow: /\n\nUser-agent: cairn\nDisallow: /private\nAllow: /private/open$\nDisallow: /*.pdf$\n",
    )
    .route("/public", get(|| async { html("text/html", "<p>yes</p>") }))
    .route("/private/open", get(|| async { html("text/html", "<p>open</p>") }))
    .route("/private/closed", get(|| async { html("text/html", "<p>no</p>") }))
    .route("/redirect", get(|| async { (StatusCode::FOUND, [(header::LOCATION, "/private/closed")]) }));
    let origin = serve(app).await?;
    assert!(fetch(&format!("{origin}/public"))
        .await?
        .html
        .contains("yes"));
    assert!(fetch(&format!("{origin}/private/open"))
        .await?
        .html
        .contains("open"));
    let denied = fetch(&format!("{origin}/private/closed")).await;
    assert_eq!(
        denied.err(),
        Some(Error::Input(format!(
            "robots.txt of {origin} forbids /private/closed"
        )))
    );
    // Allowed where it starts, forbidden where it leads.
    let redirected = fetch(&format!("{origin}/redirect")).await;
    assert_eq!(
        redirected.err(),
        Some(Error::Input(format!(
            "robots.txt of {origin} forbids /private/closed"
        )))
    );
    Ok(())
}

#[tokio::test]
async fn a_missing_robots_txt_allows_a_failing_one_forbids() -> TestResult {
    let page = || async { html("text/html", "<p>page</p>") };
    let missing = serve(Router::new().route("/p", get(page))).await?;
    assert!(fetch(&format!("{missing}/p")).await?.html.contains("page"));

    let failing = serve(
        Router::new()
            .route(
                "/robots.txt",
                get(|| async { StatusCode::INTERNAL_SERVER_ERROR }),
            )
            .route("/p", get(page)),
    )
    .await?;
    assert_eq!(
        fetch(&format!("{failing}/p")).await.err(),
        Some(Error::Input(format!(
            "robots.txt of {failing} cannot be read (HTTP 500), which forbids every page"
        )))
    );

    // A server that accepts and hangs up without a word.
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    let silent = format!("http://{}", listener.local_addr()?);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            drop(stream);
        }
    });
    match fetch(&format!("{silent}/p")).await {
        Err(Error::Input(reason)) => assert!(
            reason.starts_with(&format!(
                "robots.txt of {silent} cannot be read (unreachable: "
            )),
            "{reason}"
        ),
        other => panic!("{other:?}"),
    }
    Ok(())
}

#[tokio::test]
async fn limits_size_time_redirections_and_type() -> TestResult {
    let big = || async { html("text/html", vec![b'a'; 6 * 1024 * 1024]) };
    let streamed = || async {
        let chunks = (0..96).map(|_| Ok::<_, std::io::Error>(vec![b'a'; 64 * 1024]));
        html(
            "text/html",
            Body::from_stream(futures_util::stream::iter(chunks)),
        )
    };
    let app = robots("")
        .route("/big", get(big))
        .route("/streamed", get(streamed))
        .route(
            "/slow",
            get(|| async {
                tokio::time::sleep(Duration::from_secs(5)).await;
                html("text/html", "<p>late</p>")
            }),
        )
        .route(
            "/loop/{n}",
            get(
                |axum::extract::Path(n): axum::extract::Path<u32>| async move {
                    (
                        StatusCode::MOVED_PERMANENTLY,
                        [(header::LOCATION, format!("/loop/{}", n + 1))],
                    )
                },
            ),
        )
        .route("/json", get(|| async { html("application/json", "{}") }))
        .route(
            "/sniffed",
            get(|| async { Response::new(Body::from("<!DOCTYPE html><p>x</p>")) }),
        )
        .route(
            "/unsniffable",
            get(|| async { Response::new(Body::from("%PDF-1.7")) }),
        )
        .route("/missing", get(|| async { StatusCode::NOT_FOUND }));
    let origin = serve(app).await?;
    assert_eq!(
        fetch(&format!("{origin}/big")).await.err(),
        Some(Error::Conversion(format!(
            "{origin}/big is larger than 5 MiB"
        )))
    );
    assert_eq!(
        fetch(&format!("{origin}/streamed")).await.err(),
        Some(Error::Conversion(format!(
            "{origin}/streamed is larger than 5 MiB"
        )))
    );
    let quick = Fetcher {
        timeout: Duration::from_millis(500),
        ..fetcher()
    };
    assert_eq!(
        quick
            .fetch(&parse_url(&format!("{origin}/slow"))?)
            .await
            .err(),
        Some(Error::Input(format!(
            "{origin}/slow did not answer within 0.5 s"
        )))
    );
    assert_eq!(
        fetch(&format!("{origin}/loop/0")).await.err(),
        Some(Error::Input(format!(
            "more than 10 redirections from {origin}/loop/10"
        )))
    );
    let sniffed = fetch(&format!("{origin}/sniffed")).await?;
    assert_eq!(sniffed.html, "<!DOCTYPE html><p>x</p>");
    assert_eq!(
        fetch(&format!("{origin}/unsniffable")).await.err(),
        Some(Error::Conversion(format!(
            "{origin}/unsniffable is not an HTML page (no Content-Type, and the content is not HTML)"
        )))
    );
    assert_eq!(
        fetch(&format!("{origin}/json")).await.err(),
        Some(Error::Conversion(format!(
            "{origin}/json is not an HTML page (Content-Type: application/json)"
        )))
    );
    assert_eq!(
        fetch(&format!("{origin}/missing")).await.err(),
        Some(Error::Input(format!(
            "HTTP 404 Not Found from {origin}/missing"
        )))
    );
    Ok(())
}

#[test]
fn urls_are_repaired_or_refused() {
    let ok = |raw: &str| parse_url(raw).map(String::from);
    assert_eq!(ok("k33g.org"), Ok("https://k33g.org/".into()));
    assert_eq!(ok("https//k33g.org/a"), Ok("https://k33g.org/a".into()));
    assert_eq!(ok("http//k33g.org"), Ok("http://k33g.org/".into()));
    assert_eq!(
        ok(" http://127.0.0.1:8080/x "),
        Ok("http://127.0.0.1:8080/x".into())
    );
    assert_eq!(ok(""), Err(Error::Usage("the url is empty".into())));
    assert_eq!(
        ok("ftp://k33g.org"),
        Err(Error::Usage(
            "\"ftp://k33g.org\" uses ftp: — only http and https pages can be fetched".into()
        ))
    );
}

//! This computer and private networks are refused — IP literals in every spelling, names that
//! resolve there, redirections and robots.txt leading there — before any connection, with one text
//! that says nothing about what listens there; allowed hosts are fetched as before. Only loopback
//! servers are started; private addresses are refused before a connection is tried.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::http::{header, StatusCode};
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;
use cairn_test_support::serve;
use cairn_webmd::{parse_url, Error, Fetcher};

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// A server on 127.0.0.1 that answers every path with a page and counts the requests it gets.
async fn counted() -> Result<(String, Arc<AtomicUsize>), std::io::Error> {
    let hits = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&hits);
    let app = Router::new().fallback(move || {
        let seen = Arc::clone(&seen);
        async move {
            seen.fetch_add(1, Ordering::SeqCst);
            ([(header::CONTENT_TYPE, "text/html")], "<p>secret</p>")
        }
    });
    Ok((serve(app).await?, hits))
}

/// A loopback port nothing listens on.
fn closed_port() -> Result<u16, std::io::Error> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    Ok(listener.local_addr()?.port())
}

fn port_of(origin: &str) -> Result<u16, Box<dyn std::error::Error>> {
    parse_url(origin)?
        .port()
        .ok_or_else(|| format!("{origin} has no port").into())
}

fn refused(url: &str) -> Result<Error, Box<dyn std::error::Error>> {
    Ok(Error::Refused {
        url: parse_url(url)?.to_string(),
    })
}

async fn fetch_with(fetcher: &Fetcher, url: &str) -> Result<cairn_webmd::Page, Error> {
    fetcher.fetch(&parse_url(url)?).await
}

#[tokio::test]
async fn loopback_in_every_spelling_is_refused_without_a_request() -> TestResult {
    let (origin, hits) = counted().await?;
    let port = port_of(&origin)?;
    let fetcher = Fetcher::default();
    for url in [
        format!("http://127.0.0.1:{port}/"),
        format!("http://localhost:{port}/"),
        format!("http://2130706433:{port}/"),
        format!("http://127.1:{port}/"),
        format!("http://0x7f.0.0.1:{port}/"),
        format!("http://0.0.0.0:{port}/"),
        format!("http://[::1]:{port}/"),
        format!("http://[::ffff:127.0.0.1]:{port}/"),
        format!("http://[::]:{port}/"),
        format!("127.0.0.1:{port}/page"),
    ] {
        assert_eq!(
            fetch_with(&fetcher, &url).await.err(),
            Some(refused(&url)?),
            "{url}"
        );
    }
    // Neither robots.txt nor the page was asked for.
    assert_eq!(hits.load(Ordering::SeqCst), 0);
    Ok(())
}

#[tokio::test]
async fn the_refusal_is_one_text_whether_anything_listens() -> TestResult {
    let (origin, hits) = counted().await?;
    let open = port_of(&origin)?;
    let closed = closed_port()?;
    let fetcher = Fetcher::default();
    for host in ["127.0.0.1", "localhost"] {
        let texts = [
            fetch_with(&fetcher, &format!("http://{host}:{open}/x")).await,
            fetch_with(&fetcher, &format!("http://{host}:{closed}/x")).await,
        ]
        .map(|result| result.err().map(|e| e.to_string()));
        assert_eq!(
            texts[0],
            Some(format!(
                "http://{host}:{open}/x is refused: it points at this computer or a private network \
                 (add its host to [agent] fetch_allow_hosts to allow it)"
            ))
        );
        assert_eq!(
            texts[1]
                .as_ref()
                .map(|t| t.replace(&closed.to_string(), "PORT")),
            texts[0]
                .as_ref()
                .map(|t| t.replace(&open.to_string(), "PORT")),
        );
    }
    assert_eq!(hits.load(Ordering::SeqCst), 0);
    Ok(())
}

#[tokio::test]
async fn private_link_local_and_metadata_literals_are_refused_before_connecting() -> TestResult {
    // A short deadline: a refusal is immediate, an attempted connection would not be.
    let fetcher = Fetcher {
        timeout: Duration::from_secs(2),
        ..Fetcher::default()
    };
    for url in [
        "http://10.0.0.1/",
        "http://10.255.1.2:8080/admin",
        "http://172.16.0.1/",
        "http://192.168.1.1/",
        "http://169.254.169.254/latest/meta-data/",
        "http://100.64.0.1/",
        "http://224.0.0.1/",
        "http://255.255.255.255/",
        "http://[fe80::1]/",
        "http://[fd00::1]/",
        "http://[::ffff:10.0.0.1]/",
        "http://[::ffff:169.254.169.254]/",
        "https://192.168.0.10/wiki",
    ] {
        assert_eq!(
            fetch_with(&fetcher, url).await.err(),
            Some(refused(url)?),
            "{url}"
        );
    }
    Ok(())
}

#[tokio::test]
async fn allowed_hosts_are_fetched() -> TestResult {
    let (origin, hits) = counted().await?;
    let port = port_of(&origin)?;
    let fetcher = Fetcher {
        allow_hosts: vec!["LOCALHOST".into(), "127.0.0.1".into()],
        ..Fetcher::default()
    };
    for url in [
        format!("http://localhost:{port}/a"),
        format!("http://127.0.0.1:{port}/b"),
        format!("http://127.1:{port}/b"),
    ] {
        let page = fetch_with(&fetcher, &url).await?;
        assert!(page.html.contains("secret"), "{url}");
    }
    // Allowing 127.0.0.1 allows that literal only: 127.1 is the same address and is allowed,
    // ::ffff:127.0.0.1 is another literal and is not.
    let only_ip = Fetcher {
        allow_hosts: vec!["127.0.0.1".into()],
        ..Fetcher::default()
    };
    let mapped = format!("http://[::ffff:127.0.0.1]:{port}/c");
    assert_eq!(
        fetch_with(&only_ip, &mapped).await.err(),
        Some(refused(&mapped)?)
    );
    assert!(hits.load(Ordering::SeqCst) >= 3);
    Ok(())
}

#[tokio::test]
async fn a_redirection_to_a_refused_host_is_refused_whether_anything_listens() -> TestResult {
    let (target, hits) = counted().await?;
    let open = port_of(&target)?;
    let closed = closed_port()?;
    let redirect = |to: String| {
        move || {
            let to = to.clone();
            async move { (StatusCode::FOUND, [(header::LOCATION, to)]).into_response() }
        }
    };
    let app = Router::new()
        .route("/robots.txt", get(|| async { "" }))
        .route(
            "/to-open",
            get(redirect(format!("http://localhost:{open}/page"))),
        )
        .route(
            "/to-closed",
            get(redirect(format!("http://localhost:{closed}/page"))),
        )
        .route(
            "/to-mapped",
            get(redirect(format!("http://[::ffff:127.0.0.1]:{open}/page"))),
        )
        .route(
            "/to-zero",
            get(redirect(format!("http://0.0.0.0:{open}/page"))),
        );
    let origin = serve(app).await?;
    // The redirecting server is allowed; where it leads is not.
    let fetcher = Fetcher {
        allow_hosts: vec!["127.0.0.1".into()],
        ..Fetcher::default()
    };
    let to_open = fetch_with(&fetcher, &format!("{origin}/to-open")).await;
    let to_closed = fetch_with(&fetcher, &format!("{origin}/to-closed")).await;
    assert_eq!(
        to_open.as_ref().err(),
        Some(&refused(&format!("http://localhost:{open}/page"))?)
    );
    assert_eq!(
        to_closed.as_ref().err(),
        Some(&refused(&format!("http://localhost:{closed}/page"))?)
    );
    assert_eq!(
        to_open
            .err()
            .map(|e| e.to_string().replace(&open.to_string(), "PORT")),
        to_closed
            .err()
            .map(|e| e.to_string().replace(&closed.to_string(), "PORT")),
    );
    for (path, to) in [
        (
            "/to-mapped",
            format!("http://[::ffff:127.0.0.1]:{open}/page"),
        ),
        ("/to-zero", format!("http://0.0.0.0:{open}/page")),
    ] {
        assert_eq!(
            fetch_with(&fetcher, &format!("{origin}{path}")).await.err(),
            Some(refused(&to)?),
            "{path}"
        );
    }
    assert_eq!(hits.load(Ordering::SeqCst), 0);
    Ok(())
}

#[tokio::test]
async fn robots_txt_is_not_read_from_a_refused_host() -> TestResult {
    let (target, hits) = counted().await?;
    let open = port_of(&target)?;
    let page = || async { ([(header::CONTENT_TYPE, "text/html")], "<p>page</p>") };
    let robots_to = |to: String| {
        Router::new()
            .route(
                "/robots.txt",
                get(move || {
                    let to = to.clone();
                    async move { (StatusCode::MOVED_PERMANENTLY, [(header::LOCATION, to)]) }
                }),
            )
            .route("/page", get(page))
    };
    let fetcher = Fetcher {
        allow_hosts: vec!["127.0.0.1".into()],
        ..Fetcher::default()
    };
    for to in [
        format!("http://localhost:{open}/robots.txt"),
        format!("http://[::ffff:127.0.0.1]:{open}/robots.txt"),
        format!("http://[::1]:{open}/robots.txt"),
    ] {
        let origin = serve(robots_to(to.clone())).await?;
        assert_eq!(
            fetch_with(&fetcher, &format!("{origin}/page")).await.err(),
            Some(refused(&to)?),
            "{to}"
        );
    }
    assert_eq!(hits.load(Ordering::SeqCst), 0);
    Ok(())
}

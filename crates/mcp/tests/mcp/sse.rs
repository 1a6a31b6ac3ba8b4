//! The older SSE transport against hand-made servers on 127.0.0.1: an `endpoint` event naming
//! another origin is refused before anything (or any configured header) is sent there, and a
//! stream that never names its endpoint is cut off early instead of being read without end.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use cairn_config::{McpServerConfig, McpTransport, Secret};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use super::{stdio, TestResult};

/// The configured header every request of these tests would carry.
const SECRET: &str = "Bearer sk-cairn-test-secret";

/// The heads of the requests a hand-made server received, in order.
type Seen = Arc<Mutex<Vec<String>>>;

/// An event stream's response: its head, then `events` (the stream then stays open).
fn stream(events: impl Into<Vec<u8>>) -> Vec<u8> {
    let mut response =
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n\r\n"
            .to_vec();
    response.extend(events.into());
    response
}

/// Serves `listener` until the test ends: records every request's head; answers a GET with
/// `stream` (a whole response, then the connection stays open), anything else with 202.
fn serve(listener: TcpListener, stream: Vec<u8>) -> Seen {
    let seen: Seen = Arc::default();
    let record = seen.clone();
    let stream = Arc::new(stream);
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            tokio::spawn(answer(socket, record.clone(), stream.clone()));
        }
    });
    seen
}

async fn answer(mut socket: TcpStream, seen: Seen, stream: Arc<Vec<u8>>) {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") && head.len() < 64 * 1024 {
        match socket.read(&mut byte).await {
            Ok(1) => head.extend_from_slice(&byte),
            _ => break,
        }
    }
    let head = String::from_utf8_lossy(&head).into_owned();
    let get = head.starts_with("GET ");
    if let Ok(mut seen) = seen.lock() {
        seen.push(head);
    }
    if get {
        let _ = socket.write_all(&stream).await;
        let _ = socket.flush().await;
        tokio::time::sleep(Duration::from_secs(120)).await;
    } else {
        let _ = socket
            .write_all(b"HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
            .await;
    }
}

fn heads(seen: &Seen) -> Vec<String> {
    seen.lock().map(|s| s.clone()).unwrap_or_default()
}

/// The SSE server at `port` of 127.0.0.1, with the secret header, given `startup` to start.
fn sse(port: u16, startup: Duration) -> McpServerConfig {
    let mut config = stdio("unused", &[]);
    config.transport = McpTransport::Sse {
        url: format!("http://127.0.0.1:{port}/sse"),
        headers: BTreeMap::from([("Authorization".to_owned(), Secret::new(SECRET))]),
    };
    config.startup_timeout = startup;
    config
}

/// The error connecting to `config` gives (it must not connect).
async fn refusal(config: &McpServerConfig) -> Result<String, Box<dyn std::error::Error>> {
    match cairn_mcp::connect("remote", config).await {
        Ok(_) => Err("the server was connected".into()),
        Err(e) => Ok(e.to_string()),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endpoint_on_another_origin_gets_no_request_and_no_headers() -> TestResult {
    let elsewhere = TcpListener::bind("127.0.0.1:0").await?;
    let other_port = elsewhere.local_addr()?.port();
    let other = serve(elsewhere, stream(""));
    // Another port, another host name for the same address, another scheme.
    let cases = [
        "http://127.0.0.1:OTHER/message?sessionId=1",
        "http://localhost:OWN/message?sessionId=1",
        "https://127.0.0.1:OWN/message",
    ];
    for case in cases {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let own = listener.local_addr()?.port();
        let endpoint = case
            .replace("OTHER", &other_port.to_string())
            .replace("OWN", &own.to_string());
        // Scheme, host and port: what comes before the path.
        let origin = endpoint
            .splitn(4, '/')
            .take(3)
            .collect::<Vec<_>>()
            .join("/");
        let seen = serve(
            listener,
            stream(format!("event: endpoint\ndata: {endpoint}\n\n")),
        );
        let error = refusal(&sse(own, Duration::from_secs(5))).await?;
        assert!(
            error.contains(&origin) && error.contains(&format!("http://127.0.0.1:{own}")),
            "the refusal names both origins: {error}"
        );
        assert!(!error.contains("sk-cairn"), "{error}");
        tokio::time::sleep(Duration::from_millis(200)).await;
        let heads = heads(&seen);
        assert_eq!(heads.len(), 1, "only the stream was opened: {heads:?}");
        assert!(heads[0].starts_with("GET /sse "), "{heads:?}");
        assert!(
            heads[0].contains(SECRET),
            "the stream itself gets the headers"
        );
        assert_eq!(
            self::heads(&other),
            Vec::<String>::new(),
            "nothing reached {endpoint}"
        );
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_that_never_names_its_endpoint_is_cut_off() -> TestResult {
    let megabyte = 1024 * 1024;
    // One event that never ends, and many whole events none of which is the endpoint.
    let junk = [
        "data: junk junk junk junk junk junk junk\n"
            .repeat(megabyte / 41)
            .into_bytes(),
        ": keep-alive\n\nevent: message\ndata: {}\n\n"
            .repeat(megabyte / 40)
            .into_bytes(),
    ];
    for stream in junk {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let port = listener.local_addr()?.port();
        serve(listener, self::stream(stream));
        let started = Instant::now();
        let error = refusal(&sse(port, Duration::from_secs(20))).await?;
        assert!(
            error.contains("64 KiB") && error.contains("without naming its endpoint"),
            "{error}"
        );
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{:?}",
            started.elapsed()
        );
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redirect_to_another_origin_is_not_followed() -> TestResult {
    let elsewhere = TcpListener::bind("127.0.0.1:0").await?;
    let other_port = elsewhere.local_addr()?.port();
    let other = serve(elsewhere, stream("event: endpoint\ndata: /message\n\n"));
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let own = listener.local_addr()?.port();
    let seen = serve(
        listener,
        format!(
            "HTTP/1.1 307 Temporary Redirect\r\nlocation: http://127.0.0.1:{other_port}/sse\r\n\
             content-length: 0\r\n\r\n"
        )
        .into_bytes(),
    );
    let error = refusal(&sse(own, Duration::from_secs(5))).await?;
    assert!(error.contains("another origin"), "{error}");
    assert!(!error.contains("sk-cairn"), "{error}");
    assert_eq!(heads(&seen).len(), 1);
    assert_eq!(
        heads(&other),
        Vec::<String>::new(),
        "the redirect was not followed"
    );
    Ok(())
}

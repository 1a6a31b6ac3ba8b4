//! The official MCP conformance suite (`@modelcontextprotocol/conformance`, installed by setup with
//! the Node 22 it runs on) against Cairn's `/mcp` on a real server: the scenarios a server that
//! offers tools answers — initialize, ping, tools/list, and DNS-rebinding protection. The suite
//! sends no token, so a proxy on loopback adds it and passes everything else through as sent
//! (Host and Origin included, so Cairn's guards judge what the suite sent).

use std::sync::Arc;

use axum::body::Body;
use axum::extract::Request;
use axum::response::Response;
use cairn_api::chat::Chat;
use cairn_api::Cairn;
use cairn_config::Home;

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// A proxy on loopback in front of `target` that adds the token; its address.
async fn token_proxy(target: String, token: String) -> Result<String, Box<dyn std::error::Error>> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let address = listener.local_addr()?;
    let client = reqwest::Client::builder().no_proxy().build()?;
    let forward = move |request: Request| {
        let (client, target, token) = (client.clone(), target.clone(), token.clone());
        async move {
            let (parts, body) = request.into_parts();
            let path = parts.uri.path_and_query().map_or("/", |p| p.as_str());
            let body = axum::body::to_bytes(body, 1 << 20)
                .await
                .unwrap_or_default();
            let mut headers = parts.headers.clone();
            headers.remove(axum::http::header::CONTENT_LENGTH);
            let sent = client
                .request(parts.method, format!("{target}{path}"))
                .headers(headers)
                .bearer_auth(&token)
                .body(body)
                .send()
                .await;
            let answer = match sent {
                Ok(answer) => answer,
                Err(e) => {
                    return Response::builder()
                        .status(502)
                        .body(Body::from(e.to_string()))
                        .unwrap_or_default()
                }
            };
            let mut response = Response::builder().status(answer.status());
            for (name, value) in answer.headers() {
                if name != axum::http::header::CONTENT_LENGTH
                    && name != axum::http::header::TRANSFER_ENCODING
                {
                    response = response.header(name, value);
                }
            }
            response
                .body(Body::from_stream(answer.bytes_stream()))
                .unwrap_or_default()
        }
    };
    let app = axum::Router::new().fallback(forward);
    tokio::spawn(async move { axum::serve(listener, app).await });
    Ok(format!("http://localhost:{}", address.port()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cairns_mcp_server_passes_the_conformance_suite() -> TestResult {
    let (node, script) = cairn_test_support::mcp_conformance_suite()?;
    let dir = tempfile::tempdir()?;
    let cairn = Cairn::with_env(Home::at(dir.path()), Arc::new(|_: &str| None));
    let chat = Arc::new(Chat::new(cairn.clone(), dir.path().to_path_buf()));
    let api = cairn_http::serve(cairn, None, chat).await?;
    let proxy = token_proxy(api.info().api_url.clone(), api.info().token.clone()).await?;
    let results = dir.path().join("conformance");
    for scenario in [
        "server-initialize",
        "ping",
        "tools-list",
        "dns-rebinding-protection",
    ] {
        let run = tokio::process::Command::new(&node)
            .arg(&script)
            .args([
                "server",
                "--url",
                &format!("{proxy}/mcp"),
                "--scenario",
                scenario,
                "-o",
            ])
            .arg(&results)
            .kill_on_drop(true)
            .output();
        let output = tokio::time::timeout(std::time::Duration::from_secs(60), run).await??;
        assert!(
            output.status.success(),
            "{scenario} failed:\n{}\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    api.shutdown().await?;
    Ok(())
}

//! Each guard, request by request, through `app(state).oneshot(..)`.

use axum::body::Body;
use axum::http::{Request, StatusCode};
use axum::Router;
use cairn_protocol::{ApiError, StatusReport};
use tower::ServiceExt;

const TOKEN: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

fn test_app(home: &std::path::Path) -> Router {
    crate::test_app(home, TOKEN)
}

async fn send(
    headers: &[(&str, &str)],
    path: &str,
) -> Result<(StatusCode, serde_json::Value), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let mut request = Request::get(path);
    if !headers.iter().any(|(name, _)| *name == "host") {
        request = request.header("host", "127.0.0.1:9");
    }
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = test_app(dir.path())
        .oneshot(request.body(Body::empty())?)
        .await?;
    let status = response.status();
    let bytes = axum::body::to_bytes(response.into_body(), 1 << 20).await?;
    Ok((status, serde_json::from_slice(&bytes)?))
}

fn bearer(token: &str) -> String {
    format!("Bearer {token}")
}

#[tokio::test]
async fn health_answers_without_a_token() -> Result<(), Box<dyn std::error::Error>> {
    let (status, body) = send(&[], "/api/v1/health").await?;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["status"], "ok");
    Ok(())
}

#[tokio::test]
async fn no_token_is_401() -> Result<(), Box<dyn std::error::Error>> {
    let (status, body) = send(&[], "/api/v1/status").await?;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let error: ApiError = serde_json::from_value(body)?;
    assert_eq!(error.code.as_str(), "unauthorized");
    Ok(())
}

#[tokio::test]
async fn wrong_token_is_401() -> Result<(), Box<dyn std::error::Error>> {
    let wrong = bearer(&TOKEN.replace('0', "1"));
    let (status, _) = send(&[("authorization", &wrong)], "/api/v1/status").await?;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let (status, _) = send(&[("authorization", TOKEN)], "/api/v1/status").await?;
    assert_eq!(
        status,
        StatusCode::UNAUTHORIZED,
        "the Bearer scheme is required"
    );
    Ok(())
}

#[tokio::test]
async fn right_token_is_200_with_the_status_report() -> Result<(), Box<dyn std::error::Error>> {
    let (status, body) = send(&[("authorization", &bearer(TOKEN))], "/api/v1/status").await?;
    assert_eq!(status, StatusCode::OK);
    let report: StatusReport = serde_json::from_value(body)?;
    assert!(report.api.running);
    assert_eq!(report.api.url.as_deref(), Some("http://127.0.0.1:9"));
    Ok(())
}

#[tokio::test]
async fn a_foreign_origin_is_403_even_with_the_token() -> Result<(), Box<dyn std::error::Error>> {
    let auth = bearer(TOKEN);
    let (status, body) = send(
        &[("authorization", &auth), ("origin", "https://evil.example")],
        "/api/v1/status",
    )
    .await?;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert_eq!(body["code"], "forbidden_origin");
    let (status, _) = send(&[("origin", "https://evil.example")], "/api/v1/health").await?;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, _) = send(
        &[("authorization", &auth), ("origin", "tauri://localhost")],
        "/api/v1/status",
    )
    .await?;
    assert_eq!(status, StatusCode::OK, "the app's own webview is welcome");
    Ok(())
}

#[tokio::test]
async fn a_non_loopback_host_is_403_even_with_the_token() -> Result<(), Box<dyn std::error::Error>>
{
    let (status, body) = send(
        &[("authorization", &bearer(TOKEN)), ("host", "evil.example")],
        "/api/v1/status",
    )
    .await?;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert_eq!(body["code"], "forbidden_host");
    Ok(())
}

#[tokio::test]
async fn unknown_paths_need_the_token_too() -> Result<(), Box<dyn std::error::Error>> {
    let (status, _) = send(&[], "/api/v1/nope").await?;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let (status, _) = send(&[("authorization", &bearer(TOKEN))], "/api/v1/nope").await?;
    assert_eq!(status, StatusCode::NOT_FOUND);
    Ok(())
}

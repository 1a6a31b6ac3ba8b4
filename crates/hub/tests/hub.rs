//! The hub against a real PostgreSQL: devices join, push and pull their logs; and what a device
//! may not do — write another's log, read another person's vault, fork its log, send too much or
//! from the future, use a revoked token — is refused, with row-level security behind it.

use axum::body::Body;
use axum::http::{Request, StatusCode};
use axum::Router;
use base64::Engine;
use cairn_hub::{add_account, migrate, pool, router, Hub, Limits};
use cairn_protocol::sync::{version_at, HubJoined, HubPage, HubPushed, HubRecord, HubTails};
use cairn_test_support::Postgres;
use serde_json::{json, Value};
use tower::ServiceExt;

type TestResult = Result<(), Box<dyn std::error::Error>>;

struct Setup {
    pg: Postgres,
    app: Router,
    pool: deadpool_postgres::Pool,
}

async fn setup(limits: Limits) -> Result<Setup, Box<dyn std::error::Error>> {
    let pg = Postgres::start()?;
    let url = pg.database("hub")?;
    let pool = pool(&url)?;
    let as_role = migrate(&pool).await?;
    assert!(as_role, "the hub runs as its own role in tests");
    // Migrating again is a no-op.
    migrate(&pool).await?;
    let app = router(Hub::new(pool.clone(), as_role, limits));
    Ok(Setup { pg, app, pool })
}

async fn call(
    app: &Router,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: Option<Value>,
) -> Result<(StatusCode, Value), Box<dyn std::error::Error>> {
    let mut request = Request::builder().method(method).uri(path);
    if let Some(token) = token {
        request = request.header("authorization", format!("Bearer {token}"));
    }
    let request = match body {
        Some(body) => request
            .header("content-type", "application/json")
            .body(Body::from(body.to_string()))?,
        None => request.body(Body::empty())?,
    };
    let response = app.clone().oneshot(request).await?;
    let status = response.status();
    let bytes = axum::body::to_bytes(response.into_body(), 64 << 20).await?;
    let value = serde_json::from_slice(&bytes)
        .unwrap_or(Value::String(String::from_utf8_lossy(&bytes).into()));
    Ok((status, value))
}

async fn join(
    app: &Router,
    code: &str,
    name: &str,
) -> Result<HubJoined, Box<dyn std::error::Error>> {
    let (status, body) = call(
        app,
        "POST",
        "/v1/join",
        None,
        Some(json!({"code": code, "device_name": name})),
    )
    .await?;
    assert_eq!(status, StatusCode::OK, "{body}");
    Ok(serde_json::from_value(body)?)
}

fn record(idx: i64, body: &[u8]) -> HubRecord {
    HubRecord {
        idx,
        version: version_at(1_000 + idx, "d"),
        body: base64::engine::general_purpose::STANDARD.encode(body),
    }
}

fn push_body(records: &[HubRecord]) -> Value {
    json!({ "records": records })
}

#[tokio::test]
async fn devices_join_push_and_pull_each_others_logs() -> TestResult {
    let Setup { pg: _pg, app, pool } = setup(Limits::default()).await?;
    let (status, body) = call(&app, "GET", "/v1/health", None, None).await?;
    assert_eq!((status, body), (StatusCode::OK, Value::String("ok".into())));

    let code = add_account(&pool, "alice").await?;
    let laptop = join(&app, &code.to_lowercase(), "laptop").await?;
    assert_eq!(laptop.me.account_name, "alice");
    assert!(laptop.sealed_vault_key.is_none());
    // A code joins once.
    let (status, _) = call(
        &app,
        "POST",
        "/v1/join",
        None,
        Some(json!({"code": code, "device_name": "x"})),
    )
    .await?;
    assert_eq!(status, StatusCode::FORBIDDEN);

    // The laptop pairs the desktop, handing it the vault key sealed by a secret the hub never sees.
    let (status, paired) = call(
        &app,
        "POST",
        "/v1/pair",
        Some(&laptop.token),
        Some(json!({"sealed_vault_key": "c2VhbGVk"})),
    )
    .await?;
    assert_eq!(status, StatusCode::OK, "{paired}");
    let desktop = join(&app, paired["code"].as_str().ok_or("no code")?, "desktop").await?;
    assert_eq!(desktop.sealed_vault_key.as_deref(), Some("c2VhbGVk"));
    assert_eq!(desktop.me.vault, laptop.me.vault);
    assert_eq!(desktop.me.devices.len(), 2);

    let vault = &laptop.me.vault;
    let records: Vec<HubRecord> = (1..=3)
        .map(|i| record(i, format!("sealed {i}").as_bytes()))
        .collect();
    let (status, pushed) = call(
        &app,
        "POST",
        &format!("/v1/spaces/{vault}/records"),
        Some(&laptop.token),
        Some(push_body(&records)),
    )
    .await?;
    assert_eq!(status, StatusCode::OK, "{pushed}");
    assert_eq!(serde_json::from_value::<HubPushed>(pushed)?.tail, 3);
    // Sent again after a lost answer: the same bytes change nothing.
    let (status, pushed) = call(
        &app,
        "POST",
        &format!("/v1/spaces/{vault}/records"),
        Some(&laptop.token),
        Some(push_body(&records[1..])),
    )
    .await?;
    assert_eq!(status, StatusCode::OK, "{pushed}");
    assert_eq!(pushed["tail"], 3);

    let (status, tails) = call(
        &app,
        "GET",
        &format!("/v1/spaces/{vault}/status"),
        Some(&desktop.token),
        None,
    )
    .await?;
    assert_eq!(status, StatusCode::OK);
    let tails: HubTails = serde_json::from_value(tails)?;
    assert_eq!(tails.tails.len(), 1);
    assert_eq!(tails.tails[0].device, laptop.me.device);
    assert_eq!(tails.tails[0].idx, 3);
    let (status, page) = call(
        &app,
        "GET",
        &format!(
            "/v1/spaces/{vault}/records?device={}&from=2&limit=10",
            laptop.me.device
        ),
        Some(&desktop.token),
        None,
    )
    .await?;
    assert_eq!(status, StatusCode::OK);
    let page: HubPage = serde_json::from_value(page)?;
    assert_eq!(page.records, records[1..].to_vec());
    Ok(())
}

#[tokio::test]
async fn what_a_device_may_not_do_is_refused() -> TestResult {
    let limits = Limits {
        batch_records: 5,
        record_bytes: 64,
        request_bytes: 4096,
        future_ms: 5 * 60 * 1000,
    };
    let Setup { pg, app, pool } = setup(limits).await?;
    let alice = join(&app, &add_account(&pool, "alice").await?, "laptop").await?;
    let bob = join(&app, &add_account(&pool, "bob").await?, "phone").await?;
    let records = |from: i64, n: i64| -> Vec<HubRecord> {
        (from..from + n).map(|i| record(i, b"x")).collect()
    };
    let vault = alice.me.vault.clone();
    let alice_records = format!("/v1/spaces/{vault}/records");
    let (status, _) = call(
        &app,
        "POST",
        &alice_records,
        Some(&alice.token),
        Some(push_body(&records(1, 2))),
    )
    .await?;
    assert_eq!(status, StatusCode::OK);

    // No token, a made-up token.
    for token in [None, Some("chd_00")] {
        let (status, _) = call(&app, "GET", "/v1/me", token, None).await?;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
    }
    // Bob reads or writes Alice's vault: answered as if it did not exist.
    let (missing_status, missing) = call(
        &app,
        "GET",
        &format!("/v1/spaces/{}/status", uuid_like()),
        Some(&bob.token),
        None,
    )
    .await?;
    for (method, path, body) in [
        ("GET", format!("/v1/spaces/{vault}/status"), None),
        (
            "GET",
            format!("{alice_records}?device={}", alice.me.device),
            None,
        ),
        (
            "POST",
            alice_records.clone(),
            Some(push_body(&records(1, 1))),
        ),
    ] {
        let (status, body) = call(&app, method, &path, Some(&bob.token), body).await?;
        assert_eq!(
            (status, &body),
            (missing_status, &missing),
            "{method} {path}"
        );
        assert_eq!(status, StatusCode::NOT_FOUND);
    }
    // Alice's log forks (a restored backup sends other bytes under an index the hub holds).
    let forked = vec![record(2, b"other")];
    let (status, body) = call(
        &app,
        "POST",
        &alice_records,
        Some(&alice.token),
        Some(push_body(&forked)),
    )
    .await?;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert!(
        body["error"]
            .as_str()
            .unwrap_or_default()
            .contains("forked"),
        "{body}"
    );
    // A gap after the tail, records out of order, a forged index 0.
    let (status, _) = call(
        &app,
        "POST",
        &alice_records,
        Some(&alice.token),
        Some(push_body(&records(5, 1))),
    )
    .await?;
    assert_eq!(status, StatusCode::CONFLICT);
    let mut shuffled = records(3, 2);
    shuffled.reverse();
    let (status, _) = call(
        &app,
        "POST",
        &alice_records,
        Some(&alice.token),
        Some(push_body(&shuffled)),
    )
    .await?;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let (status, _) = call(
        &app,
        "POST",
        &alice_records,
        Some(&alice.token),
        Some(push_body(&records(0, 1))),
    )
    .await?;
    assert_eq!(status, StatusCode::CONFLICT);
    // A clock far in the future.
    let mut future = record(3, b"x");
    future.version = version_at(now_ms() + 3_600_000, "d");
    let (status, body) = call(
        &app,
        "POST",
        &alice_records,
        Some(&alice.token),
        Some(push_body(&[future])),
    )
    .await?;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    // Too many records, a record too large, a request too large.
    for body in [
        push_body(&records(3, 6)),
        push_body(&[record(3, &[7u8; 65])]),
        json!({ "records": [], "padding": "p".repeat(5000) }),
    ] {
        let (status, answer) =
            call(&app, "POST", &alice_records, Some(&alice.token), Some(body)).await?;
        assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{answer}");
    }
    // Nothing of the refused pushes was stored.
    assert_eq!(pg.psql("hub", "SELECT count(*) FROM records")?.trim(), "2");

    // Bob cannot revoke Alice's device; Alice revokes her own and its token stops at once.
    let (status, _) = call(
        &app,
        "POST",
        &format!("/v1/devices/{}/revoke", alice.me.device),
        Some(&bob.token),
        None,
    )
    .await?;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = call(
        &app,
        "POST",
        &format!("/v1/devices/{}/revoke", alice.me.device),
        Some(&alice.token),
        None,
    )
    .await?;
    assert_eq!(status, StatusCode::OK);
    let (status, _) = call(
        &app,
        "POST",
        &alice_records,
        Some(&alice.token),
        Some(push_body(&records(3, 1))),
    )
    .await?;
    assert_eq!(status, StatusCode::UNAUTHORIZED);

    // Row-level security: as the hub's role, a query without a space filter sees only the
    // spaces of the account it is for — and nothing when it is for no one.
    let as_account = |account: &str| {
        format!(
            "BEGIN; SET LOCAL ROLE cairn_hub; SELECT set_config('cairn.account', '{account}', true);
             SELECT count(*) FROM records; COMMIT;"
        )
    };
    let count = |out: String| {
        out.lines()
            .rfind(|l| !l.is_empty())
            .unwrap_or("")
            .to_owned()
    };
    assert_eq!(count(pg.psql("hub", &as_account(&alice.me.account))?), "2");
    assert_eq!(count(pg.psql("hub", &as_account(&bob.me.account))?), "0");
    assert_eq!(
        count(pg.psql(
            "hub",
            "BEGIN; SET LOCAL ROLE cairn_hub; SELECT count(*) FROM records; COMMIT;"
        )?),
        "0"
    );
    Ok(())
}

fn uuid_like() -> &'static str {
    "00000000-0000-4000-8000-000000000000"
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

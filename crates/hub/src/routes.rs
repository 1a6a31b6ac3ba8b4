//! The hub's routes. Every route but `/v1/health` and `/v1/join` needs a device's token; a device
//! writes only its own log, reads only its account's spaces (a space it may not see is answered
//! exactly like one that does not exist), and what it sends is checked for size, order and a
//! clock far in the future before anything is stored.

use std::sync::Arc;

use axum::extract::rejection::JsonRejection;
use axum::extract::{DefaultBodyLimit, Path, Query, Request, State};
use axum::http::HeaderMap;
use axum::middleware::Next;
use axum::response::Response;
use axum::routing::{get, post};
use axum::{Extension, Json, Router};
use base64::Engine;
use cairn_protocol::sync::{
    version_wall, HubDevice, HubJoin, HubJoined, HubMe, HubPage, HubPairCode, HubPairRequest,
    HubPush, HubPushed, HubRecord, HubTail, HubTails,
};
use deadpool_postgres::{Pool, Transaction};
use serde::Deserialize;
use uuid::Uuid;

use crate::accounts::{insert_code, PAIR_CODE_MS};
use crate::schema::ROLE;
use crate::tokens::{new_token, normalise_code, now_ms, sha256};
use crate::HubError;

/// What one request may carry.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Records in one push.
    pub batch_records: usize,
    /// One record's sealed body, in bytes.
    pub record_bytes: usize,
    /// A request's body, in bytes (a full batch, base64 in JSON).
    pub request_bytes: usize,
    /// How far ahead of the hub's clock a record's version may be.
    pub future_ms: i64,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            batch_records: 1000,
            record_bytes: 1 << 20,
            request_bytes: 12 << 20,
            future_ms: 5 * 60 * 1000,
        }
    }
}

/// The hub's shared state: the database pool, and whether requests run as [`ROLE`].
#[derive(Clone)]
pub struct Hub {
    pool: Pool,
    as_role: bool,
    limits: Limits,
}

impl Hub {
    pub fn new(pool: Pool, as_role: bool, limits: Limits) -> Arc<Self> {
        Arc::new(Self {
            pool,
            as_role,
            limits,
        })
    }
}

/// The device a request comes from.
#[derive(Debug, Clone)]
struct Device {
    id: Uuid,
    account: Uuid,
}

pub fn router(hub: Arc<Hub>) -> Router {
    let authed = Router::new()
        .route("/v1/me", get(me))
        .route("/v1/pair", post(pair))
        .route("/v1/devices/{device}/revoke", post(revoke))
        .route("/v1/devices/renew", post(renew))
        .route("/v1/spaces/{space}/status", get(status))
        .route("/v1/spaces/{space}/records", post(push).get(pull))
        .layer(axum::middleware::from_fn_with_state(
            hub.clone(),
            authenticate,
        ));
    Router::new()
        .route("/v1/health", get(|| async { "ok" }))
        .route("/v1/join", post(join))
        .merge(authed)
        .layer(DefaultBodyLimit::max(hub.limits.request_bytes))
        .with_state(hub)
}

/// Finds the device of the request's bearer token, before its body is read.
async fn authenticate(
    State(hub): State<Arc<Hub>>,
    headers: HeaderMap,
    mut request: Request,
    next: Next,
) -> Result<Response, HubError> {
    let token = headers
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .ok_or(HubError::Unauthorized)?;
    let client = hub.pool.get().await?;
    let row = client
        .query_opt(
            "UPDATE devices SET last_seen_ms = $2
             WHERE token_sha256 = $1 AND revoked_ms IS NULL
             RETURNING id, account_id",
            &[&sha256(token.trim()), &now_ms()],
        )
        .await?
        .ok_or(HubError::Unauthorized)?;
    request.extensions_mut().insert(Device {
        id: row.get(0),
        account: row.get(1),
    });
    Ok(next.run(request).await)
}

/// A transaction that sees only `account`'s spaces (row-level security).
async fn scoped<'a>(
    hub: &Hub,
    client: &'a mut deadpool_postgres::Client,
    account: Uuid,
) -> Result<Transaction<'a>, HubError> {
    let tx = client.transaction().await?;
    if hub.as_role {
        tx.batch_execute(&format!("SET LOCAL ROLE {ROLE}")).await?;
    }
    tx.execute(
        "SELECT set_config('cairn.account', $1, true)",
        &[&account.to_string()],
    )
    .await?;
    Ok(tx)
}

/// The device's role in `space`; not found when it is not a member (or there is no such space).
async fn role_in(tx: &Transaction<'_>, space: Uuid, account: Uuid) -> Result<String, HubError> {
    tx.query_opt(
        "SELECT role FROM members WHERE space_id = $1 AND account_id = $2",
        &[&space, &account],
    )
    .await?
    .map(|row| row.get(0))
    .ok_or(HubError::NotFound)
}

fn body<T>(json: Result<Json<T>, JsonRejection>) -> Result<T, HubError> {
    match json {
        Ok(Json(value)) => Ok(value),
        Err(e) if e.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE => {
            Err(HubError::TooLarge(
                "the request is larger than the hub takes; send fewer records".into(),
            ))
        }
        Err(e) => Err(HubError::Invalid(format!(
            "the request's body: {}",
            e.body_text()
        ))),
    }
}

async fn me_of(
    client: &impl deadpool_postgres::GenericClient,
    device: Uuid,
) -> Result<HubMe, HubError> {
    let row = client
        .query_one(
            "SELECT d.name, a.id, a.name, (SELECT m.space_id FROM members m JOIN spaces s ON s.id = m.space_id
                                           WHERE m.account_id = a.id AND s.kind = 'personal')
             FROM devices d JOIN accounts a ON a.id = d.account_id WHERE d.id = $1",
            &[&device],
        )
        .await?;
    let account: Uuid = row.get(1);
    let vault: Option<Uuid> = row.get(3);
    let devices = client
        .query(
            "SELECT id, name, created_ms, last_seen_ms, revoked_ms FROM devices
             WHERE account_id = $1 ORDER BY created_ms",
            &[&account],
        )
        .await?
        .iter()
        .map(|row| HubDevice {
            id: row.get::<_, Uuid>(0).to_string(),
            name: row.get(1),
            created_ms: row.get(2),
            last_seen_ms: row.get(3),
            revoked_ms: row.get(4),
        })
        .collect();
    Ok(HubMe {
        account: account.to_string(),
        account_name: row.get(2),
        device: device.to_string(),
        device_name: row.get(0),
        vault: vault.map(|v| v.to_string()).unwrap_or_default(),
        now_ms: now_ms(),
        devices,
    })
}

async fn me(
    State(hub): State<Arc<Hub>>,
    Extension(device): Extension<Device>,
) -> Result<Json<HubMe>, HubError> {
    let client = hub.pool.get().await?;
    Ok(Json(me_of(&client, device.id).await?))
}

/// A new device joins an account with a one-time code.
async fn join(
    State(hub): State<Arc<Hub>>,
    request: Result<Json<HubJoin>, JsonRejection>,
) -> Result<Json<HubJoined>, HubError> {
    let request = body(request)?;
    let name = request.device_name.trim();
    if name.is_empty() || name.chars().count() > 64 {
        return Err(HubError::Invalid(
            "a device's name is 1 to 64 characters".into(),
        ));
    }
    let mut client = hub.pool.get().await?;
    let tx = client.transaction().await?;
    let now = now_ms();
    let code = tx
        .query_opt(
            "UPDATE join_codes SET used_ms = $2
             WHERE code_sha256 = $1 AND used_ms IS NULL AND expires_ms > $2
             RETURNING account_id, sealed_vault_key",
            &[&sha256(&normalise_code(&request.code)), &now],
        )
        .await?;
    let Some(code) = code else {
        return Err(HubError::Forbidden(
            "the code is unknown, already used or expired: ask for a new one".into(),
        ));
    };
    let account: Uuid = code.get(0);
    let sealed_vault_key: Option<String> = code.get(1);
    let device = Uuid::new_v4();
    let token = new_token()?;
    tx.execute(
        "INSERT INTO devices (id, account_id, name, token_sha256, created_ms) VALUES ($1, $2, $3, $4, $5)",
        &[&device, &account, &name, &sha256(&token), &now],
    )
    .await?;
    let me = me_of(&tx, device).await?;
    tx.commit().await?;
    tracing::info!("device {device} joined account {account}");
    Ok(Json(HubJoined {
        token,
        me,
        sealed_vault_key,
    }))
}

/// A joined device asks for a code that pairs another device, with the vault key sealed by a
/// secret the hub never sees.
async fn pair(
    State(hub): State<Arc<Hub>>,
    Extension(device): Extension<Device>,
    request: Result<Json<HubPairRequest>, JsonRejection>,
) -> Result<Json<HubPairCode>, HubError> {
    let request = body(request)?;
    if request.sealed_vault_key.len() > 1024 {
        return Err(HubError::TooLarge("a sealed key is at most 1 KB".into()));
    }
    let client = hub.pool.get().await?;
    let code = insert_code(
        &client,
        device.account,
        Some(&request.sealed_vault_key),
        PAIR_CODE_MS,
    )
    .await?;
    Ok(Json(HubPairCode {
        code,
        expires_ms: now_ms() + PAIR_CODE_MS,
    }))
}

/// Revokes one of the account's devices (itself included): its token stops working at once.
async fn revoke(
    State(hub): State<Arc<Hub>>,
    Extension(device): Extension<Device>,
    Path(target): Path<String>,
) -> Result<Json<HubMe>, HubError> {
    let target = Uuid::parse_str(&target).map_err(|_| HubError::NotFound)?;
    let client = hub.pool.get().await?;
    let revoked = client
        .execute(
            "UPDATE devices SET revoked_ms = $3, token_sha256 = NULL
             WHERE id = $1 AND account_id = $2 AND revoked_ms IS NULL",
            &[&target, &device.account, &now_ms()],
        )
        .await?;
    if revoked == 0 {
        return Err(HubError::NotFound);
    }
    tracing::info!("device {target} revoked by {}", device.id);
    Ok(Json(me_of(&client, device.id).await?))
}

/// The device starts a new log under a new id and token, and the old one is revoked: for a
/// device whose log forked (restored from a backup), which then sends its memory again.
async fn renew(
    State(hub): State<Arc<Hub>>,
    Extension(device): Extension<Device>,
) -> Result<Json<HubJoined>, HubError> {
    let mut client = hub.pool.get().await?;
    let tx = client.transaction().await?;
    let now = now_ms();
    let name: String = tx
        .query_one(
            "UPDATE devices SET revoked_ms = $2, token_sha256 = NULL WHERE id = $1 RETURNING name",
            &[&device.id, &now],
        )
        .await?
        .get(0);
    let renewed = Uuid::new_v4();
    let token = new_token()?;
    tx.execute(
        "INSERT INTO devices (id, account_id, name, token_sha256, created_ms) VALUES ($1, $2, $3, $4, $5)",
        &[&renewed, &device.account, &name, &sha256(&token), &now],
    )
    .await?;
    let me = me_of(&tx, renewed).await?;
    tx.commit().await?;
    tracing::info!("device {} renewed as {renewed}", device.id);
    Ok(Json(HubJoined {
        token,
        me,
        sealed_vault_key: None,
    }))
}

fn space_id(space: &str) -> Result<Uuid, HubError> {
    Uuid::parse_str(space).map_err(|_| HubError::NotFound)
}

async fn status(
    State(hub): State<Arc<Hub>>,
    Extension(device): Extension<Device>,
    Path(space): Path<String>,
) -> Result<Json<HubTails>, HubError> {
    let space = space_id(&space)?;
    let mut client = hub.pool.get().await?;
    let tx = scoped(&hub, &mut client, device.account).await?;
    role_in(&tx, space, device.account).await?;
    let tails = tx
        .query(
            "SELECT device_id, idx FROM tails WHERE space_id = $1",
            &[&space],
        )
        .await?
        .iter()
        .map(|row| HubTail {
            device: row.get::<_, Uuid>(0).to_string(),
            idx: row.get(1),
        })
        .collect();
    tx.commit().await?;
    Ok(Json(HubTails { tails }))
}

/// Appends records to the sending device's own log: in order from at most its tail + 1; a
/// record sent again must be the same bytes (else the device's log has forked: 409).
async fn push(
    State(hub): State<Arc<Hub>>,
    Extension(device): Extension<Device>,
    Path(space): Path<String>,
    request: Result<Json<HubPush>, JsonRejection>,
) -> Result<Json<HubPushed>, HubError> {
    let space = space_id(&space)?;
    let request = body(request)?;
    let limits = hub.limits;
    if request.records.len() > limits.batch_records {
        return Err(HubError::TooLarge(format!(
            "a push carries at most {} records",
            limits.batch_records
        )));
    }
    let now = now_ms();
    let mut decoded = Vec::with_capacity(request.records.len());
    for (i, record) in request.records.iter().enumerate() {
        let body = base64::engine::general_purpose::STANDARD
            .decode(&record.body)
            .map_err(|_| HubError::Invalid(format!("record {} is not base64", record.idx)))?;
        if body.len() > limits.record_bytes {
            return Err(HubError::TooLarge(format!(
                "record {} is larger than {} bytes",
                record.idx, limits.record_bytes
            )));
        }
        if version_wall(&record.version) > now + limits.future_ms {
            return Err(HubError::Invalid(format!(
                "record {} is dated in the future by the device's clock; set the clock right",
                record.idx
            )));
        }
        if record.version.len() > 128 {
            return Err(HubError::Invalid(format!(
                "record {}'s version is too long",
                record.idx
            )));
        }
        if i > 0 && record.idx != request.records[i - 1].idx + 1 {
            return Err(HubError::Invalid(
                "a push's records follow each other".into(),
            ));
        }
        let sha =
            sha2::Digest::finalize(sha2::Digest::chain_update(sha2::Sha256::default(), &body))
                .to_vec();
        decoded.push((record.idx, record.version.as_str(), body, sha));
    }
    let mut client = hub.pool.get().await?;
    let tx = scoped(&hub, &mut client, device.account).await?;
    let role = role_in(&tx, space, device.account).await?;
    if role == "reader" {
        return Err(HubError::Forbidden(
            "a reader of this space may not write to it".into(),
        ));
    }
    let tail: i64 = tx
        .query_opt(
            "SELECT idx FROM tails WHERE space_id = $1 AND device_id = $2 FOR UPDATE",
            &[&space, &device.id],
        )
        .await?
        .map(|row| row.get(0))
        .unwrap_or(0);
    let Some(first) = decoded.first().map(|r| r.0) else {
        return Ok(Json(HubPushed { tail }));
    };
    if first < 1 || first > tail + 1 {
        return Err(HubError::Conflict {
            message: format!(
                "the push starts at {first}; this device's log on the hub ends at {tail}"
            ),
            tail,
        });
    }
    let mut end = tail;
    let (mut idxs, mut versions, mut bodies, mut shas) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (idx, version, body, sha) in &decoded {
        if *idx <= tail {
            let stored: Option<Vec<u8>> = tx
                .query_opt(
                    "SELECT sha256 FROM records WHERE space_id = $1 AND device_id = $2 AND idx = $3",
                    &[&space, &device.id, idx],
                )
                .await?
                .map(|row| row.get(0));
            if stored.as_deref() != Some(sha.as_slice()) {
                return Err(HubError::Conflict {
                    message: format!(
                        "record {idx} differs from the one the hub holds: this device's log has forked (restored from a backup?)"
                    ),
                    tail,
                });
            }
            continue;
        }
        idxs.push(*idx);
        versions.push(*version);
        bodies.push(body.as_slice());
        shas.push(sha.as_slice());
        end = *idx;
    }
    if !idxs.is_empty() {
        // One statement for the whole batch.
        tx.execute(
            "INSERT INTO records (space_id, device_id, idx, version, body, sha256, received_ms)
             SELECT $1, $2, r.idx, r.version, r.body, r.sha256, $7
             FROM unnest($3::bigint[], $4::text[], $5::bytea[], $6::bytea[]) AS r(idx, version, body, sha256)",
            &[&space, &device.id, &idxs, &versions, &bodies, &shas, &now],
        )
        .await?;
    }
    if end > tail {
        tx.execute(
            "INSERT INTO tails (space_id, device_id, idx) VALUES ($1, $2, $3)
             ON CONFLICT (space_id, device_id) DO UPDATE SET idx = excluded.idx",
            &[&space, &device.id, &end],
        )
        .await?;
    }
    tx.commit().await?;
    Ok(Json(HubPushed { tail: end }))
}

#[derive(Deserialize)]
struct PageQuery {
    device: String,
    #[serde(default = "first")]
    from: i64,
    #[serde(default = "page")]
    limit: i64,
}

fn first() -> i64 {
    1
}

fn page() -> i64 {
    500
}

async fn pull(
    State(hub): State<Arc<Hub>>,
    Extension(device): Extension<Device>,
    Path(space): Path<String>,
    Query(query): Query<PageQuery>,
) -> Result<Json<HubPage>, HubError> {
    let space = space_id(&space)?;
    let of = Uuid::parse_str(&query.device).map_err(|_| HubError::NotFound)?;
    let mut client = hub.pool.get().await?;
    let tx = scoped(&hub, &mut client, device.account).await?;
    role_in(&tx, space, device.account).await?;
    let records = tx
        .query(
            "SELECT idx, version, body FROM records
             WHERE space_id = $1 AND device_id = $2 AND idx >= $3 ORDER BY idx LIMIT $4",
            &[&space, &of, &query.from.max(1), &query.limit.clamp(1, 1000)],
        )
        .await?
        .iter()
        .map(|row| HubRecord {
            idx: row.get(0),
            version: row.get(1),
            body: base64::engine::general_purpose::STANDARD.encode(row.get::<_, Vec<u8>>(2)),
        })
        .collect();
    tx.commit().await?;
    Ok(Json(HubPage { records }))
}

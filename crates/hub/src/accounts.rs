//! People on the hub: adding an account (with its personal vault) and the one-time codes that
//! join a device to it.

use deadpool_postgres::Pool;
use uuid::Uuid;

use crate::tokens::{new_code, normalise_code, now_ms, sha256};
use crate::HubError;

/// How long a code from the hub's operator stays valid.
pub const ACCOUNT_CODE_MS: i64 = 60 * 60 * 1000;

/// How long a pairing code from a device stays valid.
pub const PAIR_CODE_MS: i64 = 10 * 60 * 1000;

/// Adds a person with their personal vault (end-to-end encrypted); returns a code that joins
/// their first device.
pub async fn add_account(pool: &Pool, name: &str) -> Result<String, HubError> {
    let name = name.trim();
    if name.is_empty() || name.len() > 64 {
        return Err(HubError::Invalid(
            "an account's name is 1 to 64 characters".into(),
        ));
    }
    let mut client = pool.get().await?;
    let tx = client.transaction().await?;
    let account = Uuid::new_v4();
    let inserted = tx
        .execute(
            "INSERT INTO accounts (id, name, created_ms) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING",
            &[&account, &name, &now_ms()],
        )
        .await?;
    if inserted == 0 {
        return Err(HubError::Invalid(format!(
            "there is already an account named {name}: `cairn hub account code {name}` gives it a new code"
        )));
    }
    let vault = Uuid::new_v4();
    tx.execute(
        "INSERT INTO spaces (id, kind, name, e2e) VALUES ($1, 'personal', $2, true)",
        &[&vault, &format!("{name}'s vault")],
    )
    .await?;
    tx.execute(
        "INSERT INTO members (space_id, account_id, role) VALUES ($1, $2, 'owner')",
        &[&vault, &account],
    )
    .await?;
    let code = insert_code(&tx, account, None, ACCOUNT_CODE_MS).await?;
    tx.commit().await?;
    Ok(code)
}

/// A new code that joins a device to the account named `name` (a person whose devices are all
/// lost joins a new one with it, then gives their recovery key).
pub async fn new_join_code(pool: &Pool, name: &str) -> Result<String, HubError> {
    let client = pool.get().await?;
    let account: Uuid = client
        .query_opt("SELECT id FROM accounts WHERE name = $1", &[&name.trim()])
        .await?
        .map(|row| row.get(0))
        .ok_or_else(|| HubError::Invalid(format!("there is no account named {name}")))?;
    insert_code(&client, account, None, ACCOUNT_CODE_MS).await
}

pub(crate) async fn insert_code(
    client: &impl deadpool_postgres::GenericClient,
    account: Uuid,
    sealed_vault_key: Option<&str>,
    valid_ms: i64,
) -> Result<String, HubError> {
    let code = new_code()?;
    client
        .execute(
            "INSERT INTO join_codes (code_sha256, account_id, sealed_vault_key, expires_ms)
             VALUES ($1, $2, $3, $4)",
            &[
                &sha256(&normalise_code(&code)),
                &account,
                &sealed_vault_key,
                &(now_ms() + valid_ms),
            ],
        )
        .await?;
    Ok(code)
}

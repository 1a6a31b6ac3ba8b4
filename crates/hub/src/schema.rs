//! The hub's PostgreSQL schema and its migrations: an ordered list, one transaction each, under an
//! advisory lock so that two hubs starting at once do not both migrate. Row-level security on the
//! logs is the second line behind the hub's own checks: the hub works as the role `cairn_hub`,
//! which sees only the spaces of the account a request is for.

use deadpool_postgres::Pool;

use crate::HubError;

/// Migrations in order; the index + 1 is the schema version it produces.
const MIGRATIONS: &[&str] = &[r#"
CREATE TABLE accounts (
    id uuid PRIMARY KEY,
    name text NOT NULL UNIQUE,
    created_ms bigint NOT NULL
);
CREATE TABLE devices (
    id uuid PRIMARY KEY,
    account_id uuid NOT NULL REFERENCES accounts(id),
    name text NOT NULL,
    token_sha256 bytea UNIQUE,
    created_ms bigint NOT NULL,
    last_seen_ms bigint,
    revoked_ms bigint
);
CREATE TABLE spaces (
    id uuid PRIMARY KEY,
    kind text NOT NULL CHECK (kind IN ('personal', 'team')),
    name text NOT NULL,
    e2e boolean NOT NULL
);
CREATE TABLE members (
    space_id uuid NOT NULL REFERENCES spaces(id),
    account_id uuid NOT NULL REFERENCES accounts(id),
    role text NOT NULL CHECK (role IN ('owner', 'writer', 'reader')),
    PRIMARY KEY (space_id, account_id)
);
CREATE TABLE join_codes (
    code_sha256 bytea PRIMARY KEY,
    account_id uuid NOT NULL REFERENCES accounts(id),
    sealed_vault_key text,
    expires_ms bigint NOT NULL,
    used_ms bigint
);
CREATE TABLE records (
    space_id uuid NOT NULL REFERENCES spaces(id),
    device_id uuid NOT NULL REFERENCES devices(id),
    idx bigint NOT NULL CHECK (idx > 0),
    version text NOT NULL,
    body bytea NOT NULL,
    sha256 bytea NOT NULL,
    received_ms bigint NOT NULL,
    PRIMARY KEY (space_id, device_id, idx)
);
CREATE TABLE tails (
    space_id uuid NOT NULL REFERENCES spaces(id),
    device_id uuid NOT NULL REFERENCES devices(id),
    idx bigint NOT NULL,
    PRIMARY KEY (space_id, device_id)
);
ALTER TABLE records ENABLE ROW LEVEL SECURITY;
ALTER TABLE records FORCE ROW LEVEL SECURITY;
ALTER TABLE tails ENABLE ROW LEVEL SECURITY;
ALTER TABLE tails FORCE ROW LEVEL SECURITY;
CREATE POLICY by_membership ON records USING (space_id IN (
    SELECT space_id FROM members
    WHERE account_id = nullif(current_setting('cairn.account', true), '')::uuid));
CREATE POLICY by_membership ON tails USING (space_id IN (
    SELECT space_id FROM members
    WHERE account_id = nullif(current_setting('cairn.account', true), '')::uuid));
"#];

/// The role requests run as: it owns nothing, so row-level security always applies to it.
pub(crate) const ROLE: &str = "cairn_hub";

/// Brings the database's schema up to date and gives [`ROLE`] what it needs; returns whether
/// requests can run as that role (not when the connecting user may not create or take it, in
/// which case the connecting user's own rights and the hub's checks are what hold).
pub async fn migrate(pool: &Pool) -> Result<bool, HubError> {
    let mut client = pool.get().await?;
    client
        .batch_execute("SELECT pg_advisory_lock(7261730)")
        .await?;
    let result = async {
        client
            .batch_execute("CREATE TABLE IF NOT EXISTS hub_schema (version int NOT NULL)")
            .await?;
        let current: i32 = client
            .query_opt("SELECT version FROM hub_schema", &[])
            .await?
            .map(|row| row.get(0))
            .unwrap_or(0);
        if current as usize > MIGRATIONS.len() {
            return Err(HubError::Invalid(format!(
                "the hub's database is at schema version {current}; this hub knows {}: update the hub",
                MIGRATIONS.len()
            )));
        }
        for (index, sql) in MIGRATIONS.iter().enumerate().skip(current as usize) {
            let tx = client.transaction().await?;
            tx.batch_execute(sql).await?;
            tx.execute("DELETE FROM hub_schema", &[]).await?;
            tx.execute(
                "INSERT INTO hub_schema (version) VALUES ($1)",
                &[&(index as i32 + 1)],
            )
            .await?;
            tx.commit().await?;
            tracing::info!("hub schema migrated to version {}", index + 1);
        }
        Ok(())
    }
    .await;
    let unlocked = client
        .batch_execute("SELECT pg_advisory_unlock(7261730)")
        .await;
    result?;
    unlocked?;
    let role = format!(
        "DO $$ BEGIN
             IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '{ROLE}') THEN
                 CREATE ROLE {ROLE} NOLOGIN;
             END IF;
         END $$;
         GRANT USAGE ON SCHEMA public TO {ROLE};
         GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {ROLE};
         SET ROLE {ROLE}; RESET ROLE;"
    );
    match client.batch_execute(&role).await {
        Ok(()) => Ok(true),
        Err(e) => {
            tracing::warn!("the hub runs as the database user it connects as, not as {ROLE}: {e}");
            Ok(false)
        }
    }
}

//! Cairn's sync hub: a small, stateless HTTP service in front of PostgreSQL. Each device of a
//! person appends the records of its changes to its own log in their vault, and reads the other
//! devices' logs from where it left off. PostgreSQL is never exposed to devices: the hub checks
//! every request against the device's token (stored hashed) and the account's spaces, and
//! row-level security in PostgreSQL is the second line. A personal vault's records arrive sealed
//! (end-to-end encrypted by the devices): the hub stores ciphertext and never holds the key.

mod accounts;
mod error;
mod routes;
mod schema;
mod tokens;

use std::net::SocketAddr;

pub use accounts::{add_account, new_join_code};
pub use error::HubError;
pub use routes::{router, Hub, Limits};
pub use schema::migrate;

/// Opens a pool on `database_url` (`postgres://user@host/db`, or `host=/run/dir dbname=x`).
pub fn pool(database_url: &str) -> Result<deadpool_postgres::Pool, HubError> {
    let config: tokio_postgres::Config = database_url
        .parse()
        .map_err(|e| HubError::Invalid(format!("the database address is not valid: {e}")))?;
    let manager = deadpool_postgres::Manager::from_config(
        config,
        tokio_postgres::NoTls,
        deadpool_postgres::ManagerConfig {
            recycling_method: deadpool_postgres::RecyclingMethod::Fast,
        },
    );
    deadpool_postgres::Pool::builder(manager)
        .max_size(16)
        .build()
        .map_err(|e| HubError::Invalid(format!("the database pool: {e}")))
}

/// Migrates the database and serves the hub on `listener` until `shutdown` resolves.
pub async fn serve(
    database_url: &str,
    listener: tokio::net::TcpListener,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), HubError> {
    let pool = pool(database_url)?;
    let as_role = migrate(&pool).await?;
    let hub = Hub::new(pool, as_role, Limits::default());
    let addr: Option<SocketAddr> = listener.local_addr().ok();
    if let Some(addr) = addr {
        tracing::info!("hub listening on http://{addr}");
    }
    axum::serve(listener, router(hub))
        .with_graceful_shutdown(shutdown)
        .await
        .map_err(|e| HubError::Invalid(format!("the hub stopped: {e}")))
}

/// How to put the hub on the network: it speaks plain HTTP on the address it is given, and is
/// meant to sit behind TLS.
pub const DEPLOYMENT: &str = "\
cairn hub — the sync hub for Cairn's devices.

Run it next to PostgreSQL:
  cairn hub serve --database-url postgres://cairn@localhost/cairn --listen 127.0.0.1:8787

The hub speaks plain HTTP: devices refuse a hub that is not on this machine unless it is reached
over HTTPS. Put TLS in front of it, e.g. with Caddy (certificates from Let's Encrypt):
  hub.example.org {
      reverse_proxy 127.0.0.1:8787
  }
or nginx:
  location / { proxy_pass http://127.0.0.1:8787; proxy_read_timeout 90s; }

Add a person and print a code that joins their first device (valid for one hour):
  cairn hub account add alice --database-url …
On that device:
  cairn sync join https://hub.example.org CODE
Then pair each further device from one already joined: `cairn sync pair` prints a code for it.
";

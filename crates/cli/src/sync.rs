//! `cairn sync …` (this device on a hub: join, pair, status, a round now, revoke, leave, pause,
//! the recovery key) and `cairn hub …` (the hub itself: serve, accounts, how to deploy it).

use std::fmt::Write;

use cairn_api::devices::SyncReport;
use cairn_api::hub;
use cairn_api::Cairn;
use cairn_protocol::sync::SyncView;
use clap::Subcommand;

#[derive(Debug, Subcommand)]
pub enum SyncCommand {
    /// Whether this device syncs, with which hub, what is waiting to be sent, when a round last
    /// went through, and the account's devices.
    Status {
        #[arg(long)]
        json: bool,
    },
    /// Join a hub: with a code from the hub's operator (your first device; or a new one when no
    /// other is left, with --recovery), or a pairing code from `cairn sync pair` on a joined device.
    Join {
        /// The hub's address, e.g. https://hub.example.org.
        address: String,
        code: String,
        /// This device's name on the hub [default: the machine's name].
        #[arg(long)]
        name: Option<String>,
        /// The vault's recovery key (`cairn sync key` on a joined device shows it).
        #[arg(long, value_name = "KEY")]
        recovery: Option<String>,
    },
    /// Print a code that joins another device to this one's vault (valid ten minutes).
    Pair,
    /// Sync now: send this device's changes, fetch the others'.
    Now,
    /// Revoke another device of the account (by name or id): it can no longer sync.
    Revoke {
        device: String,
    },
    /// Take this device off its hub. The memory stays on it.
    Leave,
    /// Stop syncing until `cairn sync resume`.
    Pause,
    Resume,
    /// Print the vault's recovery key: write it down; with it a new device joins when no other
    /// is left.
    Key,
}

#[derive(Debug, clap::Args)]
pub struct HubArgs {
    #[command(subcommand)]
    command: Option<HubCommand>,
}

#[derive(Debug, Subcommand)]
enum HubCommand {
    /// Serve the hub on --listen in front of PostgreSQL, migrating its schema first.
    Serve {
        #[arg(long, env = "CAIRN_HUB_DATABASE_URL")]
        database_url: String,
        #[arg(long, default_value = "127.0.0.1:8787")]
        listen: String,
    },
    /// The hub's people.
    #[command(subcommand)]
    Account(AccountCommand),
}

#[derive(Debug, Subcommand)]
enum AccountCommand {
    /// Add a person and print the code that joins their first device (valid one hour).
    Add {
        name: String,
        #[arg(long, env = "CAIRN_HUB_DATABASE_URL")]
        database_url: String,
    },
    /// Print a new code that joins a device to a person's account (valid one hour).
    Code {
        name: String,
        #[arg(long, env = "CAIRN_HUB_DATABASE_URL")]
        database_url: String,
    },
}

fn when(ms: i64) -> String {
    let ago = (cairn_api::schedule::now_ms() - ms).max(0) / 1000;
    match ago {
        0..=59 => format!("{ago} s ago"),
        60..=3599 => format!("{} min ago", ago / 60),
        3600..=86_399 => format!("{} h ago", ago / 3600),
        _ => format!("{} days ago", ago / 86_400),
    }
}

/// `cairn sync status` as text.
pub fn status_text(view: &SyncView) -> String {
    let mut out = String::new();
    if !view.joined {
        out.push_str("Sync: off — this device is not joined to a hub.\n");
        out.push_str(
            "Join one with `cairn sync join ADDRESS CODE` (`cairn hub` tells how to run a hub).\n",
        );
        return out;
    }
    let _ = writeln!(
        out,
        "Sync: {} — {} as {} on {}",
        if view.paused { "paused" } else { "on" },
        view.account.as_deref().unwrap_or("?"),
        view.device.as_deref().unwrap_or("?"),
        view.hub.as_deref().unwrap_or("?")
    );
    let _ = writeln!(
        out,
        "Last synced: {}",
        view.last_ok_ms.map_or_else(|| "never".to_owned(), when)
    );
    let _ = writeln!(out, "Waiting to be sent: {}", view.pending);
    if let Some(error) = &view.last_error {
        let _ = writeln!(out, "Last problem: {error}");
    }
    if !view.devices.is_empty() {
        out.push_str("Devices:\n");
        for device in &view.devices {
            let this = view.device_id.as_deref() == Some(device.id.as_str());
            let state = match (device.revoked_ms, device.last_seen_ms) {
                (Some(at), _) => format!("revoked {}", when(at)),
                (None, Some(at)) => format!("seen {}", when(at)),
                (None, None) => "never seen".to_owned(),
            };
            let _ = writeln!(
                out,
                "  {}{}  {}  ({})",
                device.name,
                if this { " (this device)" } else { "" },
                state,
                device.id
            );
        }
    }
    out
}

fn report_text(report: &SyncReport) -> String {
    format!(
        "Synced: {} sent, {} received ({} changed here){}",
        report.pushed,
        report.pulled,
        report.applied.changed,
        if report.pending > 0 {
            format!("; {} still to send", report.pending)
        } else {
            String::new()
        }
    )
}

pub async fn run(cairn: &Cairn, command: SyncCommand) -> anyhow::Result<()> {
    match command {
        SyncCommand::Status { json } => {
            let view = cairn.sync_status(true).await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&view)?);
            } else {
                print!("{}", status_text(&view));
            }
        }
        SyncCommand::Join {
            address,
            code,
            name,
            recovery,
        } => {
            let place = cairn
                .sync_join(&address, &code, name.as_deref(), recovery.as_deref())
                .await?;
            println!(
                "Joined {} as {} ({}'s vault).",
                place.hub, place.device_name, place.account_name
            );
            let report = cairn.sync_now().await?;
            println!("{}", report_text(&report));
            println!(
                "Sync runs in the background of the app and `cairn serve`; `cairn sync key` shows the recovery key to write down."
            );
        }
        SyncCommand::Pair => {
            let code = cairn.sync_pair().await?;
            println!("On the other device, within ten minutes:\n  cairn sync join ADDRESS {code}");
            println!("(or paste the code in Settings → Devices). The code opens your vault: keep it to yourself.");
        }
        SyncCommand::Now => println!("{}", report_text(&cairn.sync_now().await?)),
        SyncCommand::Revoke { device } => {
            cairn.sync_revoke(&device).await?;
            println!("Revoked {device}: it can no longer sync. What it already holds stays on it.");
        }
        SyncCommand::Leave => {
            cairn.sync_leave().await?;
            println!("This device left its hub; its memory stays here.");
        }
        SyncCommand::Pause => {
            cairn.sync_pause(true)?;
            println!("Sync paused: `cairn sync resume` starts it again.");
        }
        SyncCommand::Resume => {
            cairn.sync_pause(false)?;
            println!("Sync resumed.");
        }
        SyncCommand::Key => {
            println!("{}", cairn.sync_recovery_key()?);
            eprintln!("This key opens every memory of your vault: write it down and keep it safe.");
        }
    }
    Ok(())
}

pub async fn run_hub(args: HubArgs) -> anyhow::Result<()> {
    match args.command {
        None => print!("{}", hub::DEPLOYMENT),
        Some(HubCommand::Serve {
            database_url,
            listen,
        }) => {
            let listener = tokio::net::TcpListener::bind(&listen).await?;
            println!("Cairn hub listening on http://{}", listener.local_addr()?);
            hub::serve(&database_url, listener, async {
                let _ = tokio::signal::ctrl_c().await;
            })
            .await?;
        }
        Some(HubCommand::Account(AccountCommand::Add { name, database_url })) => {
            let pool = hub::pool(&database_url)?;
            hub::migrate(&pool).await?;
            let code = hub::add_account(&pool, &name).await?;
            println!("Added {name}. On their first device, within an hour:\n  cairn sync join HUB-ADDRESS {code}");
        }
        Some(HubCommand::Account(AccountCommand::Code { name, database_url })) => {
            let pool = hub::pool(&database_url)?;
            let code = hub::new_join_code(&pool, &name).await?;
            println!("On {name}'s new device, within an hour:\n  cairn sync join HUB-ADDRESS {code} --recovery KEY");
        }
    }
    Ok(())
}

//! `cairn sessions …`: the agent's conversations on disk — list, rename, archive, restore, delete.

use anyhow::bail;
use cairn_api::Cairn;
use clap::Subcommand;

#[derive(Debug, Subcommand)]
pub enum SessionsCommand {
    /// Conversations, most recent first (archived ones with --all).
    List {
        #[arg(long)]
        all: bool,
        #[arg(long)]
        json: bool,
    },
    /// Give a conversation a new title.
    Rename { id: String, title: String },
    /// Hide a conversation from the list (it is kept).
    Archive { id: String },
    /// Bring an archived conversation back.
    Restore { id: String },
    /// Delete a conversation for good.
    Delete { id: String },
}

pub fn run(cairn: &Cairn, command: SessionsCommand) -> anyhow::Result<()> {
    let store = cairn.session_store();
    let changed = match command {
        SessionsCommand::List { all, json } => {
            let sessions: Vec<_> = store
                .list()
                .into_iter()
                .filter(|s| all || !s.archived)
                .collect();
            if json {
                let rows: Vec<serde_json::Value> = sessions
                    .iter()
                    .map(|s| {
                        serde_json::json!({
                            "id": s.id, "title": s.title, "created_at": s.created_at, "updated_at": s.updated_at,
                            "archived": s.archived, "messages": s.messages.len(), "errors": s.errors.len(),
                        })
                    })
                    .collect();
                println!("{}", serde_json::to_string_pretty(&rows)?);
            } else if sessions.is_empty() {
                println!("no conversations yet — start one with `cairn`");
            } else {
                for s in &sessions {
                    let turns = s.turns();
                    let mark = if s.archived { " (archived)" } else { "" };
                    let errors = if s.errors.is_empty() {
                        String::new()
                    } else {
                        format!(", {} error(s)", s.errors.len())
                    };
                    println!("{}  {}  [{turns} turn(s){errors}]{mark}", s.id, s.title);
                }
            }
            return Ok(());
        }
        SessionsCommand::Rename { id, title } => {
            (id.clone(), store.update(&id, |s| s.title = title))
        }
        SessionsCommand::Archive { id } => (id.clone(), store.update(&id, |s| s.archived = true)),
        SessionsCommand::Restore { id } => (id.clone(), store.update(&id, |s| s.archived = false)),
        SessionsCommand::Delete { id } => (id.clone(), store.delete(&id)),
    };
    match changed {
        (_, Ok(true)) => Ok(()),
        (id, Ok(false)) => bail!("no conversation {id:?}"),
        (_, Err(e)) => bail!("{e}"),
    }
}

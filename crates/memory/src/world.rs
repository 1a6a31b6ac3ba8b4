//! L3 world models: what one workspace's policies show of it, kept as one memory per workspace.
//! From the tasks behind its live policies it names the commands that worked (run without error
//! in [`MIN_EVIDENCE`] tasks or more), the files the work touched, and the errors its repair
//! policies warn of — each with the tasks it rests on, and links to the policies and traces
//! (`evidence`). It is rewritten whenever induction touches the workspace, and archived when no
//! live policy is left to support it.

use std::collections::{BTreeMap, BTreeSet};

use cairn_protocol::memory::{Layer, Status};
use rusqlite::{params, OptionalExtension, Transaction};
use serde_json::Value;

use crate::policies::EVOLUTION_SOURCE;
use crate::store::{change_status, metadata_ids, stored_id, update_metadata};
use crate::text::snippet;
use crate::{MemoryError, MemoryStore};

/// Tasks a command or a file must appear in to be part of the world model.
const MIN_EVIDENCE: usize = 2;
/// The most commands, files and errors it lists.
const LISTED: usize = 8;

/// What the tasks of a workspace showed: per command, file or error, the episodes it came from.
#[derive(Default)]
struct Seen {
    commands: BTreeMap<String, BTreeSet<i64>>,
    files: BTreeMap<String, BTreeSet<i64>>,
    errors: BTreeMap<String, BTreeSet<i64>>,
}

impl MemoryStore {
    /// Rewrites the world model of `workspace` from its live policies; its id when it exists.
    pub(crate) fn refresh_world(
        &self,
        tx: &Transaction<'_>,
        workspace: &str,
    ) -> Result<Option<i64>, MemoryError> {
        if workspace.is_empty() {
            return Ok(None);
        }
        let policies = live_policies(tx, workspace)?;
        let mut seen = Seen::default();
        let mut traces: BTreeSet<i64> = BTreeSet::new();
        for (_, kind, metadata) in &policies {
            for id in metadata_ids(metadata, "sources") {
                traces.insert(id);
            }
            for episode in metadata_ids(metadata, "episodes") {
                let reward: Option<f64> = tx
                    .query_row(
                        "SELECT reward FROM episode_outcomes WHERE episode_id = ?1",
                        [episode],
                        |row| row.get(0),
                    )
                    .optional()?;
                let went_well = reward.is_some_and(|r| r > 0.0);
                if (kind == "prefer" && went_well) || (kind == "avoid" && !went_well) {
                    read_calls(tx, episode, went_well, &mut seen)?;
                }
            }
        }
        let external = format!("world:{workspace}");
        let existing = stored_id(tx, EVOLUTION_SOURCE, &external)?;
        let Some(text) = world_text(workspace, &seen, policies.len()) else {
            if let Some(id) = existing {
                change_status(tx, id, Status::Archived, self.now())?;
            }
            return Ok(existing);
        };
        let mut metadata = serde_json::Map::new();
        metadata.insert("world".into(), Value::from(workspace));
        metadata.insert(
            "policies".into(),
            Value::from(policies.iter().map(|p| p.0).collect::<Vec<_>>()),
        );
        metadata.insert(
            "sources".into(),
            Value::from(traces.into_iter().collect::<Vec<_>>()),
        );
        metadata.insert("evidence".into(), evidence(&seen));
        let id = match existing {
            Some(id) => {
                // A world model the person deleted stays deleted.
                if !self.update_learned(tx, id, Some(&text), false)? {
                    return Ok(None);
                }
                update_metadata(tx, id, |map| map.extend(metadata))?;
                id
            }
            None => self.insert_learned(tx, Layer::WorldModel, external, text, metadata)?,
        };
        change_status(tx, id, Status::Activated, self.now())?;
        Ok(Some(id))
    }
}

/// The activated policies induced in `workspace`: (id, kind, metadata).
fn live_policies(
    tx: &Transaction<'_>,
    workspace: &str,
) -> Result<Vec<(i64, String, Value)>, MemoryError> {
    let prefix = format!("{workspace}\u{1f}");
    let mut stmt = tx.prepare_cached(
        "SELECT id, metadata FROM memories
         WHERE layer = 'L2' AND source = ?1 AND status = 'activated'
           AND substr(json_extract(metadata, '$.signature'), 1, length(?2)) = ?2
         ORDER BY id",
    )?;
    let rows = stmt.query_map(params![EVOLUTION_SOURCE, prefix], |row| {
        Ok((row.get::<_, i64>(0)?, row.get::<_, String>(1)?))
    })?;
    let mut policies = Vec::new();
    for row in rows {
        let (id, metadata) = row?;
        let metadata: Value = serde_json::from_str(&metadata).unwrap_or(Value::Null);
        let kind = metadata
            .get("policy")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        policies.push((id, kind, metadata));
    }
    Ok(policies)
}

/// Reads the tool calls of `episode`'s turns into `seen`: from a task that went well, the
/// commands that ran without error and the files; from one that went badly, its errors.
fn read_calls(
    tx: &Transaction<'_>,
    episode: i64,
    went_well: bool,
    seen: &mut Seen,
) -> Result<(), MemoryError> {
    let mut stmt = tx.prepare_cached(
        "SELECT raw FROM turns WHERE episode_id = ?1 AND raw IS NOT NULL ORDER BY started_at, id",
    )?;
    let rows = stmt.query_map([episode], |row| row.get::<_, String>(0))?;
    for raw in rows {
        let raw: Value = serde_json::from_str(&raw?).unwrap_or(Value::Null);
        let calls = raw.get("tool_calls").and_then(Value::as_array);
        for call in calls.into_iter().flatten() {
            let failed = call
                .get("is_error")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            let input = call.get("input").unwrap_or(&Value::Null);
            let field = |key: &str| input.get(key).and_then(Value::as_str).map(str::trim);
            if went_well {
                if let Some(command) = field("command").filter(|c| !failed && !c.is_empty()) {
                    let command = snippet(command.lines().next().unwrap_or(command), 120);
                    seen.commands.entry(command).or_default().insert(episode);
                }
                if let Some(path) = field("path").or_else(|| field("file_path")) {
                    if !path.is_empty() {
                        seen.files
                            .entry(snippet(path, 160))
                            .or_default()
                            .insert(episode);
                    }
                }
            } else if failed {
                let output = call.get("output").and_then(Value::as_str).unwrap_or("");
                if let Some(line) = output.lines().map(str::trim).find(|l| !l.is_empty()) {
                    seen.errors
                        .entry(snippet(line, 160))
                        .or_default()
                        .insert(episode);
                }
            }
        }
    }
    Ok(())
}

/// The entries of `map` seen in at least `min` tasks, the most seen first.
fn listed(map: &BTreeMap<String, BTreeSet<i64>>, min: usize) -> Vec<(&str, usize)> {
    let mut entries: Vec<(&str, usize)> = map
        .iter()
        .filter(|(_, tasks)| tasks.len() >= min)
        .map(|(k, tasks)| (k.as_str(), tasks.len()))
        .collect();
    entries.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    entries.truncate(LISTED);
    entries
}

/// The world model's text; `None` when the tasks show nothing stable.
fn world_text(workspace: &str, seen: &Seen, policies: usize) -> Option<String> {
    let commands = listed(&seen.commands, MIN_EVIDENCE);
    let files = listed(&seen.files, 1);
    let errors = listed(&seen.errors, MIN_EVIDENCE);
    if commands.is_empty() && errors.is_empty() {
        return None;
    }
    // Each part as `label: entry (N tasks), …`, the entry quoted as `quote` says.
    let part = |label: &str, entries: &[(&str, usize)], quote: (&str, &str)| {
        let list: Vec<String> = entries
            .iter()
            .map(|(e, n)| format!("{}{e}{} ({})", quote.0, quote.1, count(*n, "task", "tasks")))
            .collect();
        (!list.is_empty()).then(|| format!("{label}: {}", list.join(", ")))
    };
    let said: Vec<String> = [
        part("commands that worked", &commands, ("`", "`")),
        part("files the work touched", &files, ("", "")),
        part("errors met", &errors, ("\"", "\"")),
    ]
    .into_iter()
    .flatten()
    .collect();
    Some(format!(
        "In {workspace}, {}. (World model from {}.)",
        said.join("; "),
        count(policies, "policy", "policies")
    ))
}

/// Per command, file and error, the episodes it rests on.
fn evidence(seen: &Seen) -> Value {
    let part = |map: &BTreeMap<String, BTreeSet<i64>>| {
        Value::Object(
            map.iter()
                .map(|(k, v)| {
                    (
                        k.clone(),
                        Value::from(v.iter().copied().collect::<Vec<_>>()),
                    )
                })
                .collect(),
        )
    };
    serde_json::json!({
        "commands": part(&seen.commands),
        "files": part(&seen.files),
        "errors": part(&seen.errors),
    })
}

fn count(n: usize, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

//! Skills crystallised from well-supported policies. A policy that went well in [`SKILL_SUPPORT`]
//! tasks or more, activated, becomes a candidate skill: a `SKILL.md` (front matter with its name
//! and description, when to use it, the steps of its best task, how to check it worked, the
//! evidence) kept as a Skill-layer memory, which the app writes into the skills folder for
//! `read_skill` to offer. Each later task that read the skill is a trial: one that went well
//! promotes it, failures outnumbering successes (two at least) archive it. Its `eta` (the quality
//! recall reads) is the mean outcome of its trials, the policy's gain before any.

use cairn_protocol::memory::{Layer, MemoryRecord, Status};
use rusqlite::{params, OptionalExtension, Transaction};
use serde_json::Value;

use crate::index::{record, COLUMNS};
use crate::policies::{Task, EVOLUTION_SOURCE};
use crate::store::{change_status, stored_id, update_metadata};
use crate::text::snippet;
use crate::{MemoryError, MemoryStore};

/// Tasks that went well before a policy becomes a candidate skill.
pub const SKILL_SUPPORT: usize = 3;
/// Failed trials (outnumbering the successful ones) that archive a skill.
const FAILED_TRIALS: u64 = 2;
/// Words a skill's name leaves out.
const NAME_STOPWORDS: &[&str] = &[
    "the", "and", "for", "with", "please", "after", "them", "this", "that", "from", "into",
    "again", "our", "your", "you", "can", "could", "would", "should", "what", "how", "why", "are",
    "its", "it's", "has", "have", "was", "were", "there", "then", "when", "all", "some",
];

impl MemoryStore {
    /// Writes or refreshes the candidate skill of prefer-policy `policy`, whose best task is
    /// `best`, supported by `support` tasks with `gain`; its id when one exists.
    pub(crate) fn crystallise(
        &self,
        tx: &Transaction<'_>,
        policy: i64,
        best: &Task,
        support: usize,
        gain: f64,
        sources: &[i64],
    ) -> Result<Option<i64>, MemoryError> {
        let external = format!("skill:{policy}");
        let existing = stored_id(tx, EVOLUTION_SOURCE, &external)?;
        if existing.is_none() && support < SKILL_SUPPORT {
            return Ok(None);
        }
        let name = match existing {
            Some(id) => skill_name_of(tx, id)?,
            None => None,
        };
        let name = match name {
            Some(name) => name,
            None => unique_name(tx, &base_name(&best.request), policy)?,
        };
        let text = skill_text(&name, best, support, policy, sources);
        match existing {
            Some(id) => {
                // A skill the person deleted stays deleted; one they edited keeps their words.
                if !self.update_learned(tx, id, Some(&text), true)? {
                    return Ok(None);
                }
                update_metadata(tx, id, |map| {
                    map.insert("support".into(), Value::from(support));
                    map.insert("sources".into(), Value::from(sources.to_vec()));
                    if map.get("trials").and_then(Value::as_u64).unwrap_or(0) == 0 {
                        map.insert("eta".into(), Value::from(gain.clamp(0.0, 1.0)));
                    }
                })?;
                Ok(Some(id))
            }
            None => {
                let metadata = serde_json::json!({
                    "skill": name,
                    "policy": policy,
                    "support": support,
                    "sources": sources,
                    "eta": gain.clamp(0.0, 1.0),
                    "trials": 0,
                    "trials_won": 0,
                });
                let Value::Object(metadata) = metadata else {
                    return Ok(None);
                };
                let id = self.insert_learned(tx, Layer::Skill, external, text, metadata)?;
                // A candidate until a task that reads it goes well.
                change_status(tx, id, Status::Resolving, self.now())?;
                Ok(Some(id))
            }
        }
    }

    /// Records `task` as a trial of each learned skill it read; the ids of the skills it tried.
    pub(crate) fn try_skills(
        &self,
        tx: &Transaction<'_>,
        task: &Task,
    ) -> Result<Vec<i64>, MemoryError> {
        let mut tried = Vec::new();
        for name in &task.skills_read {
            let id: Option<i64> = tx
                .query_row(
                    "SELECT id FROM memories WHERE layer = 'skill' AND source = ?1
                       AND status IN ('activated', 'resolving')
                       AND json_extract(metadata, '$.skill') = ?2",
                    params![EVOLUTION_SOURCE, name],
                    |row| row.get(0),
                )
                .optional()?;
            let Some(id) = id else { continue };
            let mut outcome = (0u64, 0u64);
            update_metadata(tx, id, |map| {
                // One trial per task: a task rated again replaces its outcome.
                let mut trials: serde_json::Map<String, Value> = map
                    .get("trial_outcomes")
                    .and_then(Value::as_object)
                    .cloned()
                    .unwrap_or_default();
                trials.insert(task.episode.to_string(), Value::from(task.reward));
                let won = trials
                    .values()
                    .filter(|r| r.as_f64().is_some_and(|r| r > 0.0))
                    .count() as u64;
                let n = trials.len() as u64;
                let mean = trials.values().filter_map(Value::as_f64).sum::<f64>() / n.max(1) as f64;
                map.insert("trials".into(), Value::from(n));
                map.insert("trials_won".into(), Value::from(won));
                map.insert("eta".into(), Value::from(mean.clamp(0.0, 1.0)));
                map.insert("trial_outcomes".into(), Value::Object(trials));
                outcome = (won, n - won);
            })?;
            let (won, lost) = outcome;
            let status = if lost >= FAILED_TRIALS && lost > won {
                Status::Archived
            } else if won > 0 {
                Status::Activated
            } else {
                Status::Resolving
            };
            change_status(tx, id, status, self.now())?;
            tried.push(id);
        }
        Ok(tried)
    }

    /// The skills Cairn learned that are offered (candidates and promoted ones): (name, memory).
    pub fn learned_skills(&self) -> Result<Vec<(String, MemoryRecord)>, MemoryError> {
        let conn = self.lock()?;
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT {COLUMNS} FROM memories WHERE layer = 'skill' AND source = ?1
               AND status IN ('activated', 'resolving') ORDER BY id"
        ))?;
        let rows = stmt.query_map([EVOLUTION_SOURCE], record)?;
        let mut skills = Vec::new();
        for row in rows {
            let memory = row?;
            if let Some(name) = memory.metadata.get("skill").and_then(Value::as_str) {
                skills.push((name.to_owned(), memory));
            }
        }
        Ok(skills)
    }
}

fn skill_name_of(tx: &Transaction<'_>, id: i64) -> Result<Option<String>, MemoryError> {
    Ok(tx
        .query_row(
            "SELECT json_extract(metadata, '$.skill') FROM memories WHERE id = ?1",
            [id],
            |row| row.get::<_, Option<String>>(0),
        )
        .optional()?
        .flatten())
}

/// A folder name from a request's first few words: `fix-failing-parser-tests`.
fn base_name(request: &str) -> String {
    let words: Vec<String> = request
        .split(|c: char| !c.is_alphanumeric())
        .map(str::to_lowercase)
        .filter(|w| w.chars().count() >= 3 && !NAME_STOPWORDS.contains(&w.as_str()))
        .take(5)
        .collect();
    if words.is_empty() {
        "learned-task".to_owned()
    } else {
        words.join("-")
    }
}

/// `base`, or `base-<policy>` when another learned skill has the name.
fn unique_name(tx: &Transaction<'_>, base: &str, policy: i64) -> Result<String, MemoryError> {
    let taken = tx
        .query_row(
            "SELECT 1 FROM memories WHERE layer = 'skill' AND source = ?1
               AND json_extract(metadata, '$.skill') = ?2",
            params![EVOLUTION_SOURCE, base],
            |_| Ok(()),
        )
        .optional()?
        .is_some();
    Ok(if taken {
        format!("{base}-{policy}")
    } else {
        base.to_owned()
    })
}

/// The skill's `SKILL.md`.
fn skill_text(name: &str, best: &Task, support: usize, policy: i64, sources: &[i64]) -> String {
    let request = snippet(best.request.trim(), 200);
    let mut text = format!(
        "---\nname: {name}\ndescription: \"Learned from {support} tasks that went well: {}\"\norigin: cairn-evolution\n---\n\n# {name}\n\nUse when {}.\n\n## Steps\n\n",
        request.replace(['"', '\n'], " "),
        best.when(),
    );
    if best.steps.is_empty() {
        text.push_str("1. Answer directly, as before.\n");
    }
    for (i, step) in best.steps.iter().enumerate() {
        text.push_str(&format!("{}. {}\n", i + 1, snippet(step, 200)));
    }
    let last_ok = best
        .steps
        .iter()
        .rev()
        .find(|s| !s.contains(") [error]"))
        .map(|s| snippet(s, 200));
    text.push_str("\n## Check\n\n");
    match last_ok {
        Some(step) => text.push_str(&format!(
            "The last step runs without error, as it did: {step}\n"
        )),
        None => text.push_str("The person confirms it worked.\n"),
    }
    if !best.answer.is_empty() {
        text.push_str(&format!(
            "\nThe answer that closed it: {}\n",
            snippet(&best.answer, 300)
        ));
    }
    text.push_str(&format!(
        "\n## Evidence\n\nEvolution policy {policy}, from traces {}.\n",
        sources
            .iter()
            .map(i64::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    ));
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_skill_is_named_by_its_requests_first_words() {
        assert_eq!(
            base_name("The parser tests fail after the refactor, please fix them"),
            "parser-tests-fail-refactor-fix"
        );
        assert_eq!(base_name("?!"), "learned-task");
    }
}

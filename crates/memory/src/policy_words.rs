//! Policies in the model's words. With `WriterUses::policies`, the background queue asks the
//! model to rewrite a policy the rules just wrote (or changed) as when it applies, what to do,
//! why and caveats, as one JSON object. A reply is kept only when it is such an object, each part
//! a short plain sentence, and what it says to do is grounded in the rules' text (it names
//! something they name); anything else — prose, broken JSON, empty or invented steps — leaves the
//! rules' text standing, with the reason in the policy's metadata. A model that cannot be asked
//! is tried again after the store next changes; nothing here runs on the prompt's path.

use std::collections::BTreeSet;

use rusqlite::OptionalExtension;
use serde_json::Value;

use crate::store::update_metadata;
use crate::{MemoryError, MemoryStore, Writer};

const POLICY_PROMPT: &str = "You keep the notes an AI coding agent learned from its past tasks. \
You are given one note written by rules from the records of those tasks. Rewrite it as guidance \
for the agent's next task of that kind. Reply with one JSON object and nothing else: \
{\"when\": \"the kind of request and project it applies to\", \"do\": \"what to do, in order, \
naming the exact commands, files and tools from the note\", \"why\": \"why, from how the tasks \
went\", \"caveats\": \"what went wrong before, or an empty string\"}. Use only facts in the note.";

/// The longest part of a policy the model may write.
const PART_CHARS: usize = 600;

/// Why a model's reply is not a policy.
fn parts(reply: &str, rules: &str) -> Result<[String; 4], String> {
    let start = reply.find('{').ok_or("no JSON object in the reply")?;
    let end = reply.rfind('}').ok_or("no JSON object in the reply")?;
    let object: Value = serde_json::from_str(reply.get(start..=end).unwrap_or_default())
        .map_err(|e| format!("the reply's JSON does not parse: {e}"))?;
    let part = |name: &str, required: bool| -> Result<String, String> {
        let text = match object.get(name) {
            Some(Value::String(text)) => text.split_whitespace().collect::<Vec<_>>().join(" "),
            None | Some(Value::Null) if !required => String::new(),
            _ => return Err(format!("\"{name}\" is not a sentence")),
        };
        let text = text.trim_end_matches('.').to_owned();
        if required && text.is_empty() {
            return Err(format!("\"{name}\" is empty"));
        }
        if text.chars().count() > PART_CHARS || text.chars().any(char::is_control) {
            return Err(format!("\"{name}\" is not a short plain sentence"));
        }
        Ok(text)
    };
    let [when, what, why, caveats] = [
        part("when", true)?,
        part("do", true)?,
        part("why", true)?,
        part("caveats", false)?,
    ];
    if !grounded(&what, rules) {
        return Err("\"do\" names nothing the tasks did".into());
    }
    Ok([when, what, why, caveats])
}

/// Whether `what` names a word of four letters or more that `rules` holds (a command, a file,
/// a tool): a model that invents its steps is not believed.
fn grounded(what: &str, rules: &str) -> bool {
    let words = |text: &str| -> BTreeSet<String> {
        text.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-'))
            .filter(|w| w.chars().count() >= 4)
            .map(str::to_lowercase)
            .collect()
    };
    let known = words(rules);
    words(what).iter().any(|w| known.contains(w))
}

impl MemoryStore {
    /// Has the background model put up to `max` policies the rules wrote or changed in its own
    /// words; returns how many replies it read (kept or refused). Without a model lent for
    /// policies, or when it cannot be asked, nothing is read (the policies wait).
    pub fn reword_policies_pending(&self, max: usize) -> Result<usize, MemoryError> {
        let Some(writer) = self.writer_for(|uses| uses.policies) else {
            return Ok(0);
        };
        let pending: Vec<(i64, String)> = {
            let conn = self.lock()?;
            let mut stmt = conn.prepare_cached(
                "SELECT id, json_extract(metadata, '$.rules_text') FROM memories
                 WHERE layer = 'L2' AND source = ?1 AND status IN ('activated', 'resolving')
                   AND json_extract(metadata, '$.model_pending') = 1
                   AND json_extract(metadata, '$.rules_text') IS NOT NULL
                 ORDER BY id LIMIT ?2",
            )?;
            let rows = stmt.query_map(
                rusqlite::params![crate::policies::EVOLUTION_SOURCE, max as i64],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )?;
            rows.collect::<Result<_, _>>()?
        };
        let mut read = 0;
        for (id, rules) in pending {
            let Ok(reply) = self.ask(writer.as_ref(), &rules) else {
                // Not asked (a dead server): the next change of the store tries again.
                break;
            };
            self.keep_words(id, &rules, &reply)?;
            read += 1;
        }
        Ok(read)
    }

    fn ask(&self, writer: &dyn Writer, rules: &str) -> Result<String, MemoryError> {
        writer.write(POLICY_PROMPT, rules, 400).map_err(|e| {
            tracing::warn!("the background model could not reword a policy: {e}");
            e
        })
    }

    /// Stores the model's `reply` for policy `id` when it is one; otherwise notes why not.
    fn keep_words(&self, id: i64, rules: &str, reply: &str) -> Result<(), MemoryError> {
        let mut conn = self.lock()?;
        let tx = conn.transaction()?;
        // The policy may have changed or gone while the model wrote.
        let current: Option<String> = tx
            .query_row(
                "SELECT json_extract(metadata, '$.rules_text') FROM memories
                 WHERE id = ?1 AND status != 'deleted'",
                [id],
                |row| row.get(0),
            )
            .optional()?
            .flatten();
        if current.as_deref() != Some(rules) {
            return Ok(());
        }
        match parts(reply, rules) {
            Ok([when, what, why, caveats]) => {
                // "What worked" or "What to avoid", as the rules said it.
                let kind = rules.split(" when ").next().unwrap_or("What worked");
                let mut text = format!("{kind} when {when}: {what}. Why: {why}.");
                if !caveats.is_empty() {
                    text.push_str(&format!(" Caveats: {caveats}."));
                }
                // A person's edit since the rules wrote it stays.
                if self.update_learned(&tx, id, Some(&text), true)? {
                    update_metadata(&tx, id, |map| {
                        map.insert("written_by".into(), Value::from("model"));
                        map.insert("model_pending".into(), Value::from(false));
                        map.remove("model_refused");
                    })?;
                }
            }
            Err(why) => {
                update_metadata(&tx, id, |map| {
                    map.insert("model_pending".into(), Value::from(false));
                    map.insert("model_refused".into(), Value::from(why));
                })?;
            }
        }
        tx.commit()?;
        drop(conn);
        self.forget_vector(id);
        self.wake_embedding();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RULES: &str = "What worked when asked \"count the TODOs\" in /p (tools: bash): \
        bash({\"command\":\"grep -c TODO src/a.rs\"}) → src/a.rs:2; answer: 2. Why: it went well \
        in 2 of 2 tasks like it.";

    #[test]
    fn a_policy_reply_is_read_from_its_json_object() {
        let reply = "Here it is:\n```json\n{\"when\": \"asked to count TODO markers\", \
            \"do\": \"run grep -c TODO over the files in src.\", \"why\": \"it answered twice\", \
            \"caveats\": null}\n```";
        assert_eq!(
            parts(reply, RULES),
            Ok([
                "asked to count TODO markers".to_owned(),
                "run grep -c TODO over the files in src".to_owned(),
                "it answered twice".to_owned(),
                String::new(),
            ])
        );
    }

    #[test]
    fn garbage_is_refused_with_a_reason() {
        let refused = |reply: &str| parts(reply, RULES).err().unwrap_or_default();
        assert_eq!(refused("Sure! Count them."), "no JSON object in the reply");
        assert!(refused("{\"when\": \"x\",}").starts_with("the reply's JSON does not parse"));
        assert_eq!(
            refused("{\"when\": \"x\", \"do\": 3, \"why\": \"y\"}"),
            "\"do\" is not a sentence"
        );
        assert_eq!(
            refused("{\"when\": \"x\", \"do\": \"y\", \"why\": \"  \"}"),
            "\"why\" is empty"
        );
        assert_eq!(
            refused("{\"when\": \"x\", \"do\": \"reboot the router twice\", \"why\": \"y\"}"),
            "\"do\" names nothing the tasks did"
        );
        let long = format!(
            "{{\"when\": \"x\", \"do\": \"grep {}\", \"why\": \"y\"}}",
            "a".repeat(700)
        );
        assert_eq!(refused(&long), "\"do\" is not a short plain sentence");
    }
}

//! Feedback and rewards. A reply is rated by the person (thumbs, an optional word) or implicitly:
//! their next message says it worked or it did not, they stopped the turn before it ended (the
//! task abandoned), or the turn's tools failed again and again.
//! Every rating is kept in the `feedback` log; an episode's reward is the mean of its replies'
//! latest ratings (the person's own over an implicit one, an implicit one at half weight), and it
//! is spread over the episode's steps, the later ones (closer to the outcome) getting more. Each
//! step keeps its `value` and the episode's `reward` in its metadata, where recall's quality bonus
//! reads them (and lets them fade with the memory's age).

use rusqlite::{params, OptionalExtension, Transaction};
use serde_json::Value;

use crate::model::{FeedbackRequest, Rating, Reward};
use crate::store::{cached, log_change, update_metadata};
use crate::{redact, MemoryError, MemoryStore};

/// The status of a captured turn the person stopped before it ended.
pub const STOPPED: &str = "stopped";
/// How much an implicit rating counts against the person's own.
const IMPLICIT_WEIGHT: f64 = 0.5;
/// Each step before the rated outcome gets this share of the value of the step after it.
const STEP_DISCOUNT: f64 = 0.8;
/// Failed tool calls in one turn that count as the turn going badly.
const REPEATED_FAILURES: usize = 3;
/// The longest note kept with a rating.
const NOTE_CHARS: usize = 500;

/// Phrases of a next message saying the previous answer worked.
const WORKED: &[&[&str]] = &[
    &["thanks"],
    &["thank", "you"],
    &["that", "worked"],
    &["it", "worked"],
    &["it", "works"],
    &["works", "now"],
    &["that", "fixed", "it"],
    &["perfect"],
];

/// Phrases of a next message saying it did not.
const FAILED: &[&[&str]] = &[
    &["didn't", "work"],
    &["did", "not", "work"],
    &["doesn't", "work"],
    &["does", "not", "work"],
    &["not", "working"],
    &["still", "failing"],
    &["still", "fails"],
    &["still", "broken"],
    &["same", "error"],
    &["that's", "wrong"],
    &["that", "is", "wrong"],
    &["not", "what", "i", "asked"],
    &["didn't", "help"],
];

/// One logged rating.
#[derive(Debug, Clone, PartialEq)]
pub struct Rated {
    pub at: i64,
    /// 1 or -1 from the person, ±0.5 implicit.
    pub value: f64,
    /// `person`, `next_message` or `tool_failures`.
    pub origin: String,
    pub note: Option<String>,
}

/// What a message says of the answer before it: `Some(1.0)` it worked, `Some(-1.0)` it did not.
pub(crate) fn verdict(message: &str) -> Option<f64> {
    let words = crate::statements::words(message);
    if crate::statements::has_phrase(&words, FAILED) {
        Some(-1.0)
    } else if crate::statements::has_phrase(&words, WORKED) {
        Some(1.0)
    } else {
        None
    }
}

impl MemoryStore {
    /// Records a person's rating of a reply and returns the reward it changed. A reply that does
    /// not exist (or was deleted) is an error and nothing is stored.
    pub fn give_feedback(&self, request: &FeedbackRequest) -> Result<Reward, MemoryError> {
        let note = request
            .note
            .as_deref()
            .map(|n| crate::text::snippet(&redact(n.trim()), NOTE_CHARS))
            .filter(|n| !n.is_empty());
        let value = match request.rating {
            Rating::Up => 1.0,
            Rating::Down => -1.0,
        };
        let mut conn = self.lock()?;
        let tx = conn.transaction()?;
        let memory_id = rated_memory(&tx, request.memory_id, request.turn_id)?;
        let reward = rate(&tx, self.now(), memory_id, value, "person", note.as_deref())?;
        tx.commit()?;
        self.wake_embedding();
        Ok(reward)
    }

    /// The ratings a memory has received, newest first.
    pub fn feedback_of(&self, memory_id: i64) -> Result<Vec<Rated>, MemoryError> {
        let conn = self.lock()?;
        let mut stmt = conn.prepare_cached(
            "SELECT at, value, origin, note FROM feedback WHERE memory_id = ?1 ORDER BY at DESC, id DESC",
        )?;
        let rows = stmt.query_map([memory_id], |row| {
            Ok(Rated {
                at: row.get(0)?,
                value: row.get(1)?,
                origin: row.get(2)?,
                note: row.get(3)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}

/// The live trace a rating is about.
fn rated_memory(
    tx: &Transaction<'_>,
    memory_id: Option<i64>,
    turn_id: Option<i64>,
) -> Result<i64, MemoryError> {
    let (sql, key, what) = match (memory_id, turn_id) {
        (Some(id), _) => (
            "SELECT id FROM memories WHERE id = ?1 AND status != 'deleted'",
            id,
            format!("memory {id}"),
        ),
        (None, Some(turn)) => (
            "SELECT id FROM memories WHERE turn_id = ?1 AND layer = 'L1' AND status != 'deleted'",
            turn,
            format!("the captured reply of turn {turn}"),
        ),
        (None, None) => {
            return Err(MemoryError::Invalid(
                "feedback names the reply it rates: give memory_id or turn_id".into(),
            ))
        }
    };
    tx.query_row(sql, [key], |row| row.get(0))
        .optional()?
        .ok_or(MemoryError::NotFound(what))
}

/// Logs one rating and recomputes the reward of its memory's episode.
pub(crate) fn rate(
    tx: &Transaction<'_>,
    at: i64,
    memory_id: i64,
    value: f64,
    origin: &str,
    note: Option<&str>,
) -> Result<Reward, MemoryError> {
    cached(
        tx,
        "INSERT INTO feedback (at, memory_id, value, origin, note) VALUES (?1, ?2, ?3, ?4, ?5)",
        params![at, memory_id, value, origin, note],
    )?;
    let episode_id: Option<i64> = tx.query_row(
        "SELECT episode_id FROM memories WHERE id = ?1",
        [memory_id],
        |row| row.get(0),
    )?;
    let steps: Vec<i64> = match episode_id {
        Some(episode) => {
            let mut stmt = tx.prepare_cached(
                "SELECT id FROM memories WHERE episode_id = ?1 AND layer = 'L1' AND status != 'deleted'
                 ORDER BY created_at, id",
            )?;
            let rows = stmt.query_map([episode], |row| row.get(0))?;
            rows.collect::<Result<_, _>>()?
        }
        None => vec![memory_id],
    };
    // Each reply's latest rating, the person's own before an implicit one.
    let mut ratings = Vec::new();
    {
        let mut stmt = tx.prepare_cached(
            "SELECT value FROM feedback WHERE memory_id = ?1
             ORDER BY origin = 'person' DESC, at DESC, id DESC LIMIT 1",
        )?;
        for step in &steps {
            if let Some(v) = stmt
                .query_row([step], |row| row.get::<_, f64>(0))
                .optional()?
            {
                ratings.push(v);
            }
        }
    }
    let reward = if ratings.is_empty() {
        0.0
    } else {
        (ratings.iter().sum::<f64>() / ratings.len() as f64).clamp(-1.0, 1.0)
    };
    let last = steps.len().saturating_sub(1);
    let mut values = Vec::with_capacity(steps.len());
    for (i, step) in steps.iter().enumerate() {
        let value = reward * STEP_DISCOUNT.powi((last - i) as i32);
        let value = (value * 1000.0).round() / 1000.0;
        update_metadata(tx, *step, |map| {
            map.insert("value".into(), Value::from(value));
            map.insert(
                "reward".into(),
                Value::from((reward * 1000.0).round() / 1000.0),
            );
        })?;
        values.push((*step, value));
    }
    if let Some(episode) = episode_id {
        // The episode's outcome, for the induction of policies to read again.
        cached(
            tx,
            "INSERT INTO episode_outcomes (episode_id, reward, at, induced) VALUES (?1, ?2, ?3, 0)
             ON CONFLICT(episode_id) DO UPDATE SET reward = excluded.reward, at = excluded.at,
                                                   induced = 0",
            params![episode, reward, at],
        )?;
    }
    log_change(
        tx,
        at,
        "feedback",
        Some(memory_id),
        &serde_json::json!({ "value": value, "origin": origin, "reward": reward }),
    )?;
    Ok(Reward {
        memory_id,
        episode_id,
        reward,
        ratings: ratings.len(),
        steps: values,
    })
}

/// The implicit ratings of a turn just started: its request's verdict on the session's previous
/// captured reply.
pub(crate) fn rate_previous_reply(
    tx: &Transaction<'_>,
    at: i64,
    turn_id: i64,
    session_id: i64,
    request: &str,
) -> Result<(), MemoryError> {
    let Some(verdict) = verdict(request) else {
        return Ok(());
    };
    let previous: Option<i64> = tx
        .query_row(
            "SELECT m.id FROM memories m JOIN turns t ON t.id = m.turn_id
             WHERE t.session_id = ?1 AND t.id < ?2 AND m.layer = 'L1' AND m.status != 'deleted'
             ORDER BY t.id DESC LIMIT 1",
            params![session_id, turn_id],
            |row| row.get(0),
        )
        .optional()?;
    if let Some(memory_id) = previous {
        rate(
            tx,
            at,
            memory_id,
            verdict * IMPLICIT_WEIGHT,
            "next_message",
            None,
        )?;
    }
    Ok(())
}

/// A turn the person stopped (the task abandoned), or whose tools failed again and again, went
/// badly.
pub(crate) fn rate_implicitly(
    tx: &Transaction<'_>,
    at: i64,
    memory_id: i64,
    status: &str,
    failures: usize,
) -> Result<(), MemoryError> {
    let origin = if status == STOPPED {
        Some("stopped")
    } else if failures >= REPEATED_FAILURES {
        Some("tool_failures")
    } else {
        None
    };
    if let Some(origin) = origin {
        rate(tx, at, memory_id, -IMPLICIT_WEIGHT, origin, None)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_next_message_says_whether_it_worked() {
        assert_eq!(verdict("Thanks, that worked!"), Some(1.0));
        assert_eq!(verdict("It works now"), Some(1.0));
        assert_eq!(verdict("That didn’t work, same error"), Some(-1.0));
        assert_eq!(verdict("thanks but it still fails"), Some(-1.0));
        assert_eq!(verdict("Now add a test for the parser"), None);
    }
}

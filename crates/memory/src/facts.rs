//! Facts that change. A background pass reads each new memory as a statement — who said it (its
//! owner) and how: asking, looking back, announcing a change, or plainly — and links a change to
//! the current version of the same owner's fact it updates ("we moved staging to 10.0.3.7" after
//! "staging is at 10.0.3.5"). The older memory stays, marked `superseded_by` its successor; the
//! successor lists what it `supersedes`, so a fact's history is a chain. Recall reads the chains:
//! the current version ranks above the older ones it replaced, and a question about the past ("what
//! did she use before X?") ranks the version before X above X.

use std::collections::{HashMap, HashSet};

use rusqlite::{params, OptionalExtension};
use serde_json::Value;

use crate::model::{SearchHit, Status, Trace};
use crate::store::{cached, get, log_change, update_metadata};
use crate::{MemoryError, MemoryRecord, MemoryStore};

/// How related two statements must be (the Dice overlap of their weighted terms plus their
/// vector similarity, each at most 1) for the newer, announcing a change, to supersede the older.
const RELATED: f64 = 0.7;
/// How much more related a change must be to the fact it updates than to any other fact of its
/// owner. An update is about one fact; a remark about as related to several ("thanks, I won't
/// quit!") updates none of them. On the knowledge-update dev set this margin, with the bar
/// lowered from 1.0, links most true updates and few remarks: the latest value ranked first went
/// from 88.9% to 91.7% of questions and a stale value above it from 5.6% to 2.8%.
const DISTINCT: f64 = 0.15;
/// How many of a person's latest statements with digits are read looking for an earlier value.
const EARLIER_VALUE_SCAN: i64 = 2_000;
/// Older statements of the same owner considered per memory, from each channel.
const CANDIDATES: usize = 24;
/// How relevant (relative to the older statement) a change must be to move above it.
const RELEVANT_TO_MOVE: f64 = 0.3;
/// The bonus of a statement announcing a change when the question asks what holds now: a tenth
/// of full relevance.
pub(crate) const CHANGE_PRIOR: f64 = crate::recall::FULL_RELEVANCE / 10.0;
/// How far above a version its replacement (or, asked about the past, its predecessor) is placed.
const VERSION_STEP: f64 = 0.001;
/// A chain longer than this is followed no further (a guard against a cycle in a damaged file).
const MAX_CHAIN: usize = 32;

/// How a statement is said.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stance {
    /// A question asserts nothing.
    Question,
    /// "Remember when…", "I used to…": about the past, not what holds now.
    LookingBack,
    /// "… now", "we moved to…", "my new…": announces what holds from now on.
    Change,
    /// Anything else.
    Plain,
}

impl Stance {
    fn as_str(self) -> &'static str {
        match self {
            Self::Question => "question",
            Self::LookingBack => "looking_back",
            Self::Change => "change",
            Self::Plain => "plain",
        }
    }
}

/// A memory read as a statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Statement {
    /// Who said it, lower-cased: the speaker of a `Name: …` line, `user` for a captured turn.
    pub owner: String,
    /// What the owner said.
    pub said: String,
    pub stance: Stance,
}

impl Statement {
    /// Whether it says something holds (a plain statement or a change), rather than asking or
    /// looking back.
    pub(crate) fn asserts(&self) -> bool {
        matches!(self.stance, Stance::Plain | Stance::Change)
    }

    pub(crate) fn announces_change(&self) -> bool {
        self.stance == Stance::Change
    }
}

/// Phrases that place a statement in the past.
const LOOKING_BACK: &[&[&str]] = &[
    &["remember"],
    &["remembered"],
    &["used", "to"],
    &["back", "when"],
    &["back", "in", "the", "day"],
    &["ago"],
    &["old"],
    &["former"],
    &["formerly"],
    &["previous"],
    &["previously"],
    &["nostalgic"],
    &["miss"],
    &["when", "i", "was"],
    &["when", "we", "were"],
    &["those", "days"],
    &["out", "of", "habit"],
];

/// Words and phrases that announce a change or what holds now.
const CHANGE: &[&[&str]] = &[
    &["now"],
    &["nowadays"],
    &["currently"],
    &["these", "days"],
    &["lately"],
    &["from", "now", "on"],
    &["new"],
    &["newly"],
    &["anymore"],
    &["no", "longer"],
    &["instead"],
    &["switched"],
    &["switching"],
    &["moved"],
    &["changed"],
    &["replaced"],
    &["renamed"],
    &["upgraded"],
    &["migrated"],
    &["became"],
    &["promoted"],
    &["joined"],
    &["started"],
    &["took", "over"],
    &["taking", "over"],
    &["took", "up"],
    &["gave", "up"],
    &["broke", "up"],
    &["quit"],
    &["finally"],
    &["recently"],
    &["as", "of"],
    &["relocated"],
    &["swapped"],
    &["adopted"],
    &["ditched"],
    &["dropped"],
    &["went", "back", "to"],
    &["transferred"],
    &["got", "a", "new"],
    &["just", "got"],
    &["just", "bought"],
    &["first", "week"],
    &["first", "day"],
    &["first", "appointment"],
];

/// Reads `text` as a statement.
pub(crate) fn statement(text: &str) -> Statement {
    let (owner, said) = owner_and_words(text);
    let words = words(&said);
    let has = |phrases: &[&[&str]]| has_phrase(&words, phrases);
    let stance = if asks(&said) {
        Stance::Question
    } else if has(LOOKING_BACK) {
        Stance::LookingBack
    } else if has(CHANGE) {
        Stance::Change
    } else {
        Stance::Plain
    };
    Statement {
        owner,
        said,
        stance,
    }
}

/// Tags that end a statement with a question mark without asking anything ("Text me at
/// 555-0142 when you land, okay?").
const TAG_QUESTIONS: &[&str] = &["okay", "ok", "right", "alright", "yeah", "yes", "ya", "no"];

/// Whether `said` asks a question: it ends with a question mark that is not a tag after a
/// statement.
fn asks(said: &str) -> bool {
    let Some(body) = said.trim_end().strip_suffix('?') else {
        return false;
    };
    let tagged = body.rsplit_once(',').is_some_and(|(before, tag)| {
        let tag = tag.trim().to_lowercase();
        !before.trim().is_empty() && TAG_QUESTIONS.contains(&tag.as_str())
    });
    !tagged
}

/// The fewest content words before a question's own sentence for the line to say something
/// besides asking ("Wow, nice pic! You both looked amazing. Where was it?" says something;
/// "Cool! What did it look like?" does not).
const LEAD_IN_WORDS: usize = 4;

/// Whether `text` only asks: a line that ends in a question (not a tag question) with fewer
/// than [`LEAD_IN_WORDS`] content words before that question's sentence. Such a line says
/// nothing that could answer. A captured turn holds the assistant's answer, so it never only
/// asks.
pub(crate) fn only_asks(text: &str) -> bool {
    let (owner, said) = owner_and_words(text);
    if owner == "user" || !asks(&said) {
        return false;
    }
    let body = said.trim_end().trim_end_matches('?');
    let lead_in = body.rfind(['.', '!', '?']).map_or("", |end| &body[..end]);
    words(lead_in)
        .iter()
        .filter(|w| !crate::text::is_stop_word(w))
        .count()
        < LEAD_IN_WORDS
}

/// Words of a query that ask about questions asked ("What did Caroline ask about the
/// exhibit?"): for it, a line that only asks is an answer.
const ABOUT_ASKING: &[&str] = &[
    "ask",
    "asked",
    "asking",
    "asks",
    "question",
    "questions",
    "wonder",
    "wondered",
    "wondering",
    "inquired",
];

/// Whether `query` asks about the questions someone asked.
pub(crate) fn about_asking(query: &str) -> bool {
    query.contains('问')
        || words(query)
            .iter()
            .any(|w| ABOUT_ASKING.contains(&w.as_str()))
}

/// `Caroline: text` → (`caroline`, `text`); a captured turn (`User: …` / `Assistant: …` lines) →
/// (`user`, the person's lines); anything else → (`someone`, the whole text).
fn owner_and_words(text: &str) -> (String, String) {
    let text = text.trim();
    if text.lines().any(|l| l.starts_with("User:")) {
        let said: Vec<&str> = text
            .lines()
            .take_while(|l| !l.starts_with("Assistant:"))
            .map(|l| l.strip_prefix("User:").unwrap_or(l).trim())
            .collect();
        return ("user".to_owned(), said.join("\n"));
    }
    if let Some((name, rest)) = text.split_once(": ") {
        let words: Vec<&str> = name.split_whitespace().collect();
        let named = !words.is_empty()
            && words.len() <= 3
            && name.chars().count() <= 40
            && words
                .iter()
                .all(|w| w.chars().next().is_some_and(char::is_uppercase));
        if named {
            return (name.trim().to_lowercase(), rest.trim().to_owned());
        }
    }
    ("someone".to_owned(), text.to_owned())
}

/// Lower-cased words; apostrophes (either kind, as `'`) stay inside them ("i'm").
pub(crate) fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '’'))
        .filter(|w| !w.is_empty())
        .map(|w| w.to_lowercase().replace('’', "'"))
        .collect()
}

/// What a question asks about time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Asked {
    /// What holds now (the default: a question that does not say otherwise wants the current
    /// version of a fact).
    Current,
    /// What holds now, said in so many words ("now", "currently", "these days"…).
    Now,
    /// What held before: "before X", "previously", "used to"…
    Earlier,
    /// Nothing about time: memories ranked as they match (the parts of a question about the
    /// past, searched on their own).
    Unordered,
}

const NOW: &[&[&str]] = &[
    &["now"],
    &["currently"],
    &["current"],
    &["these", "days"],
    &["nowadays"],
    &["at", "the", "moment"],
    &["at", "present"],
    &["latest"],
    &["still"],
];

/// Whether `words` hold one of `phrases` (word sequences).
pub(crate) fn has_phrase(words: &[String], phrases: &[&[&str]]) -> bool {
    phrases.iter().any(|p| {
        words
            .windows(p.len())
            .any(|w| w.iter().zip(*p).all(|(a, b)| a == b))
    })
}

const EARLIER: &[&[&str]] = &[
    &["before"],
    &["previously"],
    &["previous"],
    &["prior", "to"],
    &["used", "to"],
    &["formerly"],
    &["former"],
    &["originally"],
    &["at", "first"],
    &["in", "the", "past"],
    &["old"],
    &["until"],
];

/// Whether `query` asks about the past or the present.
pub(crate) fn asked(query: &str) -> Asked {
    let words = words(query);
    if has_phrase(&words, EARLIER) {
        Asked::Earlier
    } else if has_phrase(&words, NOW) {
        Asked::Now
    } else {
        Asked::Current
    }
}

/// A question about what held before a named change, split into its subject and the change:
/// "What car did she drive before getting the Corolla?" → ("What car did she drive", "getting
/// the Corolla").
pub(crate) fn split_before(query: &str) -> Option<(String, String)> {
    let lower = query.to_lowercase();
    let (at, len) = [" before ", " prior to "]
        .iter()
        .find_map(|w| lower.find(w).map(|at| (at, w.len())))?;
    // Byte offsets of the lower-cased text match the original's for ASCII markers only when
    // lower-casing kept the length; otherwise leave the question whole.
    if lower.len() != query.len() {
        return None;
    }
    let subject = query[..at].trim();
    let change = query[at + len..]
        .trim()
        .trim_end_matches(['?', '.', '!'])
        .trim();
    (words(subject).len() >= 2 && !words(change).is_empty())
        .then(|| (subject.to_owned(), change.to_owned()))
}

/// The values with digits in `text` (a phone number, an address, a version, a time), each with
/// its shape: every run of digits read as `9` and of letters as `a`, other characters kept
/// ("555-0172" and "555-0142" are both `9-9`, "10.0.3.7" is `9.9.9.9`).
pub(crate) fn values_with_digits(text: &str) -> Vec<(String, String)> {
    text.split_whitespace()
        .map(|word| word.trim_matches(|c: char| !c.is_alphanumeric()))
        .filter(|word| word.chars().count() >= 3 && word.chars().any(|c| c.is_ascii_digit()))
        .map(|word| {
            let mut shape = String::new();
            for c in word.chars() {
                let class = if c.is_ascii_digit() {
                    '9'
                } else if c.is_alphabetic() {
                    'a'
                } else {
                    c
                };
                if !(shape.ends_with(class) && (class == '9' || class == 'a')) {
                    shape.push(class);
                }
            }
            (word.to_owned(), shape)
        })
        .collect()
}

/// A memory's successor, when a later memory superseded it.
pub(crate) fn successor(memory: &MemoryRecord) -> Option<i64> {
    memory.metadata.get("superseded_by").and_then(Value::as_i64)
}

/// The memories a memory superseded.
pub(crate) fn predecessors(memory: &MemoryRecord) -> Vec<i64> {
    crate::store::metadata_ids(&memory.metadata, "supersedes")
}

impl MemoryStore {
    /// Reads up to `max` memories not yet read as statements (oldest first, each after its vector
    /// when an embedder is set) and links the changes among them; returns how many it read.
    pub fn relate_pending(&self, max: usize) -> Result<usize, MemoryError> {
        let model = self.embedder().map(|e| e.model().to_owned());
        let pending: Vec<(i64, String, i64)> = crate::store::resume(
            &self.relate_after,
            |row: &(i64, String, i64)| (row.2, row.0),
            |after| {
                let (at, id) = after.unwrap_or((i64::MIN, i64::MIN));
                let conn = self.lock()?;
                let mut stmt = conn.prepare_cached(
                    "SELECT m.id, m.text, m.created_at FROM memories m
                     LEFT JOIN fact_checks f ON f.memory_id = m.id
                     WHERE m.created_at >= ?3 AND (m.created_at > ?3 OR m.id > ?4)
                       AND f.memory_id IS NULL AND m.status != 'deleted' AND m.layer = 'L1'
                       AND (?1 IS NULL OR EXISTS (SELECT 1 FROM memory_vectors v
                                                  WHERE v.memory_id = m.id AND v.model = ?1))
                     ORDER BY m.created_at, m.id LIMIT ?2",
                )?;
                let rows = stmt.query_map(params![model, max as i64, at, id], |row| {
                    Ok((row.get(0)?, row.get(1)?, row.get(2)?))
                })?;
                Ok(rows.collect::<Result<_, _>>()?)
            },
        )?;
        for (id, text, created_at) in &pending {
            self.relate(*id, text, *created_at, model.as_deref())?;
        }
        Ok(pending.len())
    }

    /// Reads everything still pending, now (evaluation, tests).
    pub fn relate_all_pending(&self) -> Result<usize, MemoryError> {
        crate::store::drain(|| self.relate_pending(256))
    }

    /// Reads one memory as a statement: when it says what a live, current memory says, merges it
    /// into that one (see `duplicates`); when it announces a change related closely enough to
    /// the current version of one of its owner's facts, supersedes that version.
    fn relate(
        &self,
        id: i64,
        text: &str,
        created_at: i64,
        model: Option<&str>,
    ) -> Result<(), MemoryError> {
        let said = statement(text);
        let words = crate::duplicates::said(text);
        let digest = words.as_deref().map(crate::duplicates::digest);
        let twin = match (&words, &digest) {
            (Some(words), Some(digest)) => {
                let mut conn = self.lock()?;
                let tx = conn.transaction()?;
                crate::duplicates::twin(&tx, id, words, digest)?
            }
            _ => None,
        };
        let link = if twin.is_none() && said.stance == Stance::Change {
            self.superseded_version(id, &said, created_at, model)?
        } else {
            None
        };
        let mut conn = self.lock()?;
        let tx = conn.transaction()?;
        cached(
            &tx,
            "INSERT OR REPLACE INTO fact_checks (memory_id, owner, stance, digest)
             VALUES (?1, ?2, ?3, ?4)",
            params![id, said.owner, said.stance.as_str(), digest],
        )?;
        if let Some(kept) = twin {
            crate::duplicates::merge(&tx, id, kept, self.now())?;
        } else if let Some((older, relatedness)) = link {
            let linked = update_metadata(&tx, older, |map| {
                map.insert("superseded_by".into(), Value::from(id));
                map.insert("superseded_on".into(), Value::from(created_at));
            })?;
            if linked {
                update_metadata(&tx, id, |map| {
                    let mut before = map
                        .get("supersedes")
                        .and_then(Value::as_array)
                        .cloned()
                        .unwrap_or_default();
                    if !before.contains(&Value::from(older)) {
                        before.push(Value::from(older));
                    }
                    map.insert("supersedes".into(), Value::Array(before));
                })?;
                log_change(
                    &tx,
                    self.now(),
                    "supersede",
                    Some(older),
                    &serde_json::json!({ "by": id, "relatedness": (relatedness * 1000.0).round() / 1000.0 }),
                )?;
            }
        }
        tx.commit()?;
        Ok(())
    }

    /// The latest statement of `owner` said before `before` that holds another value of the
    /// same shape as one of `values` (see [`values_with_digits`]): asked what a number was before
    /// it changed, the earlier number, however the statement around it was worded.
    pub(crate) fn earlier_value(
        &self,
        owner: &str,
        before: i64,
        values: &[(String, String)],
    ) -> Result<Option<MemoryRecord>, MemoryError> {
        if values.is_empty() {
            return Ok(None);
        }
        let conn = self.lock()?;
        let mut stmt = conn.prepare_cached(
            "SELECT m.id, m.text FROM fact_checks f JOIN memories m ON m.id = f.memory_id
             WHERE f.owner = ?1 AND f.stance != 'question' AND m.created_at < ?2
               AND m.status IN ('activated', 'resolving') AND m.text GLOB '*[0-9]*'
             ORDER BY m.created_at DESC, m.id DESC LIMIT ?3",
        )?;
        let rows = stmt.query_map(params![owner, before, EARLIER_VALUE_SCAN], |row| {
            Ok((row.get::<_, i64>(0)?, row.get::<_, String>(1)?))
        })?;
        for row in rows {
            let (id, text) = row?;
            let said = statement(&text);
            let holds = values_with_digits(&said.said)
                .into_iter()
                .any(|(value, shape)| values.iter().any(|(v, s)| *s == shape && *v != value));
            if holds {
                return get(&conn, id);
            }
        }
        Ok(None)
    }

    /// The current version (at `created_at`) of the owner's fact that `said` updates, with how
    /// related they are; `None` when no older statement of the owner is related closely enough.
    fn superseded_version(
        &self,
        id: i64,
        said: &Statement,
        created_at: i64,
        model: Option<&str>,
    ) -> Result<Option<(i64, f64)>, MemoryError> {
        let terms = self.analyzer.query_terms(&said.said, 32);
        let mut candidates: HashSet<i64> = HashSet::new();
        let conn = self.lock()?;
        if !terms.is_empty() {
            let mut stmt = conn.prepare_cached(
                "SELECT m.id FROM memory_terms t
                 JOIN memories m ON m.id = t.rowid
                 JOIN fact_checks f ON f.memory_id = m.id
                 WHERE memory_terms MATCH ?1 AND f.owner = ?2 AND f.stance != 'question'
                   AND m.created_at < ?3 AND m.status IN ('activated', 'resolving')
                 ORDER BY bm25(memory_terms, 1.0, 0.0) LIMIT ?4",
            )?;
            let query = format!("body : ({})", crate::text::fts_or_query(&terms));
            let rows = stmt.query_map(
                params![query, said.owner, created_at, CANDIDATES as i64],
                |row| row.get(0),
            )?;
            candidates.extend(rows.collect::<Result<Vec<i64>, _>>()?);
        }
        let own_vector = match model {
            Some(model) => vector(&conn, id, model)?,
            None => None,
        };
        drop(conn);
        let mut near: HashMap<i64, f64> = HashMap::new();
        if let Some(vector) = &own_vector {
            for (other, similarity) in self.nearest(vector, CANDIDATES * 4)? {
                near.insert(other, f64::from(similarity));
            }
        }
        let conn = self.lock()?;
        {
            let mut stmt = conn.prepare_cached(
                "SELECT 1 FROM memories m JOIN fact_checks f ON f.memory_id = m.id
                 WHERE m.id = ?1 AND f.owner = ?2 AND f.stance != 'question'
                   AND m.created_at < ?3 AND m.status IN ('activated', 'resolving')",
            )?;
            for other in near.keys() {
                if *other != id
                    && stmt
                        .query_row(params![other, said.owner, created_at], |_| Ok(()))
                        .optional()?
                        .is_some()
                {
                    candidates.insert(*other);
                }
            }
        }
        let mut weights = TermWeights::new(&conn)?;
        let mine = self.weighted_terms(&conn, &said.said, &mut weights);
        let mut related = |other: i64| -> Result<Option<f64>, MemoryError> {
            let Some(record) = get(&conn, other)? else {
                return Ok(None);
            };
            let theirs = self.weighted_terms(&conn, &statement(&record.text).said, &mut weights);
            let lexical = overlap(&mine, &theirs);
            let similarity = match (&own_vector, model) {
                (Some(own), Some(model)) => match near.get(&other) {
                    Some(s) => *s,
                    None => vector(&conn, other, model)?.map_or(0.0, |v| cosine(own, &v)),
                },
                // Without vectors the overlap stands for both.
                _ => lexical,
            };
            Ok(Some(lexical + similarity))
        };
        // Each candidate stands for the current version (at `created_at`) of its fact: versions of
        // one fact count once, by the most related of them.
        let mut facts: HashMap<i64, (i64, f64)> = HashMap::new();
        for other in candidates {
            let Some(r) = related(other)? else { continue };
            let head = current_version(&conn, other, id, created_at)?;
            let entry = facts.entry(head).or_insert((other, r));
            if r > entry.1 {
                *entry = (other, r);
            }
        }
        let mut ranked: Vec<(i64, (i64, f64))> = facts.into_iter().collect();
        ranked.sort_by(|a, b| b.1 .1.total_cmp(&a.1 .1).then(a.0.cmp(&b.0)));
        let Some(&(head, (best, relatedness))) = ranked.first() else {
            return Ok(None);
        };
        let runner_up = ranked.get(1).map_or(0.0, |r| r.1 .1);
        if relatedness < RELATED || relatedness - runner_up < DISTINCT {
            return Ok(None);
        }
        if head == best {
            return Ok(Some((best, relatedness)));
        }
        // An update of an older version that was already replaced updates its replacement, if it
        // is related to that too (a memory naming only an old value is talking about the past).
        Ok(related(head)?.filter(|r| *r >= RELATED).map(|r| (head, r)))
    }

    /// A text's distinct terms, each weighted by its inverse document frequency.
    pub(crate) fn weighted_terms(
        &self,
        conn: &rusqlite::Connection,
        text: &str,
        weights: &mut TermWeights,
    ) -> HashMap<String, f64> {
        self.analyzer
            .query_terms(text, 64)
            .into_iter()
            .map(|t| {
                let idf = weights.idf(conn, &t);
                (t, idf)
            })
            .collect()
    }

    /// Asked what holds now, statements announcing a change (as the background pass read them)
    /// get [`CHANGE_PRIOR`].
    pub(crate) fn prefer_changes_now(
        &self,
        asked: Asked,
        scored: &mut [(f64, MemoryRecord, Vec<Trace>)],
    ) -> Result<(), MemoryError> {
        if asked != Asked::Now || scored.is_empty() {
            return Ok(());
        }
        let mut changes: HashSet<i64> = HashSet::new();
        {
            let conn = self.lock()?;
            for chunk in scored.chunks(500) {
                let sql = format!(
                    "SELECT memory_id FROM fact_checks WHERE stance = 'change' AND memory_id IN ({})",
                    vec!["?"; chunk.len()].join(",")
                );
                let mut stmt = conn.prepare(&sql)?;
                let rows = stmt.query_map(
                    rusqlite::params_from_iter(chunk.iter().map(|s| s.1.id)),
                    |row| row.get::<_, i64>(0),
                )?;
                for id in rows {
                    changes.insert(id?);
                }
            }
        }
        for (score, memory, channels) in scored.iter_mut() {
            if changes.contains(&memory.id) {
                *score += CHANGE_PRIOR;
                channels.push(Trace {
                    channel: "announces_change".to_owned(),
                    rank: 0,
                    score: CHANGE_PRIOR,
                });
            }
        }
        Ok(())
    }

    /// Reorders recall candidates by the versions of their facts: for a question about the
    /// present, the current version of a superseded candidate is placed just above it (fetched if
    /// it was not a candidate); for a question about the past, the versions a candidate superseded
    /// are placed just above it.
    pub(crate) fn follow_versions(
        &self,
        asked: Asked,
        scored: &mut Vec<(f64, MemoryRecord, Vec<Trace>)>,
        filter_sql: &str,
        filter_values: &[rusqlite::types::Value],
    ) -> Result<HashMap<i64, (i64, Asked)>, MemoryError> {
        let mut raises: Vec<(i64, f64, i64)> = Vec::new();
        {
            let conn = self.lock()?;
            for (score, memory, _) in scored.iter() {
                match asked {
                    Asked::Current | Asked::Now => {
                        let mut head = memory.id;
                        let mut cursor = successor(memory);
                        for _ in 0..MAX_CHAIN {
                            let Some(next) = cursor else { break };
                            match get(&conn, next)? {
                                Some(n) if live(&n) => {
                                    head = n.id;
                                    cursor = successor(&n);
                                }
                                _ => break,
                            }
                        }
                        if head != memory.id {
                            raises.push((head, score + VERSION_STEP, memory.id));
                        }
                    }
                    Asked::Earlier => {
                        for before in predecessors(memory) {
                            raises.push((before, score + VERSION_STEP, memory.id));
                        }
                    }
                    Asked::Unordered => {}
                }
            }
            let missing: Vec<i64> = raises
                .iter()
                .map(|r| r.0)
                .filter(|id| !scored.iter().any(|s| s.1.id == *id))
                .collect::<HashSet<_>>()
                .into_iter()
                .collect();
            for memory in crate::recall::fetch(&conn, &missing, filter_sql, filter_values)? {
                scored.push((0.0, memory, Vec::new()));
            }
        }
        let channel = match asked {
            Asked::Current | Asked::Now => "current_version",
            Asked::Earlier | Asked::Unordered => "earlier_version",
        };
        let mut placed: HashMap<i64, (f64, i64)> = HashMap::new();
        for (target, score, from) in raises {
            if let Some(entry) = scored.iter_mut().find(|s| s.1.id == target) {
                entry.0 = entry.0.max(score);
                let best = placed.entry(target).or_insert((score, from));
                if score > best.0 {
                    *best = (score, from);
                }
            }
        }
        for entry in scored.iter_mut() {
            if let Some((score, _)) = placed.get(&entry.1.id) {
                entry.2.push(Trace {
                    channel: channel.to_owned(),
                    rank: 0,
                    score: *score,
                });
            }
        }
        Ok(placed
            .into_iter()
            .map(|(k, (_, from))| (k, (from, asked)))
            .collect())
    }

    /// Orders recalled hits by time where the question asks about the present: a statement
    /// announcing a change moves above an older statement of the same owner that it may update
    /// (when it is nearly as relevant). Only the order of the hits changes, never which are
    /// recalled.
    pub(crate) fn order_by_time(asked: Asked, hits: &mut Vec<SearchHit>) {
        let statements: Vec<Statement> = hits.iter().map(|h| statement(&h.memory.text)).collect();
        let mut order: Vec<usize> = (0..hits.len()).collect();
        let mut moved = vec![false; hits.len()];
        for j in 0..hits.len() {
            let (newer, newer_said) = (&hits[j], &statements[j]);
            let Some(pos_j) = order.iter().position(|&k| k == j) else {
                continue;
            };
            let target = order[..pos_j].iter().position(|&i| {
                let (older, older_said) = (&hits[i], &statements[i]);
                let pair = older_said.owner == newer_said.owner
                    && older.memory.created_at < newer.memory.created_at
                    && older_said.asserts();
                match asked {
                    Asked::Current | Asked::Now => {
                        pair && newer_said.stance == Stance::Change
                            && newer.score >= RELEVANT_TO_MOVE * older.score
                    }
                    Asked::Earlier | Asked::Unordered => false,
                }
            });
            if let Some(at) = target {
                order.remove(pos_j);
                order.insert(at, j);
                moved[j] = true;
            }
        }
        let mut taken: Vec<Option<SearchHit>> = hits.drain(..).map(Some).collect();
        for k in order {
            if let Some(mut hit) = taken[k].take() {
                if moved[k] {
                    hit.reason.push_str(
                        "; moved above an older statement of the same person: it announces a change",
                    );
                }
                hits.push(hit);
            }
        }
    }

    /// Says in each hit's reason where the versions of its fact placed it.
    pub(crate) fn explain_versions(hits: &mut [SearchHit], placed: &HashMap<i64, (i64, Asked)>) {
        for hit in hits {
            if let Some((from, asked)) = placed.get(&hit.memory.id) {
                let which = match asked {
                    Asked::Current | Asked::Now => "the current version of",
                    Asked::Earlier | Asked::Unordered => "an earlier version of",
                };
                hit.reason.push_str(&format!(
                    "; placed above memory {from}: it is {which} that fact"
                ));
            }
            if let Some(by) = successor(&hit.memory) {
                let on = hit
                    .memory
                    .metadata
                    .get("superseded_on")
                    .and_then(Value::as_i64)
                    .map(crate::date)
                    .unwrap_or_default();
                hit.reason
                    .push_str(&format!("; superseded on {on} by memory {by}"));
            }
        }
    }

    /// The versions of `id`'s fact, oldest first: the chain of memories it superseded and that
    /// superseded it (for the memory panel's history).
    pub fn versions(&self, id: i64) -> Result<Vec<MemoryRecord>, MemoryError> {
        let conn = self.lock()?;
        let Some(memory) = get(&conn, id)? else {
            return Err(MemoryError::NotFound(format!("memory {id}")));
        };
        let mut earlier = Vec::new();
        let mut seen = HashSet::from([id]);
        let mut cursor = memory.clone();
        for _ in 0..MAX_CHAIN {
            let Some(previous) = predecessors(&cursor)
                .into_iter()
                .filter(|p| !seen.contains(p))
                .filter_map(|p| get(&conn, p).ok().flatten())
                .max_by_key(|m| m.created_at)
            else {
                break;
            };
            seen.insert(previous.id);
            earlier.push(previous.clone());
            cursor = previous;
        }
        earlier.reverse();
        earlier.push(memory.clone());
        let mut cursor = memory;
        for _ in 0..MAX_CHAIN {
            let Some(next) = successor(&cursor).filter(|n| seen.insert(*n)) else {
                break;
            };
            let Some(next) = get(&conn, next)? else { break };
            earlier.push(next.clone());
            cursor = next;
        }
        Ok(earlier)
    }
}

/// Inverse document frequencies from the term index, looked up once per term and pass.
pub(crate) struct TermWeights {
    total: f64,
    idf: HashMap<String, f64>,
}

impl TermWeights {
    pub(crate) fn new(conn: &rusqlite::Connection) -> Result<Self, MemoryError> {
        let total: i64 = conn.query_row(
            "SELECT count(*) FROM memories WHERE status != 'deleted'",
            [],
            |row| row.get(0),
        )?;
        Ok(Self {
            total: total.max(1) as f64,
            idf: HashMap::new(),
        })
    }

    fn idf(&mut self, conn: &rusqlite::Connection, term: &str) -> f64 {
        if let Some(idf) = self.idf.get(term) {
            return *idf;
        }
        // A term the index cannot count (a lookup failure) weighs as a rare one.
        let df = crate::recall::document_frequency(conn, term)
            .ok()
            .flatten()
            .unwrap_or(1);
        let idf = (1.0 + self.total / df.max(1) as f64).ln();
        self.idf.insert(term.to_owned(), idf);
        idf
    }
}

/// Takes a memory about to be deleted out of its fact's chain: what it superseded is superseded by
/// its own successor instead, or, without one, holds again.
pub(crate) fn unlink(
    conn: &rusqlite::Connection,
    memory: &MemoryRecord,
) -> Result<(), MemoryError> {
    let next = successor(memory);
    let before = predecessors(memory);
    for id in &before {
        update_metadata(conn, *id, |map| match next {
            Some(next) => {
                map.insert("superseded_by".into(), Value::from(next));
            }
            None => {
                map.remove("superseded_by");
                map.remove("superseded_on");
            }
        })?;
    }
    if let Some(newer) = next.map(|n| get(conn, n)).transpose()?.flatten() {
        let mut ids: Vec<i64> = predecessors(&newer)
            .into_iter()
            .filter(|p| *p != memory.id)
            .collect();
        for b in &before {
            if !ids.contains(b) {
                ids.push(*b);
            }
        }
        update_metadata(conn, newer.id, |map| {
            map.insert("supersedes".into(), Value::from(ids));
        })?;
    }
    Ok(())
}

fn live(memory: &MemoryRecord) -> bool {
    matches!(memory.status, Status::Activated | Status::Resolving)
}

/// Weighted Dice overlap of two term sets: twice the weight they share over their total weight (a
/// short remark sharing one word with a long statement overlaps it little, not wholly).
pub(crate) fn overlap(a: &HashMap<String, f64>, b: &HashMap<String, f64>) -> f64 {
    let shared: f64 = a
        .iter()
        .filter(|(t, _)| b.contains_key(*t))
        .map(|(_, w)| w)
        .sum();
    let total = a.values().sum::<f64>() + b.values().sum::<f64>();
    if total <= 0.0 {
        0.0
    } else {
        2.0 * shared / total
    }
}

/// The current version, when memory `this` was said at `created_at`, of the fact memory `id`
/// states: `id` itself, or the latest live, earlier replacement along its chain.
fn current_version(
    conn: &rusqlite::Connection,
    id: i64,
    this: i64,
    created_at: i64,
) -> Result<i64, MemoryError> {
    let mut head = id;
    for _ in 0..MAX_CHAIN {
        let Some(next) = get(conn, head)?.as_ref().and_then(successor) else {
            break;
        };
        match get(conn, next)? {
            Some(n) if live(&n) && n.created_at < created_at && n.id != this => head = n.id,
            _ => break,
        }
    }
    Ok(head)
}

/// A memory's stored vector of `model`, unquantised.
pub(crate) fn vector(
    conn: &rusqlite::Connection,
    id: i64,
    model: &str,
) -> Result<Option<Vec<f32>>, MemoryError> {
    let row: Option<(f64, Vec<u8>)> = conn
        .query_row(
            "SELECT scale, vec FROM memory_vectors WHERE memory_id = ?1 AND model = ?2",
            params![id, model],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )
        .optional()?;
    Ok(row.map(|(scale, bytes)| {
        bytes
            .iter()
            .map(|b| f32::from(*b as i8) * scale as f32 / 127.0)
            .collect()
    }))
}

pub(crate) fn cosine(a: &[f32], b: &[f32]) -> f64 {
    let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let na: f32 = a.iter().map(|x| x * x).sum::<f32>().sqrt();
    let nb: f32 = b.iter().map(|x| x * x).sum::<f32>().sqrt();
    if na <= 0.0 || nb <= 0.0 {
        0.0
    } else {
        f64::from(dot / (na * nb))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_only_asks_when_little_comes_before_its_question() {
        for text in [
            "Caroline: Cool! What did it look like?",
            "Melanie: Wow, that rocks! What's the main idea of your art?",
            "How do I rebase onto main?",
            "Jon: Did you try version 3.5 of it?",
        ] {
            assert!(only_asks(text), "{text}");
        }
        for text in [
            "Caroline: Wow, nice pic! You both looked amazing at the parade. Where was it?",
            "Caroline: I went to a support group yesterday.",
            // A tag question states; a captured turn holds the answer.
            "Gina: Text me at 555-0142 when you land, okay?",
            "User: how do I rebase onto main?\nAssistant: git rebase main.",
            "",
        ] {
            assert!(!only_asks(text), "{text}");
        }
        assert!(about_asking(
            "What did Caroline ask about the pottery class?"
        ));
        assert!(about_asking("卡罗琳问过什么？"));
        assert!(!about_asking(
            "What did Caroline make in the pottery class?"
        ));
    }

    #[test]
    fn statements_are_read_for_owner_and_stance() {
        let s = statement("Gina: We switched the project's database to Firestore.");
        assert_eq!(s.owner, "gina");
        assert_eq!(s.stance, Stance::Change);
        assert_eq!(s.said, "We switched the project's database to Firestore.");
        assert_eq!(
            statement("Jon: Remember when you used to swear by MariaDB?").stance,
            Stance::Question
        );
        assert_eq!(
            statement("Gina: I found my old cookbook on the shelf.").stance,
            Stance::LookingBack
        );
        assert_eq!(
            statement("Gina: I spent the afternoon tuning queries in MariaDB.").stance,
            Stance::Plain
        );
        let turn = statement("User: staging is at 10.0.3.7 now\nAssistant: Noted.");
        assert_eq!(turn.owner, "user");
        assert_eq!(turn.said, "staging is at 10.0.3.7 now");
        assert_eq!(turn.stance, Stance::Change);
        for said in [
            "Gina: As of this month the team deploys on Fridays.",
            "Gina: We ditched Jenkins for Buildkite.",
            "Gina: I relocated to Lisbon in the spring.",
            "Gina: I just got a puppy called Miso.",
            "Gina: We went back to Postgres after the trial.",
        ] {
            assert_eq!(statement(said).stance, Stance::Change, "{said}");
        }
        assert_eq!(statement("no speaker here").owner, "someone");
        assert_eq!(
            statement("note: lower case is not a speaker").owner,
            "someone"
        );
    }

    #[test]
    fn a_tag_question_after_a_statement_does_not_make_it_a_question() {
        for (text, question) in [
            ("John: Text me at 555-0142 when you land, okay?", false),
            ("John: The build is green now, right?", false),
            ("John: Is the build green now?", true),
            ("John: Which one, the left or the right?", true),
            ("John: Okay?", true),
        ] {
            let said = statement(text);
            assert_eq!(said.stance == Stance::Question, question, "{text}");
        }
    }

    #[test]
    fn values_with_digits_are_read_with_their_shape() {
        let shapes = |text: &str| -> Vec<String> {
            values_with_digits(text)
                .into_iter()
                .map(|(_, s)| s)
                .collect()
        };
        assert_eq!(shapes("Text me at 555-0142 when you land, okay?"), ["9-9"]);
        assert_eq!(shapes("New number alert: 555-0172."), ["9-9"]);
        assert_eq!(shapes("staging is at 10.0.3.7 now"), ["9.9.9.9"]);
        assert_eq!(
            shapes("standup at 11:30, release v2.14 is out"),
            ["9:9", "a9.9"]
        );
        assert!(
            shapes("I had 2 coffees").is_empty(),
            "short numbers are not values"
        );
    }

    #[test]
    fn questions_say_whether_they_ask_about_the_past() {
        assert_eq!(asked("Where does Gina work now?"), Asked::Now);
        assert_eq!(
            asked("Which database does the project use?"),
            Asked::Current
        );
        assert_eq!(
            asked("Where did Gina work before joining Globex?"),
            Asked::Earlier
        );
        assert_eq!(asked("What was his previous phone number?"), Asked::Earlier);
        assert_eq!(
            split_before("What car did Caroline drive before getting the Toyota Corolla?"),
            Some((
                "What car did Caroline drive".to_owned(),
                "getting the Toyota Corolla".to_owned()
            ))
        );
        assert_eq!(split_before("What did she do before?"), None);
        assert_eq!(split_before("Where did she work"), None);
    }
}

//! What the page writes, from the data: layer names, source colours, ranges, previews, search
//! summaries and reasons (plain functions, tested on the host).

use super::*;

/// A memory layer as the page names it.
#[derive(Clone, Copy)]
pub(super) struct LayerInfo {
    pub(super) key: &'static str,
    pub(super) short: &'static str,
    pub(super) singular: &'static str,
    pub(super) plural: &'static str,
    pub(super) blurb: &'static str,
    pub(super) origin: &'static str,
}

/// The layers, named in the current language.
pub(super) fn layers() -> [LayerInfo; 4] {
    [
        LayerInfo {
            key: "L1",
            short: "L1",
            singular: t("L1 trace"),
            plural: t("Traces"),
            blurb: t("What happened in a turn"),
            origin: t("They are captured from every task in Cairn and from your other agents' history."),
        },
        LayerInfo {
            key: "L2",
            short: "L2",
            singular: t("L2 policy"),
            plural: t("Policies"),
            blurb: t("Guidance learned from traces"),
            origin: t("They are induced from valuable traces, or written with cairn memory add --layer L2."),
        },
        LayerInfo {
            key: "L3",
            short: "L3",
            singular: t("L3 world model"),
            plural: t("World models"),
            blurb: t("Stable facts about projects"),
            origin: t("They abstract policies, or are written with cairn memory add --layer L3."),
        },
        LayerInfo {
            key: "skill",
            short: t("Skill"),
            singular: t("Skill"),
            plural: t("Skills"),
            blurb: t("Callable procedures"),
            origin: t("They crystallise from proven policies, or are written with cairn memory add --layer skill."),
        },
    ]
}

pub(super) fn layer_info(key: &str) -> Option<LayerInfo> {
    layers()
        .into_iter()
        .find(|l| l.key.eq_ignore_ascii_case(key))
}

/// How many colours the source palette has (styles.css `.mem-src-N`).
pub(super) const PALETTE: usize = 8;

/// A source's colour (`.mem-src-N`), the same on every view: the known agents have their own, any
/// other source one picked by its name.
pub(super) fn source_colour(source: &str) -> usize {
    const KNOWN: [&str; PALETTE] = [
        "cairn",
        "claude-code",
        "codex",
        "cursor",
        "opencode",
        "gemini",
        "openclaw",
        "hermes",
    ];
    KNOWN.iter().position(|k| *k == source).unwrap_or_else(|| {
        let hash = source.bytes().fold(2_166_136_261u32, |h, b| {
            (h ^ u32::from(b)).wrapping_mul(16_777_619)
        });
        hash as usize % PALETTE
    })
}

pub(super) fn count_of(counts: &[(String, i64)], key: &str) -> i64 {
    counts
        .iter()
        .filter(|(k, _)| k.eq_ignore_ascii_case(key))
        .map(|(_, n)| n)
        .sum()
}

/// `n` as a percentage of `max`, for a bar.
pub(super) fn share(n: i64, max: i64) -> f64 {
    if max <= 0 {
        0.0
    } else {
        (n.max(0) as f64 * 100.0 / max as f64).clamp(0.0, 100.0)
    }
}

/// "1–20 of 57", or "21–25" when the total is unknown.
pub(super) fn page_range(offset: usize, shown: usize, total: Option<i64>) -> String {
    if shown == 0 {
        return match total {
            Some(total) => tf("None here (of {total})", &[("total", &total.to_string())]),
            None => t("None here").to_owned(),
        };
    }
    let range = format!("{}–{}", offset + 1, offset + shown);
    match total {
        Some(total) => tf(
            "{range} of {total}",
            &[("range", &range), ("total", &total.to_string())],
        ),
        None => range,
    }
}

/// What a list shows of a memory: its summary, or the start of its text, on one line.
pub(super) fn preview(memory: &Memory) -> String {
    let text = if memory.summary.trim().is_empty() {
        memory.text.as_str()
    } else {
        memory.summary.as_str()
    };
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut out: String = line.chars().take(220).collect();
    if line.chars().count() > 220 {
        out = out.trim_end().to_owned();
        out.push('…');
    }
    out
}

/// Kept hits and dropped candidates together, best fused score first.
pub(super) fn candidates(answer: &SearchAnswer) -> Vec<Hit> {
    let mut all: Vec<Hit> = answer
        .hits
        .iter()
        .chain(answer.dropped.iter())
        .cloned()
        .collect();
    all.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then(b.kept.cmp(&a.kept))
            .then(a.memory.id.cmp(&b.memory.id))
    });
    all
}

pub(super) fn search_summary(query: &str, answer: &SearchAnswer) -> String {
    let kept = answer.hits.len();
    let found = match kept {
        0 => t("No memory recalled").to_owned(),
        1 => t("1 memory recalled").to_owned(),
        n => tf("{n} memories recalled", &[("n", &n.to_string())]),
    };
    let dropped = match answer.dropped.len() {
        0 => String::new(),
        n => format!(" · {}", tf("{n} dropped", &[("n", &n.to_string())])),
    };
    // The query last: what it holds is not a placeholder.
    tf(
        "{found} for “{query}”{dropped} · {took}",
        &[
            ("found", &found),
            ("dropped", &dropped),
            ("took", &crate::format::duration_ms(answer.took_ms)),
            ("query", query),
        ],
    )
}

/// The reason without its "kept:"/"dropped:" prefix (the outcome badge says it), capitalised.
pub(super) fn reason_text(reason: &str) -> String {
    let rest = reason
        .strip_prefix("kept:")
        .or_else(|| reason.strip_prefix("dropped:"))
        .unwrap_or(reason)
        .trim();
    let mut chars = rest.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

pub(super) fn channel_title(channel: &Channel) -> String {
    let what = match channel.channel.as_str() {
        "fts" => t("Keywords (full-text BM25 over the memory and its neighbourhood)"),
        "structural" => t("Identifiers (paths, names, error codes)"),
        "vec" => t("Meaning (embedding similarity)"),
        "speaker" => t("Said by a person the question names"),
        "date" => t("Said within a date the question names"),
        "announces_change" => t("Announces a change (the question asks what holds now)"),
        "only_asks" => t("Only asks a question (says nothing that could answer)"),
        other => other,
    };
    tf(
        "{what}: rank {rank} in this channel, raw score {score}",
        &[
            ("rank", &(channel.rank + 1).to_string()),
            ("score", &raw_score(channel.score)),
            ("what", what),
        ],
    )
}

pub(super) fn raw_score(score: f64) -> String {
    if score != 0.0 && score.abs() < 0.001 {
        format!("{score:.1e}")
    } else if score.abs() >= 100.0 {
        format!("{score:.0}")
    } else if score.abs() >= 1.0 {
        format!("{score:.2}")
    } else {
        format!("{score:.3}")
    }
}

/// What the background queue still has to do, said briefly (memories being indexed, outcomes
/// being learned from); `None` when it has caught up.
pub(super) fn backlog_note(b: &Backlog) -> Option<String> {
    let indexing = b.embeddings.max(b.facts);
    let learning = b.outcomes + b.rewording;
    let mut parts = Vec::new();
    if indexing > 0 {
        parts.push(tf("{n} being indexed", &[("n", &indexing.to_string())]));
    }
    if learning > 0 {
        parts.push(tf("learning from {n}", &[("n", &learning.to_string())]));
    }
    (!parts.is_empty()).then(|| parts.join(" · "))
}

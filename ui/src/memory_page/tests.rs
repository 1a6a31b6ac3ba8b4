//! The page's plain functions, on the host.

use super::*;

fn memory(text: &str, summary: &str) -> Memory {
    Memory {
        id: 1,
        layer: cairn_protocol::memory::Layer::Trace,
        status: Status::Activated,
        text: text.into(),
        source: "cairn".into(),
        external_id: None,
        session: None,
        episode_id: None,
        turn_id: None,
        created_at: 0,
        updated_at: 0,
        metadata: serde_json::json!({}),
        summary: summary.into(),
        summary_source: SummarySource::Heuristic,
    }
}

fn hit(id: i64, score: f64, kept: bool) -> Hit {
    let mut memory = memory("text", "");
    memory.id = id;
    Hit {
        memory,
        score,
        channels: vec![Channel {
            channel: "fts".into(),
            rank: 0,
            score: 3.2,
        }],
        kept,
        reason: if kept {
            "above the relative threshold".into()
        } else {
            "dropped: relevance 0.010 is under 20% of the best (0.900)".into()
        },
        words: Vec::new(),
        close_in_meaning: false,
    }
}

#[test]
fn the_command_answers_read_back() {
    let answer: SearchAnswer = serde_json::from_value(serde_json::json!({
        "hits": [{
            "memory": {
                "id": 4, "layer": "L3", "status": "activated", "text": "Deploys on Thursdays.",
                "source": "cairn", "external_id": null, "session": null, "episode_id": null,
                "turn_id": null, "created_at": 1, "updated_at": 1, "metadata": {},
                "summary": "Deploys on Thursdays.", "summary_source": "heuristic"
            },
            "score": 0.9,
            "channels": [{ "channel": "fts", "rank": 0, "score": 2.5 }],
            "kept": true,
            "reason": "above the relative threshold"
        }],
        "took_ms": 0.4,
        "injection": "..."
    }))
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(answer.hits[0].memory.layer.as_str(), "L3");
    assert!(answer.dropped.is_empty());
    let overview: Overview = serde_json::from_value(serde_json::json!({
        "total": 3, "by_layer": [["L1", 2], ["L3", 1]], "by_source": [["codex", 3]],
        "sessions": 1, "turns": 2, "skipped_turns": 0, "storage_bytes": 4096
    }))
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(count_of(&overview.by_layer, "L1"), 2);
    assert_eq!(count_of(&overview.by_layer, "skill"), 0);
}

#[test]
fn sizes_times_and_ranges_read_well() {
    assert_eq!(crate::format::duration_ms(0.42), "0.4 ms");
    assert_eq!(crate::format::duration_ms(42.0), "42 ms");
    assert_eq!(crate::format::duration_ms(1500.0), "1.5 s");
    assert_eq!(page_range(0, 20, Some(57)), "1–20 of 57");
    assert_eq!(page_range(40, 17, Some(57)), "41–57 of 57");
    assert_eq!(page_range(20, 5, None), "21–25");
    assert_eq!(share(5, 10), 50.0);
    assert_eq!(share(3, 0), 0.0);
}

#[test]
fn the_background_queue_s_work_is_said_until_it_has_caught_up() {
    assert_eq!(backlog_note(&Backlog::default()), None);
    let busy = Backlog {
        embeddings: 12,
        facts: 30,
        outcomes: 1,
        rewording: 1,
    };
    assert_eq!(
        backlog_note(&busy).as_deref(),
        Some("30 being indexed · learning from 2")
    );
}

#[test]
fn dates_are_local_and_short() {
    let now = Moment {
        year: 2025,
        month: 3,
        day: 4,
        hour: 15,
        minute: 0,
    };
    let at = Moment {
        hour: 9,
        minute: 5,
        ..now
    };
    assert_eq!(short_moment(at, now), "Today 09:05");
    assert_eq!(short_moment(Moment { day: 1, ..at }, now), "1 Mar");
    assert_eq!(short_moment(Moment { year: 2024, ..at }, now), "4 Mar 2024");
    assert_eq!(long_moment(at), "4 Mar 2025, 09:05");
}

#[test]
fn days_parse() {
    assert_eq!(parse_day("2024-02-29"), Some(19_782));
    assert_eq!(parse_day("2024-13-01"), None);
    assert_eq!(parse_day("soon"), None);
}

#[test]
fn previews_prefer_the_summary_and_stay_short() {
    assert_eq!(
        preview(&memory("User: a\n  long   text", "")),
        "User: a long text"
    );
    assert_eq!(
        preview(&memory("full text", "The summary.")),
        "The summary."
    );
    let long = "word ".repeat(100);
    let shown = preview(&memory(&long, ""));
    assert!(shown.ends_with('…'));
    assert!(shown.chars().count() <= 221);
}

#[test]
fn the_explanation_lists_every_candidate_best_first() {
    let answer = SearchAnswer {
        hits: vec![hit(1, 0.9, true), hit(2, 0.5, true)],
        dropped: vec![hit(3, 0.7, false), hit(4, 0.01, false)],
        took_ms: 1.25,
        phases: Vec::new(),
    };
    let ids: Vec<i64> = candidates(&answer).iter().map(|h| h.memory.id).collect();
    assert_eq!(ids, [1, 3, 2, 4]);
    assert_eq!(
        search_summary("nightly build", &answer),
        "2 memories recalled for “nightly build” · 2 dropped · 1.2 ms"
    );
    assert_eq!(
        reason_text("dropped: relevance 0.010 is under 20% of the best (0.900)"),
        "Relevance 0.010 is under 20% of the best (0.900)"
    );
    assert_eq!(
        reason_text("kept: episode rollup of 3 steps, 2 of them matched"),
        "Episode rollup of 3 steps, 2 of them matched"
    );
    assert_eq!(
        reason_text("above the relative threshold"),
        "Above the relative threshold"
    );
    let title = channel_title(&Channel {
        channel: "structural".into(),
        rank: 2,
        score: 7.4,
    });
    assert!(title.starts_with("Identifiers"), "{title}");
    assert_eq!(raw_score(0.000_001_23), "1.2e-6");
    assert_eq!(raw_score(0.0), "0.000");
    assert_eq!(raw_score(0.25), "0.250");
    assert_eq!(raw_score(123.4), "123");
    assert!(
        title.contains("rank 3") && title.contains("7.40"),
        "{title}"
    );
}

#[test]
fn the_chart_stacks_sources_per_day_over_at_least_two_weeks() {
    let per_day = vec![
        ("2025-03-01".to_owned(), "codex".to_owned(), 2),
        ("2025-03-04".to_owned(), "cairn".to_owned(), 1),
        ("2025-03-04".to_owned(), "codex".to_owned(), 3),
    ];
    let chart = chart(&per_day).unwrap_or_else(|| panic!("no chart"));
    assert_eq!(chart.sources, ["codex", "cairn"]);
    assert_eq!(chart.peak, 4);
    assert_eq!(chart.last_day, "2025-03-04");
    assert_eq!(chart.first_day, "2025-02-19");
    assert_eq!(chart.segments.len(), 3);
    // The busiest day's stack: codex at the bottom, cairn on top, together 4/5 of the plot.
    let day: Vec<&Segment> = chart
        .segments
        .iter()
        .filter(|s| s.day == "2025-03-04")
        .collect();
    assert_eq!(day.len(), 2);
    assert_eq!((day[0].source, day[1].source), (0, 1));
    let base = CHART_H - PLOT_BOTTOM;
    assert!((day[0].y + day[0].h - base).abs() < 1e-9);
    assert!((day[1].y + day[1].h - day[0].y).abs() < 1e-9);
    let plot_h = CHART_H - PLOT_TOP - PLOT_BOTTOM;
    assert!((day[0].h + day[1].h - plot_h * 0.8).abs() < 1e-9);
    // Every bar inside the plot, and the last day at the right edge.
    for s in &chart.segments {
        assert!(s.x >= PLOT_LEFT && s.x + s.w <= CHART_W - PLOT_RIGHT + 1e-9);
        assert!(s.y >= PLOT_TOP - 1e-9);
    }
    assert_eq!(chart.x_ticks.last().map(|t| t.1.as_str()), Some("4 Mar"));
    assert_eq!(
        chart.y_ticks.iter().map(|t| t.1).collect::<Vec<_>>(),
        [0, 5]
    );
    assert!(super::chart(&[]).is_none());
    assert_eq!(nice_top(0), 1);
    assert_eq!(nice_top(7), 10);
    assert_eq!(nice_top(12), 20);
    assert_eq!(nice_top(200), 200);
}

#[test]
fn a_learned_memory_shows_what_it_rests_on_and_how_it_fared() {
    let mut policy = memory(
        "Policy (what worked). When asked to fix the parser tests…",
        "",
    );
    policy.layer = cairn_protocol::memory::Layer::Policy;
    policy.metadata = serde_json::json!({
        "policy": "prefer", "gain": 0.4, "support": 3, "failures": 1,
        "episodes": [2, 5, 7, 9], "sources": [11, 14, 20],
    });
    let learned = lineage(&policy).unwrap_or_else(|| panic!("a policy has a lineage"));
    assert_eq!(
        learned.facts,
        vec![
            ("Gain", "0.40".to_owned()),
            ("Tasks", "3 went well, 1 went badly".to_owned()),
        ]
    );
    assert_eq!(learned.links, vec![("Traces", vec![11, 14, 20])]);

    let mut skill = memory("---\nname: fix-parser-tests\n---", "");
    skill.metadata = serde_json::json!({ "policy": 30, "trials": 2, "trials_won": 1, "eta": 0.5 });
    let learned = lineage(&skill).unwrap_or_else(|| panic!("a skill has a lineage"));
    assert_eq!(
        learned.facts,
        vec![("Trials", "1 of 2 went well".to_owned())]
    );
    assert_eq!(learned.links, vec![("Policy", vec![30])]);

    assert!(lineage(&memory("Deploys on Thursdays.", "")).is_none());
}

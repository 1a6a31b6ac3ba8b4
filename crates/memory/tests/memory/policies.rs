//! L2 policies, L3 world models and skills: tasks of one kind that went well write a policy
//! linked to their traces, and the workspace's world model names what they showed; later failures
//! archive the policy and write a repair policy; unrelated tasks do not pool; a well-supported
//! policy becomes a candidate skill that trials promote or archive; contradictory feedback and
//! vanished traces leave nothing corrupt.

use cairn_memory::{
    render_injection, FeedbackRequest, Layer, MemoryRecord, MemoryStore, Rating, SearchQuery,
    Status, ToolCall, TurnCompletion, TurnStart,
};

use crate::TestResult;

const START: i64 = 1_700_000_000_000;
const HOUR: i64 = 3_600_000;

/// A tool call: name, command, output, whether it failed.
type Call<'a> = (&'a str, &'a str, &'a str, bool);

const FIX_WORKED: &[Call] = &[
    (
        "bash",
        "cargo test -p parser",
        "test parse_list ... FAILED",
        true,
    ),
    ("edit_file", "src/parser.rs", "edited 1 hunk", false),
    (
        "bash",
        "cargo test -p parser",
        "test result: ok. 12 passed",
        false,
    ),
];

const FIX_FAILED: &[Call] = &[
    (
        "bash",
        "cargo test -p parser",
        "error[E0425]: cannot find value `tokens`",
        true,
    ),
    ("edit_file", "src/lexer.rs", "edited 2 hunks", false),
];

/// One task in its own session (so its own episode), in `workspace`; returns its trace's id.
fn task(
    store: &MemoryStore,
    n: i64,
    request: &str,
    calls: &[Call],
    answer: &str,
) -> Result<i64, Box<dyn std::error::Error>> {
    let turn = store.start_turn(TurnStart {
        session: format!("task-{n}"),
        request: request.into(),
        source: None,
        idempotency_key: None,
        started_at: Some(START + n * HOUR),
        workspace: Some("/home/ana/parser".into()),
    })?;
    let tool_calls = calls
        .iter()
        .enumerate()
        .map(|(i, (name, input, output, failed))| ToolCall {
            id: format!("c{i}"),
            name: (*name).into(),
            input: match *name {
                "bash" => serde_json::json!({ "command": input }),
                "read_skill" => serde_json::json!({ "name": input }),
                _ => serde_json::json!({ "path": input }),
            },
            output: Some((*output).into()),
            is_error: *failed,
        })
        .collect();
    match store.complete_turn(
        turn,
        TurnCompletion {
            answer: answer.into(),
            tool_calls,
            ..TurnCompletion::default()
        },
    )? {
        cairn_memory::CaptureOutcome::Captured { memory_id } => Ok(memory_id),
        other => Err(format!("not captured: {other:?}").into()),
    }
}

/// Two parser fixes that worked, in sessions 1 and 2, not yet rated; their traces.
fn two_fixes(store: &MemoryStore) -> Result<Vec<i64>, Box<dyn std::error::Error>> {
    [
        (
            1,
            "The parser tests fail after the refactor, please fix them",
        ),
        (2, "Fix the failing parser tests after my refactor"),
    ]
    .into_iter()
    .map(|(n, request)| task(store, n, request, FIX_WORKED, "Fixed the parser."))
    .collect()
}

/// A store where the two parser fixes were rated up and induced (a policy of what worked).
fn two_good_fixes_induced() -> Result<MemoryStore, Box<dyn std::error::Error>> {
    let store = MemoryStore::open_in_memory()?.with_clock(|| START + 100 * HOUR);
    for id in two_fixes(&store)? {
        rate(&store, id, Rating::Up)?;
    }
    store.induce_all_pending()?;
    Ok(store)
}

/// A third parser fix that worked, in session 3, not yet rated; its trace.
fn third_fix(store: &MemoryStore) -> Result<i64, Box<dyn std::error::Error>> {
    task(
        store,
        3,
        "Please fix the parser tests that fail after the refactor",
        FIX_WORKED,
        "Fixed the parser.",
    )
}

fn rate(store: &MemoryStore, id: i64, rating: Rating) -> Result<(), Box<dyn std::error::Error>> {
    store.give_feedback(&FeedbackRequest {
        memory_id: Some(id),
        turn_id: None,
        rating,
        note: None,
    })?;
    Ok(())
}

/// Every policy, archived ones included.
fn policies(store: &MemoryStore) -> Result<Vec<MemoryRecord>, Box<dyn std::error::Error>> {
    Ok(store.list(Some(Layer::Policy), 0, 100)?)
}

fn kind(policy: &MemoryRecord) -> &str {
    policy.metadata["policy"].as_str().unwrap_or_default()
}

fn ids(value: &serde_json::Value) -> Vec<i64> {
    value
        .as_array()
        .map(|a| a.iter().filter_map(serde_json::Value::as_i64).collect())
        .unwrap_or_default()
}

#[test]
fn tasks_of_one_kind_that_went_well_write_a_policy_linked_to_their_traces() -> TestResult {
    let store = MemoryStore::open_in_memory()?.with_clock(|| START + 100 * HOUR);
    let first = task(
        &store,
        1,
        "The parser tests fail after the refactor, please fix them",
        FIX_WORKED,
        "Fixed: the list parser skipped the closing bracket.",
    )?;
    rate(&store, first, Rating::Up)?;
    store.induce_all_pending()?;
    assert!(policies(&store)?.is_empty(), "one task is not a policy");

    // Another kind of task with the same tools does not pool with it.
    let other = task(
        &store,
        2,
        "Rotate the nginx logs every day",
        FIX_WORKED,
        "Added a daily logrotate rule.",
    )?;
    rate(&store, other, Rating::Up)?;
    store.induce_all_pending()?;
    assert!(policies(&store)?.is_empty());

    let second = task(
        &store,
        3,
        "Fix the failing parser tests after my refactor",
        FIX_WORKED,
        "Fixed the off-by-one in parse_list.",
    )?;
    rate(&store, second, Rating::Up)?;
    assert_eq!(
        store.overview()?.backlog.outcomes,
        1,
        "waiting to be learned from"
    );
    assert_eq!(store.induce_all_pending()?, 1);
    assert_eq!(store.overview()?.backlog.outcomes, 0);
    let written = policies(&store)?;
    assert_eq!(written.len(), 1, "{written:#?}");
    let policy = &written[0];
    assert_eq!(kind(policy), "prefer");
    assert_eq!(policy.status, Status::Activated);
    assert_eq!(policy.metadata["gain"], 1.0);
    assert_eq!(policy.metadata["support"], 2);
    let mut sources = ids(&policy.metadata["sources"]);
    sources.sort_unstable();
    assert_eq!(sources, vec![first, second], "linked to its traces");
    assert!(policy
        .text
        .starts_with("What worked when asked \"The parser tests fail after the refactor, please fix them\" in /home/ana/parser (tools: bash, edit_file): "));
    assert!(
        policy.text.contains("cargo test -p parser"),
        "{}",
        policy.text
    );
    assert!(policy.text.contains("2 of 2 tasks"), "{}", policy.text);

    // The workspace's world model (L3) says what its tasks showed, with the evidence.
    let worlds = store.list(Some(Layer::WorldModel), 0, 10)?;
    assert_eq!(worlds.len(), 1, "{worlds:#?}");
    let world = &worlds[0];
    assert!(
        world
            .text
            .starts_with("In /home/ana/parser, commands that worked: `cargo test -p parser` (2 tasks); files the work touched: src/parser.rs (2 tasks)."),
        "{}",
        world.text
    );
    assert!(
        world.text.ends_with("(World model from 1 policy.)"),
        "{}",
        world.text
    );
    assert_eq!(ids(&world.metadata["policies"]), vec![policy.id]);
    assert_eq!(
        ids(&world.metadata["evidence"]["commands"]["cargo test -p parser"]).len(),
        2
    );

    // A new request of that kind recalls it.
    let hits = store
        .search(&SearchQuery {
            layers: vec![Layer::Policy],
            ..SearchQuery::new("the parser tests are failing again")
        })?
        .hits;
    let first = hits.first().ok_or("no hit")?;
    assert_eq!(first.memory.id, policy.id);
    assert!(
        render_injection(&hits).contains("· L2 · learned from 2 tasks that went well]"),
        "{}",
        render_injection(&hits)
    );
    assert!(
        first
            .reason
            .contains("a policy learned from 2 task(s) that went well"),
        "{}",
        first.reason
    );

    // Induced again with nothing new, it is the same policy.
    rate(&store, second, Rating::Up)?;
    store.induce_all_pending()?;
    assert_eq!(policies(&store)?.len(), 1);
    Ok(())
}

#[test]
fn later_failures_archive_a_policy_and_write_a_repair_policy() -> TestResult {
    let store = two_good_fixes_induced()?;
    let worked = policies(&store)?;
    assert_eq!(worked.len(), 1);
    let worked = worked[0].id;

    for n in 3..6 {
        let id = task(
            &store,
            n,
            "The parser tests fail again after the refactor, fix them",
            FIX_FAILED,
            "I renamed tokens in the lexer; it still does not compile.",
        )?;
        rate(&store, id, Rating::Down)?;
    }
    store.induce_all_pending()?;
    let all = policies(&store)?;
    assert_eq!(all.len(), 2, "{all:#?}");
    let prefer = store.get(worked)?.ok_or("policy")?;
    assert_eq!(prefer.metadata["gain"], -0.2);
    assert_eq!(
        prefer.status,
        Status::Archived,
        "outcomes turned against it"
    );
    let avoid = all.iter().find(|p| kind(p) == "avoid").ok_or("no repair")?;
    assert_eq!(avoid.status, Status::Activated);
    assert_eq!(avoid.metadata["failures"], 3);
    assert!(
        avoid.text.contains("avoid") && avoid.text.contains("cannot find value"),
        "{}",
        avoid.text
    );
    assert!(avoid.text.contains("Instead: "), "{}", avoid.text);

    // An archived policy is not recalled; the repair policy is.
    let hits = store
        .search(&SearchQuery {
            layers: vec![Layer::Policy],
            ..SearchQuery::new("parser tests fail after a refactor")
        })?
        .hits;
    let recalled: Vec<i64> = hits.iter().map(|h| h.memory.id).collect();
    assert_eq!(recalled, vec![avoid.id]);

    // The world model follows: what worked no longer stands, the errors do.
    let world = store.list(Some(Layer::WorldModel), 0, 10)?;
    let world = world.first().ok_or("no world model")?;
    assert!(
        !world.text.contains("commands that worked")
            && world
                .text
                .contains("\"error[E0425]: cannot find value `tokens`\" (3 tasks)"),
        "{}",
        world.text
    );
    Ok(())
}

#[test]
fn contradictory_feedback_and_vanished_traces_leave_nothing_corrupt() -> TestResult {
    let store = MemoryStore::open_in_memory()?.with_clock(|| START + 100 * HOUR);
    let traces = two_fixes(&store)?;
    // Up, down, up again on one reply, and a second reply rated.
    for rating in [Rating::Up, Rating::Down, Rating::Up] {
        rate(&store, traces[0], rating)?;
    }
    rate(&store, traces[1], Rating::Up)?;
    store.induce_all_pending()?;
    let written = policies(&store)?;
    assert_eq!(written.len(), 1, "{written:#?}");
    assert_eq!(written[0].metadata["gain"], 1.0, "the latest rating counts");

    // A trace deleted after its rating: its episode is read as no task, the queue goes on, and
    // the policy keeps only what is left.
    store.delete(traces[0])?;
    rate(&store, traces[1], Rating::Up)?;
    let third = third_fix(&store)?;
    rate(&store, third, Rating::Up)?;
    store.induce_all_pending()?;
    assert_eq!(store.induce_pending(10)?, 0, "nothing left pending");
    let written = policies(&store)?;
    assert_eq!(written.len(), 1);
    let mut sources = ids(&written[0].metadata["sources"]);
    sources.sort_unstable();
    assert_eq!(sources, vec![traces[1], third]);
    Ok(())
}

#[test]
fn a_well_supported_policy_crystallises_into_a_skill_that_trials_promote_or_archive() -> TestResult
{
    let store = two_good_fixes_induced()?;
    assert!(
        store.learned_skills()?.is_empty(),
        "two tasks make a policy, not a skill"
    );

    let third = third_fix(&store)?;
    rate(&store, third, Rating::Up)?;
    store.induce_all_pending()?;
    let skills = store.learned_skills()?;
    assert_eq!(skills.len(), 1, "{skills:#?}");
    let (name, skill) = &skills[0];
    assert_eq!(name, "parser-tests-fail-refactor-fix");
    assert_eq!(skill.layer, Layer::Skill);
    assert_eq!(skill.status, Status::Resolving, "a candidate until tried");
    assert!(
        skill.text.starts_with(&format!("---\nname: {name}\n"))
            && skill.text.contains("origin: cairn-evolution")
            && skill.text.contains("## Steps\n\n1. bash(")
            && skill.text.contains("## Check"),
        "{}",
        skill.text
    );
    let skill_id = skill.id;

    // A task that read it and went well promotes it.
    let reading: Vec<Call> = std::iter::once(("read_skill", name.as_str(), "the skill", false))
        .chain(FIX_WORKED.iter().copied())
        .collect();
    let tried = task(
        &store,
        4,
        "The parser tests fail once more",
        &reading,
        "Fixed.",
    )?;
    rate(&store, tried, Rating::Up)?;
    store.induce_all_pending()?;
    let skill = store.get(skill_id)?.ok_or("skill")?;
    assert_eq!(skill.status, Status::Activated);
    assert_eq!(skill.metadata["trials"], 1);
    assert_eq!(skill.metadata["eta"], 1.0);

    // Failures outnumbering successes archive it: it is no longer offered.
    for n in 5..7 {
        let tried = task(&store, n, "The parser tests fail", &reading, "No luck.")?;
        rate(&store, tried, Rating::Down)?;
    }
    store.induce_all_pending()?;
    assert_eq!(
        store.get(skill_id)?.ok_or("skill")?.status,
        Status::Archived
    );
    assert!(store.learned_skills()?.is_empty());
    Ok(())
}

/// A background model that replies from a list, then fails; it counts what it was asked.
struct Replies(std::sync::Mutex<std::collections::VecDeque<Result<String, String>>>);

impl cairn_memory::Writer for Replies {
    fn write(
        &self,
        instructions: &str,
        text: &str,
        _max: u32,
    ) -> Result<String, cairn_memory::MemoryError> {
        assert!(instructions.contains("JSON object") && text.starts_with("What worked when"));
        self.0
            .lock()
            .map_err(|e| cairn_memory::MemoryError::ModelFailed(e.to_string()))?
            .pop_front()
            .unwrap_or_else(|| Err("no reply left".into()))
            .map_err(cairn_memory::MemoryError::ModelFailed)
    }
}

fn lend(store: &MemoryStore, replies: &[Result<&str, &str>]) {
    let replies = replies
        .iter()
        .map(|r| r.map(str::to_owned).map_err(str::to_owned))
        .collect();
    store.set_writer(
        std::sync::Arc::new(Replies(std::sync::Mutex::new(replies))),
        cairn_memory::WriterUses {
            summaries: false,
            policies: true,
        },
    );
}

#[test]
fn the_model_rewords_a_policy_and_garbage_leaves_the_rules_text() -> TestResult {
    let store = two_good_fixes_induced()?;
    let rules = policies(&store)?.remove(0);
    assert_eq!(rules.metadata["written_by"], "rules");
    assert_eq!(rules.metadata["rules_text"], rules.text.as_str());
    assert_eq!(
        store.reword_policies_pending(4)?,
        0,
        "no model lent: it waits"
    );

    // A dead model server: nothing is read or changed, the policy still waits.
    lend(&store, &[Err("connection refused")]);
    assert_eq!(store.reword_policies_pending(4)?, 0);
    assert_eq!(policies(&store)?[0].metadata["model_pending"], true);
    assert_eq!(store.overview()?.backlog.rewording, 1);

    // Garbage: the rules' text stands, the reason is kept, the queue goes on.
    lend(
        &store,
        &[Ok("Sure! I would be happy to help with the parser.")],
    );
    assert_eq!(store.reword_policies_pending(4)?, 1);
    let refused = policies(&store)?.remove(0);
    assert_eq!(refused.text, rules.text);
    assert_eq!(
        refused.metadata["model_refused"],
        "no JSON object in the reply"
    );
    assert_eq!(refused.metadata["model_pending"], false);
    assert_eq!(store.reword_policies_pending(4)?, 0, "not asked again");
    assert_eq!(store.overview()?.backlog.rewording, 0);

    // A third task changes what the rules say: the model is asked again, and its words are kept.
    let third = third_fix(&store)?;
    rate(&store, third, Rating::Up)?;
    store.induce_all_pending()?;
    lend(
        &store,
        &[Ok(r#"```json
{"when": "the parser tests fail after a refactor in /home/ana/parser",
 "do": "run cargo test -p parser, fix the failing case in src/parser.rs, run the tests again",
 "why": "it went well in 3 of 3 tasks", "caveats": ""}
```"#)],
    );
    assert_eq!(store.reword_policies_pending(4)?, 1);
    let worded = policies(&store)?.remove(0);
    assert_eq!(
        worded.text,
        "What worked when the parser tests fail after a refactor in /home/ana/parser: run cargo \
         test -p parser, fix the failing case in src/parser.rs, run the tests again. Why: it went \
         well in 3 of 3 tasks."
    );
    assert_eq!(worded.metadata["written_by"], "model");
    assert!(worded.metadata.get("model_refused").is_none());
    assert_eq!(worded.metadata["support"], 3);

    // An outcome that does not change what the rules say keeps the model's words; the policy
    // is recalled by them.
    rate(&store, third, Rating::Up)?;
    store.induce_all_pending()?;
    assert_eq!(policies(&store)?[0].text, worded.text);
    let hits = store
        .search(&SearchQuery {
            layers: vec![Layer::Policy],
            ..SearchQuery::new("parser tests fail after a refactor")
        })?
        .hits;
    assert_eq!(hits.first().map(|h| h.memory.id), Some(worded.id));
    Ok(())
}

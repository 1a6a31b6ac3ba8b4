//! A repeated-task stream: the same kind of task, asked five times in different words, each
//! rated as it ends. The scripted model explores when it knows nothing (list, read, read, count)
//! and, when what was recalled for it holds a policy of what worked, runs the step that answered
//! before. With evolution on, the tasks after a policy is learned take fewer steps; with it off
//! (`[memory] evolution = false`) every task explores.

use cairn_agent::{Event, Op, Runtime};
use cairn_api::{Cairn, ModelChoice};
use cairn_config::Home;
use cairn_memory::{FeedbackRequest, Layer, Rating};
use cairn_test_support::{text_reply, tool_call_reply, MockServer, Reply};
use serde_json::{json, Value};

type TestResult = Result<(), Box<dyn std::error::Error>>;

const REQUESTS: [&str; 5] = [
    "How many TODO markers are left in src?",
    "Count the TODO markers left in src, please.",
    "How many TODO markers does src have now?",
    "Tell me how many TODO markers src still has.",
    "How many TODO markers remain in src?",
];

/// What the policy marker of a learned policy reads as, in the injection.
const POLICY: &str = "What worked when asked";

/// The explorer's steps, before it answers.
const EXPLORE: [&str; 4] = [
    "ls src",
    "cat src/a.rs",
    "cat src/b.rs",
    "grep -c TODO src/a.rs src/b.rs",
];

/// The texts of the request's messages.
fn texts(body: &Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|m| match &m["content"] {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .collect()
}

/// The command of the last step before the answer in a recalled policy of what worked.
fn learned_command(body: &Value) -> Option<String> {
    let texts = texts(body);
    let text = texts.iter().find(|t| t.contains(POLICY))?;
    let policy = &text[text.find(POLICY)?..];
    let policy = policy.split("\n\n").next().unwrap_or(policy);
    let steps = policy.split("answer:").next().unwrap_or(policy);
    let at = steps.rfind("\"command\":\"")? + "\"command\":\"".len();
    Some(steps[at..].split('"').next()?.to_owned())
}

/// What the scripted model says when the memory asks it to reword a policy.
const REWORDED: &str = r#"{"when": "asked to count the TODO markers in src",
 "do": "run grep -c TODO src/a.rs src/b.rs and add the counts", "why": "it answered right",
 "caveats": ""}"#;

/// The scripted model: the step after the tool results of this turn so far.
fn model(body: &Value) -> Reply {
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    if texts(body)
        .first()
        .is_some_and(|system| system.contains("You keep the notes"))
    {
        return text_reply(REWORDED);
    }
    let last_user = messages.iter().rposition(|m| m["role"] == "user");
    let done = messages
        .iter()
        .skip(last_user.map_or(0, |at| at + 1))
        .filter(|m| m["role"] == "tool")
        .count();
    let last_output = messages
        .iter()
        .rev()
        .find(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
        .unwrap_or_default();
    let plan: Vec<String> = match learned_command(body) {
        Some(command) => vec![command],
        None => EXPLORE.iter().map(|s| (*s).to_owned()).collect(),
    };
    match plan.get(done) {
        Some(command) => {
            tool_call_reply(&format!("c{done}"), "bash", json!({ "command": command }))
        }
        None => text_reply(&format!("Counted the TODO markers: {}", last_output.trim())),
    }
}

/// What a stream left: the steps each task took, whether the last request was sent a policy,
/// the app (and its home, kept while it is read).
type Streamed = (Vec<usize>, bool, Cairn, tempfile::TempDir);

/// Runs the first `tasks` of the stream with `[memory]` set as `memory`.
async fn stream(memory: &str, tasks: usize) -> Result<Streamed, Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let project = dir.path().join("project");
    std::fs::create_dir_all(project.join("src"))?;
    std::fs::write(
        project.join("src/a.rs"),
        "// TODO: parse flags\nfn main() {}\n// TODO: exit codes\n",
    )?;
    std::fs::write(project.join("src/b.rs"), "// TODO: tests\npub fn b() {}\n")?;
    let server = MockServer::start(Vec::new()).await?;
    server.respond_with(model);
    crate::write_config(
        dir.path(),
        &server.base_url,
        &format!("\n[memory]\n{memory}\n"),
    )?;
    let cairn = Cairn::new(Home::at(dir.path()));
    let runtime = cairn.agent_runtime(ModelChoice::default(), project.clone())?;
    let memory = cairn.memory()?;
    let mut steps = Vec::new();
    for (n, request) in REQUESTS.iter().take(tasks).enumerate() {
        let (taken, turn, answer) = turn(&runtime, &format!("task-{n}"), request).await;
        assert!(
            answer.contains("src/a.rs:2") && answer.contains("src/b.rs:1"),
            "task {n} answered {answer:?}"
        );
        steps.push(taken);
        let turn = turn.ok_or("the turn was not captured")?;
        cairn.give_feedback(&FeedbackRequest {
            memory_id: None,
            turn_id: Some(turn),
            rating: Rating::Up,
            note: Some("right count".into()),
        })?;
        // What the background queue does after a rating, done now so the stream is exact.
        let learner = memory.clone();
        tokio::task::spawn_blocking(move || learner.induce_all_pending()).await??;
    }
    let last = server.requests().last().cloned().unwrap_or_default();
    let sent_policy = texts(&last).iter().any(|t| t.contains(POLICY));
    Ok((steps, sent_policy, cairn, dir))
}

/// One task in its own session: the model requests it took, its captured turn, its answer.
async fn turn(runtime: &Runtime, session: &str, text: &str) -> (usize, Option<i64>, String) {
    let mut events = runtime.submit(Op::UserMessage {
        session: session.into(),
        text: text.into(),
        images: Vec::new(),
    });
    let mut done = (0, None, String::new());
    while let Some(event) = events.recv().await {
        if let Event::TurnComplete {
            answer,
            steps,
            turn_id,
            ..
        } = event
        {
            done = (steps, turn_id, answer);
        }
    }
    done
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repeated_task_takes_fewer_steps_once_a_policy_is_learned() -> TestResult {
    let (on, sent_policy, cairn, _home) = stream("evolution = true", REQUESTS.len()).await?;
    // Two tasks explore and go well; from then on the policy they taught is recalled and the
    // task takes its one step and answers.
    assert_eq!(on, [5, 5, 2, 2, 2], "steps per task with evolution on");
    assert!(sent_policy, "the last task was sent the policy");
    let policies = cairn.panel_items(Some(Layer::Policy), 0, 50)?;
    assert_eq!(policies.len(), 1, "one policy for one kind of task");
    let policy = cairn.get_memory(policies[0].id)?;
    // It now teaches the shortest way that went well, and rests on every task.
    assert!(
        policy.text.contains("grep -c TODO") && !policy.text.contains("ls src"),
        "{}",
        policy.text
    );
    assert_eq!(policy.metadata["support"], 5);

    let (off, sent_policy, cairn, _home) = stream("evolution = false", REQUESTS.len()).await?;
    assert_eq!(off, [5, 5, 5, 5, 5], "steps per task with evolution off");
    assert!(!sent_policy);
    assert!(cairn.panel_items(Some(Layer::Policy), 0, 50)?.is_empty());
    assert!(on.iter().sum::<usize>() < off.iter().sum::<usize>());
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_model_policies_the_default_model_rewords_what_was_learned() -> TestResult {
    let (_, _, cairn, _home) = stream("model_policies = true", 2).await?;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
    loop {
        let policies = cairn.panel_items(Some(Layer::Policy), 0, 50)?;
        let policy = policies.first().ok_or("no policy learned")?;
        if policy.metadata["written_by"] == "model" {
            assert_eq!(
                policy.text,
                "What worked when asked to count the TODO markers in src: run grep -c TODO \
                 src/a.rs src/b.rs and add the counts. Why: it answered right."
            );
            assert!(policy.metadata["rules_text"]
                .as_str()
                .is_some_and(|rules| rules.starts_with("What worked when asked \"")));
            return Ok(());
        }
        if std::time::Instant::now() > deadline {
            return Err(format!("never reworded: {policy:?}").into());
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

//! `ask_agent` over the config's `[agents.*]`, through the scripted model (one server answers the
//! asking agent and the asked ones, in turn): a task handed off and its answer returned, the
//! spec's error texts, an agent's tools and permission mode from its profile, and the depth limit.

use std::path::PathBuf;

use cairn_agent::{Event, Op, Runtime};
use cairn_api::{Cairn, ModelChoice};
use cairn_config::Home;
use cairn_test_support::{text_reply, tool_call_reply, tool_calls_reply, MockServer};
use serde_json::{json, Value};

type TestResult = Result<(), Box<dyn std::error::Error>>;

const AGENTS: &str = "\n[agents.reviewer]\ndescription = \"Reviews plans and code\"\n\n\
[agents.reader]\ndescription = \"Reads files\"\nmodel = \"mock/small\"\nyolo = false\ntools = [\"read_file\"]\n";

/// The results of the turn's calls, and what the calls showed while they ran.
async fn outputs(runtime: &Runtime, text: &str) -> (Vec<String>, String) {
    let mut events = runtime.submit(Op::UserMessage {
        session: "s".into(),
        text: text.into(),
        images: Vec::new(),
    });
    let (mut out, mut shown) = (Vec::new(), String::new());
    while let Some(event) = events.recv().await {
        match event {
            Event::ToolResult { output, .. } => out.push(output),
            Event::ToolProgress { text, .. } => shown.push_str(&text),
            _ => {}
        }
    }
    (out, shown)
}

fn tool_names(request: &Value) -> Vec<String> {
    request["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["function"]["name"].as_str().map(str::to_owned))
        .collect()
}

fn last_user(request: &Value) -> String {
    request["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .rfind(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_is_handed_to_a_configured_agent_and_its_answer_returned() -> TestResult {
    let dir = tempfile::tempdir()?;
    let server = MockServer::start(vec![
        tool_call_reply(
            "c1",
            "ask_agent",
            json!({"agent": "reviewer", "prompt": "Review the plan: ship on Friday."}),
        ),
        text_reply("Ship it, but run the tests first."),
        tool_calls_reply(
            "",
            &[
                ("c2", "ask_agent", json!({"agent": "nobody", "prompt": "x"})),
                (
                    "c3",
                    "ask_agent",
                    json!({"agent": "reviewer", "prompt": "  "}),
                ),
                (
                    "c4",
                    "ask_agent",
                    json!({"agent": "reader", "prompt": "Read notes.txt"}),
                ),
            ],
        ),
        text_reply("notes.txt says hello."),
        text_reply("Done."),
    ])
    .await?;
    crate::write_config(dir.path(), &server.base_url, AGENTS)?;
    let cairn = Cairn::new(Home::at(dir.path()));
    let runtime = cairn.agent_runtime(ModelChoice::default(), PathBuf::from("/p"))?;
    let (results, shown) = outputs(&runtime, "Is the plan good?").await;
    // The asked agents' words streamed through the turn as they came.
    assert_eq!(
        shown,
        "Ship it, but run the tests first.notes.txt says hello."
    );
    assert_eq!(
        results,
        vec![
            "[#0001]\nShip it, but run the tests first.",
            "[#0002]\n[ask_agent: unknown agent \"nobody\" — agents: reader, reviewer]",
            "[#0003]\n[ask_agent: the prompt is empty — say what reviewer must do]",
            "[#0004]\nnotes.txt says hello.",
        ]
    );
    let requests = server.requests();
    // The asking agent is told the agents, sorted, with their purposes.
    let ask = requests[0]["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|t| t["function"]["name"] == "ask_agent")
        .cloned()
        .ok_or("ask_agent is not declared")?;
    let description = ask["function"]["description"].as_str().unwrap_or_default();
    assert!(
        description
            .ends_with("Agents:\n  reader — Reads files\n  reviewer — Reviews plans and code"),
        "{description}"
    );
    // The asked agent starts fresh with the prompt, on its own model and tools.
    assert!(last_user(&requests[1]).contains("Review the plan: ship on Friday."));
    assert!(!last_user(&requests[1]).contains("Is the plan good?"));
    assert_eq!(requests[3]["model"], "small");
    assert_eq!(tool_names(&requests[3]), ["read_file"]);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn asked_agents_nest_two_levels_deep_and_no_deeper() -> TestResult {
    let dir = tempfile::tempdir()?;
    let deeper = |id: &str| {
        tool_call_reply(
            id,
            "ask_agent",
            json!({"agent": "reviewer", "prompt": "Look deeper."}),
        )
    };
    let server = MockServer::start(vec![
        deeper("p1"),                                 // the person's agent asks (depth 1)
        deeper("d1"),                                 // the reviewer asks again (depth 2)
        deeper("d2"),                                 // the second reviewer may not ask
        text_reply("I looked myself."),               // so it answers
        text_reply("The second look found nothing."), // the first reviewer answers
        text_reply("Done."),
    ])
    .await?;
    crate::write_config(dir.path(), &server.base_url, AGENTS)?;
    let cairn = Cairn::new(Home::at(dir.path()));
    let runtime = cairn.agent_runtime(ModelChoice::default(), PathBuf::from("/p"))?;
    let (results, shown) = outputs(&runtime, "Review it twice").await;
    // The first reviewer's own call shows, titled with its name.
    assert!(
        shown.contains("reviewer · 🗣 ask_agent: reviewer (the default model) — Look deeper."),
        "{shown}"
    );
    assert_eq!(results, vec!["[#0001]\nThe second look found nothing."]);
    let refused = server.requests()[3]["messages"]
        .as_array()
        .and_then(|m| m.last().cloned())
        .unwrap_or_default();
    assert_eq!(refused["role"], "tool");
    assert!(
        refused["content"].as_str().unwrap_or_default().ends_with(
            "[ask_agent: reviewer cannot be asked from here: asked agents nest at most 2 levels deep — do the task yourself]"
        ),
        "{refused}"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_asked_agent_that_fails_is_reported_and_the_turn_goes_on() -> TestResult {
    let dir = tempfile::tempdir()?;
    let server = MockServer::start(vec![
        tool_call_reply(
            "c1",
            "ask_agent",
            json!({"agent": "reviewer", "prompt": "Review it."}),
        ),
        // The reviewer's model refuses the request.
        cairn_test_support::Reply::Status {
            status: 400,
            retry_after: None,
            body: json!({"error": {"message": "model reviewer-9 does not exist"}}).to_string(),
        },
        text_reply("The reviewer is unavailable; here is my own review."),
    ])
    .await?;
    crate::write_config(dir.path(), &server.base_url, AGENTS)?;
    let cairn = Cairn::new(Home::at(dir.path()));
    let runtime = cairn.agent_runtime(ModelChoice::default(), PathBuf::from("/p"))?;
    let (results, _) = outputs(&runtime, "Review it").await;
    assert_eq!(results.len(), 1);
    assert!(
        results[0].starts_with("[#0001]\n[ask_agent: reviewer failed: ")
            && results[0].contains("model reviewer-9 does not exist"),
        "{results:?}"
    );
    // The asking turn went on to its own answer.
    assert_eq!(server.requests().len(), 3);
    Ok(())
}

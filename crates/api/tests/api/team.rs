//! Teams: the person's agent leads a team of three (itself and two members it adds) on a fixture
//! task to the end — members work, report, and their reports wake the lead; a lead with members
//! gives work away; every answer is the spec's text. The scripted model answers each member's
//! conversation on its own route.

use std::time::Duration;

use cairn_agent::{Event, Op, Runtime};
use cairn_api::{Cairn, ModelChoice};
use cairn_config::Home;
use cairn_test_support::{text_reply, tool_call_reply, tool_calls_reply, MockServer};
use serde_json::json;

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// The results of the turn `op` opens.
async fn results(runtime: &Runtime, op: Op) -> Vec<String> {
    let mut events = runtime.submit(op);
    let mut out = Vec::new();
    while let Some(event) = events.recv().await {
        if let Event::ToolResult { output, .. } = event {
            out.push(output);
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_team_of_three_works_a_task_to_the_end() -> TestResult {
    let dir = tempfile::tempdir()?;
    let server = MockServer::start(vec![
        tool_call_reply(
            "c1",
            "team_add",
            json!({"name": "alice", "role": "writes a.txt", "prompt": "MEMBER-ALICE: write a.txt holding alpha"}),
        ),
        tool_call_reply(
            "c2",
            "team_add",
            json!({"name": "alice", "role": "writes a.txt", "prompt": "MEMBER-ALICE: write a.txt holding alpha", "goal": "Write a.txt and b.txt"}),
        ),
        tool_call_reply(
            "c3",
            "team_add",
            json!({"name": "bob", "role": "writes b.txt", "prompt": "MEMBER-BOB: write b.txt holding beta"}),
        ),
        tool_calls_reply(
            "",
            &[
                ("c4", "write_file", json!({"path": "c.txt", "content": "mine"})),
                ("c5", "team_add", json!({"name": "all", "role": "x", "prompt": "x"})),
                ("c6", "team_add", json!({"name": "Bob!", "role": "x", "prompt": "x"})),
                ("c7", "team_add", json!({"name": "alice", "role": "x", "prompt": "x"})),
                ("c8", "team_send", json!({"to": "lead", "message": "x"})),
                ("c9", "team_send", json!({"to": "zed", "message": "x"})),
                ("c10", "team_stop", json!({"name": "zed"})),
            ],
        ),
        text_reply("The team is on it."),
        // Woken by the reports.
        tool_call_reply("c11", "team_read", json!({})),
        text_reply("Both files are written."),
    ])
    .await?;
    server.route(
        "MEMBER-ALICE",
        vec![
            tool_call_reply(
                "a1",
                "write_file",
                json!({"path": "a.txt", "content": "alpha"}),
            ),
            text_reply("a.txt holds alpha."),
        ],
    );
    server.route(
        "MEMBER-BOB",
        vec![
            tool_call_reply(
                "b1",
                "write_file",
                json!({"path": "b.txt", "content": "beta"}),
            ),
            text_reply("b.txt holds beta."),
        ],
    );
    crate::write_config(dir.path(), &server.base_url, "")?;
    let cairn = Cairn::new(Home::at(dir.path()));
    let runtime = cairn.agent_runtime(ModelChoice::default(), dir.path().to_path_buf())?;
    let said = results(
        &runtime,
        Op::UserMessage {
            session: "s".into(),
            text: "Write the two files".into(),
            images: Vec::new(),
        },
    )
    .await;
    assert_eq!(
        said,
        [
            "[#0001]\nSay the team's goal in `goal`, in one line, with your first member: every member is told it.",
            "[#0002]\nAdded alice (writes a.txt): it is working. Its report comes to you when it finishes. The team is 2 of 4 agents.",
            "[#0003]\nAdded bob (writes b.txt): it is working. Its report comes to you when it finishes. The team is 3 of 4 agents.",
            "[#0004]\nYou lead a team: give this to a member (team_add or team_send).",
            "[#0005]\nall addresses the whole team; it cannot be a name.",
            "[#0006]\nBob! cannot be a name: use lowercase letters, digits and hyphens, beginning with a letter, at most 32 characters.",
            "[#0007]\nThere is already an agent called alice in this team. Choose another name.",
            "[#0008]\nThat is you: send it to someone else.",
            "[#0009]\nNo agent called zed in this team. The team: lead, alice, bob.",
            "[#000a]\nNo agent called zed in this team. The team: lead, alice, bob.",
        ]
    );
    // The lead wrote nothing itself; the members did the work and reported.
    // Both reports in the room and delivered to the lead, whose wake-up reads them (a loaded
    // machine may take a while: the deadline is generous, the wait ends as soon as they are).
    for _ in 0..600 {
        if cairn.teams().view("s").is_some_and(|t| t.room.len() == 2)
            && runtime.jobs().has_notes("s")
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(!dir.path().join("c.txt").exists());
    assert_eq!(std::fs::read_to_string(dir.path().join("a.txt"))?, "alpha");
    assert_eq!(std::fs::read_to_string(dir.path().join("b.txt"))?, "beta");
    let team = cairn.teams().view("s").ok_or("no team")?;
    assert_eq!(
        team.members
            .iter()
            .map(|m| m.name.as_str())
            .collect::<Vec<_>>(),
        ["alice", "bob"]
    );
    let room = team.room;
    assert_eq!(room.len(), 2, "{room:?}");
    assert!(room.iter().all(|m| m.report && m.to == "lead"));

    // The reports wake the lead, which reads its team.
    let read = results(
        &runtime,
        Op::Wake {
            session: "s".into(),
        },
    )
    .await;
    let read = read.first().ok_or("no team_read")?;
    let lines: Vec<&str> = read.lines().collect();
    assert_eq!(lines[1], "Team (3 of 4 agents):");
    assert_eq!(
        lines[2],
        "- lead — leads the team · working · m · active now"
    );
    assert!(
        lines[3].starts_with("  - alice — writes a.txt · finished · m · "),
        "{read}"
    );
    assert!(lines[3].ends_with("s ago"), "{read}");
    assert!(
        lines[4].starts_with("  - bob — writes b.txt · finished · m · "),
        "{read}"
    );
    assert_eq!(lines[5], "Room since #0:");
    // Which report came first is the members' race; they are numbered in the order they came.
    assert!(
        lines[6].starts_with("#1 ") && lines[7].starts_with("#2 "),
        "{read}"
    );
    let mut room_lines: Vec<&str> = lines[6..8].iter().map(|l| &l[3..]).collect();
    room_lines.sort_unstable();
    assert_eq!(
        room_lines,
        [
            "alice → lead (report): a.txt holds alpha.",
            "bob → lead (report): b.txt holds beta."
        ]
    );
    // Each member was told the goal, its role and who it reports to.
    let alice = server
        .requests()
        .into_iter()
        .find(|r| r.to_string().contains("You are alice, a member of a team"))
        .ok_or("alice never asked")?;
    assert!(alice
        .to_string()
        .contains("The team's goal: Write a.txt and b.txt"));
    assert!(alice
        .to_string()
        .contains("Your role: writes a.txt. lead added you"));
    cairn.teams().end("s");
    Ok(())
}

/// A model that answers two requests at once leaves one slot beside the lead: the second member
/// waits for it, and starts when the first one's turn ends.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn members_wait_for_a_free_slot_of_the_model() -> TestResult {
    let dir = tempfile::tempdir()?;
    let server = MockServer::start(vec![
        tool_call_reply(
            "c1",
            "team_add",
            json!({"name": "alice", "role": "goes first", "prompt": "MEMBER-ALICE: wait a second", "goal": "Take turns"}),
        ),
        tool_call_reply(
            "c2",
            "team_add",
            json!({"name": "bob", "role": "goes second", "prompt": "MEMBER-BOB: say done"}),
        ),
        text_reply("Both are on it."),
    ])
    .await?;
    server.route(
        "MEMBER-ALICE",
        vec![
            tool_call_reply("a1", "bash", json!({"command": "sleep 1"})),
            text_reply("Alice is done."),
        ],
    );
    server.route("MEMBER-BOB", vec![text_reply("Bob is done.")]);
    crate::write_config(dir.path(), &server.base_url, "parallel = 2\n")?;
    let cairn = Cairn::new(Home::at(dir.path()));
    let runtime = cairn.agent_runtime(ModelChoice::default(), dir.path().to_path_buf())?;
    let said = results(
        &runtime,
        Op::UserMessage {
            session: "s".into(),
            text: "Take turns".into(),
            images: Vec::new(),
        },
    )
    .await;
    assert_eq!(
        said,
        [
            "[#0001]\nAdded alice (goes first): it is working. Its report comes to you when it finishes. The team is 2 of 4 agents.",
            "[#0002]\nAdded bob (goes second): it waits for a free slot — the model serves 2 requests at once and all are busy — and starts when one frees. Its report comes to you when it finishes. The team is 3 of 4 agents.",
        ]
    );
    for _ in 0..100 {
        if cairn.teams().view("s").is_some_and(|t| t.room.len() == 2) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let team = cairn.teams().view("s").ok_or("no team")?;
    let order: Vec<&str> = team.room.iter().map(|m| m.text.as_str()).collect();
    assert_eq!(order, ["Alice is done.", "Bob is done."]);
    // Each member's stream is kept for the workbench to show under its name.
    assert_eq!(
        team.members[0].output,
        "\n🛠️  bash: sleep 1\nAlice is done."
    );
    cairn.teams().end("s");
    Ok(())
}

/// A model that answers one request at a time has no room for a team or a background subagent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_serving_one_request_at_a_time_has_no_team() -> TestResult {
    let dir = tempfile::tempdir()?;
    let server = MockServer::start(vec![
        tool_calls_reply(
            "",
            &[
                (
                    "c1",
                    "team_add",
                    json!({"name": "alice", "role": "x", "prompt": "x", "goal": "x"}),
                ),
                ("c2", "team_read", json!({})),
                (
                    "c3",
                    "task",
                    json!({"description": "x", "prompt": "x", "background": true}),
                ),
            ],
        ),
        text_reply("I will do it myself."),
    ])
    .await?;
    crate::write_config(dir.path(), &server.base_url, "parallel = 1\n")?;
    let cairn = Cairn::new(Home::at(dir.path()));
    let runtime = cairn.agent_runtime(ModelChoice::default(), dir.path().to_path_buf())?;
    let said = results(
        &runtime,
        Op::UserMessage {
            session: "s".into(),
            text: "Split it".into(),
            images: Vec::new(),
        },
    )
    .await;
    assert_eq!(
        said,
        [
            "[#0001]\nThis model serves one request at a time now, so there is no team. Do the work yourself.",
            "[#0002]\nThis model serves one request at a time now, so there is no team. Do the work yourself.",
            "[#0003]\n[task: this model serves one request at a time, so a subagent cannot run beside you. Do the work yourself.]",
        ]
    );
    Ok(())
}

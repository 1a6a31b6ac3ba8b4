//! `/goal` before a task's first message: the task is made to hold the goal, listed with it, and
//! its first message is told the goal and gives the task its title.

use std::path::PathBuf;

use cairn_agent::{Event, Op};
use cairn_api::{Cairn, ModelChoice};
use cairn_config::Home;
use cairn_test_support::{text_reply, MockServer};

#[tokio::test]
async fn a_goal_set_before_the_first_message_holds_for_it() -> Result<(), Box<dyn std::error::Error>>
{
    let dir = tempfile::tempdir()?;
    let server = MockServer::start(vec![text_reply("On it.")]).await?;
    crate::write_config(dir.path(), &server.base_url, "")?;
    let cairn = Cairn::new(Home::at(dir.path()));

    let said = cairn.task_goal("desktop-1", "ship the release notes by Friday")?;
    assert!(said.contains("ship the release notes by Friday"), "{said}");
    let listed = cairn.tasks_list();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].title, "New task");
    assert_eq!(
        listed[0].goal.as_deref(),
        Some("Goal (active): ship the release notes by Friday")
    );
    // Only setting a goal makes a task: asking about one does not.
    assert!(cairn.task_goal("desktop-2", "pause").is_err());
    assert_eq!(cairn.tasks_list().len(), 1);

    let runtime = cairn.agent_runtime(ModelChoice::default(), PathBuf::from("/p"))?;
    let mut events = runtime.submit(Op::UserMessage {
        session: "desktop-1".into(),
        text: "Draft the notes".into(),
        images: Vec::new(),
    });
    while let Some(event) = events.recv().await {
        if matches!(event, Event::TurnComplete { .. } | Event::Error { .. }) {
            break;
        }
    }
    let sent = server.requests()[0]["messages"].to_string();
    assert!(sent.contains("ship the release notes by Friday"), "{sent}");
    let listed = cairn.tasks_list();
    assert_eq!(listed[0].title, "Draft the notes");
    assert!(listed[0].goal.is_some());
    Ok(())
}

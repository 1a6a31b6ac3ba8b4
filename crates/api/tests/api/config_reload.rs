//! An edit of the config file while Cairn runs: a new provider answers the next message without a
//! restart; an edit with an error keeps the config before it running, and the status names the
//! file, the line and the key; mended, the file applies again.

use std::time::{Duration, Instant};

use cairn_agent::Op;
use cairn_api::chat::Chat;
use cairn_api::Cairn;
use cairn_config::Home;
use cairn_protocol::ChatEvent;
use cairn_test_support::{text_reply, MockServer};

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// The text of the reply to `message` in a new task.
async fn answer(
    chat: &Chat,
    task: &str,
    message: &str,
) -> Result<String, Box<dyn std::error::Error>> {
    let mut turn = chat.submit(
        task,
        Op::UserMessage {
            session: task.into(),
            text: message.into(),
            images: Vec::new(),
        },
    )?;
    let mut text = String::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    while let Some(event) = tokio::time::timeout_at(deadline.into(), turn.next()).await? {
        if let ChatEvent::Text { text: words } = event {
            text.push_str(&words);
        }
    }
    Ok(text)
}

/// Waits until the status says `valid`, the watcher having read the edit.
async fn wait_for(cairn: &Cairn, valid: bool) -> Result<cairn_protocol::StatusReport, String> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let status = cairn.status(None).await;
        if status.config.valid == valid {
            return Ok(status);
        }
        if Instant::now() > deadline {
            return Err(format!("the status never said valid = {valid}: {status:?}"));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn an_edited_config_applies_without_a_restart_and_a_broken_one_keeps_the_last_good(
) -> TestResult {
    let dir = tempfile::tempdir()?;
    let first = MockServer::start(Vec::new()).await?;
    first.respond_with(|_| text_reply("from the first server"));
    let second = MockServer::start(Vec::new()).await?;
    second.respond_with(|_| text_reply("from the second server"));
    crate::write_config(dir.path(), &first.base_url, "")?;
    let cairn = Cairn::new(Home::at(dir.path()));
    let chat = std::sync::Arc::new(Chat::new(cairn.clone(), dir.path().to_path_buf()));
    let _following = chat.follow_config();
    assert_eq!(answer(&chat, "t1", "hello").await?, "from the first server");

    // Another server, by hand: the next message goes to it.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    crate::write_config(dir.path(), &second.base_url, "")?;
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let said = answer(&chat, "t2", "hello again").await?;
        if said == "from the second server" {
            break;
        }
        assert!(Instant::now() < deadline, "the edit never applied: {said}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    // A typo: the config before it runs on, and the status says where the error is.
    std::fs::write(
        dir.path().join("config.toml"),
        format!(
            "[agent]\nmodle = \"mock/m\"\n\n[providers.mock]\nbase_url = \"{}\"\n",
            first.base_url
        ),
    )?;
    let status = wait_for(&cairn, false).await?;
    assert!(status.config.kept, "{status:?}");
    let error = status.config.error.clone().unwrap_or_default();
    assert!(
        error.contains("config.toml:2") && error.contains("modle"),
        "{error}"
    );
    assert!(status.can_chat(), "{status:?}");
    assert_eq!(status.default_model.as_deref(), Some("mock/m"));
    assert_eq!(
        answer(&chat, "t3", "still there?").await?,
        "from the second server"
    );

    // Mended: it applies again.
    crate::write_config(dir.path(), &first.base_url, "")?;
    let status = wait_for(&cairn, true).await?;
    assert!(!status.config.kept);
    let deadline = Instant::now() + Duration::from_secs(10);
    while answer(&chat, "t4", "and now?").await? != "from the first server" {
        assert!(Instant::now() < deadline, "the mended file never applied");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    // A process that never read the file whole has nothing to keep: it says the error.
    std::fs::write(dir.path().join("config.toml"), "[agent\n")?;
    let fresh = Cairn::new(Home::at(dir.path()));
    let status = fresh.status(None).await;
    assert!(!status.config.valid && !status.config.kept && !status.can_chat());
    Ok(())
}

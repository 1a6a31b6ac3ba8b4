//! `[memory] summaries = true`: the default model rewrites trace summaries in the background.

use std::sync::Arc;
use std::time::{Duration, Instant};

use cairn_api::Cairn;
use cairn_config::Home;
use cairn_memory::{CaptureOutcome, TurnCompletion, TurnStart};
use cairn_test_support::{text_reply, MockServer};

fn write_config(home: &std::path::Path, base_url: &str, summaries: bool) -> std::io::Result<()> {
    crate::write_config(
        home,
        base_url,
        &format!("\n[memory]\nsummaries = {summaries}\n"),
    )
}

fn capture(cairn: &Cairn) -> Result<i64, Box<dyn std::error::Error>> {
    let memory = cairn.memory()?;
    let turn = memory.start_turn(TurnStart {
        session: "s".into(),
        request: "Why does the nightly build fail?".into(),
        source: None,
        idempotency_key: None,
        started_at: None,
        workspace: None,
    })?;
    match memory.complete_turn(
        turn,
        TurnCompletion {
            answer: "The cache volume is full.".into(),
            ..TurnCompletion::default()
        },
    )? {
        CaptureOutcome::Captured { memory_id } => Ok(memory_id),
        other => Err(format!("{other:?}").into()),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_summary_model_rewrites_new_traces() -> Result<(), Box<dyn std::error::Error>> {
    let server = MockServer::start(vec![text_reply(
        "Nightly build failed: the cache volume was full.",
    )])
    .await?;
    let home = tempfile::tempdir()?;
    write_config(home.path(), &server.base_url, true)?;
    let cairn = Cairn::with_env(Home::at(home.path()), Arc::new(|_: &str| None));
    let id = tokio::task::spawn_blocking(move || -> Result<(i64, Cairn), String> {
        let id = capture(&cairn).map_err(|e| e.to_string())?;
        Ok((id, cairn))
    })
    .await??;
    let (id, cairn) = id;
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let memory = cairn.get_memory(id)?;
        if memory.summary_source.as_str() == "model" {
            assert_eq!(
                memory.summary,
                "Nightly build failed: the cache volume was full."
            );
            break;
        }
        if Instant::now() > deadline {
            return Err(format!("never summarised: {memory:?}").into());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let asked = &server.requests()[0];
    assert_eq!(asked["model"], "m");
    assert!(asked["messages"][1]["content"]
        .as_str()
        .unwrap_or_default()
        .contains("nightly build"));
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn summaries_are_off_unless_asked_for() -> Result<(), Box<dyn std::error::Error>> {
    let server = MockServer::start(vec![]).await?;
    let home = tempfile::tempdir()?;
    write_config(home.path(), &server.base_url, false)?;
    let cairn = Cairn::with_env(Home::at(home.path()), Arc::new(|_: &str| None));
    let (id, cairn) = tokio::task::spawn_blocking(move || -> Result<(i64, Cairn), String> {
        Ok((capture(&cairn).map_err(|e| e.to_string())?, cairn))
    })
    .await??;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(cairn.get_memory(id)?.summary_source.as_str(), "heuristic");
    assert!(
        server.requests().is_empty(),
        "no tokens are spent without consent"
    );
    Ok(())
}

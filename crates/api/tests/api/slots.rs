//! The background models' slots: `[models] summary` writes a dream's episode notes (not the chat's
//! model), and the config names an unknown one by its line.

use cairn_api::{Cairn, Slot};
use cairn_config::Home;
use cairn_memory::NewMemory;
use cairn_protocol::memory::DreamChangeKind;
use cairn_test_support::{text_reply, MockServer};

#[tokio::test]
async fn a_dreams_notes_are_written_by_the_summary_model() -> Result<(), Box<dyn std::error::Error>>
{
    let dir = tempfile::tempdir()?;
    let server = MockServer::start(Vec::new()).await?;
    server.respond_with(|_| text_reply("They planned a trip to Kyoto."));
    crate::write_config(
        dir.path(),
        &server.base_url,
        "\n[models]\nsummary = \"mock/notes\"\nevolution = \"mock/words\"\n",
    )?;
    let cairn = Cairn::new(Home::at(dir.path()));
    let config = cairn.load_config()?;
    assert_eq!(
        cairn.slot_model(&config, Slot::Summary).as_deref(),
        Some("mock/notes")
    );
    assert_eq!(
        cairn.slot_model(&config, Slot::Evolution).as_deref(),
        Some("mock/words")
    );

    let yesterday = cairn_memory::now_ms() - 24 * 60 * 60 * 1000;
    cairn.memory()?.add_batch(
        [
            "We go to Kyoto in April.",
            "Book the Hotel Sakura.",
            "Five nights, then Osaka.",
        ]
        .iter()
        .enumerate()
        .map(|(i, text)| NewMemory {
            text: (*text).into(),
            session: Some("trip".into()),
            created_at: Some(yesterday + i as i64 * 60_000),
            ..NewMemory::default()
        })
        .collect(),
    )?;
    let dream = tokio::task::spawn_blocking(move || cairn.dream(false, "test")).await??;
    assert!(
        dream
            .changes
            .iter()
            .any(|c| c.kind == DreamChangeKind::Noted),
        "{dream:?}"
    );
    let asked: Vec<String> = server
        .requests()
        .iter()
        .map(|r| r["model"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(asked, ["notes"]);
    Ok(())
}

//! The background models' slots: `[models] summary` writes a dream's episode notes (not the chat's
//! model), and the config names an unknown one by its line.

use cairn_api::{Cairn, SettingsChange};
use cairn_config::Home;
use cairn_memory::NewMemory;
use cairn_protocol::memory::DreamChangeKind;
use cairn_protocol::settings::ModelSlot;
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
        cairn.slot_model(&config, ModelSlot::Summary).as_deref(),
        Some("mock/notes")
    );
    assert_eq!(
        cairn.slot_model(&config, ModelSlot::Evolution).as_deref(),
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

#[test]
fn settings_set_a_slots_model_and_give_it_its_default_back(
) -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    crate::write_config(dir.path(), "http://127.0.0.1:9/v1", "")?;
    let cairn = Cairn::new(Home::at(dir.path()));
    let chat = cairn_api::chat::Chat::new(cairn.clone(), dir.path().to_path_buf());
    let slot = |settings: &cairn_api::Settings, which| {
        settings
            .slots
            .iter()
            .find(|s| s.slot == which)
            .cloned()
            .ok_or("no slot")
    };
    // No local model in this home: both slots use the default model.
    let settings = cairn.settings();
    let summary = slot(&settings, ModelSlot::Summary)?;
    assert_eq!(
        (summary.model, summary.in_use.as_deref()),
        (None, Some("mock/m"))
    );

    let settings = chat.change_settings(SettingsChange::SlotModel {
        slot: ModelSlot::Summary,
        model: Some("mock/small".into()),
    })?;
    assert_eq!(
        slot(&settings, ModelSlot::Summary)?.model.as_deref(),
        Some("mock/small")
    );
    // Evolution follows the summary slot until it is set itself.
    assert_eq!(
        slot(&settings, ModelSlot::Evolution)?.in_use.as_deref(),
        Some("mock/small")
    );
    let text = std::fs::read_to_string(dir.path().join("config.toml"))?;
    assert!(
        text.contains("[models]\nsummary = \"mock/small\""),
        "{text}"
    );

    let refused = chat.change_settings(SettingsChange::SlotModel {
        slot: ModelSlot::Evolution,
        model: Some("nowhere/big".into()),
    });
    assert!(refused.is_err_and(|e| e.to_string().contains("nowhere")));

    let settings = chat.change_settings(SettingsChange::SlotModel {
        slot: ModelSlot::Summary,
        model: None,
    })?;
    assert_eq!(slot(&settings, ModelSlot::Summary)?.model, None);
    assert!(!std::fs::read_to_string(dir.path().join("config.toml"))?.contains("mock/small"));
    Ok(())
}

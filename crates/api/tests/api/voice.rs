//! What whisper is primed with: the starter sayings on a new install, the person's own sentences
//! once memory holds them.

use std::sync::Arc;

use cairn_api::Cairn;
use cairn_config::Home;
use cairn_memory::NewMemory;

#[test]
fn a_new_install_primes_whisper_with_software_talk_then_with_what_the_person_said(
) -> Result<(), Box<dyn std::error::Error>> {
    let home = tempfile::tempdir()?;
    let cairn = Cairn::with_env(Home::at(home.path()), Arc::new(|_: &str| None));
    let starter = cairn.voice_hints();
    assert!(starter.said.len() >= 5, "{starter:?}");
    // A glossary of words tiny.en mishears first, then plain sentences nearest the audio.
    assert!(starter.said[0].starts_with("Glossary: ") && starter.said[0].contains("async"));
    assert!(!starter.said[starter.said.len() - 1].starts_with("Glossary"));
    assert!(starter.said.iter().any(|s| s.contains("pull request")));
    assert!(starter.vocabulary.is_empty());

    cairn.memory()?.add(NewMemory {
        text: "User: move the invoices table to the new billing schema\nAssistant: Done.".into(),
        ..NewMemory::default()
    })?;
    let primed = cairn.voice_hints();
    assert_eq!(
        primed.said,
        vec!["move the invoices table to the new billing schema".to_owned()]
    );
    assert!(primed.said.iter().all(|s| !s.contains("pull request")));
    Ok(())
}

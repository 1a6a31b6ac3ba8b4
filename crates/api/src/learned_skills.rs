//! The skills Cairn learned (crystallised from policies by the memory's background queue), written
//! into the skills folder for `read_skill` to offer: each as `<name>/SKILL.md`, atomically, when
//! its text changed. A folder Cairn wrote (its `SKILL.md` says `origin: cairn-evolution`) whose
//! skill is no longer offered (archived by its trials, deleted in the panel) is removed. A skill
//! folder without that line is the person's own and is never touched.

use std::collections::BTreeSet;
use std::path::Path;

use cairn_config::{write_atomically, Access};
use cairn_memory::MemoryStore;

use crate::Error;

/// The line that marks a skill file as written by Cairn.
const ORIGIN: &str = "origin: cairn-evolution";

/// Brings `dir` in line with the learned skills; returns how many files it wrote or removed.
pub fn sync_learned_skills(store: &MemoryStore, dir: &Path) -> Result<usize, Error> {
    let skills = store.learned_skills()?;
    let mut changed = 0;
    let mut offered = BTreeSet::new();
    for (name, memory) in &skills {
        // A name is one folder inside `dir`, never a path out of it.
        if name.is_empty() || name.contains(['/', '\\']) || name.starts_with('.') {
            continue;
        }
        offered.insert(name.clone());
        let file = dir.join(name).join("SKILL.md");
        match std::fs::read_to_string(&file) {
            Ok(text) if text == memory.text => continue,
            Ok(text) if !text.lines().any(|l| l.trim() == ORIGIN) => continue,
            _ => {}
        }
        std::fs::create_dir_all(dir.join(name))
            .map_err(|e| Error::Internal(format!("cannot create {}: {e}", dir.display())))?;
        write_atomically(&file, memory.text.as_bytes(), Access::Private)?;
        changed += 1;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(changed);
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let file = entry.path().join("SKILL.md");
        if offered.contains(&name) || !entry.path().is_dir() {
            continue;
        }
        let ours = std::fs::read_to_string(&file)
            .is_ok_and(|text| text.lines().any(|l| l.trim() == ORIGIN));
        if ours {
            std::fs::remove_file(&file)
                .map_err(|e| Error::Internal(format!("cannot remove {}: {e}", file.display())))?;
            // The folder goes with it unless something else was put in it.
            let _ = std::fs::remove_dir(entry.path());
            changed += 1;
        }
    }
    Ok(changed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use cairn_memory::{Layer, NewMemory, Status};
    use cairn_tools::ReadSkill;

    fn learned(store: &MemoryStore, name: &str) -> Result<i64, Box<dyn std::error::Error>> {
        Ok(store
            .add(NewMemory {
                text: format!(
                    "---\nname: {name}\ndescription: \"Learned from 3 tasks\"\n{ORIGIN}\n---\n\n# {name}\n"
                ),
                layer: Some(Layer::Skill),
                source: Some("cairn-evolution".into()),
                external_id: Some(format!("skill:{name}")),
                metadata: Some(serde_json::json!({ "skill": name })),
                ..NewMemory::default()
            })?
            .id)
    }

    #[test]
    fn learned_skills_are_offered_by_read_skill_and_leave_when_archived(
    ) -> Result<(), Box<dyn std::error::Error>> {
        let store = MemoryStore::open_in_memory()?;
        let dir = tempfile::tempdir()?;
        let own = dir.path().join("deploy");
        std::fs::create_dir_all(&own)?;
        std::fs::write(own.join("SKILL.md"), "---\ndescription: mine\n---\n")?;
        let fix = learned(&store, "fix-parser-tests")?;
        learned(&store, "../escape")?;

        assert_eq!(sync_learned_skills(&store, dir.path())?, 1);
        assert_eq!(
            sync_learned_skills(&store, dir.path())?,
            0,
            "nothing changed"
        );
        let tool = ReadSkill::load(dir.path()).ok_or("no skills")?;
        let names: Vec<&str> = tool.names().collect();
        assert_eq!(names, vec!["deploy", "fix-parser-tests"]);
        assert!(!dir.path().join("escape").exists());

        store.set_status(fix, Status::Archived)?;
        assert_eq!(sync_learned_skills(&store, dir.path())?, 1);
        assert!(!dir.path().join("fix-parser-tests").exists());
        assert!(
            own.join("SKILL.md").exists(),
            "the person's own skill stays"
        );
        Ok(())
    }
}

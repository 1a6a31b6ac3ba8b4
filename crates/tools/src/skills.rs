//! `read_skill`: the skills folder (`<name>.md` or `<name>/SKILL.md`), catalogued in the tool's
//! description; only a name's base name is used, so nothing outside the folder can be read.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::{json, Value};

use crate::counters::Counter;
use crate::texts::{fill, SKILL_DESCRIPTION, UNKNOWN_SKILL};
use crate::{field, parse, Declaration, Tool, ToolContext, ToolFuture, ToolOutput};

pub struct ReadSkill {
    dir: PathBuf,
    /// name → one-line description, sorted by name.
    catalogue: BTreeMap<String, String>,
}

#[derive(Deserialize)]
struct Input {
    name: String,
}

impl ReadSkill {
    /// The tool over `dir`, or `None` when it holds no skill (the tool is then not declared).
    pub fn load(dir: &Path) -> Option<Self> {
        let mut catalogue = BTreeMap::new();
        for entry in std::fs::read_dir(dir).ok()?.flatten() {
            let path = entry.path();
            let (name, file) = if path.is_dir() {
                (entry.file_name(), path.join("SKILL.md"))
            } else if path.extension().is_some_and(|e| e == "md") {
                match path.file_stem() {
                    Some(stem) => (stem.to_owned(), path.clone()),
                    None => continue,
                }
            } else {
                continue;
            };
            let Ok(text) = std::fs::read_to_string(&file) else {
                continue;
            };
            let name = name.to_string_lossy().into_owned();
            // A flat file wins over a folder of the same name.
            if path.is_dir() && catalogue.contains_key(&name) {
                continue;
            }
            catalogue.insert(name, description_of(&text));
        }
        (!catalogue.is_empty()).then(|| Self {
            dir: dir.to_path_buf(),
            catalogue,
        })
    }

    /// The skills it offers, by name, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.catalogue.keys().map(String::as_str)
    }

    fn file_of(&self, name: &str) -> PathBuf {
        let flat = self.dir.join(format!("{name}.md"));
        if flat.is_file() {
            flat
        } else {
            self.dir.join(name).join("SKILL.md")
        }
    }
}

/// A skill's description: its front matter's `description:`, else its first line of prose.
fn description_of(text: &str) -> String {
    let mut lines = text.lines().map(str::trim);
    if text.starts_with("---") {
        lines.next();
        for line in lines.by_ref() {
            if line == "---" {
                break;
            }
            if let Some(d) = line.strip_prefix("description:") {
                return d.trim().trim_matches('"').to_owned();
            }
        }
    }
    lines
        .find(|l| !l.is_empty() && !l.starts_with('#'))
        .unwrap_or("(no description)")
        .to_owned()
}

impl Tool for ReadSkill {
    fn name(&self) -> &str {
        "read_skill"
    }

    fn declaration(&self) -> Declaration {
        let mut description = SKILL_DESCRIPTION.to_owned();
        for (name, about) in &self.catalogue {
            description.push_str(&format!("\n  {name} — {about}"));
        }
        Declaration {
            name: "read_skill".into(),
            description,
            parameters: json!({
                "type": "object",
                "properties": {"name": {"type": "string", "description": "Skill name, exactly as listed in the tool description."}},
                "required": ["name"]
            }),
        }
    }

    fn display(&self, input: &Value) -> String {
        format!("📖 read_skill: {}", field(input, "name"))
    }

    fn counter(&self) -> Option<Counter> {
        Some(Counter::Skill)
    }

    fn run<'a>(&'a self, input: Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let input: Input = match parse("read_skill", input) {
                Ok(i) => i,
                Err(e) => return ToolOutput::failed(e),
            };
            let name = Path::new(input.name.trim())
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let name = name.strip_suffix(".md").unwrap_or(&name).to_owned();
            if !self.catalogue.contains_key(&name) {
                let names: Vec<&str> = self.catalogue.keys().map(String::as_str).collect();
                return ToolOutput::failed(fill(
                    UNKNOWN_SKILL,
                    &[("name", &input.name), ("names", &names.join(", "))],
                ));
            }
            match tokio::fs::read_to_string(self.file_of(&name)).await {
                Ok(text) => ToolOutput::ok(ctx.truncate(text)),
                Err(e) => ToolOutput::failed(format!("[read_skill: {name}: {e}]")),
            }
        })
    }
}

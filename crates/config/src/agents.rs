//! `[agents.<name>]`: the agents `ask_agent` hands a task to — each a Cairn agent profile run
//! in-process with its own model, permission mode and tools.

use std::collections::BTreeMap;

use serde::Deserialize;
use toml::Spanned;

use crate::locate::Locator;
use crate::provider::ProviderConfig;
use crate::ConfigError;

/// One agent as configured.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AgentProfile {
    /// What it is for, as the asking model reads it.
    pub description: Option<String>,
    /// `(provider, model)`; `None`: the default model.
    pub model: Option<(String, String)>,
    /// Whether its calls run without asking; `None`: as the asking agent's.
    pub yolo: Option<bool>,
    /// The tools it may use, by name; `None`: the default ones.
    pub tools: Option<Vec<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawProfile {
    description: Option<String>,
    model: Option<Spanned<String>>,
    yolo: Option<bool>,
    tools: Option<Vec<String>>,
}

/// The profiles, their names and models checked.
pub(crate) fn resolve(
    raw: BTreeMap<String, RawProfile>,
    at: &Locator<'_>,
    providers: &BTreeMap<String, ProviderConfig>,
) -> Result<BTreeMap<String, AgentProfile>, ConfigError> {
    let mut profiles = BTreeMap::new();
    for (name, raw) in raw {
        let valid = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if !valid {
            return Err(at.error_at_line(
                1,
                format!("`agents.{name}`: an agent's name is letters, digits, - and _"),
            ));
        }
        let model = match &raw.model {
            Some(model) => Some(at.model_ref(model, &format!("agents.{name}.model"), providers)?),
            None => None,
        };
        profiles.insert(
            name,
            AgentProfile {
                description: raw
                    .description
                    .map(|d| d.trim().to_owned())
                    .filter(|d| !d.is_empty()),
                model,
                yolo: raw.yolo,
                tools: raw.tools,
            },
        );
    }
    Ok(profiles)
}

#[cfg(test)]
mod tests {
    use crate::Config;

    fn parse(text: &str) -> Result<Config, crate::ConfigError> {
        Config::parse(text, std::path::Path::new("config.toml"), |_| None)
    }

    #[test]
    fn profiles_are_read_with_their_model_checked() -> Result<(), crate::ConfigError> {
        let config = parse(
            "[providers.mock]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"\n\n\
             [agents.reviewer]\ndescription = \"Reviews a change\"\nmodel = \"mock/m1\"\nyolo = false\ntools = [\"read_file\"]\n\n\
             [agents.scout]\n",
        )?;
        let reviewer = &config.agent_profiles["reviewer"];
        assert_eq!(reviewer.description.as_deref(), Some("Reviews a change"));
        assert_eq!(reviewer.model, Some(("mock".into(), "m1".into())));
        assert_eq!(reviewer.yolo, Some(false));
        assert_eq!(
            reviewer.tools.as_deref(),
            Some(&["read_file".to_owned()][..])
        );
        assert_eq!(
            config.agent_profiles["scout"],
            crate::AgentProfile::default()
        );
        let unknown = parse("[agents.x]\nmodel = \"nowhere/m\"\n");
        assert!(
            matches!(&unknown, Err(e) if e.to_string().contains("`agents.x.model` names provider \"nowhere\"")),
            "{unknown:?}"
        );
        Ok(())
    }
}

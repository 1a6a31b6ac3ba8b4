//! Reading `config.toml` into a resolved [`Config`]: the raw shape parsed, `${ENV_NAME}` references
//! expanded, defaults applied and every value checked, one section at a time. Every error names
//! the file line and the key.

use std::collections::BTreeMap;
use std::path::Path;

use cairn_protocol::settings::Language;

use crate::file::{AgentConfig, ApiAgent, Config, SourceConfig, VoiceConfig, DEFAULT_PET_SHORTCUT};
use crate::locate::Locator;
use crate::provider::{ProviderConfig, ProviderKind};
use crate::raw::{
    RawAgent, RawApi, RawConfig, RawModels, RawPet, RawProvider, RawSource, RawUi, RawVoice,
};
use crate::secret::Secret;
use crate::ConfigError;

impl Config {
    /// Reads the config file at `path`. A missing file is the default config (`Ok(None)` is never
    /// returned for a file that exists).
    pub fn load(
        path: &Path,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<Self>, ConfigError> {
        match std::fs::read_to_string(path) {
            Ok(text) => Self::parse(&text, path, env).map(Some),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(ConfigError::io(path, e)),
        }
    }

    /// Parses config text; `path` only names the file in errors.
    pub fn parse(
        text: &str,
        path: &Path,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, ConfigError> {
        let at = Locator::new(text, path);
        let raw: RawConfig = toml::from_str(text)
            .map_err(|e| crate::errors::toml_error(text, path, e.message(), e.span()))?;

        let providers = providers(raw.providers, &at, &env)?;
        let (model, agent) = match raw.agent {
            Some(mut a) => (a.model.take(), agent(a)),
            None => (None, AgentConfig::default()),
        };
        let api_keys = api_keys(raw.api.as_ref(), &at, &env)?;
        let mcp_servers = raw.mcp.unwrap_or_default().resolve(&at, &env)?;
        let agent_profiles = crate::agents::resolve(raw.agents, &at, &providers)?;
        let lsp = raw.lsp.unwrap_or_default().resolve(&at, &env)?;
        let default_model = match model {
            Some(model) => Some(at.model_ref(&model, "agent.model", &providers)?),
            None => None,
        };
        let pet_shortcut = pet_shortcut(raw.pet, &at)?;
        let ui_language = ui_language(raw.ui.as_ref(), &at)?;
        let slot = |pick: fn(&RawModels) -> Option<&toml::Spanned<String>>, key| {
            raw.models
                .as_ref()
                .and_then(pick)
                .map(|model| at.model_ref(model, key, &providers))
                .transpose()
        };
        let summary_model = slot(|m| m.summary.as_ref(), "models.summary")?;
        let evolution_model = slot(|m| m.evolution.as_ref(), "models.evolution")?;
        let models_index = models_index(raw.models, &at)?;
        Ok(Self {
            models_index,
            summary_model,
            evolution_model,
            api_port: raw
                .api
                .as_ref()
                .and_then(|a| a.port)
                .filter(|port| *port != 0),
            api_keys,
            api_agent: raw
                .api
                .as_ref()
                .map_or_else(ApiAgent::default, |a| ApiAgent {
                    tools: a.agent_tools.clone(),
                    yolo: a.agent_yolo.unwrap_or(false),
                }),
            mcp_servers,
            agent_profiles,
            lsp,
            default_model,
            providers,
            pet_shortcut,
            log_level: raw.log.and_then(|l| l.level).unwrap_or_default(),
            memory_summaries: raw
                .memory
                .as_ref()
                .and_then(|m| m.summaries)
                .unwrap_or(false),
            memory_evolution: raw
                .memory
                .as_ref()
                .and_then(|m| m.evolution)
                .unwrap_or(true),
            memory_model_policies: raw
                .memory
                .as_ref()
                .and_then(|m| m.model_policies)
                .unwrap_or(false),
            memory_embedder: raw
                .memory
                .as_ref()
                .and_then(|m| m.embedder)
                .unwrap_or_default(),
            memory_dream: raw.memory.as_ref().and_then(|m| m.dream).unwrap_or(true),
            agent,
            auto_sync: raw.sync.and_then(|s| s.auto).unwrap_or(true),
            theme: raw.ui.as_ref().and_then(|u| u.theme).unwrap_or_default(),
            language: ui_language,
            launch: raw.ui.as_ref().and_then(|u| u.launch).unwrap_or_default(),
            voice: raw.voice.map_or_else(VoiceConfig::default, voice),
            sources: sources(raw.sources),
        })
    }
}

/// `[providers.<name>]`: each one's address and key expanded and checked.
fn providers(
    raw: BTreeMap<String, RawProvider>,
    at: &Locator<'_>,
    env: &impl Fn(&str) -> Option<String>,
) -> Result<BTreeMap<String, ProviderConfig>, ConfigError> {
    let mut providers = BTreeMap::new();
    for (name, raw) in raw {
        let kind = raw.kind.unwrap_or(ProviderKind::Openai);
        let base_url = match raw.base_url {
            Some(url) => {
                let value = at.expand(&url, &format!("providers.{name}.base_url"), env)?;
                if !(value.starts_with("http://") || value.starts_with("https://")) {
                    return Err(at.error(
                        url.span(),
                        format!(
                            "`providers.{name}.base_url` must start with http:// or https://{}",
                            crate::errors::scheme_hint(&value)
                        ),
                    ));
                }
                value.trim_end_matches('/').to_owned()
            }
            None => kind.default_base_url().to_owned(),
        };
        let api_key = match raw.api_key {
            Some(key) => Some(Secret::new(at.expand(
                &key,
                &format!("providers.{name}.api_key"),
                env,
            )?)),
            None => None,
        };
        if raw.parallel == Some(0) {
            return Err(at.error_at_line(
                at.line_of_key(&format!("providers.{name}")),
                format!("`providers.{name}.parallel` must be at least 1"),
            ));
        }
        providers.insert(
            name,
            ProviderConfig {
                kind,
                base_url,
                api_key,
                models: raw.models,
                parallel: raw.parallel,
            },
        );
    }
    Ok(providers)
}

/// `[agent]` with the defaults filled in (its `model` is checked with the providers).
fn agent(a: RawAgent) -> AgentConfig {
    let defaults = AgentConfig::default();
    AgentConfig {
        yolo: a.yolo.unwrap_or(defaults.yolo),
        guard_folder: a.guard_folder.unwrap_or(defaults.guard_folder),
        workspace: a.workspace.filter(|w| !w.trim().is_empty()),
        bash_tool: a.bash_tool.unwrap_or(defaults.bash_tool),
        edit_tools: a.edit_tools.unwrap_or(defaults.edit_tools),
        ask_user_tool: a.ask_user_tool.unwrap_or(defaults.ask_user_tool),
        save_answer_tool: a.save_answer_tool.unwrap_or(defaults.save_answer_tool),
        fetch_content_tool: a.fetch_content_tool.unwrap_or(defaults.fetch_content_tool),
        unload_models: a.unload_models.unwrap_or(defaults.unload_models),
        search_memory_tool: a.search_memory_tool.unwrap_or(defaults.search_memory_tool),
        fetch_allow_hosts: a
            .fetch_allow_hosts
            .iter()
            .map(|h| h.trim().to_lowercase())
            .filter(|h| !h.is_empty())
            .collect(),
        tools: a.tools,
        skills_dir: a.skills_dir,
        max_steps: a.max_steps.unwrap_or(defaults.max_steps).max(1),
        wall_seconds: a.wall_seconds,
        output_bytes: a.output_bytes,
        completion_tokens: a.completion_tokens,
    }
}

/// `[api] keys`, expanded; a short one is refused.
fn api_keys(
    api: Option<&RawApi>,
    at: &Locator<'_>,
    env: &impl Fn(&str) -> Option<String>,
) -> Result<Vec<Secret>, ConfigError> {
    let mut api_keys = Vec::new();
    for key in api.iter().flat_map(|a| &a.keys) {
        let value = at.expand(key, "api.keys", env)?;
        if value.trim().len() < 16 {
            return Err(at.error(
                key.span(),
                "`api.keys` entries must be at least 16 characters: a short key is guessable"
                    .to_owned(),
            ));
        }
        api_keys.push(Secret::new(value.trim()));
    }
    Ok(api_keys)
}

/// `[pet] shortcut`, or the default one.
fn pet_shortcut(pet: Option<RawPet>, at: &Locator<'_>) -> Result<String, ConfigError> {
    match pet.and_then(|p| p.shortcut) {
        Some(shortcut) if shortcut.get_ref().trim().is_empty() => {
            Err(at.error(shortcut.span(), "`pet.shortcut` must not be empty".into()))
        }
        Some(shortcut) => Ok(shortcut.into_inner()),
        None => Ok(DEFAULT_PET_SHORTCUT.to_owned()),
    }
}

/// `[ui] language`, one of [`Language`]'s names in any case; English when unset.
fn ui_language(ui: Option<&RawUi>, at: &Locator<'_>) -> Result<Language, ConfigError> {
    let Some(code) = ui.and_then(|u| u.language.as_ref()) else {
        return Ok(Language::default());
    };
    match Language::ALL
        .iter()
        .find(|l| l.as_str().eq_ignore_ascii_case(code.get_ref()))
    {
        Some(known) => Ok(*known),
        None => {
            let names: Vec<&str> = Language::ALL.iter().map(|l| l.as_str()).collect();
            Err(at.error(
                code.span(),
                format!(
                    "`ui.language` must be one of {}, got {:?}",
                    names.join(", "),
                    code.get_ref()
                ),
            ))
        }
    }
}

/// `[models] index`, which must be an http(s) address.
fn models_index(
    models: Option<RawModels>,
    at: &Locator<'_>,
) -> Result<Option<String>, ConfigError> {
    let Some(index) = models.and_then(|m| m.index) else {
        return Ok(None);
    };
    let url = index.get_ref().trim();
    if !(url.starts_with("https://") || url.starts_with("http://")) {
        return Err(at.error(
            index.span(),
            format!(
                "`models.index` must be an http(s) address{}",
                crate::errors::scheme_hint(url)
            ),
        ));
    }
    Ok(Some(url.to_owned()))
}

/// `[voice]` with the defaults filled in.
fn voice(v: RawVoice) -> VoiceConfig {
    let d = VoiceConfig::default();
    VoiceConfig {
        model: v.model.unwrap_or(d.model),
        language: v.language.unwrap_or(d.language),
        input: v.input.unwrap_or(d.input),
        device: v.device,
    }
}

/// `[sources.<name>]`, enabled unless said otherwise.
fn sources(raw: BTreeMap<String, RawSource>) -> BTreeMap<String, SourceConfig> {
    raw.into_iter()
        .map(|(name, s)| {
            (
                name,
                SourceConfig {
                    path: s.path,
                    enabled: s.enabled.unwrap_or(true),
                },
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{LaunchMode, LogLevel, MemoryEmbedder, Theme};

    fn no_env(_: &str) -> Option<String> {
        None
    }

    fn parse(text: &str) -> Result<Config, ConfigError> {
        Config::parse(text, Path::new("/home/ada/.cairn/config.toml"), no_env)
    }

    fn error_text(text: &str) -> String {
        match parse(text) {
            Ok(config) => format!("unexpectedly valid: {config:?}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn an_empty_file_is_the_default_config() -> Result<(), ConfigError> {
        let config = parse("")?;
        assert_eq!(config.api_port, None);
        assert_eq!(config.default_model, None);
        assert_eq!(config.pet_shortcut, DEFAULT_PET_SHORTCUT);
        assert_eq!(config.log_level, LogLevel::Info);
        assert_eq!(
            config,
            Config::default(),
            "no file and an empty file mean the same"
        );
        Ok(())
    }

    #[test]
    fn a_full_config_resolves_with_env_references() -> Result<(), ConfigError> {
        let text = r#"
[api]
port = 18990

[agent]
model = "local/qwen2.5"

[providers.local]
kind = "openai"
base_url = "http://127.0.0.1:${PORT}/v1/"
api_key = "${LOCAL_KEY}"
models = ["qwen2.5", "smollm2"]

[providers.claude]
kind = "anthropic"

[pet]
shortcut = "Alt+Space"

[log]
level = "debug"

[memory]
summaries = true
evolution = false
model_policies = true
embedder = "all-minilm-l6-v2"
dream = false

[ui]
theme = "dark"
language = "zh-cn"
launch = "pet"
"#;
        let env = |name: &str| match name {
            "PORT" => Some("8080".to_owned()),
            "LOCAL_KEY" => Some("sk-local".to_owned()),
            _ => None,
        };
        let config = Config::parse(text, Path::new("c.toml"), env)?;
        assert_eq!(config.api_port, Some(18990));
        assert_eq!(
            config.default_model,
            Some(("local".to_owned(), "qwen2.5".to_owned()))
        );
        let local = &config.providers["local"];
        assert_eq!(local.base_url, "http://127.0.0.1:8080/v1");
        assert_eq!(local.api_key.as_ref().map(Secret::expose), Some("sk-local"));
        assert_eq!(local.models, vec!["qwen2.5", "smollm2"]);
        let claude = &config.providers["claude"];
        assert_eq!(claude.kind, ProviderKind::Anthropic);
        assert_eq!(claude.base_url, "https://api.anthropic.com");
        assert_eq!(config.pet_shortcut, "Alt+Space");
        assert_eq!(config.log_level, LogLevel::Debug);
        assert!(config.memory_summaries);
        assert!(!config.memory_evolution);
        assert!(config.memory_model_policies);
        assert_eq!(config.memory_embedder, MemoryEmbedder::English);
        assert!(!config.memory_dream);
        assert!(
            !config.multilingual_memory(|| true),
            "asked for English, though the app and its memories speak Chinese"
        );
        assert_eq!(config.theme, Theme::Dark);
        assert_eq!(config.language, Language::SimplifiedChinese);
        assert_eq!(config.launch, LaunchMode::Pet);
        Ok(())
    }

    #[test]
    fn an_unknown_language_says_which_ones_exist() {
        let err = error_text("[ui]\nlanguage = \"klingon\"\n");
        assert!(err.contains(":2:"), "{err}");
        assert!(err.contains("must be one of en, zh-CN"), "{err}");
    }

    #[test]
    fn an_unknown_key_names_the_key_and_the_line() {
        let err = error_text("[api]\nport = 1\n\n[agent]\nmodle = \"x/y\"\n");
        assert!(err.starts_with("/home/ada/.cairn/config.toml:5:"), "{err}");
        assert!(err.contains("unknown field `modle`"), "{err}");
    }

    #[test]
    fn a_bad_value_names_the_key_and_the_line() {
        let err = error_text("[api]\nport = 70000\n");
        assert!(err.contains("config.toml:2:"), "{err}");

        let err = error_text("[providers.x]\nkind = \"gemini\"\n");
        assert!(err.contains("config.toml:2:"), "{err}");
        assert!(err.contains("gemini"), "{err}");

        let err = error_text("[providers.x]\nbase_url = \"ftp://host\"\n");
        assert!(err.contains("config.toml:2:"), "{err}");
        assert!(err.contains("`providers.x.base_url`"), "{err}");

        let err = error_text("[log]\nlevel = \"loud\"\n");
        assert!(err.contains("config.toml:2:"), "{err}");

        let err = error_text("[ui]\ntheme = \"purple\"\n");
        assert!(err.contains("config.toml:2:"), "{err}");
        let err = error_text("[ui]\nfont = \"big\"\n");
        assert!(err.contains("unknown field `font`"), "{err}");
    }

    #[test]
    fn a_missing_environment_variable_is_an_error_not_an_empty_key() {
        let err = error_text("[providers.openai]\n\napi_key = \"${OPENAI_API_KEY}\"\n");
        assert!(err.contains("config.toml:3:"), "{err}");
        assert!(err.contains("`providers.openai.api_key`"), "{err}");
        assert!(
            err.contains("environment variable OPENAI_API_KEY is not set"),
            "{err}"
        );
    }

    #[test]
    fn the_default_model_must_name_a_configured_provider() {
        let err = error_text("[agent]\nmodel = \"openai/gpt-4o\"\n");
        assert!(err.contains("config.toml:2:"), "{err}");
        assert!(err.contains("no providers are configured"), "{err}");

        let err = error_text("[agent]\nmodel = \"gpt-4o\"\n");
        assert!(err.contains("provider/model"), "{err}");
    }

    #[test]
    fn a_syntax_error_names_the_line() {
        let err = error_text("[api]\nport = \n");
        assert!(err.contains("config.toml:2:"), "{err}");
    }

    #[test]
    fn secrets_never_show_in_debug_output() -> Result<(), ConfigError> {
        let env = |_: &str| Some("sk-very-secret".to_owned());
        let config = Config::parse(
            "[providers.o]\napi_key = \"${K}\"\n",
            Path::new("c.toml"),
            env,
        )?;
        let debug = format!("{config:?}");
        assert!(!debug.contains("sk-very-secret"), "{debug}");
        Ok(())
    }

    #[test]
    fn the_models_index_is_an_address() -> Result<(), ConfigError> {
        assert_eq!(parse("")?.models_index, None);
        let config = parse("[models]\nindex = \"https://mirror.example/simple\"\n")?;
        assert_eq!(
            config.models_index.as_deref(),
            Some("https://mirror.example/simple")
        );
        let error = error_text("[models]\nindex = \"mirror.example\"\n");
        assert!(
            error.contains("`models.index` must be an http(s) address"),
            "{error}"
        );
        Ok(())
    }

    #[test]
    fn the_background_model_slots_name_configured_models() -> Result<(), ConfigError> {
        assert_eq!(parse("")?.summary_model, None);
        let config = parse(
            "[models]\nsummary = \"local/qwen2.5-0.5b\"\nevolution = \"srv/big\"\n\n[providers.srv]\nbase_url = \"http://127.0.0.1:9/v1\"\n",
        )?;
        assert_eq!(
            config.summary_model,
            Some(("local".into(), "qwen2.5-0.5b".into()))
        );
        assert_eq!(config.evolution_model, Some(("srv".into(), "big".into())));
        let error = error_text("[models]\nsummary = \"nowhere/m\"\n");
        assert!(
            error.contains("config.toml:2") && error.contains("nowhere"),
            "{error}"
        );
        Ok(())
    }

    #[test]
    fn a_missing_file_is_no_config() -> Result<(), ConfigError> {
        let dir = tempfile::tempdir().map_err(|e| ConfigError::io("tmp", e))?;
        assert_eq!(Config::load(&dir.path().join("none.toml"), no_env)?, None);
        Ok(())
    }
}

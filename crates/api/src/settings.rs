//! The settings operations: what the config says (never a key's value), changes written back into
//! `config.toml` key by key (the rest of the file kept as written, nothing written unless the result
//! is valid), a real connection test per provider, and a redacted diagnostic report.

use std::path::PathBuf;
use std::time::{SystemTime, UNIX_EPOCH};

use cairn_config::{
    redact_config_text, update_config_file, Config, ConfigEdit, EditValue, ProviderConfig,
    ProviderKind, BUILTIN_LOCAL_PROVIDER,
};
use cairn_llm::{Anthropic, OpenAiCompatible};
use cairn_protocol::{ConnectionTest, RuntimeInfo};

use crate::{Cairn, Error};

pub use cairn_protocol::settings::{
    AgentInput, AppearanceInput, ModelSlot, ProviderInput, ProviderSettings, Settings, SlotSetting,
    VoiceInput, VoiceModelInfo,
};

fn bad(message: impl Into<String>) -> Error {
    Error::NoModel(message.into())
}

fn one_of(value: &str, allowed: &[&str], what: &str) -> Result<(), Error> {
    if allowed.contains(&value) {
        Ok(())
    } else {
        Err(bad(format!(
            "{what} must be one of {}, got {value:?}",
            allowed.join(", ")
        )))
    }
}

fn text(value: &str) -> EditValue {
    EditValue::String(value.to_owned())
}

impl Cairn {
    /// The settings, from the config file.
    pub fn settings(&self) -> Settings {
        // What runs (the config before an edit with an error, if any), and the file's error.
        let (config, config_error) = match self.config_now() {
            Ok((config, error)) => (config, error.map(|e| e.to_string())),
            Err(e) => (Config::default(), Some(e.to_string())),
        };
        Settings {
            config_file: self.home().config_file().display().to_string(),
            config_error,
            providers: config
                .providers
                .iter()
                .map(|(name, p)| ProviderSettings {
                    name: name.clone(),
                    kind: p.kind,
                    base_url: p.base_url.clone(),
                    api_key_set: p.api_key.is_some(),
                    models: p.models.clone(),
                })
                .collect(),
            default_model: config.default_model_name(),
            voice_model: config.voice.model.clone(),
            voice_language: config.voice.language.clone(),
            voice_input: config.voice.input.clone(),
            voice_models: self
                .voice_models()
                .into_iter()
                .map(|m| VoiceModelInfo {
                    name: m.record.name,
                    multilingual: m.record.multilingual,
                    bytes: m.record.bytes,
                })
                .collect(),
            theme: config.theme,
            pet_shortcut: config.pet_shortcut.clone(),
            log_level: config.log_level,
            language: config.language,
            embedding_model: cairn_embed::MODEL_NAME.to_owned(),
            embedding_installed: self
                .embedding_model_dir()
                .join("model.safetensors")
                .exists(),
            launch: config.launch,
            start_at_login: self
                .autostart_entry()
                .is_some_and(|path| cairn_config::autostart::is_enabled(&path)),
            mcp_servers: self.mcp_server_settings(),
            slots: ModelSlot::ALL
                .into_iter()
                .map(|slot| SlotSetting {
                    slot,
                    model: match slot {
                        ModelSlot::Summary => config.summary_model.as_ref(),
                        ModelSlot::Evolution => config.evolution_model.as_ref(),
                    }
                    .map(|(provider, model)| format!("{provider}/{model}")),
                    in_use: self
                        .slot_model(&config, slot)
                        .or_else(|| config.default_model_name()),
                })
                .collect(),
            agent: AgentInput {
                guard_folder: config.agent.guard_folder,
                ask_always: !config.agent.yolo,
                workspace: self.workspace().display().to_string(),
            },
        }
    }

    /// How far the agent goes without asking, and where new tasks work (an existing folder).
    pub fn save_agent(&self, input: AgentInput) -> Result<(), Error> {
        let workspace = self.checked_folder(&input.workspace)?;
        self.update_config(&[
            ConfigEdit::set(
                &["agent", "guard_folder"],
                EditValue::Bool(input.guard_folder),
            ),
            ConfigEdit::set(&["agent", "yolo"], EditValue::Bool(!input.ask_always)),
            ConfigEdit::set(
                &["agent", "workspace"],
                text(&workspace.display().to_string()),
            ),
        ])
    }

    /// Where the login entry lives (`None` when the environment names no home).
    fn autostart_entry(&self) -> Option<std::path::PathBuf> {
        let env = self.env.clone();
        cairn_config::autostart::entry_path(move |name| env(name))
    }

    /// Starts `program` at login, or stops doing so.
    pub fn set_start_at_login(&self, on: bool, program: &std::path::Path) -> Result<(), Error> {
        let path = self.autostart_entry().ok_or_else(|| {
            bad("neither XDG_CONFIG_HOME nor HOME is set, so there is no autostart folder")
        })?;
        if on {
            cairn_config::autostart::enable(&path, program)?;
        } else {
            cairn_config::autostart::disable(&path)?;
        }
        Ok(())
    }

    /// Writes `edits` into the config file when the result loads (with this environment).
    pub(crate) fn update_config(&self, edits: &[ConfigEdit]) -> Result<(), Error> {
        let path = self.home().config_file().to_path_buf();
        let env = self.env.clone();
        update_config_file(&path, edits, |text| {
            Config::parse(text, &path, move |name| env(name)).map(|_| ())
        })?;
        Ok(())
    }

    /// Adds a provider, or replaces the settings of the one with that name.
    pub fn save_provider(&self, input: ProviderInput) -> Result<(), Error> {
        let name = input.name.trim();
        let valid = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if !valid {
            return Err(bad(
                "a provider's name is letters, digits, - and _ (e.g. openai, local)",
            ));
        }
        one_of(
            input.kind.as_str(),
            &["openai", "anthropic", "ollama"],
            "the provider kind",
        )?;
        let key = |k: &str| ["providers".to_owned(), name.to_owned(), k.to_owned()];
        let edit = |k: &str, value: Option<EditValue>| ConfigEdit {
            path: key(k).to_vec(),
            value,
        };
        let base_url = input.base_url.trim();
        if let Some(problem) = cairn_protocol::base_url_problem(base_url) {
            return Err(bad(problem));
        }
        let models: Vec<String> = input
            .models
            .iter()
            .map(|m| m.trim().to_owned())
            .filter(|m| !m.is_empty())
            .collect();
        let mut edits = vec![
            edit("kind", Some(text(input.kind.as_str()))),
            edit("base_url", (!base_url.is_empty()).then(|| text(base_url))),
            edit("models", Some(EditValue::Strings(models))),
        ];
        let api_key = input.api_key.trim();
        if input.clear_key {
            edits.push(edit("api_key", None));
        } else if !api_key.is_empty() {
            edits.push(edit("api_key", Some(text(api_key))));
        }
        self.update_config(&edits)
    }

    /// Removes a provider (and the default model, when it was this provider's).
    pub fn remove_provider(&self, name: &str) -> Result<(), Error> {
        let config = self.load_config()?;
        if !config.providers.contains_key(name) {
            return Err(Error::NotFound(format!("no provider named {name:?}")));
        }
        let mut edits = vec![ConfigEdit::remove(&["providers", name])];
        if config
            .default_model
            .as_ref()
            .is_some_and(|(provider, _)| provider == name)
        {
            edits.push(ConfigEdit::remove(&["agent", "model"]));
        }
        self.update_config(&edits)
    }

    /// Makes `provider/model` the chat's default (adding the model to the provider's list).
    pub fn set_default_model(&self, provider: &str, model: &str) -> Result<(), Error> {
        let config = self.load_config()?;
        let model = model.trim();
        if model.is_empty() {
            return Err(bad("name the model"));
        }
        let set_default =
            ConfigEdit::set(&["agent", "model"], text(&format!("{provider}/{model}")));
        let Some(configured) = self.provider_for(&config, provider, model)? else {
            return self.update_config(&[set_default]);
        };
        let mut edits = vec![set_default];
        if !configured.models.iter().any(|m| m == model) {
            let mut models = configured.models.clone();
            models.push(model.to_owned());
            edits.push(ConfigEdit::set(
                &["providers", provider, "models"],
                EditValue::Strings(models),
            ));
        }
        self.update_config(&edits)
    }

    /// Sets a background slot's model (`provider/model`, which must resolve), or with `None`
    /// gives the slot its default back.
    pub fn set_slot_model(&self, slot: ModelSlot, model: Option<&str>) -> Result<(), Error> {
        let key = ["models", slot.key()];
        let Some(model) = model.map(str::trim).filter(|m| !m.is_empty()) else {
            return self.update_config(&[ConfigEdit::remove(&key)]);
        };
        let config = self.load_config()?;
        let Some((provider, id)) = model.split_once('/') else {
            return Err(bad("write the model as provider/model"));
        };
        self.provider_for(&config, provider, id)?;
        self.update_config(&[ConfigEdit::set(&key, text(model))])
    }

    /// The configured provider `provider` names; `None` for Cairn's own models, which need no
    /// provider table (`model` must then be a catalogue name that is installed). An error when
    /// there is no such provider.
    fn provider_for<'c>(
        &self,
        config: &'c Config,
        provider: &str,
        model: &str,
    ) -> Result<Option<&'c ProviderConfig>, Error> {
        match config.providers.get(provider) {
            Some(configured) => Ok(Some(configured)),
            None if provider == BUILTIN_LOCAL_PROVIDER => {
                self.local_provider(model)?;
                Ok(None)
            }
            None => Err(Error::NotFound(format!("no provider named {provider:?}"))),
        }
    }

    /// Voice: the whisper model, the language, the input.
    pub fn save_voice(&self, input: VoiceInput) -> Result<(), Error> {
        let language = input.language.trim();
        let valid_language = language == "auto"
            || (2..=3).contains(&language.len())
                && language.chars().all(|c| c.is_ascii_lowercase());
        if !valid_language {
            return Err(bad("the language is auto or a code such as en, fr, zh"));
        }
        let source = input.input.trim();
        if source.is_empty() {
            return Err(bad("the input is microphone or a WAV file's path"));
        }
        if source != "microphone" && !std::path::Path::new(source).is_file() {
            return Err(bad(format!("no WAV file at {source}")));
        }
        let mut edits = vec![
            ConfigEdit::set(&["voice", "language"], text(language)),
            ConfigEdit::set(&["voice", "input"], text(source)),
        ];
        if !input.model.trim().is_empty() {
            edits.push(ConfigEdit::set(
                &["voice", "model"],
                text(input.model.trim()),
            ));
        }
        self.update_config(&edits)
    }

    /// Appearance and behaviour: the theme, the pet's shortcut, the log level.
    pub fn save_appearance(&self, input: AppearanceInput) -> Result<(), Error> {
        let shortcut = input.pet_shortcut.trim();
        if shortcut.is_empty() {
            return Err(bad("the pet shortcut must not be empty"));
        }
        let mut edits = vec![
            ConfigEdit::set(&["ui", "theme"], text(input.theme.as_str())),
            ConfigEdit::set(&["pet", "shortcut"], text(shortcut)),
            ConfigEdit::set(&["log", "level"], text(input.log_level.as_str())),
        ];
        if let Some(language) = input.language {
            edits.push(ConfigEdit::set(
                &["ui", "language"],
                text(language.as_str()),
            ));
        }
        if let Some(launch) = input.launch {
            edits.push(ConfigEdit::set(&["ui", "launch"], text(launch.as_str())));
        }
        self.update_config(&edits)?;
        // The app's language picks the memory's embedder by default: follow it now.
        self.follow_embedder();
        Ok(())
    }

    /// Calls the provider: lists its models (OpenAI-compatible and Ollama), or asks its first
    /// model for one token (Anthropic, which lists none here).
    pub async fn test_provider(&self, name: &str) -> Result<ConnectionTest, Error> {
        let config = self.load_config()?;
        let Some(provider) = config.providers.get(name) else {
            return Err(Error::NotFound(format!("no provider named {name:?}")));
        };
        let key = provider.api_key.as_ref().map(|k| k.expose().to_owned());
        let outcome = match provider.kind {
            ProviderKind::Local => {
                let models: Vec<String> = self
                    .local_models()
                    .into_iter()
                    .filter(|m| m.whole)
                    .map(|m| m.name)
                    .collect();
                let message = if models.is_empty() {
                    format!(
                        "no model of Cairn's is installed: install one with `cairn models install {}`",
                        cairn_models::catalog::DEFAULT_MODEL
                    )
                } else {
                    format!("on this device: {}", models.join(", "))
                };
                return Ok(ConnectionTest {
                    ok: !models.is_empty(),
                    models,
                    message,
                });
            }
            ProviderKind::Openai | ProviderKind::Ollama => {
                let base = match provider.kind {
                    ProviderKind::Ollama => format!("{}/v1", provider.base_url),
                    _ => provider.base_url.clone(),
                };
                OpenAiCompatible::new(base, key)
                    .models()
                    .await
                    .map(|models| {
                        let message = format!(
                            "connected: {} model{} listed",
                            models.len(),
                            if models.len() == 1 { "" } else { "s" }
                        );
                        (models, message)
                    })
            }
            ProviderKind::Anthropic => {
                let Some(model) = provider.models.first() else {
                    return Ok(ConnectionTest {
                        ok: false,
                        models: Vec::new(),
                        message: "add a model to this provider to test it".into(),
                    });
                };
                let client = Anthropic::new(provider.base_url.clone(), key);
                let request = cairn_llm::ChatRequest {
                    model: model.clone(),
                    messages: vec![cairn_llm::Message::new(
                        cairn_llm::Role::User,
                        "Reply with OK.",
                    )],
                    tools: Vec::new(),
                    max_tokens: Some(1),
                    tool_choice: Default::default(),
                };
                use cairn_llm::Provider;
                cairn_llm::collect(client.stream(request))
                    .await
                    .map(|_| (Vec::new(), format!("connected: {model} answered")))
            }
        };
        Ok(match outcome {
            Ok((models, message)) => ConnectionTest {
                ok: true,
                models,
                message,
            },
            Err(e) => ConnectionTest {
                ok: false,
                models: Vec::new(),
                message: e.to_string(),
            },
        })
    }

    /// Writes a diagnostic report (version, status, the config with its secrets removed, the
    /// sources, the memory's health) to `<home>/logs/diagnostics-<date>.txt`; returns its path.
    /// Blocking (it reads the sources and checks the database).
    pub async fn export_diagnostics(
        &self,
        serving: Option<&RuntimeInfo>,
    ) -> Result<PathBuf, Error> {
        let status = self.status(serving).await;
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let (year, month, day, hour, minute, second) = civil_time(now);
        let mut report = format!(
            "Cairn diagnostic report\nversion: {}\ncreated: {year:04}-{month:02}-{day:02} {hour:02}:{minute:02}:{second:02} UTC\nos: {} {}\n\n",
            crate::VERSION,
            std::env::consts::OS,
            std::env::consts::ARCH,
        );
        report.push_str("## Status\n");
        report.push_str(&serde_json::to_string_pretty(&status).unwrap_or_default());
        report.push_str("\n\n## Config (secrets removed)\n");
        let config_file = self.home().config_file();
        match std::fs::read_to_string(config_file) {
            Ok(text) => report.push_str(&redact_config_text(&text)),
            Err(e) => report.push_str(&format!("({}: {e})", config_file.display())),
        }
        report.push_str("\n\n## Sources\n");
        report.push_str(&serde_json::to_string_pretty(&self.list_sources()).unwrap_or_default());
        report.push_str("\n\n## Memory health\n");
        match self.memory_health() {
            Ok(health) => {
                report.push_str(&serde_json::to_string_pretty(&health).unwrap_or_default())
            }
            Err(e) => report.push_str(&format!("unavailable: {e}")),
        }
        report.push('\n');
        // Whatever slipped through (a key pasted elsewhere, a token in a server's error), the
        // configured secrets never leave: loading the config told the redactor every one (MCP
        // headers and environment values, `[api] keys`…), and it knows what keys look like.
        if let Ok(config) = self.load_config() {
            for provider in config.providers.values() {
                if let Some(key) = provider.api_key.as_ref().map(|k| k.expose()) {
                    if key.len() >= 4 {
                        report = report.replace(key, "<redacted>");
                    }
                }
            }
        }
        let report = cairn_memory::redact(&report);
        let path = self
            .home()
            .logs_dir()
            .join(format!("diagnostics-{year:04}-{month:02}-{day:02}.txt"));
        cairn_config::write_private_atomically(&path, report.as_bytes())?;
        Ok(path)
    }
}

/// Seconds since the epoch as UTC `(year, month, day, hour, minute, second)`.
fn civil_time(secs: u64) -> (i64, i64, i64, u64, u64, u64) {
    let days = i64::try_from(secs / 86_400).unwrap_or(0);
    let rest = secs % 86_400;
    let (year, month, day) = cairn_protocol::calendar::civil_from_days(days);
    (year, month, day, rest / 3_600, rest % 3_600 / 60, rest % 60)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use cairn_config::{Home, Language, LaunchMode, LogLevel, Theme};
    use cairn_test_support::MockServer;

    use super::*;

    fn cairn(dir: &std::path::Path) -> Cairn {
        Cairn::with_env(
            Home::at(dir),
            Arc::new(|name: &str| (name == "MOCK_KEY").then(|| "sk-from-env-42".to_owned())),
        )
    }

    fn provider(name: &str, base_url: &str, api_key: &str) -> ProviderInput {
        ProviderInput {
            name: name.into(),
            kind: ProviderKind::Openai,
            base_url: base_url.into(),
            api_key: api_key.into(),
            clear_key: false,
            models: Vec::new(),
        }
    }

    #[test]
    fn providers_are_added_defaulted_and_removed() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let cairn = cairn(dir.path());
        std::fs::write(
            dir.path().join("config.toml"),
            "# mine\n[log]\nlevel = \"warn\"\n",
        )?;
        cairn.save_provider(provider("local", "http://127.0.0.1:9/v1", "${MOCK_KEY}"))?;
        cairn.set_default_model("local", "small-model")?;
        let settings = cairn.settings();
        assert_eq!(settings.config_error, None);
        assert_eq!(settings.default_model.as_deref(), Some("local/small-model"));
        assert_eq!(settings.providers.len(), 1);
        assert!(settings.providers[0].api_key_set);
        assert_eq!(settings.providers[0].models, vec!["small-model"]);
        assert_eq!(settings.log_level.as_str(), "warn");
        let text = std::fs::read_to_string(dir.path().join("config.toml"))?;
        assert!(text.starts_with("# mine\n"), "{text}");
        assert!(text.contains("api_key = \"${MOCK_KEY}\""), "{text}");

        // Editing with an empty key keeps the key.
        cairn.save_provider(provider("local", "http://127.0.0.1:10/v1", ""))?;
        let settings = cairn.settings();
        assert!(settings.providers[0].api_key_set);
        assert_eq!(settings.providers[0].base_url, "http://127.0.0.1:10/v1");

        // A key naming an unset variable is refused, and nothing is written.
        let err = cairn.save_provider(provider("other", "", "${NOT_SET}"));
        assert!(err.is_err());
        assert_eq!(cairn.settings().providers.len(), 1);

        cairn.remove_provider("local")?;
        let settings = cairn.settings();
        assert!(settings.providers.is_empty());
        assert_eq!(settings.default_model, None);
        Ok(())
    }

    /// A data home holding the installed models (setup's), when multilingual-e5-small is among
    /// them; without it the test is skipped, unless CI requires the models.
    fn home_with_multilingual_model(
    ) -> Result<Option<tempfile::TempDir>, Box<dyn std::error::Error>> {
        let models = std::path::PathBuf::from(std::env::var("HOME")?).join(".cairn/models");
        if !models
            .join("multilingual-e5-small/e5-small-q4.bin")
            .is_file()
        {
            assert!(
                std::env::var_os("CAIRN_REQUIRE_MODELS").is_none(),
                "multilingual-e5-small is missing: run ./run setup"
            );
            return Ok(None);
        }
        let dir = tempfile::tempdir()?;
        std::os::unix::fs::symlink(&models, dir.path().join("models"))?;
        Ok(Some(dir))
    }

    #[test]
    fn speaking_chinese_switches_the_memory_to_the_multilingual_embedder_at_once(
    ) -> Result<(), Box<dyn std::error::Error>> {
        let Some(dir) = home_with_multilingual_model()? else {
            return Ok(());
        };
        let cairn = cairn(dir.path());
        let store = cairn.memory()?;
        assert_eq!(store.embedder_model().as_deref(), Some("all-MiniLM-L6-v2"));
        let appearance = |language| AppearanceInput {
            theme: Theme::System,
            pet_shortcut: "Alt+Space".into(),
            log_level: LogLevel::Info,
            language: Some(language),
            launch: None,
        };
        cairn.save_appearance(appearance(Language::SimplifiedChinese))?;
        assert_eq!(
            store.embedder_model().as_deref(),
            Some("multilingual-e5-small")
        );
        cairn.save_appearance(appearance(Language::English))?;
        assert_eq!(store.embedder_model().as_deref(), Some("all-MiniLM-L6-v2"));
        Ok(())
    }

    #[test]
    fn memories_written_in_chinese_switch_to_the_multilingual_embedder(
    ) -> Result<(), Box<dyn std::error::Error>> {
        let Some(dir) = home_with_multilingual_model()? else {
            return Ok(());
        };
        let cairn = cairn(dir.path());
        let add = |text: &str| {
            cairn.add_memory(cairn_memory::NewMemory {
                text: text.into(),
                ..cairn_memory::NewMemory::default()
            })
        };
        let model = || cairn.memory().map(|store| store.embedder_model());
        for i in 0..20 {
            add(&format!(
                "The build of service {i} passed after the cache was cleared."
            ))?;
        }
        let chinese = [
            "我的猫叫豆豆，它最喜欢在窗台上晒太阳。",
            "周末我们去西湖边骑自行车了。",
            "我正在学习用 Rust 写命令行工具。",
            "妈妈做的红烧肉是全家最爱吃的菜。",
            "明天上午十点要和产品经理开会讨论新功能。",
            "我每天早上跑步五公里。",
            "这个项目的数据库用的是 SQLite。",
            "我女儿下个月开始学钢琴。",
        ];
        for text in &chinese[..5] {
            add(text)?;
        }
        assert_eq!(
            model()?.as_deref(),
            Some("all-MiniLM-L6-v2"),
            "5 of 25 memories in Chinese: English still"
        );
        for text in &chinese[5..] {
            add(text)?;
        }
        assert_eq!(
            model()?.as_deref(),
            Some("multilingual-e5-small"),
            "8 of 28 memories in Chinese"
        );
        let store = cairn.memory()?;
        store.embed_all_pending()?;
        let answer = cairn.search_memory(cairn_memory::SearchQuery::new("我养了什么宠物？"))?;
        assert!(
            answer
                .result
                .hits
                .first()
                .is_some_and(|h| h.memory.text.contains("豆豆")),
            "{:?}",
            answer
                .result
                .hits
                .iter()
                .map(|h| &h.memory.text)
                .collect::<Vec<_>>()
        );
        for i in 0..30 {
            add(&format!("Deployed release {i} to the staging cluster."))?;
        }
        assert_eq!(
            model()?.as_deref(),
            Some("multilingual-e5-small"),
            "8 of 58: a tenth keeps the multilingual embedder, so it does not flap"
        );
        Ok(())
    }

    #[test]
    fn without_the_multilingual_model_chinese_memories_are_kept_and_it_is_tried_once(
    ) -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let cairn = cairn(dir.path());
        for i in 0..8 {
            cairn.add_memory(cairn_memory::NewMemory {
                text: format!("第{i}次部署在周三上午完成。"),
                ..cairn_memory::NewMemory::default()
            })?;
        }
        assert!(
            cairn
                .multilingual_refused
                .load(std::sync::atomic::Ordering::Relaxed),
            "the missing model is remembered, not looked for again on every memory added"
        );
        assert_eq!(cairn.memory()?.embedder_model(), None);
        let answer = cairn.search_memory(cairn_memory::SearchQuery::new("周三部署"))?;
        assert!(!answer.result.hits.is_empty(), "lexical recall goes on");
        Ok(())
    }

    #[test]
    fn appearance_and_voice_are_validated() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let cairn = cairn(dir.path());
        cairn.save_appearance(AppearanceInput {
            theme: Theme::Dark,
            pet_shortcut: "Alt+Space".into(),
            log_level: LogLevel::Debug,
            language: Some(Language::SimplifiedChinese),
            launch: Some(LaunchMode::Pet),
        })?;
        let settings = cairn.settings();
        assert_eq!(
            (settings.theme.as_str(), settings.pet_shortcut.as_str()),
            ("dark", "Alt+Space")
        );
        assert_eq!(
            (settings.language.as_str(), settings.launch.as_str()),
            ("zh-CN", "pet")
        );
        // A language or a theme Cairn does not know does not even read as a change.
        let appearance = |theme: &str, language: &str| {
            serde_json::from_value::<AppearanceInput>(serde_json::json!({
                "theme": theme, "pet_shortcut": "Alt+Space", "log_level": "debug",
                "language": language,
            }))
        };
        assert!(appearance("dark", "zh-CN").is_ok());
        assert!(appearance("dark", "fr").is_err());
        assert!(appearance("neon", "en").is_err());
        cairn.save_voice(VoiceInput {
            model: "base".into(),
            language: "fr".into(),
            input: "microphone".into(),
        })?;
        assert_eq!(cairn.settings().voice_language, "fr");
        assert!(cairn
            .save_voice(VoiceInput {
                model: String::new(),
                language: "auto".into(),
                input: "/no/such.wav".into(),
            })
            .is_err());
        Ok(())
    }

    #[tokio::test]
    async fn the_report_keeps_mcp_secrets_and_a_misplaced_key_out(
    ) -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let cairn = cairn(dir.path());
        let config_file = cairn.home().config_file().to_path_buf();
        std::fs::write(
            &config_file,
            "[mcp.servers.remote]\ntype = \"streamable_http\"\nurl = \"https://mcp.example/v1?access_token=qtok-5151\"\nheaders = { X-Custom = \"hdr-5252\" }\n\n[mcp.servers.local]\ncommand = \"npx\"\nargs = [\"--token\", \"arg-5353\"]\nenv = { DATABASE = \"env-5454\" }\n",
        )?;
        let report = std::fs::read_to_string(cairn.export_diagnostics(None).await?)?;
        for secret in ["qtok-5151", "hdr-5252", "arg-5353", "env-5454"] {
            assert!(!report.contains(secret), "{secret}: {report}");
        }
        assert!(report.contains("[mcp.servers.remote]"), "{report}");

        // A key where a list belongs: the status's config error names the key, not its value.
        std::fs::write(&config_file, "[api]\nkeys = \"sk-live-5555666677778888\"\n")?;
        let report = std::fs::read_to_string(cairn.export_diagnostics(None).await?)?;
        assert!(!report.contains("5555666677778888"), "{report}");
        assert!(report.contains("`api.keys`"), "{report}");
        Ok(())
    }

    #[tokio::test]
    async fn the_connection_test_lists_models_and_the_report_has_no_key(
    ) -> Result<(), Box<dyn std::error::Error>> {
        let server = MockServer::start(Vec::new()).await?;
        let dir = tempfile::tempdir()?;
        let cairn = cairn(dir.path());
        cairn.save_provider(provider("mock", &server.base_url, "sk-literal-key-77"))?;
        let test = cairn.test_provider("mock").await?;
        assert!(test.ok, "{test:?}");
        assert_eq!(test.models, vec!["small-model", "big-model"]);

        cairn.save_provider(provider("dead", "http://127.0.0.1:9/v1", ""))?;
        let test = cairn.test_provider("dead").await?;
        assert!(!test.ok, "{test:?}");

        let path = cairn.export_diagnostics(None).await?;
        assert!(path.starts_with(dir.path().join("logs")));
        let report = std::fs::read_to_string(&path)?;
        assert!(!report.contains("sk-literal-key-77"), "{report}");
        assert!(report.contains("[providers.mock]"), "{report}");
        assert!(report.contains("## Memory health"), "{report}");
        Ok(())
    }
}

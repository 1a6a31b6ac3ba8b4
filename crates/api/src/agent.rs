//! Building the agent runtime from the config file or from explicit flags.

use std::path::PathBuf;
use std::sync::Arc;

use cairn_agent::{
    AgentError, AgentSettings, AgentStarter, AskAgent, AskableAgent, Budgets, Runtime, SearchMemory,
};
use cairn_config::{Config, ProviderKind, BUILTIN_LOCAL_PROVIDER};
use cairn_llm::{Anthropic, OpenAiCompatible, Provider};
use cairn_protocol::settings::ModelSlot;
use cairn_tools::{
    DeclaredTool, DeclaredToolDef, ModelServer, Toolbox, ToolboxOptions, UnloadModel,
};

use crate::{Cairn, Error};

/// A model picked on the command line; anything left out comes from the config file.
#[derive(Debug, Clone, Default)]
pub struct ModelChoice {
    /// An OpenAI-compatible API root, e.g. `http://127.0.0.1:8080/v1`.
    pub base_url: Option<String>,
    /// A model id, or `provider/model` to pick a configured provider.
    pub model: Option<String>,
    pub api_key: Option<String>,
}

/// A model ready to be asked: its provider, its id, and where it runs (for unload_model).
pub(crate) struct ResolvedModel {
    pub provider: Arc<dyn Provider>,
    pub model: String,
    pub server: ModelServer,
}

/// A memory's background model, asked one request at a time.
struct ModelWriter {
    provider: Arc<dyn Provider>,
    model: String,
}

impl cairn_memory::Writer for ModelWriter {
    fn write(
        &self,
        instructions: &str,
        text: &str,
        max_tokens: u32,
    ) -> Result<String, cairn_memory::MemoryError> {
        let request = cairn_llm::ChatRequest {
            model: self.model.clone(),
            messages: vec![
                cairn_llm::Message::new(cairn_llm::Role::System, instructions),
                cairn_llm::Message::new(cairn_llm::Role::User, text),
            ],
            tools: Vec::new(),
            max_tokens: Some(max_tokens),
            tool_choice: Default::default(),
        };
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| cairn_memory::MemoryError::ModelUnavailable(e.to_string()))?;
        let completion = runtime
            .block_on(async { cairn_llm::collect(self.provider.stream(request)).await })
            .map_err(|e| cairn_memory::MemoryError::ModelFailed(e.to_string()))?;
        Ok(completion.text)
    }
}

/// Who a runtime works for: the person (depth 0), an agent asked at `depth` with its profile, a
/// subagent one started with `task`, or a member of a team.
#[derive(Clone, Default)]
struct Asked {
    depth: usize,
    profile: Option<cairn_config::AgentProfile>,
    /// A subagent: it may not start subagents of its own, and has their step backstop.
    subagent: bool,
    /// A team member: its team tools speak from its seat.
    member: Option<cairn_agent::MemberSeat>,
    /// A caller of the OpenAI-compatible API: only the tools `[api]` grants, and its `yolo`
    /// (subagents and members it starts inherit both).
    api: Option<cairn_config::ApiAgent>,
}

impl Cairn {
    /// The memory's background models and what each writes: the summary model for summaries
    /// when `[memory] summaries` is on, the evolution model for policies when `model_policies`
    /// is (one writer when they are the same model); none when both are off.
    pub(crate) fn memory_writers(
        &self,
    ) -> Vec<(Arc<dyn cairn_memory::Writer>, cairn_memory::WriterUses)> {
        let Ok(config) = self.load_config() else {
            return Vec::new();
        };
        let summary = self.slot_model(&config, ModelSlot::Summary);
        let evolution = self.slot_model(&config, ModelSlot::Evolution);
        let mut writers: Vec<(Option<String>, cairn_memory::WriterUses)> = Vec::new();
        for (model, on, summaries) in [
            (summary, config.memory_summaries, true),
            (evolution, config.memory_model_policies, false),
        ] {
            if !on {
                continue;
            }
            let at = match writers.iter().position(|(m, _)| *m == model) {
                Some(at) => at,
                None => {
                    writers.push((model, cairn_memory::WriterUses::default()));
                    writers.len() - 1
                }
            };
            if summaries {
                writers[at].1.summaries = true;
            } else {
                writers[at].1.policies = true;
            }
        }
        writers
            .into_iter()
            .filter_map(|(model, uses)| Some((self.writer(model)?, uses)))
            .collect()
    }

    /// A writer over `model` (`provider/model`; `None`: the default model), when it resolves.
    pub(crate) fn writer(&self, model: Option<String>) -> Option<Arc<dyn cairn_memory::Writer>> {
        let (provider, model) = self
            .provider(ModelChoice {
                model,
                ..ModelChoice::default()
            })
            .ok()?;
        Some(Arc::new(ModelWriter { provider, model }))
    }

    /// The model of a background slot as `provider/model`, `None` for the default model: the
    /// summary slot is `[models] summary`, else Cairn's own model when it is installed (what the
    /// memory writes about stays on the device), else the default model; the evolution slot is
    /// `[models] evolution`, else the summary slot's.
    pub fn slot_model(&self, config: &cairn_config::Config, slot: ModelSlot) -> Option<String> {
        let named = |m: &Option<(String, String)>| m.as_ref().map(|(p, m)| format!("{p}/{m}"));
        let summary = named(&config.summary_model).or_else(|| {
            self.default_local_model_installed().then(|| {
                format!(
                    "{BUILTIN_LOCAL_PROVIDER}/{}",
                    cairn_models::catalog::DEFAULT_MODEL
                )
            })
        });
        match slot {
            ModelSlot::Summary => summary,
            ModelSlot::Evolution => named(&config.evolution_model).or(summary),
        }
    }

    /// The agent runtime for `choice`, recalling from and capturing into the memory.
    pub fn agent_runtime(
        &self,
        choice: ModelChoice,
        project_root: PathBuf,
    ) -> Result<Runtime, Error> {
        self.build_runtime(choice, project_root, true, Asked::default())
    }

    /// The agent runtime for other programs (the OpenAI-compatible API): the same memory, but its
    /// conversations are the caller's, so none is kept as a task, nobody can be asked, and it has
    /// only the tools `[api] agent_tools` grants (none by default: a key is not a shell).
    pub fn api_runtime(
        &self,
        choice: ModelChoice,
        project_root: PathBuf,
    ) -> Result<Runtime, Error> {
        let grant = self.load_config()?.api_agent;
        let asked = Asked {
            api: Some(grant),
            ..Asked::default()
        };
        Ok(self
            .build_runtime(choice, project_root, false, asked)?
            .one_shot())
    }

    fn build_runtime(
        &self,
        choice: ModelChoice,
        project_root: PathBuf,
        keep_sessions: bool,
        asked: Asked,
    ) -> Result<Runtime, Error> {
        let ResolvedModel {
            provider,
            model,
            server,
        } = self.resolve_model(choice.clone())?;
        let memory = match self.memory() {
            Ok(memory) => Some(memory),
            Err(e) => {
                tracing::warn!("memory is unavailable, the agent runs without it: {e}");
                None
            }
        };
        let config = self.load_config().unwrap_or_default();
        let agent = &config.agent;
        // A small model on this device gets the compact profile: the file and command tools only.
        let compact = provider.on_device();
        let mut settings = AgentSettings::new(provider, model.clone(), project_root);
        settings.compact = compact;
        if compact {
            // About two minutes of writing at a small model's speed on two cores.
            settings.step_max_tokens = 2048;
        }
        settings.sessions = keep_sessions.then(|| self.session_store());
        settings.yolo = agent.yolo;
        settings.guard_folder = agent.guard_folder;
        settings.max_steps = agent.max_steps;
        settings.budgets = Budgets {
            wall_seconds: agent.wall_seconds,
            output_bytes: agent.output_bytes,
            completion_tokens: agent.completion_tokens,
        };
        let skills_dir = match &agent.skills_dir {
            Some(dir) => PathBuf::from(dir),
            None => self.home().root().join("skills"),
        };
        if !compact {
            // The skills Cairn learned join the folder before `read_skill` catalogues it.
            let synced = self
                .memory()
                .and_then(|store| crate::learned_skills::sync_learned_skills(&store, &skills_dir));
            if let Err(e) = synced {
                tracing::warn!(
                    "learned skills not written to {}: {e}",
                    skills_dir.display()
                );
            }
        }
        // Where reads ask first under yolo = false, for read_file and lsp alike.
        let protected = cairn_tools::Protected::defaults(self.home().root());
        settings.tools = Toolbox::new(&ToolboxOptions {
            bash: agent.bash_tool,
            edit_tools: agent.edit_tools,
            ask_user: agent.ask_user_tool && !compact,
            save_answer: agent.save_answer_tool && !compact,
            fetch_content: agent.fetch_content_tool && !compact,
            skills_dir: (!compact).then_some(skills_dir),
            protected: protected.clone(),
            fetch_allow_hosts: agent.fetch_allow_hosts.clone(),
        });
        // The person's own servers, in every profile: they were configured on purpose.
        if let Some(hub) = self.mcp_hub(&config) {
            settings
                .tools
                .add_source(Arc::new(cairn_mcp::HubTools(hub)));
        }
        if !compact {
            if let Some(lsp) = cairn_lsp::Lsp::new(self.lsp_hub(&config)) {
                settings.tools.add(Arc::new(lsp.with_protected(protected)));
            }
        }
        if agent.unload_models && !compact {
            settings
                .tools
                .add(Arc::new(UnloadModel::new(server, model.clone())));
        }
        // The person's agent (not a subagent's, nor a /v1 caller's) sets up scheduled tasks.
        if !compact && !asked.subagent && asked.api.is_none() && asked.member.is_none() {
            settings
                .tools
                .add(Arc::new(crate::schedule_tool::ScheduleTool {
                    store: self.schedules(),
                }));
        }
        if agent.search_memory_tool && !compact {
            settings.tools.add(Arc::new(SearchMemory {
                store: self.session_store(),
            }));
        }
        for (i, raw) in agent.tools.iter().enumerate() {
            let def: DeclaredToolDef = raw.clone().try_into().map_err(|e| {
                Error::DeclaredTool(format!(
                    "{}: agent.tools[{}]: {e}",
                    self.home().config_file().display(),
                    i + 1
                ))
            })?;
            settings.tools.add(Arc::new(DeclaredTool::new(def)));
        }
        if !config.agent_profiles.is_empty() && !compact {
            let root = settings.project_root.clone();
            let tool = self.ask_agent_tool(&config, &root, asked.depth);
            settings.tools.add(Arc::new(tool));
        }
        let capacity = self.capacity(&config, &choice);
        if !compact && !asked.subagent {
            let root = settings.project_root.clone();
            let task = self.task_tool(choice.clone(), root, asked.clone(), capacity.clone());
            settings.tools.add(Arc::new(task));
            settings.tools.add(Arc::new(cairn_tools::JobSend));
        }
        if asked.subagent {
            settings.max_steps = settings.max_steps.min(cairn_agent::SUBAGENT_STEPS);
        }
        settings.capture = asked.depth == 0 && !asked.subagent && asked.member.is_none();
        // Teams: the person's agent leads its task's team; a member may add members of its own.
        let seat = match &asked.member {
            Some(seat) => Some(cairn_agent::Seat::Member(seat.clone())),
            None if asked.depth == 0 && !asked.subagent => Some(cairn_agent::Seat::Lead {
                teams: self.teams.clone(),
                model: model.clone(),
                capacity,
            }),
            None => None,
        };
        if let Some(seat) = seat.filter(|_| !compact) {
            let start =
                self.member_starter(choice.clone(), settings.project_root.clone(), asked.clone());
            for tool in cairn_agent::team_tools(seat.clone(), start) {
                settings.tools.add(tool);
            }
            settings.manages = Some(Arc::new(move |session: &str| seat.manages(session)));
        }
        if let Some(profile) = &asked.profile {
            settings.yolo = profile.yolo.unwrap_or(agent.yolo);
            if let Some(tools) = &profile.tools {
                settings.tools.retain(tools);
            }
        }
        if let Some(grant) = &asked.api {
            settings.tools.restrict(&grant.tools);
            settings.yolo = grant.yolo;
        }
        Ok(Runtime::new(settings, memory))
    }

    /// `ask_agent` over the config's `[agents.*]`, for an agent asked at `depth` (0: the person's
    /// own): each call starts the named agent one level deeper, its calls refused when they would
    /// need someone to approve them (nobody can, inside a call) and its sessions kept in memory
    /// only.
    fn ask_agent_tool(
        &self,
        config: &Config,
        project_root: &std::path::Path,
        depth: usize,
    ) -> AskAgent {
        let agents = config
            .agent_profiles
            .iter()
            .map(|(name, p)| AskableAgent {
                name: name.clone(),
                purpose: p
                    .description
                    .clone()
                    .unwrap_or_else(|| "(no description)".to_owned()),
                model: p.model.as_ref().map_or_else(
                    || "the default model".to_owned(),
                    |(provider, model)| format!("{provider}/{model}"),
                ),
            })
            .collect();
        let (cairn, root) = (self.clone(), project_root.to_path_buf());
        let profiles = config.agent_profiles.clone();
        let start: AgentStarter = Arc::new(move |name: &str| {
            let profile = profiles
                .get(name)
                .cloned()
                .ok_or_else(|| AgentError::Start(format!("no agent named {name:?}")))?;
            let choice = ModelChoice {
                model: profile.model.as_ref().map(|(p, m)| format!("{p}/{m}")),
                ..ModelChoice::default()
            };
            let asked = Asked {
                depth: depth + 1,
                profile: Some(profile),
                subagent: false,
                member: None,
                api: None,
            };
            let runtime = cairn
                .build_runtime(choice, root.clone(), false, asked)
                .map_err(|e| AgentError::Start(e.to_string()))?;
            Ok(runtime.one_shot())
        });
        AskAgent::new(agents, depth, start)
    }

    /// `task`: each call starts a subagent on the same model in the same project, with the same
    /// tools but `task` (for an asked agent: its profile's), kept in memory only; its calls are
    /// refused when they would need someone to approve them (nobody can, inside it).
    fn task_tool(
        &self,
        choice: ModelChoice,
        project_root: PathBuf,
        asked: Asked,
        capacity: Option<cairn_agent::Capacity>,
    ) -> cairn_agent::Task {
        let cairn = self.clone();
        let start: cairn_agent::SubagentStarter = Arc::new(move || {
            let asked = Asked {
                subagent: true,
                member: None,
                ..asked.clone()
            };
            let runtime = cairn
                .build_runtime(choice.clone(), project_root.clone(), false, asked)
                .map_err(|e| AgentError::Start(e.to_string()))?;
            Ok(runtime.one_shot())
        });
        cairn_agent::Task::new(start, capacity)
    }

    /// The capacity of `choice`'s model when its provider says how many requests it answers at
    /// once (`parallel`): one per model for the whole process, so every conversation's subagents
    /// and members share its slots.
    fn capacity(&self, config: &Config, choice: &ModelChoice) -> Option<cairn_agent::Capacity> {
        if choice.base_url.is_some() {
            return None;
        }
        let (provider, model) = self.model_name(config, choice.model.clone()).ok()?;
        let parallel = config.providers.get(&provider)?.parallel? as usize;
        let key = format!("{provider}/{model}");
        let mut all = self.capacities.lock().unwrap_or_else(|e| e.into_inner());
        match all.get(&key) {
            Some(known) if known.parallel == parallel => Some(known.clone()),
            _ => {
                let capacity = cairn_agent::Capacity::new(parallel);
                all.insert(key, capacity.clone());
                Some(capacity)
            }
        }
    }

    /// Starts team members on the same model in the same project, each with the team tools of its
    /// own seat, kept in memory only; their calls are refused when they would need someone to
    /// approve them (nobody can, inside a team).
    fn member_starter(
        &self,
        choice: ModelChoice,
        project_root: PathBuf,
        asked: Asked,
    ) -> cairn_agent::MemberStarter {
        let cairn = self.clone();
        Arc::new(move |seat: cairn_agent::MemberSeat| {
            let asked = Asked {
                member: Some(seat),
                subagent: false,
                ..asked.clone()
            };
            let runtime = cairn
                .build_runtime(choice.clone(), project_root.clone(), false, asked)
                .map_err(|e| AgentError::Start(e.to_string()))?;
            Ok(runtime.one_shot())
        })
    }

    /// The agent's conversations on disk.
    pub fn session_store(&self) -> cairn_agent::SessionStore {
        cairn_agent::SessionStore::new(self.home().data_dir().join("sessions"))
    }

    /// `model` (`provider/model`, a model of the default provider, `local/NAME`; `None`: the
    /// default) as the provider's name and the model's id.
    fn model_name(
        &self,
        config: &Config,
        model: Option<String>,
    ) -> Result<(String, String), Error> {
        Ok(match model {
            Some(model) => match model.split_once('/') {
                Some((provider, id))
                    if config.providers.contains_key(provider)
                        || provider == BUILTIN_LOCAL_PROVIDER =>
                {
                    (provider.to_owned(), id.to_owned())
                }
                _ => match &config.default_model {
                    Some((provider, _)) => (provider.clone(), model),
                    None => (BUILTIN_LOCAL_PROVIDER.to_owned(), model),
                },
            },
            None => match config.default_model.clone() {
                Some(default) => default,
                // Installed, even if damaged: loading it says what is wrong and how to repair it.
                None if self.default_local_model_installed() => (
                    BUILTIN_LOCAL_PROVIDER.to_owned(),
                    cairn_models::catalog::DEFAULT_MODEL.to_owned(),
                ),
                None => return Err(self.no_model()),
            },
        })
    }

    /// `/model NAME`: makes `NAME` (as [`ModelChoice::model`] reads it) the chat's model once it is
    /// known to be usable — the config's default, so the model chip, `/status` and Settings all
    /// show it and the next start keeps it. Returns `provider/model`.
    pub fn choose_model(&self, model: &str) -> Result<String, Error> {
        let model = model.trim();
        if model.is_empty() {
            return Err(Error::NoModel(
                "name the model, e.g. /model provider/model".into(),
            ));
        }
        let config = self.load_config()?;
        let (provider, id) = self.model_name(&config, Some(model.to_owned()))?;
        if !config.providers.contains_key(&provider) && provider != BUILTIN_LOCAL_PROVIDER {
            return Err(Error::NotFound(format!(
                "no provider named {provider:?}: add it in Settings first"
            )));
        }
        self.set_default_model(&provider, &id)?;
        Ok(format!("{provider}/{id}"))
    }

    pub(crate) fn provider(
        &self,
        choice: ModelChoice,
    ) -> Result<(Arc<dyn Provider>, String), Error> {
        self.resolve_model(choice).map(|r| (r.provider, r.model))
    }

    /// The provider, model and model server `choice` names.
    pub(crate) fn resolve_model(&self, choice: ModelChoice) -> Result<ResolvedModel, Error> {
        if let Some(base_url) = choice.base_url {
            let model = choice
                .model
                .ok_or_else(|| Error::NoModel("--base-url needs --model NAME too".into()))?;
            return Ok(ResolvedModel {
                server: ModelServer::OpenAiCompatible {
                    root: ModelServer::root_of(&base_url),
                },
                provider: Arc::new(OpenAiCompatible::new(base_url, choice.api_key)),
                model,
            });
        }
        let config = self.load_config()?;
        let (name, model) = self.model_name(&config, choice.model)?;
        let Some(provider) = config.providers.get(&name) else {
            if name == BUILTIN_LOCAL_PROVIDER {
                return Ok(ResolvedModel {
                    provider: self.local_provider(&model)?,
                    model,
                    server: ModelServer::OnDevice,
                });
            }
            return Err(self.no_model());
        };
        let key = choice
            .api_key
            .or_else(|| provider.api_key.as_ref().map(|k| k.expose().to_owned()));
        let root = ModelServer::root_of(&provider.base_url);
        let (provider, server): (Arc<dyn Provider>, ModelServer) = match provider.kind {
            ProviderKind::Openai => (
                Arc::new(OpenAiCompatible::new(provider.base_url.clone(), key)),
                ModelServer::OpenAiCompatible { root },
            ),
            ProviderKind::Ollama => (
                Arc::new(OpenAiCompatible::new(format!("{root}/v1"), key)),
                ModelServer::Ollama { root },
            ),
            ProviderKind::Anthropic => (
                Arc::new(Anthropic::new(provider.base_url.clone(), key)),
                ModelServer::Hosted {
                    kind: "anthropic".into(),
                },
            ),
            ProviderKind::Local => (self.local_provider(&model)?, ModelServer::OnDevice),
        };
        Ok(ResolvedModel {
            provider,
            model,
            server,
        })
    }

    fn no_model(&self) -> Error {
        Error::NoModel(format!(
            "no model is configured, and Cairn's own model is not installed: install it with\n\n  cairn models install {}\n\nor use a model server. Add to {}:\n\n[agent]\nmodel = \"server/NAME\"\n\n[providers.server]\nkind = \"openai\"   # or ollama, anthropic\nbase_url = \"http://127.0.0.1:8080/v1\"\napi_key = \"${{API_KEY}}\"   # if the server needs one\n\nor pass --base-url URL --model NAME [--api-key-env VAR].",
            cairn_models::catalog::DEFAULT_MODEL,
            self.home().config_file().display()
        ))
    }
}

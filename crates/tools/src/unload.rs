//! `unload_model`: gives back the memory a model holds — on an Ollama server, on a llama.cpp server
//! in router mode, or in Cairn's own model host. Never asks: nothing changes on disk, and a model
//! needed again is loaded again by its server.

use std::time::Duration;

use serde::Deserialize;
use serde_json::{json, Value};

use crate::texts::{fill, CANNOT_UNLOAD, NOT_LOADED, UNLOADED};
use crate::{field, parse, Declaration, Tool, ToolContext, ToolFuture, ToolOutput};

/// Where the agent's model runs, as far as unloading goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelServer {
    /// Ollama's native API at `root` (`http://127.0.0.1:11434`).
    Ollama { root: String },
    /// An OpenAI-compatible server whose API root (without `/v1`) is `root`: llama.cpp's
    /// `llama-server` answers `/models/unload` in router mode.
    OpenAiCompatible { root: String },
    /// Cairn's own model host, a child process of this one.
    OnDevice,
    /// A service that cannot unload (Anthropic…): its kind, for the answer.
    Hosted { kind: String },
}

impl ModelServer {
    /// An OpenAI-compatible or Ollama base URL as configured, with a trailing `/v1` dropped.
    pub fn root_of(base_url: &str) -> String {
        let base = base_url.trim_end_matches('/');
        base.strip_suffix("/v1").unwrap_or(base).to_owned()
    }
}

pub struct UnloadModel {
    pub server: ModelServer,
    /// The agent's own model, as its server names it.
    pub own_model: String,
    /// Per request to the server.
    pub timeout: Duration,
}

impl UnloadModel {
    pub fn new(server: ModelServer, own_model: impl Into<String>) -> Self {
        Self {
            server,
            own_model: own_model.into(),
            timeout: Duration::from_secs(30),
        }
    }
}

#[derive(Deserialize)]
struct Input {
    #[serde(default)]
    model: String,
}

/// How an unload went.
enum Outcome {
    Unloaded,
    NotLoaded,
    Cannot(String),
}

impl Tool for UnloadModel {
    fn name(&self) -> &str {
        "unload_model"
    }

    fn declaration(&self) -> Declaration {
        Declaration {
            name: "unload_model".into(),
            description: "Unload a model from its server's memory (RAM or VRAM), e.g. before \
running something that needs the memory. Empty model: your own model, which is loaded again for \
your next step."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {"model": {"type": "string", "description": "The model to unload, as the server names it. Empty: your own model."}}
            }),
        }
    }

    fn display(&self, input: &Value) -> String {
        match field(input, "model").trim() {
            "" => "🧹 unload_model: (own model)".to_owned(),
            model => format!("🧹 unload_model: {model}"),
        }
    }

    fn run<'a>(&'a self, input: Value, _ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let input: Input = match parse("unload_model", input) {
                Ok(i) => i,
                Err(e) => return ToolOutput::failed(e),
            };
            let model = match input.model.trim() {
                "" => self.own_model.clone(),
                named => named.to_owned(),
            };
            let outcome = match &self.server {
                ModelServer::Ollama { root } => self.ollama(root, &model).await,
                ModelServer::OpenAiCompatible { root } => self.llama_cpp(root, &model).await,
                ModelServer::OnDevice => on_device(&model, &self.own_model),
                ModelServer::Hosted { kind } => {
                    Outcome::Cannot(format!("the {kind} provider cannot unload a model"))
                }
            };
            match outcome {
                Outcome::Unloaded => ToolOutput::ok(fill(UNLOADED, &[("model", &model)])),
                Outcome::NotLoaded => ToolOutput::ok(fill(NOT_LOADED, &[("model", &model)])),
                Outcome::Cannot(reason) => ToolOutput::failed(fill(
                    CANNOT_UNLOAD,
                    &[("model", &model), ("reason", &reason)],
                )),
            }
        })
    }
}

impl UnloadModel {
    fn client(&self) -> Result<reqwest::Client, String> {
        reqwest::Client::builder()
            .timeout(self.timeout)
            .build()
            .map_err(|e| format!("no HTTP client: {e}"))
    }

    /// `GET /api/ps` first (asking for a model that is not loaded would load it), then
    /// `POST /api/generate {"keep_alive": 0}`, confirmed by `done_reason: "unload"`.
    async fn ollama(&self, root: &str, model: &str) -> Outcome {
        let client = match self.client() {
            Ok(c) => c,
            Err(e) => return Outcome::Cannot(e),
        };
        let loaded = match get_json(&client, &format!("{root}/api/ps")).await {
            Ok(v) => v,
            Err(e) => return Outcome::Cannot(e),
        };
        let name = loaded["models"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|m| [m["name"].as_str(), m["model"].as_str()])
            .flatten()
            .find(|name| *name == model || name.strip_suffix(":latest") == Some(model))
            .map(str::to_owned);
        let Some(name) = name else {
            return Outcome::NotLoaded;
        };
        let body = json!({"model": name, "keep_alive": 0});
        match post_json(&client, &format!("{root}/api/generate"), &body).await {
            Ok(answer) if answer["done_reason"] == "unload" => Outcome::Unloaded,
            Ok(answer) => Outcome::Cannot(format!(
                "the server did not confirm the unload (done_reason: {})",
                answer["done_reason"]
            )),
            Err(e) => Outcome::Cannot(e),
        }
    }

    /// `POST /models/unload`, which llama-server has in router mode only.
    async fn llama_cpp(&self, root: &str, model: &str) -> Outcome {
        let client = match self.client() {
            Ok(c) => c,
            Err(e) => return Outcome::Cannot(e),
        };
        let url = format!("{root}/models/unload");
        let response = match client
            .post(&url)
            .json(&json!({"model": model}))
            .send()
            .await
        {
            Ok(r) => r,
            Err(e) => return Outcome::Cannot(format!("{root} is unreachable ({})", cause(&e))),
        };
        let status = response.status();
        let text = response.text().await.unwrap_or_default();
        if status.is_success() {
            return Outcome::Unloaded;
        }
        if status.as_u16() == 404 && !text.to_ascii_lowercase().contains("model") {
            return Outcome::Cannot(
                "the server has no /models/unload: llama-server offers it in router mode only \
(started without a model); otherwise start it with --sleep-idle-seconds N, or stop the server"
                    .into(),
            );
        }
        let message = server_message(&text);
        if message.to_ascii_lowercase().contains("not loaded") {
            return Outcome::NotLoaded;
        }
        Outcome::Cannot(format!("HTTP {}: {message}", status.as_u16()))
    }
}

/// Cairn's own model host holds one model at a time.
fn on_device(model: &str, own_model: &str) -> Outcome {
    let loaded = cairn_llm::local::loaded_model();
    let named = |path: &std::path::Path| {
        model == own_model
            || path.file_name().and_then(|n| n.to_str()) == Some(model)
            || path.to_str() == Some(model)
    };
    match loaded {
        Some(path) if named(&path) => {
            if cairn_llm::local::unload_model() {
                Outcome::Unloaded
            } else {
                Outcome::NotLoaded
            }
        }
        _ => Outcome::NotLoaded,
    }
}

async fn get_json(client: &reqwest::Client, url: &str) -> Result<Value, String> {
    answer_json(client.get(url).send().await, url).await
}

async fn post_json(client: &reqwest::Client, url: &str, body: &Value) -> Result<Value, String> {
    answer_json(client.post(url).json(body).send().await, url).await
}

async fn answer_json(
    sent: Result<reqwest::Response, reqwest::Error>,
    url: &str,
) -> Result<Value, String> {
    let response = sent.map_err(|e| format!("{url} is unreachable ({})", cause(&e)))?;
    let status = response.status();
    let text = response.text().await.map_err(|e| cause(&e))?;
    if !status.is_success() {
        return Err(format!(
            "HTTP {}: {}",
            status.as_u16(),
            server_message(&text)
        ));
    }
    serde_json::from_str(&text).map_err(|_| format!("{url} answered something that is not JSON"))
}

/// The server's own error text: `{"error": "…"}`, `{"error": {"message": "…"}}`, or the body.
fn server_message(body: &str) -> String {
    let parsed: Option<Value> = serde_json::from_str(body).ok();
    parsed
        .as_ref()
        .and_then(|v| {
            v["error"]["message"]
                .as_str()
                .or_else(|| v["error"].as_str())
        })
        .map_or_else(|| body.trim().chars().take(300).collect(), str::to_owned)
}

fn cause(e: &reqwest::Error) -> String {
    let mut cause: &dyn std::error::Error = e;
    while let Some(inner) = cause.source() {
        cause = inner;
    }
    if e.is_timeout() {
        "no answer within 30 s".into()
    } else {
        cause.to_string()
    }
}

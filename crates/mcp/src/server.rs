//! Cairn's memory as an MCP server (`cairn mcp` on stdio, `/mcp` on the local API): three tools any MCP-capable agent can
//! call — search memory (the same recall and injection text the hooks give), remember something,
//! and resume an earlier episode. What they do is a [`MemoryBackend`]'s (cairn-api's); this file
//! only speaks the protocol.

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    InitializeResult, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
    Tool as McpToolDef,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{json, Map, Value};

use crate::Error;

/// What the memory tools do; every answer is text for the calling agent, every failure an
/// [`Error::Memory`] whose sentence the agent is shown.
pub trait MemoryBackend: Send + Sync + 'static {
    /// The recall for `query` as the injection text (at most `limit` memories).
    fn search(&self, query: &str, limit: usize) -> Result<String, Error>;
    /// Stores `text`; says under which id.
    fn remember(&self, text: &str) -> Result<String, Error>;
    /// Earlier episodes matching `words`, or the context of episode number `words` of the last
    /// list.
    fn resume(&self, words: &str) -> Result<String, Error>;
}

pub const SEARCH_TOOL: &str = "search_memory";
pub const REMEMBER_TOOL: &str = "remember";
pub const RESUME_TOOL: &str = "resume_episode";

/// The MCP server over Cairn's memory (one per client session).
#[derive(Clone)]
pub struct MemoryServer {
    backend: Arc<dyn MemoryBackend>,
    version: String,
}

fn schema(properties: Value, required: &[&str]) -> Arc<Map<String, Value>> {
    let schema = json!({"type": "object", "properties": properties, "required": required});
    Arc::new(schema.as_object().cloned().unwrap_or_default())
}

fn tools() -> Vec<McpToolDef> {
    vec![
        McpToolDef::new(
            SEARCH_TOOL,
            "Search the person's long-term memory (their past conversations with every agent, \
             notes and facts) for what is relevant to a query. Returns the relevant memories, \
             most relevant first, each with its date and source.",
            schema(
                json!({
                    "query": {"type": "string", "description": "What to look for, in natural words."},
                    "limit": {"type": "integer", "minimum": 1, "maximum": 50, "description": "Memories at most (default 8)."}
                }),
                &["query"],
            ),
        ),
        McpToolDef::new(
            REMEMBER_TOOL,
            "Store something in the person's long-term memory so that every agent can recall it \
             later: a decision, a fact about a project, a preference.",
            schema(
                json!({"text": {"type": "string", "description": "What to remember, as a self-contained sentence."}}),
                &["text"],
            ),
        ),
        McpToolDef::new(
            RESUME_TOOL,
            "Find earlier episodes of work by some of their words and list them with numbers; \
             called again with a number, returns that episode's context to continue from.",
            schema(
                json!({"words": {"type": "string", "description": "Words from that work, or the number of an episode from the last list."}}),
                &["words"],
            ),
        ),
    ]
}

fn text_arg<'a>(arguments: &'a Map<String, Value>, name: &str) -> Result<&'a str, String> {
    arguments
        .get(name)
        .and_then(Value::as_str)
        .filter(|s| !s.trim().is_empty())
        .ok_or_else(|| format!("`{name}` is required: a non-empty string"))
}

impl MemoryServer {
    async fn run(&self, name: &str, arguments: Map<String, Value>) -> Result<String, String> {
        let backend = self.backend.clone();
        let name = name.to_owned();
        let answer = tokio::task::spawn_blocking(move || match name.as_str() {
            SEARCH_TOOL => {
                let limit = arguments
                    .get("limit")
                    .and_then(Value::as_u64)
                    .map_or(8, |n| n.clamp(1, 50) as usize);
                backend
                    .search(text_arg(&arguments, "query")?, limit)
                    .map_err(|e| e.to_string())
            }
            REMEMBER_TOOL => backend
                .remember(text_arg(&arguments, "text")?)
                .map_err(|e| e.to_string()),
            RESUME_TOOL => backend
                .resume(text_arg(&arguments, "words")?)
                .map_err(|e| e.to_string()),
            other => Err(format!("no tool named {other}")),
        })
        .await;
        answer.unwrap_or_else(|e| Err(format!("the memory call failed: {e}")))
    }
}

impl ServerHandler for MemoryServer {
    fn get_info(&self) -> ServerConfig {
        InitializeResult::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("cairn", self.version.clone()))
            .with_instructions(
                "Cairn is the person's local long-term memory, shared by all their agents. Call \
                 search_memory before answering questions that may depend on earlier work, \
                 decisions or preferences; call remember for what should outlive this session.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if !tools().iter().any(|t| t.name == request.name) {
            return Err(ErrorData::invalid_params(
                format!("no tool named {}", request.name),
                None,
            ));
        }
        let arguments = request.arguments.unwrap_or_default();
        let result = match self.run(&request.name, arguments).await {
            Ok(text) => CallToolResult::success(vec![ContentBlock::text(text)]),
            Err(why) => CallToolResult::error(vec![ContentBlock::text(why)]),
        };
        Ok(result.into())
    }
}

/// Serves the memory tools on this process's stdin and stdout until the client goes.
pub async fn serve_stdio(backend: Arc<dyn MemoryBackend>, version: &str) -> Result<(), Error> {
    let server = MemoryServer {
        backend,
        version: version.to_owned(),
    };
    let running = server
        .serve((tokio::io::stdin(), tokio::io::stdout()))
        .await
        .map_err(|e| Error::Start(format!("the MCP handshake failed: {e}")))?;
    running
        .waiting()
        .await
        .map_err(|e| Error::Closed(e.to_string()))?;
    Ok(())
}

/// The sessions of [`http_service`], kept in memory; the caller may count them (a cap).
pub type McpSessions = LocalSessionManager;

/// How many sessions `sessions` holds now.
pub async fn session_count(sessions: &McpSessions) -> usize {
    sessions.sessions.read().await.len()
}

/// The memory tools over streamable HTTP, as a tower service to mount at `/mcp` behind the local
/// API's guards (token, Host, Origin), its sessions in `sessions`.
pub fn http_service(
    backend: Arc<dyn MemoryBackend>,
    version: &str,
    sessions: Arc<McpSessions>,
) -> StreamableHttpService<MemoryServer, LocalSessionManager> {
    let server = MemoryServer {
        backend,
        version: version.to_owned(),
    };
    StreamableHttpService::new(
        move || Ok(server.clone()),
        sessions,
        // The local API's own guards check Host and Origin first; these are the SDK's defaults.
        StreamableHttpServerConfig::default(),
    )
}

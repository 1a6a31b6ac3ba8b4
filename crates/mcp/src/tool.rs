//! One MCP server tool as a Cairn tool: declared under its exposed name with the server's
//! description and schema, asking first unless the server marks it read-only and one call of
//! that server has already run, and answering with the server's result as text — or with what
//! went wrong, so the turn goes on.

use std::sync::Arc;

use cairn_tools::{Declaration, Tool, ToolContext, ToolFuture, ToolOutput};
use serde_json::Value;

use crate::remote::Server;
use crate::{render_result, Error, RemoteTool};

/// One tool of one server, under the name the model sees; shares its server (connection and
/// trust) with the server's other tools.
pub(crate) struct McpTool {
    server: Arc<Server>,
    remote: RemoteTool,
    exposed: String,
}

impl McpTool {
    pub(crate) fn new(server: Arc<Server>, remote: RemoteTool, exposed: String) -> Self {
        Self {
            server,
            remote,
            exposed,
        }
    }

    fn failure(&self, why: &str) -> ToolOutput {
        ToolOutput::failed(format!(
            "[error: {} — the MCP server {:?} {why}]",
            self.exposed, self.server.name
        ))
    }
}

impl Tool for McpTool {
    fn name(&self) -> &str {
        &self.exposed
    }

    fn declaration(&self) -> Declaration {
        let mut parameters = self.remote.input_schema.clone();
        if !parameters.is_object() {
            parameters = serde_json::json!({"type": "object"});
        }
        if parameters.get("type").is_none() {
            parameters["type"] = Value::from("object");
        }
        Declaration {
            name: self.exposed.clone(),
            description: if self.remote.description.is_empty() {
                format!(
                    "{} (from the MCP server {})",
                    self.remote.name, self.server.name
                )
            } else {
                self.remote.description.clone()
            },
            parameters,
        }
    }

    /// A tool not marked read-only is an execute-class call and asks every time. A read-only one
    /// (`readOnlyHint`, the server's own say-so) asks too until one call of its server has run,
    /// that is until the person approved one.
    fn needs_permission(&self, _input: &Value, _ctx: &ToolContext) -> bool {
        !(self.remote.read_only && self.server.trusted())
    }

    fn display(&self, input: &Value) -> String {
        let mut arguments = input.to_string();
        if arguments.chars().count() > 80 {
            arguments = arguments.chars().take(79).collect::<String>() + "…";
        }
        format!("{} {}: {arguments}", self.server.name, self.remote.name)
    }

    fn run<'a>(&'a self, input: Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            // The runtime runs a call that asks only once the person approved it.
            self.server.trust();
            let connection = tokio::select! {
                connection = self.server.connection() => connection,
                () = ctx.cancel.cancelled() => return ToolOutput::failed(cairn_tools::texts::CANCELLED),
            };
            let connection = match connection {
                Ok(c) => c,
                Err(why) => return self.failure(&format!("is not running: {why}")),
            };
            let timeout = self.server.config.tool_timeout;
            let called = tokio::select! {
                called = tokio::time::timeout(timeout, connection.call(&self.remote.name, input)) => called,
                () = ctx.cancel.cancelled() => return ToolOutput::failed(cairn_tools::texts::CANCELLED),
            };
            match called {
                Err(_) => self.failure(&format!("gave no answer within {} s", timeout.as_secs())),
                Ok(Err(Error::Closed(why))) => {
                    self.server.stopped(&connection, &why);
                    self.failure(&format!(
                        "stopped during the call; the next call starts it again — {why}"
                    ))
                }
                Ok(Err(e)) => self.failure(&format!("answered with an error: {e}")),
                Ok(Ok(result)) => {
                    let (text, failed) = render_result(&result);
                    let text = if text.is_empty() {
                        "(no output)".to_owned()
                    } else {
                        ctx.truncate(text)
                    };
                    if failed {
                        ToolOutput::failed(text)
                    } else {
                        ToolOutput::ok(text)
                    }
                }
            }
        })
    }
}

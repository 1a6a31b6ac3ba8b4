//! `save_answer`: writes the answer the model already gave (this message's text, else the previous
//! answer) to a new file, so the model does not generate it a second time.

use serde::Deserialize;
use serde_json::{json, Value};

use crate::texts::{fill, PREVIOUS_ANSWER, SAVED, SAVE_EXISTS, SAVE_NOTHING, THIS_ANSWER};
use crate::{field, parse, Declaration, Tool, ToolContext, ToolFuture, ToolOutput};

pub struct SaveAnswer;

#[derive(Deserialize)]
struct Input {
    path: String,
}

impl Tool for SaveAnswer {
    fn name(&self) -> &str {
        "save_answer"
    }

    fn declaration(&self) -> Declaration {
        Declaration {
            name: "save_answer".into(),
            description: "Save your answer to a new file without writing it again: the text of \
the message that makes this call, or else your previous answer."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {"path": {"type": "string", "description": "The file to create, relative to the working directory. It must not exist yet."}},
                "required": ["path"]
            }),
        }
    }

    fn needs_permission(&self, _input: &Value, _ctx: &ToolContext) -> bool {
        true
    }

    fn leaves_folder(&self, input: &Value, ctx: &ToolContext) -> bool {
        !crate::access::inside(&ctx.resolve(field(input, "path")), &ctx.cwd)
    }

    fn target_file(&self, input: &Value) -> Option<String> {
        Some(field(input, "path").to_owned())
    }

    fn display(&self, input: &Value) -> String {
        format!("💾 save_answer: {}", field(input, "path"))
    }

    fn run<'a>(&'a self, input: Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let input: Input = match parse("save_answer", input) {
                Ok(i) => i,
                Err(e) => return ToolOutput::failed(e),
            };
            let (which, answer) = if !ctx.answers.this_message.trim().is_empty() {
                (THIS_ANSWER, ctx.answers.this_message.as_str())
            } else {
                match ctx
                    .answers
                    .previous
                    .as_deref()
                    .filter(|a| !a.trim().is_empty())
                {
                    Some(previous) => (PREVIOUS_ANSWER, previous),
                    None => return ToolOutput::failed(SAVE_NOTHING),
                }
            };
            let absolute = ctx.resolve(&input.path);
            if let Some(parent) = absolute.parent() {
                if let Err(e) = tokio::fs::create_dir_all(parent).await {
                    return ToolOutput::failed(format!("[save_answer: {}: {e}]", input.path));
                }
            }
            let mut content = answer.to_owned();
            if !content.ends_with('\n') {
                content.push('\n');
            }
            // create_new: an existing file is never overwritten, even one created meanwhile.
            let opened = tokio::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&absolute)
                .await;
            let mut file = match opened {
                Ok(f) => f,
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    return ToolOutput::failed(fill(SAVE_EXISTS, &[("path", &input.path)]));
                }
                Err(e) => return ToolOutput::failed(format!("[save_answer: {}: {e}]", input.path)),
            };
            use tokio::io::AsyncWriteExt;
            if let Err(e) = file.write_all(content.as_bytes()).await {
                return ToolOutput::failed(format!("[save_answer: {}: {e}]", input.path));
            }
            let first = content.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
            ToolOutput::ok(fill(
                SAVED,
                &[
                    ("which", which),
                    ("path", &input.path),
                    ("n", &content.len().to_string()),
                    ("first", first),
                ],
            ))
        })
    }
}

//! `fetch_content`: a web page as Markdown, returned or saved to a file (cairn-webmd does the
//! fetching and the conversion; this owns the call's fields, texts and the file).

use serde::Deserialize;
use serde_json::{json, Value};

use crate::texts::{fill, FETCH_EMPTY, FETCH_FAILED, FETCH_SAVED};
use crate::{field, parse, Declaration, Tool, ToolContext, ToolFuture, ToolOutput};
use cairn_webmd::{parse_url, to_markdown, Error, Fetcher, Options, Tables};

#[derive(Default)]
pub struct FetchContent {
    pub fetcher: Fetcher,
}

impl FetchContent {
    /// The tool reading the hosts `allow_hosts` names without asking (private addresses
    /// included); every other page asks first when `yolo` is off.
    pub fn new(allow_hosts: Vec<String>) -> Self {
        Self {
            fetcher: Fetcher {
                allow_hosts,
                ..Fetcher::default()
            },
        }
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Input {
    url: String,
    #[serde(default)]
    output: String,
    #[serde(default)]
    base_url: String,
    #[serde(default)]
    tables: String,
    #[serde(default)]
    strikethrough: bool,
    #[serde(default)]
    task_list: bool,
}

impl Tool for FetchContent {
    fn name(&self) -> &str {
        "fetch_content"
    }

    fn declaration(&self) -> Declaration {
        Declaration {
            name: "fetch_content".into(),
            description: "Download a web page and get its content as Markdown (scripts, \
navigation and ads removed), or save the Markdown to a file with `output`."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "url": {"type": "string", "description": "The page. A missing scheme means https://. Only http and https."},
                    "output": {"type": "string", "description": "File to save the Markdown to, relative to the working directory; the Markdown is then not returned."},
                    "baseUrl": {"type": "string", "description": "Absolute URL to resolve relative links and images against (default: the page's final URL)."},
                    "tables": {"type": "string", "enum": ["html", "flatten"], "description": "Tables with spanned cells or nested tables: html keeps them as HTML, flatten makes a Markdown table."},
                    "strikethrough": {"type": "boolean", "description": "Struck-out text as ~~text~~."},
                    "taskList": {"type": "boolean", "description": "List items with a checkbox as - [ ] / - [x]."}
                },
                "required": ["url"]
            }),
        }
    }

    /// Writing a file asks first, like write_file; so does reading a page, unless its host is on
    /// `[agent] fetch_allow_hosts`: what the agent fetches leaves this computer in the address,
    /// and a prompt injection would send secrets out that way.
    fn needs_permission(&self, input: &Value, _ctx: &ToolContext) -> bool {
        let allowed = parse_url(field(input, "url")).is_ok_and(|url| self.fetcher.allows(&url));
        !field(input, "output").trim().is_empty() || !allowed
    }

    fn leaves_folder(&self, input: &Value, ctx: &ToolContext) -> bool {
        let output = field(input, "output").trim();
        !output.is_empty() && {
            let path = ctx.resolve(output);
            path.is_file() || !crate::access::inside(&path, &ctx.cwd)
        }
    }

    fn target_file(&self, input: &Value) -> Option<String> {
        let output = field(input, "output").trim();
        (!output.is_empty()).then(|| output.to_owned())
    }

    fn display(&self, input: &Value) -> String {
        let output = field(input, "output").trim();
        let mut line = format!("🌐 fetch_content: {}", field(input, "url").trim());
        if !output.is_empty() {
            line.push_str(&format!(" → {output}"));
        }
        line
    }

    fn run<'a>(&'a self, input: Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let input: Input = match parse("fetch_content", input) {
                Ok(i) => i,
                Err(e) => return ToolOutput::failed(e),
            };
            match self.fetch(&input, ctx).await {
                Ok(text) => ToolOutput::ok(text),
                Err(Failure::Empty(url)) => ToolOutput::failed(fill(FETCH_EMPTY, &[("url", &url)])),
                Err(Failure::Error(e)) => ToolOutput::failed(fill(
                    FETCH_FAILED,
                    &[
                        ("code", &e.code().to_string()),
                        ("class", e.class()),
                        ("reason", &e.to_string()),
                    ],
                )),
            }
        })
    }
}

enum Failure {
    /// Nothing left once the furniture is removed: the URL as asked.
    Empty(String),
    Error(Error),
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        Self::Error(e)
    }
}

impl FetchContent {
    async fn fetch(&self, input: &Input, ctx: &ToolContext) -> Result<String, Failure> {
        let url = parse_url(&input.url)?;
        let tables = Tables::parse(&input.tables).ok_or_else(|| {
            Error::Usage(format!(
                "tables is {:?} — use html or flatten",
                input.tables
            ))
        })?;
        let base = match input.base_url.trim() {
            "" => None,
            raw => Some(
                url::Url::parse(raw)
                    .ok()
                    .filter(|u| u.has_host())
                    .ok_or_else(|| {
                        Error::Usage(format!("baseUrl {raw:?} is not an absolute URL"))
                    })?,
            ),
        };
        let page = tokio::select! {
            page = self.fetcher.fetch(&url) => page?,
            () = ctx.cancel.cancelled() => {
                return Err(Error::Input(format!("fetching {url} was stopped")).into())
            }
        };
        let options = Options {
            base: base.or(Some(page.url.clone())),
            tables,
            strikethrough: input.strikethrough,
            task_list: input.task_list,
        };
        let html = page.html;
        let markdown = tokio::task::spawn_blocking(move || to_markdown(&html, &options))
            .await
            .map_err(|e| Error::Conversion(format!("the conversion failed: {e}")))?;
        if markdown.is_empty() {
            return Err(Failure::Empty(url.to_string()));
        }
        let output = input.output.trim();
        if output.is_empty() {
            return Ok(ctx.truncate(markdown));
        }
        let file = ctx.resolve(output);
        let written = async {
            if let Some(parent) = file.parent() {
                tokio::fs::create_dir_all(parent).await?;
            }
            tokio::fs::write(&file, markdown.as_bytes()).await
        };
        written
            .await
            .map_err(|e| Error::Conversion(format!("cannot write {output}: {e}")))?;
        Ok(fill(
            FETCH_SAVED,
            &[
                ("lines", &markdown.lines().count().to_string()),
                ("bytes", &markdown.len().to_string()),
                ("url", url.as_str()),
                ("file", output),
            ],
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_asks_first_unless_its_host_is_allowed() {
        let ctx = ToolContext::new(std::env::temp_dir());
        let tool = FetchContent::new(vec!["docs.rs".into(), "*.example.com".into()]);
        let asks = |url: &str| tool.needs_permission(&json!({ "url": url }), &ctx);
        assert!(!asks("https://docs.rs/serde"));
        assert!(!asks("docs.example.com/page"));
        assert!(asks("https://attacker.test/?q=secret"));
        assert!(asks("http://127.0.0.1:4000/"));
        assert!(asks("not a url at all"));
        assert!(
            tool.needs_permission(&json!({"url": "https://docs.rs", "output": "a.md"}), &ctx),
            "saving to a file asks like write_file"
        );
    }
}

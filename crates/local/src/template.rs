//! The chat template stored in a GGUF file (`tokenizer.chat_template`, Jinja), rendered the way
//! Hugging Face renders it: OpenAI-shaped messages and tools, `add_generation_prompt`, Python's
//! string methods and `tojson` with Python's spacing. A model without a template gets ChatML.

use minijinja::syntax::SyntaxConfig;
use minijinja::value::{Kwargs, Serde};
use minijinja::{Environment, Error, ErrorKind, Value};
use serde::Serialize;
use serde_json::json;

use cairn_llm::{Message, Role, ToolSpec};

/// ChatML, for models that carry no template of their own.
const CHATML: &str = "{% for message in messages %}{{ '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}";

/// A compiled template with the model's special-token texts.
pub struct ChatTemplate {
    env: Environment<'static>,
    bos: String,
    eos: String,
    /// The template writes tool calls between `<tool_call>` tags (Qwen, Hermes).
    tagged_calls: bool,
}

impl ChatTemplate {
    /// Compiles `source` (or ChatML when the model has none).
    pub fn new(source: Option<String>, bos: String, eos: String) -> Result<Self, String> {
        let mut env = Environment::new();
        // Hugging Face renders with trim_blocks and lstrip_blocks.
        let syntax = SyntaxConfig::builder()
            .trim_blocks(true)
            .lstrip_blocks(true)
            .build()
            .map_err(|e| format!("the chat template's syntax settings: {e}"))?;
        env.set_syntax(syntax);
        env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
        env.add_function(
            "raise_exception",
            |message: String| -> Result<Value, Error> {
                Err(Error::new(ErrorKind::InvalidOperation, message))
            },
        );
        env.add_function("strftime_now", |_format: String| -> String {
            cairn_date_today()
        });
        env.add_filter("tojson", python_tojson);
        let tagged_calls = source
            .as_deref()
            .is_some_and(|s| s.contains(crate::grammar::TRIGGER));
        env.add_template_owned("chat", source.unwrap_or_else(|| CHATML.to_owned()))
            .map_err(|e| format!("the model's chat template does not compile: {e}"))?;
        Ok(Self {
            env,
            bos,
            eos,
            tagged_calls,
        })
    }

    /// Whether the model writes its tool calls between `<tool_call>` tags, so that the call
    /// grammar (`crate::grammar`) fits it.
    pub fn writes_tagged_calls(&self) -> bool {
        self.tagged_calls
    }

    /// The prompt for `messages` with `tools` offered, ending where the model's reply begins.
    /// The BOS text a template writes first is left out: the tokenizer adds the token.
    pub fn render(&self, messages: &[Message], tools: &[ToolSpec]) -> Result<String, String> {
        self.render_with(messages, tools, true)
    }

    /// The start of every prompt with these leading system messages and tools: what stays the
    /// same from one conversation to the next (`None` when the prompt has no system message).
    pub fn render_system_part(
        &self,
        messages: &[Message],
        tools: &[ToolSpec],
    ) -> Result<Option<String>, String> {
        let leading = messages
            .iter()
            .take_while(|m| m.role == Role::System)
            .count();
        if leading == 0 {
            return Ok(None);
        }
        self.render_with(&messages[..leading], tools, false)
            .map(Some)
    }

    fn render_with(
        &self,
        messages: &[Message],
        tools: &[ToolSpec],
        generation_prompt: bool,
    ) -> Result<String, String> {
        let messages: Vec<serde_json::Value> = messages.iter().map(message_json).collect();
        let mut context = std::collections::BTreeMap::<String, Value>::new();
        context.insert("messages".into(), Value::from(Serde(&messages)));
        if !tools.is_empty() {
            let tools: Vec<serde_json::Value> = tools
                .iter()
                .map(|t| {
                    json!({"type": "function", "function": {
                        "name": t.name, "description": t.description, "parameters": t.parameters,
                    }})
                })
                .collect();
            context.insert("tools".into(), Value::from(Serde(&tools)));
        }
        context.insert(
            "add_generation_prompt".into(),
            Value::from(generation_prompt),
        );
        context.insert("bos_token".into(), Value::from(self.bos.clone()));
        context.insert("eos_token".into(), Value::from(self.eos.clone()));
        let template = self.env.get_template("chat").map_err(|e| e.to_string())?;
        let text = template
            .render(Value::from(context))
            .map_err(|e| format!("the model's chat template failed: {e}"))?;
        Ok(match text.strip_prefix(self.bos.as_str()) {
            Some(rest) if !self.bos.is_empty() => rest.to_owned(),
            _ => text,
        })
    }
}

/// One message as Hugging Face templates expect it (OpenAI's shape, arguments as objects).
fn message_json(m: &Message) -> serde_json::Value {
    let role = match m.role {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
    };
    let mut content = m.content.clone();
    for _ in &m.images {
        content.push_str("\n[an image is attached, but this model cannot see images]");
    }
    let mut value = json!({ "role": role, "content": content });
    if !m.tool_calls.is_empty() {
        value["tool_calls"] = m
            .tool_calls
            .iter()
            .map(|c| {
                let arguments = serde_json::from_str::<serde_json::Value>(&c.arguments)
                    .unwrap_or_else(|_| serde_json::Value::String(c.arguments.clone()));
                json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": arguments}})
            })
            .collect();
    }
    if let Some(id) = &m.tool_call_id {
        value["tool_call_id"] = json!(id);
    }
    value
}

/// Today's date for templates that print it (Llama 3's "Today Date"), as `26 Jul 2024`.
fn cairn_date_today() -> String {
    let days = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() / 86_400) as i64;
    let (year, month, day) = cairn_protocol::calendar::civil_from_days(days);
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let month = MONTHS[(month.clamp(1, 12) - 1) as usize];
    format!("{day:02} {month} {year}")
}

/// Python's `json.dumps` spacing (`", "` and `": "`), which the models were trained on.
struct PythonSpacing;

impl serde_json::ser::Formatter for PythonSpacing {
    fn begin_array_value<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        if first {
            Ok(())
        } else {
            w.write_all(b", ")
        }
    }
    fn begin_object_key<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        if first {
            Ok(())
        } else {
            w.write_all(b", ")
        }
    }
    fn begin_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        w.write_all(b": ")
    }
}

fn python_tojson(value: Value, indent: Option<usize>, kwargs: Kwargs) -> Result<Value, Error> {
    let indent = match indent {
        Some(i) => Some(i),
        None => kwargs.get::<Option<usize>>("indent")?,
    };
    let _: Option<bool> = kwargs.get("ensure_ascii")?;
    let _: Option<bool> = kwargs.get("sort_keys")?;
    let _: Option<Value> = kwargs.get("separators")?;
    kwargs.assert_all_used()?;
    let mut out = Vec::new();
    let written = match indent {
        Some(n) => {
            let unit = vec![b' '; n];
            let formatter = serde_json::ser::PrettyFormatter::with_indent(&unit);
            value.serialize(&mut serde_json::Serializer::with_formatter(
                &mut out, formatter,
            ))
        }
        None => value.serialize(&mut serde_json::Serializer::with_formatter(
            &mut out,
            PythonSpacing,
        )),
    };
    written.map_err(|e| Error::new(ErrorKind::InvalidOperation, e.to_string()))?;
    let text = String::from_utf8(out)
        .map_err(|e| Error::new(ErrorKind::InvalidOperation, e.to_string()))?;
    Ok(Value::from_safe_string(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Qwen2.5's template, shortened to the parts that matter here.
    const QWEN: &str = r#"{%- if tools %}
    {{- '<|im_start|>system\n' }}
    {%- if messages[0]['role'] == 'system' %}
        {{- messages[0]['content'] }}
    {%- else %}
        {{- 'You are Qwen, created by Alibaba Cloud. You are a helpful assistant.' }}
    {%- endif %}
    {{- "\n\n# Tools\n\n<tools>" }}
    {%- for tool in tools %}
        {{- "\n" }}
        {{- tool | tojson }}
    {%- endfor %}
    {{- "\n</tools><|im_end|>\n" }}
{%- endif %}
{%- for message in messages %}
    {%- if (message.role == "user") or (message.role == "system" and not loop.first) %}
        {{- '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>' + '\n' }}
    {%- elif message.role == "assistant" %}
        {{- '<|im_start|>' + message.role }}
        {%- if message.content %}
            {{- '\n' + message.content }}
        {%- endif %}
        {%- for tool_call in message.tool_calls %}
            {%- if tool_call.function is defined %}
                {%- set tool_call = tool_call.function %}
            {%- endif %}
            {{- '\n<tool_call>\n{"name": "' }}
            {{- tool_call.name }}
            {{- '", "arguments": ' }}
            {{- tool_call.arguments | tojson }}
            {{- '}\n</tool_call>' }}
        {%- endfor %}
        {{- '<|im_end|>\n' }}
    {%- elif message.role == "tool" %}
        {%- if (loop.index0 == 0) or (messages[loop.index0 - 1].role != "tool") %}
            {{- '<|im_start|>user' }}
        {%- endif %}
        {{- '\n<tool_response>\n' }}
        {{- message.content.strip() }}
        {{- '\n</tool_response>' }}
        {%- if loop.last or (messages[loop.index0 + 1].role != "tool") %}
            {{- '<|im_end|>\n' }}
        {%- endif %}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|im_start|>assistant\n' }}
{%- endif %}
"#;

    #[test]
    fn renders_tools_calls_and_results_as_qwen_expects() -> Result<(), String> {
        let template = ChatTemplate::new(Some(QWEN.into()), String::new(), "<|im_end|>".into())?;
        let mut call = Message::new(Role::Assistant, "");
        call.tool_calls.push(cairn_llm::ToolCall {
            id: "c1".into(),
            name: "bash".into(),
            arguments: r#"{"command":"ls"}"#.into(),
        });
        let messages = vec![
            Message::new(Role::System, "Be brief."),
            Message::new(Role::User, "List the files."),
            call,
            Message::tool_result("c1", "  a.txt\n"),
        ];
        let tools = vec![ToolSpec {
            name: "bash".into(),
            description: "Run a command.".into(),
            parameters: json!({"type": "object", "properties": {"command": {"type": "string"}}}),
        }];
        let prompt = template.render(&messages, &tools)?;
        // In the order Hugging Face writes them (Python's dicts keep it), not sorted.
        assert!(prompt.starts_with("<|im_start|>system\nBe brief.\n\n# Tools\n\n<tools>\n{\"type\": \"function\", \"function\": {\"name\": \"bash\", \"description\": \"Run a command.\""), "{prompt}");
        assert!(prompt.contains("<|im_start|>user\nList the files.<|im_end|>\n"));
        assert!(prompt.contains(
            "<|im_start|>assistant\n<tool_call>\n{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}\n</tool_call><|im_end|>\n"
        ), "{prompt}");
        assert!(prompt
            .contains("<|im_start|>user\n<tool_response>\na.txt\n</tool_response><|im_end|>\n"));
        assert!(prompt.ends_with("<|im_start|>assistant\n"));
        Ok(())
    }

    #[test]
    fn a_model_without_a_template_gets_chatml_and_a_failing_template_says_so() -> Result<(), String>
    {
        let plain = ChatTemplate::new(None, String::new(), String::new())?;
        let prompt = plain.render(&[Message::new(Role::User, "hi")], &[])?;
        assert_eq!(
            prompt,
            "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"
        );
        let raising = ChatTemplate::new(
            Some("{{ raise_exception('roles must alternate') }}".into()),
            String::new(),
            String::new(),
        )?;
        let error = raising
            .render(&[Message::new(Role::User, "hi")], &[])
            .err()
            .ok_or("the exception was swallowed")?;
        assert!(error.contains("roles must alternate"), "{error}");
        Ok(())
    }
}

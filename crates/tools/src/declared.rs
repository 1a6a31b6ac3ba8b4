//! Declared tools: commands the person describes in the config (`[[agent.tools]]`), each a tool
//! whose parameters fill the command's argv — never through a shell, so a value can add neither an
//! argument nor a pipe. Values are coerced to their types; an invalid call runs nothing and says
//! what was wrong.

use std::time::Duration;

use serde::Deserialize;
use serde_json::{json, Map, Value};
use tokio::process::Command;

use crate::process;
use crate::texts::{fill, CANNOT_START, INVALID_CALL};
use crate::{Declaration, Tool, ToolContext, ToolFuture, ToolOutput};

/// A parameter's type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ParameterType {
    String,
    Integer,
    Number,
    Boolean,
}

impl ParameterType {
    fn word(self) -> &'static str {
        match self {
            Self::String => "string",
            Self::Integer => "integer",
            Self::Number => "number",
            Self::Boolean => "boolean",
        }
    }

    fn article(self) -> &'static str {
        match self {
            Self::String => "a string",
            Self::Integer => "an integer",
            Self::Number => "a number",
            Self::Boolean => "a boolean",
        }
    }
}

/// One parameter of a declared tool.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeclaredParameter {
    pub name: String,
    #[serde(rename = "type", default = "string_type")]
    pub kind: ParameterType,
    #[serde(default)]
    pub description: String,
    #[serde(default, rename = "enum")]
    pub one_of: Vec<String>,
    #[serde(default)]
    pub optional: bool,
    #[serde(default)]
    pub default: Option<toml_free::Scalar>,
}

fn string_type() -> ParameterType {
    ParameterType::String
}

/// A scalar written in the config, kept without depending on the config's format.
pub mod toml_free {
    use serde::Deserialize;

    #[derive(Debug, Clone, PartialEq, Deserialize)]
    #[serde(untagged)]
    pub enum Scalar {
        Bool(bool),
        Integer(i64),
        Number(f64),
        Text(String),
    }
}

/// A declared tool as written in the config.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeclaredToolDef {
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// The program and its arguments; `{{p}}` is replaced by parameter `p`'s value.
    pub command: Vec<String>,
    #[serde(default)]
    pub parameters: Vec<DeclaredParameter>,
    /// Seconds; the bash timeout when absent.
    #[serde(default)]
    pub timeout: Option<u64>,
}

pub struct DeclaredTool {
    def: DeclaredToolDef,
}

impl DeclaredTool {
    pub fn new(def: DeclaredToolDef) -> Self {
        Self { def }
    }

    /// The argv for `input`, or the faults that make the call invalid.
    fn argv(&self, input: &Value) -> Result<Vec<String>, Vec<String>> {
        let empty = Map::new();
        let given = input.as_object().unwrap_or(&empty);
        let mut faults = Vec::new();
        for key in given.keys() {
            if !self.def.parameters.iter().any(|p| &p.name == key) {
                faults.push(format!("\"{key}\" is not a parameter of this tool"));
            }
        }
        let mut values: Vec<(String, Option<String>)> = Vec::new();
        for p in &self.def.parameters {
            let value = match given.get(&p.name).filter(|v| !v.is_null()) {
                Some(v) => match coerce(p.kind, v) {
                    Some(text) => Some(text),
                    None => {
                        faults.push(format!(
                            "{}: {} is not {}",
                            p.name,
                            shown(v),
                            p.kind.article()
                        ));
                        continue;
                    }
                },
                None if p.optional => p.default.as_ref().map(scalar_text),
                None => {
                    faults.push(format!("{} is missing", p.name));
                    continue;
                }
            };
            if let Some(v) = &value {
                if !p.one_of.is_empty() && !p.one_of.contains(v) {
                    faults.push(format!(
                        "{}: {v} is not one of {}",
                        p.name,
                        p.one_of.join(", ")
                    ));
                    continue;
                }
            }
            values.push((p.name.clone(), value));
        }
        if !faults.is_empty() {
            return Err(faults);
        }
        let mut argv = Vec::new();
        for entry in &self.def.command {
            let mut arg = entry.clone();
            let mut drop = false;
            for (name, value) in &values {
                let placeholder = format!("{{{{{name}}}}}");
                if !arg.contains(&placeholder) {
                    continue;
                }
                match value {
                    Some(v) => arg = arg.replace(&placeholder, v),
                    None if arg == placeholder => drop = true,
                    None => arg = arg.replace(&placeholder, ""),
                }
            }
            if !drop {
                argv.push(arg);
            }
        }
        Ok(argv)
    }

    fn expected(&self) -> String {
        self.def
            .parameters
            .iter()
            .map(|p| format!("{} ({}): {}", p.name, p.kind.word(), describe(p)))
            .collect::<Vec<_>>()
            .join("; ")
    }
}

/// A value as the model sent it, for a fault.
fn shown(v: &Value) -> String {
    match v {
        Value::String(s) => format!("\"{s}\""),
        other => other.to_string(),
    }
}

fn scalar_text(s: &toml_free::Scalar) -> String {
    match s {
        toml_free::Scalar::Bool(b) => b.to_string(),
        toml_free::Scalar::Integer(i) => i.to_string(),
        toml_free::Scalar::Number(n) => number_text(*n),
        toml_free::Scalar::Text(t) => t.clone(),
    }
}

/// A number without an exponent, an integral one without a decimal point.
fn number_text(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e15 {
        format!("{}", n as i64)
    } else {
        let text = format!("{n:.12}");
        text.trim_end_matches('0').trim_end_matches('.').to_owned()
    }
}

/// `v` as text for a parameter of type `kind`, or `None` when it cannot be one.
fn coerce(kind: ParameterType, v: &Value) -> Option<String> {
    match kind {
        ParameterType::String => match v {
            Value::String(s) => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            Value::Bool(b) => Some(b.to_string()),
            _ => None,
        },
        ParameterType::Integer => {
            let n = match v {
                Value::Number(n) => n.as_f64()?,
                Value::String(s) => s.trim().parse::<f64>().ok()?,
                _ => return None,
            };
            (n.fract() == 0.0).then(|| format!("{}", n as i64))
        }
        ParameterType::Number => {
            let n = match v {
                Value::Number(n) => n.as_f64()?,
                Value::String(s) => s.trim().parse::<f64>().ok()?,
                _ => return None,
            };
            n.is_finite().then(|| number_text(n))
        }
        ParameterType::Boolean => match v {
            Value::Bool(b) => Some(b.to_string()),
            Value::String(s) if s.eq_ignore_ascii_case("true") => Some("true".into()),
            Value::String(s) if s.eq_ignore_ascii_case("false") => Some("false".into()),
            _ => None,
        },
    }
}

/// A parameter's description for the model: its own, `One of: …`, `Optional[, default v].`
fn describe(p: &DeclaredParameter) -> String {
    let mut parts = Vec::new();
    if !p.description.trim().is_empty() {
        parts.push(p.description.trim().to_owned());
    }
    if !p.one_of.is_empty() {
        parts.push(format!("One of: {}.", p.one_of.join(", ")));
    }
    if p.optional {
        parts.push(match &p.default {
            Some(d) => format!("Optional, default {}.", scalar_text(d)),
            None => "Optional.".to_owned(),
        });
    }
    parts.join(" ")
}

impl Tool for DeclaredTool {
    fn name(&self) -> &str {
        &self.def.name
    }

    fn declaration(&self) -> Declaration {
        let mut properties = Map::new();
        for p in &self.def.parameters {
            properties.insert(
                p.name.clone(),
                json!({"type": p.kind.word(), "description": describe(p)}),
            );
        }
        let required: Vec<&str> = self
            .def
            .parameters
            .iter()
            .filter(|p| !p.optional)
            .map(|p| p.name.as_str())
            .collect();
        let mut description = self.def.description.trim().to_owned();
        if !description.is_empty() {
            description.push(' ');
        }
        description.push_str(&format!(
            "Required parameters: {}. Give each parameter as its own field.",
            if required.is_empty() {
                "none".to_owned()
            } else {
                required.join(", ")
            }
        ));
        Declaration {
            name: self.def.name.clone(),
            description,
            parameters: json!({"type": "object", "properties": properties}),
        }
    }

    fn needs_permission(&self, _input: &Value, _ctx: &ToolContext) -> bool {
        true
    }

    fn display(&self, input: &Value) -> String {
        match self.argv(input) {
            Ok(argv) => format!("🧰 {}: {}", self.def.name, argv.join(" ")),
            Err(_) => format!("🧰 {}: {input}", self.def.name),
        }
    }

    fn run<'a>(&'a self, input: Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let argv = match self.argv(&input) {
                Ok(argv) => argv,
                Err(faults) => {
                    return ToolOutput::failed(fill(
                        INVALID_CALL,
                        &[
                            ("name", &self.def.name),
                            ("faults", &faults.join("; ")),
                            ("input", &input.to_string()),
                            ("expected", &self.expected()),
                        ],
                    ));
                }
            };
            let Some((program, args)) = argv.split_first() else {
                return ToolOutput::failed(fill(
                    CANNOT_START,
                    &[
                        ("program", &self.def.name),
                        ("reason", "the command is empty"),
                    ],
                ));
            };
            let mut command = Command::new(program);
            command.args(args);
            let timeout = self
                .def
                .timeout
                .map(Duration::from_secs)
                .unwrap_or(ctx.bash_timeout);
            match process::run(command, timeout, ctx).await {
                Ok(done) => ToolOutput {
                    text: done.text,
                    failed: done.failed,
                    ..ToolOutput::default()
                },
                Err(e) => ToolOutput::failed(fill(
                    CANNOT_START,
                    &[("program", program), ("reason", &e.to_string())],
                )),
            }
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn tool() -> DeclaredTool {
        DeclaredTool::new(DeclaredToolDef {
            name: "grep_count".into(),
            description: "Count matching lines.".into(),
            command: vec![
                "grep".into(),
                "-c".into(),
                "{{flags}}".into(),
                "--max-count={{max}}".into(),
                "{{pattern}}".into(),
                "{{file}}".into(),
            ],
            parameters: vec![
                DeclaredParameter {
                    name: "pattern".into(),
                    kind: ParameterType::String,
                    description: "What to look for.".into(),
                    one_of: vec![],
                    optional: false,
                    default: None,
                },
                DeclaredParameter {
                    name: "file".into(),
                    kind: ParameterType::String,
                    description: "The file.".into(),
                    one_of: vec![],
                    optional: false,
                    default: None,
                },
                DeclaredParameter {
                    name: "max".into(),
                    kind: ParameterType::Integer,
                    description: "Stop after this many.".into(),
                    one_of: vec![],
                    optional: true,
                    default: Some(toml_free::Scalar::Integer(100)),
                },
                DeclaredParameter {
                    name: "flags".into(),
                    kind: ParameterType::String,
                    description: String::new(),
                    one_of: vec!["-i".into(), "-v".into()],
                    optional: true,
                    default: None,
                },
            ],
            timeout: None,
        })
    }

    #[test]
    fn the_schema_describes_in_words_without_required_or_enum() {
        let d = tool().declaration();
        assert_eq!(
            d.description,
            "Count matching lines. Required parameters: pattern, file. Give each parameter as its own field."
        );
        assert_eq!(
            d.parameters["properties"]["max"]["description"],
            "Stop after this many. Optional, default 100."
        );
        assert_eq!(
            d.parameters["properties"]["flags"]["description"],
            "One of: -i, -v. Optional."
        );
        assert!(d.parameters.get("required").is_none());
        assert!(d.parameters["properties"]["flags"].get("enum").is_none());
    }

    #[test]
    fn values_are_coerced_and_a_lone_placeholder_left_out_is_removed() {
        let t = tool();
        assert_eq!(
            t.argv(&json!({"pattern": "a b; rm -rf /", "file": 7, "max": "3"}))
                .unwrap(),
            vec!["grep", "-c", "--max-count=3", "a b; rm -rf /", "7"]
        );
        assert_eq!(
            t.argv(&json!({"pattern": "x", "file": "f", "flags": "-i"}))
                .unwrap(),
            vec!["grep", "-c", "-i", "--max-count=100", "x", "f"]
        );
    }

    #[tokio::test]
    async fn an_invalid_call_lists_every_fault_and_runs_nothing() {
        let t = tool();
        let ctx = ToolContext::new(std::env::temp_dir());
        let out = t
            .run(
                json!({"file": "f", "max": "many", "flags": "-x", "colour": true}),
                &ctx,
            )
            .await;
        assert_eq!(
            out.text,
            "[grep_count: invalid call, nothing was run — \"colour\" is not a parameter of this tool; pattern is missing; max: \"many\" is not an integer; flags: -x is not one of -i, -v. You sent: {\"file\":\"f\",\"max\":\"many\",\"flags\":\"-x\",\"colour\":true}. Expected: pattern (string): What to look for.; file (string): The file.; max (integer): Stop after this many. Optional, default 100.; flags (string): One of: -i, -v. Optional.. Call grep_count again with each parameter as its own field.]"
        );
    }

    #[tokio::test]
    async fn a_missing_program_says_it_cannot_be_started() {
        let t = DeclaredTool::new(DeclaredToolDef {
            name: "nope".into(),
            description: String::new(),
            command: vec!["cairn-no-such-program".into()],
            parameters: vec![],
            timeout: None,
        });
        let out = t
            .run(json!({}), &ToolContext::new(std::env::temp_dir()))
            .await;
        assert!(
            out.text
                .starts_with("[error: cairn-no-such-program cannot be started: "),
            "{}",
            out.text
        );
    }
}

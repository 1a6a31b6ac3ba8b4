//! The `lsp` tool (agent-tools.md `lsp`): the six actions, a symbol found in the file or an exact
//! position, and every answer and failure as text for the model.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use cairn_tools::access::{read_asks, Protected};
use cairn_tools::{field, Counter, Declaration, Tool, ToolContext, ToolFuture, ToolOutput};
use serde_json::{json, Value};

use crate::hub::LspHub;
use crate::server::{Diagnostics, Server, DIAGNOSTICS_WAIT};
use crate::text::{clean_symbol, occurrences, path_of, symbol_and_new_name, uri_of, Lines};
use crate::LspError;

/// Occurrences of a symbol tried before giving up on it.
const MAX_TRIES: usize = 10;

pub struct Lsp {
    hub: Arc<LspHub>,
    /// Where a call asks first, as `read_file` does: an answer shows the file's text.
    protected: Protected,
}

impl Lsp {
    /// The tool over `hub`'s servers; `None` when none can run (the tool is then not declared).
    pub fn new(hub: Arc<LspHub>) -> Option<Self> {
        (!hub.is_empty()).then_some(Self {
            hub,
            protected: Protected::default(),
        })
    }

    /// The same tool asking first for files in `protected` places (Cairn's home, `~/.ssh`…).
    pub fn with_protected(mut self, protected: Protected) -> Self {
        self.protected = protected;
        self
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Action {
    Definition,
    References,
    Hover,
    Symbols,
    Diagnostics,
    Rename,
}

impl Action {
    fn parse(name: &str) -> Option<Self> {
        Some(match name.trim().to_lowercase().as_str() {
            "definition" => Self::Definition,
            "references" => Self::References,
            "hover" => Self::Hover,
            "symbols" => Self::Symbols,
            "diagnostics" => Self::Diagnostics,
            "rename" => Self::Rename,
            _ => return None,
        })
    }

    fn name(self) -> &'static str {
        match self {
            Self::Definition => "definition",
            Self::References => "references",
            Self::Hover => "hover",
            Self::Symbols => "symbols",
            Self::Diagnostics => "diagnostics",
            Self::Rename => "rename",
        }
    }

    fn method(self) -> &'static str {
        match self {
            Self::Definition => "textDocument/definition",
            Self::References => "textDocument/references",
            Self::Hover => "textDocument/hover",
            Self::Symbols => "textDocument/documentSymbol",
            Self::Diagnostics => "textDocument/diagnostic",
            Self::Rename => "textDocument/rename",
        }
    }
}

/// The call's input, lenient about numbers written as strings.
struct Input {
    action: String,
    path: String,
    symbol: String,
    line: usize,
    column: usize,
    new_name: String,
}

impl Input {
    fn from(value: &Value) -> Self {
        let number = |key: &str| match value.get(key) {
            Some(Value::Number(n)) => n.as_u64().map_or(0, |n| n as usize),
            Some(Value::String(s)) => s.trim().parse().unwrap_or(0),
            _ => 0,
        };
        Self {
            action: field(value, "action").to_owned(),
            path: field(value, "path").trim().to_owned(),
            symbol: field(value, "symbol").to_owned(),
            line: number("line"),
            column: number("column"),
            new_name: field(value, "new_name").to_owned(),
        }
    }
}

/// A file as read for one call.
struct File {
    /// As the model named it.
    shown: String,
    absolute: PathBuf,
    text: String,
}

fn fail(text: impl Into<String>) -> ToolOutput {
    ToolOutput::failed(text.into())
}

impl Tool for Lsp {
    fn name(&self) -> &str {
        "lsp"
    }

    fn declaration(&self) -> Declaration {
        Declaration {
            name: "lsp".into(),
            description: format!(
                "Ask a language server about the code, as an editor does. Servers available: {}. \
Actions: `definition` (where a symbol is defined), `references` (every use, the declaration \
included), `hover` (its type, signature and documentation), `symbols` (the file's outline), \
`diagnostics` (the file's errors and warnings), `rename` (renames a symbol everywhere, on disk). \
Name the symbol as written in the code; add `line` to pick one occurrence, or give `line` and \
`column` (1-based) instead of a symbol. Prefer `rename` over editing each use by hand.",
                self.hub.servers_line()
            ),
            parameters: json!({
                "type": "object",
                "properties": {
                    "action": {"type": "string", "enum": ["definition", "references", "hover", "symbols", "diagnostics", "rename"]},
                    "path": {"type": "string", "description": "File path, relative to the working directory. Its extension picks the server."},
                    "symbol": {"type": "string", "description": "The identifier, as written in the code (for definition, references, hover, rename)."},
                    "line": {"type": "integer", "description": "1-based line. With symbol: only that line is searched. With column: the exact position."},
                    "column": {"type": "integer", "description": "1-based column, in characters, inside the identifier. Only needed without symbol."},
                    "new_name": {"type": "string", "description": "The new identifier, for rename."}
                },
                "required": ["action", "path"]
            }),
        }
    }

    /// A rename changes files; any action asks the first time a project's servers would start,
    /// since a language server runs the project's own code.
    /// A file outside the project or in a protected place asks too, as `read_file` does.
    fn needs_permission(&self, input: &Value, ctx: &ToolContext) -> bool {
        let path = field(input, "path").trim();
        Action::parse(field(input, "action")) == Some(Action::Rename)
            || !self.hub.is_trusted(&ctx.cwd)
            || (!path.is_empty() && read_asks(&ctx.resolve(path), &ctx.cwd, &self.protected))
    }

    /// A rename of a symbol in a file outside the task's folder changes files there.
    fn leaves_folder(&self, input: &Value, ctx: &ToolContext) -> bool {
        Action::parse(field(input, "action")) == Some(Action::Rename)
            && !cairn_tools::access::inside(&ctx.resolve(field(input, "path")), &ctx.cwd)
    }

    fn rejected(&self, input: &Value) -> String {
        if Action::parse(field(input, "action")) == Some(Action::Rename) {
            "[rename rejected by the user]".into()
        } else {
            cairn_tools::texts::rejected("lsp")
        }
    }

    fn target_file(&self, input: &Value) -> Option<String> {
        Some(field(input, "path").to_owned())
    }

    fn display(&self, input: &Value) -> String {
        let input = Input::from(input);
        let (symbol, new_name) = names(&input);
        let mut line = format!("🔎 lsp: {} {}", input.action.trim(), input.path);
        if !symbol.is_empty() {
            line.push(' ');
            line.push_str(&symbol);
        } else if input.line > 0 {
            line.push_str(&format!(":{}", input.line));
            if input.column > 0 {
                line.push_str(&format!(":{}", input.column));
            }
        }
        if Action::parse(&input.action) == Some(Action::Rename) && !new_name.is_empty() {
            line.push_str(&format!(" → {new_name}"));
        }
        line
    }

    fn counter(&self) -> Option<Counter> {
        Some(Counter::Lsp)
    }

    fn run<'a>(&'a self, input: Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            // Reaching here, the call was approved (or nothing asks): the project is trusted.
            self.hub.trust(&ctx.cwd);
            let input = Input::from(&input);
            let mut output = tokio::select! {
                output = self.call(&input, ctx) => output,
                () = ctx.cancel.cancelled() => fail("[lsp: stopped]"),
            };
            output.text = ctx.truncate(output.text);
            output
        })
    }
}

/// The symbol and the new name, cleaned (`Greet 1 12 Hello` split when new_name is empty).
fn names(input: &Input) -> (String, String) {
    let rename = Action::parse(&input.action) == Some(Action::Rename);
    if rename && input.new_name.trim().is_empty() && input.symbol.split_whitespace().count() > 1 {
        if let Some(both) = symbol_and_new_name(&input.symbol) {
            return both;
        }
    }
    (clean_symbol(&input.symbol), clean_symbol(&input.new_name))
}

impl Lsp {
    async fn call(&self, input: &Input, ctx: &ToolContext) -> ToolOutput {
        let Some(action) = Action::parse(&input.action) else {
            return fail(format!(
                "[lsp: unknown action \"{}\" — use definition, references, hover, symbols, diagnostics or rename]",
                input.action.trim()
            ));
        };
        if input.path.is_empty() {
            return fail("[lsp: path is empty — name the file the question is about]");
        }
        let absolute = ctx.resolve(&input.path);
        let Some(config) = self.hub.server_for(&absolute) else {
            return fail(format!(
                "[lsp: no language server for \"{}\" — configured: {}]",
                input.path,
                self.hub.servers_line()
            ));
        };
        let (symbol, new_name) = names(input);
        if action == Action::Rename && new_name.is_empty() {
            return fail(format!(
                "[lsp: rename needs new_name — call lsp again with {{\"action\": \"rename\", \"path\": {}, \"symbol\": {}, \"new_name\": \"<the new identifier>\"}}; do not use edit_file for a rename]",
                json!(input.path),
                json!(symbol)
            ));
        }
        let file = match tokio::fs::read(&absolute).await {
            Ok(bytes) => File {
                shown: input.path.clone(),
                absolute,
                text: String::from_utf8_lossy(&bytes).into_owned(),
            },
            Err(e) => return fail(format!("[lsp: cannot read {}: {e}]", input.path)),
        };
        let server = match self.hub.server(config, &ctx.cwd).await {
            Ok(server) => server,
            Err(e) => return failed(&config.name, action, &e),
        };
        let call = Call {
            server: &server,
            root: &ctx.cwd,
            file: &file,
        };
        let answer = match action {
            Action::Symbols => call.symbols().await,
            Action::Diagnostics => call.diagnostics().await,
            _ => match positions(&file, &symbol, input) {
                Ok(positions) => call.at(action, &positions, &new_name).await,
                Err(text) => return fail(text),
            },
        };
        answer.unwrap_or_else(|e| failed(&config.name, action, &e))
    }
}

fn failed(server: &str, action: Action, error: &LspError) -> ToolOutput {
    fail(format!(
        "[lsp: {server}: {} failed: {error}]",
        action.name()
    ))
}

/// The 0-based `(line, character)` positions to ask about, in the order to try them.
fn positions(file: &File, symbol: &str, input: &Input) -> Result<Vec<(usize, usize)>, String> {
    let lines = Lines::new(&file.text);
    let count = lines.count().max(1);
    if input.line > count {
        return Err(format!(
            "[lsp: line {} is past the end of {} ({count} lines)]",
            input.line, file.shown
        ));
    }
    if !symbol.is_empty() {
        let only = (input.line > 0).then(|| input.line - 1);
        let found = occurrences(&lines, symbol, only);
        if found.is_empty() {
            return Err(match only {
                Some(_) => format!(
                    "[lsp: \"{symbol}\" not found on line {} of {}]",
                    input.line, file.shown
                ),
                None => format!("[lsp: \"{symbol}\" not found in {}]", file.shown),
            });
        }
        return Ok(found.into_iter().take(MAX_TRIES).collect());
    }
    if input.line == 0 || input.column == 0 {
        return Err(format!(
            "[lsp: {} needs a symbol, or a line and a column]",
            input.action.trim()
        ));
    }
    let length = lines.line(input.line - 1).chars().count();
    if input.column > length.max(1) {
        return Err(format!(
            "[lsp: column {} is past the end of line {} ({length} characters)]",
            input.column, input.line
        ));
    }
    Ok(vec![(input.line - 1, input.column - 1)])
}

/// One call's server, project root and file.
struct Call<'a> {
    server: &'a Server,
    root: &'a Path,
    file: &'a File,
}

impl Call<'_> {
    fn document(&self) -> Result<Value, LspError> {
        Ok(json!({"uri": uri_of(&self.file.absolute)?}))
    }

    /// A path as shown: relative inside the project, absolute outside.
    fn shown(&self, path: &Path) -> String {
        match path.strip_prefix(self.root) {
            Ok(relative) => relative.display().to_string(),
            Err(_) => path.display().to_string(),
        }
    }

    /// definition, references, hover or rename, at the first position the server answers for.
    async fn at(
        &self,
        action: Action,
        positions: &[(usize, usize)],
        new_name: &str,
    ) -> Result<ToolOutput, LspError> {
        self.server
            .sync(&self.file.absolute, &self.file.text)
            .await?;
        self.server.sync_open(&self.file.absolute).await?;
        let lines = Lines::new(&self.file.text);
        // An occurrence the server cannot place (in a string, say) may be answered with an
        // error: the next one is tried; only when every one fails is the error the answer.
        let (mut errors, mut last_error) = (0, None);
        for &(line, column) in positions {
            let mut params = json!({
                "textDocument": self.document()?,
                "position": {"line": line, "character": lines.utf16_of(line, column)},
            });
            match action {
                Action::References => params["context"] = json!({"includeDeclaration": true}),
                Action::Rename => params["newName"] = json!(new_name),
                _ => {}
            }
            let answer = match self.server.request(action.method(), params).await {
                Ok(answer) => answer,
                Err(e @ (LspError::Rpc { .. } | LspError::BadAnswer(_))) => {
                    errors += 1;
                    last_error = Some(e);
                    continue;
                }
                Err(e) => return Err(e),
            };
            let output = match action {
                Action::Definition | Action::References => self.locations(action, answer).await,
                Action::Hover => hover_text(answer).map(ToolOutput::ok),
                _ => self.rename(answer, new_name).await?,
            };
            if let Some(output) = output {
                return Ok(output);
            }
        }
        if let Some(error) = last_error.filter(|_| errors == positions.len()) {
            return Err(error);
        }
        let (line, column) = positions.first().copied().unwrap_or_default();
        let at = format!("{}:{}:{}", self.file.shown, line + 1, column + 1);
        Ok(fail(match action {
            Action::Definition => format!("[lsp: no definition found for the symbol at {at}]"),
            Action::References => format!("[lsp: no references found for the symbol at {at}]"),
            Action::Hover => format!("[lsp: no hover information for the symbol at {at}]"),
            _ => format!("[lsp: the server found nothing to rename at {at}]"),
        }))
    }

    /// `path:line:column  <source line>` per location, sorted and without duplicates.
    async fn locations(&self, action: Action, answer: Value) -> Option<ToolOutput> {
        let found = locations_of(answer);
        let mut sources: HashMap<PathBuf, String> = HashMap::new();
        let mut lines = BTreeMap::new();
        for (path, position) in found {
            if !sources.contains_key(&path) {
                let text = tokio::fs::read(&path)
                    .await
                    .map(|b| String::from_utf8_lossy(&b).into_owned())
                    .unwrap_or_default();
                sources.insert(path.clone(), text);
            }
            let text = sources.get(&path).map_or("", String::as_str);
            let source = Lines::new(text);
            let index = position.line as usize;
            let column = source.column_of(index, position.character) + 1;
            let shown = self.shown(&path);
            lines.insert(
                (shown.clone(), index, column),
                format!(
                    "{shown}:{}:{column}  {}",
                    index + 1,
                    source.line(index).trim()
                ),
            );
        }
        if lines.is_empty() {
            return None;
        }
        let body = lines.into_values().collect::<Vec<_>>().join("\n");
        Some(ToolOutput::ok(match action {
            Action::References => format!("{} reference(s):\n{body}", body.lines().count()),
            _ => body,
        }))
    }

    async fn symbols(&self) -> Result<ToolOutput, LspError> {
        self.server
            .sync(&self.file.absolute, &self.file.text)
            .await?;
        let answer = self
            .server
            .request(
                Action::Symbols.method(),
                json!({"textDocument": self.document()?}),
            )
            .await?;
        let mut out = Vec::new();
        match serde_json::from_value::<Option<lsp_types::DocumentSymbolResponse>>(answer) {
            Ok(Some(lsp_types::DocumentSymbolResponse::Nested(symbols))) => {
                nested_symbols(&symbols, 0, &mut out);
            }
            Ok(Some(lsp_types::DocumentSymbolResponse::Flat(symbols))) => {
                flat_symbols(symbols, &mut out);
            }
            Ok(None) => {}
            Err(e) => return Err(LspError::BadAnswer(e.to_string())),
        }
        Ok(if out.is_empty() {
            ToolOutput::ok(format!("no symbols in {}", self.file.shown))
        } else {
            ToolOutput::ok(out.join("\n"))
        })
    }

    async fn diagnostics(&self) -> Result<ToolOutput, LspError> {
        let since = self.server.publications_so_far();
        let changed = self
            .server
            .sync(&self.file.absolute, &self.file.text)
            .await?;
        let shown = &self.file.shown;
        let (found, note) = match self
            .server
            .diagnostics(&self.file.absolute, changed, since)
            .await?
        {
            Diagnostics::Fresh(found) => (found, ""),
            Diagnostics::AsLastPublished(found) => (found, " (as last published)"),
            Diagnostics::Nothing => {
                return Ok(ToolOutput::ok(format!(
                    "no diagnostics received for {shown} within {}s (the server may not check \
this kind of file, or may still be starting: ask again in a moment)",
                    DIAGNOSTICS_WAIT.as_secs()
                )))
            }
        };
        if found.is_empty() {
            return Ok(ToolOutput::ok(format!(
                "no diagnostics: {shown} is clean{note}"
            )));
        }
        let lines = Lines::new(&self.file.text);
        let mut found: Vec<_> = found
            .into_iter()
            .map(|d| {
                let line = d.range.start.line as usize;
                let column = lines.column_of(line, d.range.start.character) + 1;
                (line, column, d)
            })
            .collect();
        found.sort_by_key(|(line, column, _)| (*line, *column));
        let mut out = vec![format!("{} diagnostic(s) in {shown}{note}:", found.len())];
        for (line, column, d) in found {
            let severity = match d.severity {
                Some(lsp_types::DiagnosticSeverity::WARNING) => "warning",
                Some(lsp_types::DiagnosticSeverity::INFORMATION) => "information",
                Some(lsp_types::DiagnosticSeverity::HINT) => "hint",
                _ => "error",
            };
            let message = d
                .message
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .collect::<Vec<_>>()
                .join(" ");
            let source = d.source.map(|s| format!(" [{s}]")).unwrap_or_default();
            out.push(format!(
                "{severity} {shown}:{}:{column} {message}{source}",
                line + 1
            ));
        }
        Ok(ToolOutput::ok(out.join("\n")))
    }

    /// Applies a rename's edits to the files on disk and tells the server the new contents.
    async fn rename(&self, answer: Value, new_name: &str) -> Result<Option<ToolOutput>, LspError> {
        let edit: Option<lsp_types::WorkspaceEdit> =
            serde_json::from_value(answer).map_err(|e| LspError::BadAnswer(e.to_string()))?;
        let Some(edit) = edit else { return Ok(None) };
        let by_file = edits_by_file(edit);
        if by_file.values().all(Vec::is_empty) {
            return Ok(None);
        }
        // Every file's new text first: nothing is written unless every edit applies.
        let mut renamed = Vec::new();
        for (path, edits) in by_file {
            if edits.is_empty() {
                continue;
            }
            let shown = self.shown(&path);
            let text = match tokio::fs::read(&path).await {
                Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
                Err(e) => return Ok(Some(fail(format!("[lsp: cannot read {shown}: {e}]")))),
            };
            let Some(new_text) = apply_edits(&text, &edits) else {
                return Ok(Some(fail(format!(
                    "[lsp: the server's edits to {shown} overlap: nothing was changed]"
                ))));
            };
            renamed.push((path, shown, new_text, edits.len()));
        }
        let mut counts = BTreeMap::new();
        for (path, shown, new_text, edits) in renamed {
            if let Err(e) = cairn_tools::write_atomically(&path, new_text.as_bytes()).await {
                return Ok(Some(fail(format!("[lsp: cannot write {shown}: {e}]"))));
            }
            self.server.sync(&path, &new_text).await?;
            counts.insert(shown, edits);
        }
        let total: usize = counts.values().sum();
        let mut out = vec![format!(
            "renamed to {new_name}: {total} edit(s) in {} file(s)",
            counts.len()
        )];
        out.extend(
            counts
                .iter()
                .map(|(path, n)| format!("{path}: {n} edit(s)")),
        );
        Ok(Some(ToolOutput::ok(out.join("\n"))))
    }
}

/// `(path, start)` of every location in a definition or references answer.
fn locations_of(answer: Value) -> Vec<(PathBuf, lsp_types::Position)> {
    let located = |uri: &lsp_types::Uri, at: lsp_types::Position| {
        path_of(uri.as_str()).map(|path| (path, at))
    };
    match serde_json::from_value::<Option<lsp_types::GotoDefinitionResponse>>(answer) {
        Ok(Some(lsp_types::GotoDefinitionResponse::Scalar(l))) => {
            located(&l.uri, l.range.start).into_iter().collect()
        }
        Ok(Some(lsp_types::GotoDefinitionResponse::Array(all))) => all
            .iter()
            .filter_map(|l| located(&l.uri, l.range.start))
            .collect(),
        Ok(Some(lsp_types::GotoDefinitionResponse::Link(links))) => links
            .iter()
            .filter_map(|l| located(&l.target_uri, l.target_selection_range.start))
            .collect(),
        Ok(None) | Err(_) => Vec::new(),
    }
}

/// The hover's text as the server sent it; `None` when it said nothing.
fn hover_text(answer: Value) -> Option<String> {
    let hover: lsp_types::Hover = serde_json::from_value::<Option<_>>(answer).ok()??;
    let marked = |m: lsp_types::MarkedString| match m {
        lsp_types::MarkedString::String(s) => s,
        lsp_types::MarkedString::LanguageString(l) => {
            format!("```{}\n{}\n```", l.language, l.value)
        }
    };
    let text = match hover.contents {
        lsp_types::HoverContents::Scalar(m) => marked(m),
        lsp_types::HoverContents::Array(all) => all
            .into_iter()
            .map(marked)
            .filter(|s| !s.trim().is_empty())
            .collect::<Vec<_>>()
            .join("\n\n"),
        lsp_types::HoverContents::Markup(m) => m.value,
    };
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_owned())
}

fn nested_symbols(symbols: &[lsp_types::DocumentSymbol], depth: usize, out: &mut Vec<String>) {
    let mut sorted: Vec<&lsp_types::DocumentSymbol> = symbols.iter().collect();
    sorted.sort_by_key(|s| (s.range.start.line, s.range.start.character));
    for symbol in sorted {
        out.push(symbol_line(
            depth,
            symbol.kind,
            &symbol.name,
            symbol.detail.as_deref().unwrap_or(""),
            symbol.selection_range.start.line,
        ));
        if let Some(children) = &symbol.children {
            nested_symbols(children, depth + 1, out);
        }
    }
}

/// A flat outline nested by container: a symbol goes under the nearest one before it named as
/// its container.
fn flat_symbols(mut symbols: Vec<lsp_types::SymbolInformation>, out: &mut Vec<String>) {
    symbols.sort_by_key(|s| {
        (
            s.location.range.start.line,
            s.location.range.start.character,
        )
    });
    let mut listed: Vec<(String, usize)> = Vec::new();
    for symbol in symbols {
        let depth = symbol
            .container_name
            .as_deref()
            .and_then(|container| listed.iter().rev().find(|(name, _)| name == container))
            .map_or(0, |(_, depth)| depth + 1);
        out.push(symbol_line(
            depth,
            symbol.kind,
            &symbol.name,
            "",
            symbol.location.range.start.line,
        ));
        listed.push((symbol.name, depth));
    }
}

/// `<kind> <name>  [<detail>]  line N`, indented two spaces per level.
fn symbol_line(
    depth: usize,
    kind: lsp_types::SymbolKind,
    name: &str,
    detail: &str,
    line: u32,
) -> String {
    let detail = detail.lines().next().unwrap_or("").trim();
    let detail = if detail.is_empty() {
        String::new()
    } else {
        format!("  [{detail}]")
    };
    format!(
        "{}{} {name}{detail}  line {}",
        "  ".repeat(depth),
        kind_name(kind),
        line + 1
    )
}

fn kind_name(kind: lsp_types::SymbolKind) -> &'static str {
    const NAMES: [&str; 26] = [
        "file",
        "module",
        "namespace",
        "package",
        "class",
        "method",
        "property",
        "field",
        "constructor",
        "enum",
        "interface",
        "function",
        "variable",
        "constant",
        "string",
        "number",
        "boolean",
        "array",
        "object",
        "key",
        "null",
        "enum-member",
        "struct",
        "event",
        "operator",
        "type-parameter",
    ];
    let index: i32 = serde_json::to_value(kind)
        .ok()
        .and_then(|v| v.as_i64())
        .and_then(|n| i32::try_from(n).ok())
        .unwrap_or(0);
    usize::try_from(index - 1)
        .ok()
        .and_then(|i| NAMES.get(i))
        .copied()
        .unwrap_or("symbol")
}

/// A workspace edit's text edits by file (resource operations are not applied).
fn edits_by_file(edit: lsp_types::WorkspaceEdit) -> BTreeMap<PathBuf, Vec<lsp_types::TextEdit>> {
    let mut by_file: BTreeMap<PathBuf, Vec<lsp_types::TextEdit>> = BTreeMap::new();
    let mut add = |uri: &lsp_types::Uri, edits: Vec<lsp_types::TextEdit>| {
        if let Some(path) = path_of(uri.as_str()) {
            by_file.entry(path).or_default().extend(edits);
        }
    };
    let text_edits =
        |edits: Vec<lsp_types::OneOf<lsp_types::TextEdit, lsp_types::AnnotatedTextEdit>>| {
            edits
                .into_iter()
                .map(|e| match e {
                    lsp_types::OneOf::Left(edit) => edit,
                    lsp_types::OneOf::Right(annotated) => annotated.text_edit,
                })
                .collect::<Vec<_>>()
        };
    match edit.document_changes {
        Some(lsp_types::DocumentChanges::Edits(all)) => {
            for e in all {
                add(&e.text_document.uri, text_edits(e.edits));
            }
        }
        Some(lsp_types::DocumentChanges::Operations(all)) => {
            for operation in all {
                if let lsp_types::DocumentChangeOperation::Edit(e) = operation {
                    add(&e.text_document.uri, text_edits(e.edits));
                }
            }
        }
        None => {
            for (uri, edits) in edit.changes.unwrap_or_default() {
                add(&uri, edits);
            }
        }
    }
    by_file
}

/// `text` with `edits` applied (UTF-16 positions converted, past-the-end clamped); `None` when
/// two edits overlap.
fn apply_edits(text: &str, edits: &[lsp_types::TextEdit]) -> Option<String> {
    let lines = Lines::new(text);
    let mut spans: Vec<(usize, usize, &str)> = edits
        .iter()
        .map(|e| {
            let start = lines.byte_of(e.range.start);
            let end = lines.byte_of(e.range.end).max(start);
            (start, end, e.new_text.as_str())
        })
        .collect();
    spans.sort_by_key(|(start, end, _)| (*start, *end));
    if spans.windows(2).any(|w| w[0].1 > w[1].0) {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (start, end, new_text) in spans {
        out.push_str(&text[at..start]);
        out.push_str(new_text);
        at = end;
    }
    out.push_str(&text[at..]);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edit(line: u32, from: u32, to: u32, text: &str) -> lsp_types::TextEdit {
        lsp_types::TextEdit::new(
            lsp_types::Range::new(
                lsp_types::Position::new(line, from),
                lsp_types::Position::new(line, to),
            ),
            text.into(),
        )
    }

    #[test]
    fn edits_apply_from_utf16_positions_and_refuse_overlaps() {
        let text = "x = '😀' + greet\ngreet()\n";
        let renamed = apply_edits(text, &[edit(1, 0, 5, "hello"), edit(0, 11, 16, "hello")]);
        assert_eq!(renamed.as_deref(), Some("x = '😀' + hello\nhello()\n"));
        assert_eq!(
            apply_edits(text, &[edit(1, 0, 5, "a"), edit(1, 2, 4, "b")]),
            None
        );
    }

    #[test]
    fn symbol_lines_name_their_kind_and_indent_children() {
        assert_eq!(
            symbol_line(
                1,
                lsp_types::SymbolKind::METHOD,
                "greet",
                "(self) -> str",
                4
            ),
            "  method greet  [(self) -> str]  line 5"
        );
        assert_eq!(
            symbol_line(0, lsp_types::SymbolKind::CLASS, "Person", "", 0),
            "class Person  line 1"
        );
    }

    #[test]
    fn hover_text_is_the_servers() {
        let markdown =
            json!({"contents": {"kind": "markdown", "value": "```python\ndef greet()\n```"}});
        assert_eq!(
            hover_text(markdown).as_deref(),
            Some("```python\ndef greet()\n```")
        );
        let marked = json!({"contents": [{"language": "c", "value": "int x"}, "doc"]});
        assert_eq!(
            hover_text(marked).as_deref(),
            Some("```c\nint x\n```\n\ndoc")
        );
        assert_eq!(hover_text(Value::Null), None);
        assert_eq!(hover_text(json!({"contents": ""})), None);
    }
}

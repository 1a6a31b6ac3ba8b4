//! The thread that owns llama.cpp: the backend, at most one loaded model and its context. Jobs
//! arrive over a channel; each renders its prompt with the model's template, keeps the part of the
//! KV cache that matches the previous prompt (only new tokens are evaluated), and streams the
//! reply token by token until the model ends it, the token budget runs out, or nobody listens.
//! A model unused for the idle time is unloaded; asking for another model replaces it, so no
//! model is ever twice in memory.

use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use cairn_llm::local::{LocalOptions, StepStats};
use cairn_llm::{
    ChatRequest, FinishReason, Progress, ProviderError, StreamEvent, ToolChoice, Usage,
};
use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::LlamaToken;
use tokio::sync::mpsc;

use crate::template::ChatTemplate;
use crate::{grammar, prefix_cache};
use cairn_llm::toolcall;

/// Tokens evaluated per decode call.
const BATCH: usize = 512;
/// A reply's length when the request sets none.
const DEFAULT_MAX_TOKENS: usize = 2048;
/// Fewer free tokens than this after the prompt is an overflow: compact first.
const MIN_REPLY_ROOM: usize = 256;

/// The model the engine holds, if any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loaded {
    pub path: PathBuf,
}

pub(crate) struct Job {
    pub path: PathBuf,
    pub request: ChatRequest,
    pub options: LocalOptions,
    pub tx: mpsc::Sender<Result<StreamEvent, ProviderError>>,
    /// Set when the requester asks to stop.
    pub cancelled: Arc<AtomicBool>,
}

impl Job {
    fn abandoned(&self) -> bool {
        self.tx.is_closed() || self.cancelled.load(Ordering::Relaxed)
    }
}

pub(crate) enum Command {
    Run(Box<Job>),
    /// Unload now; answers whether a model was loaded.
    Unload(std::sync::mpsc::Sender<bool>),
}

/// Called with the model in memory whenever that changes.
pub(crate) type OnLoaded = Box<dyn Fn(Option<&Path>) + Send + Sync>;

/// State the engine shares with the rest of the process.
#[derive(Default)]
pub(crate) struct Shared {
    pub loaded: Mutex<Option<Loaded>>,
    pub last: Mutex<StepStats>,
    pub on_loaded: Option<OnLoaded>,
    /// End the engine (and so the host process) once the model was unloaded for idleness.
    pub end_when_idle: bool,
}

impl Shared {
    fn set_loaded(&self, path: Option<&Path>) {
        set(
            &self.loaded,
            path.map(|p| Loaded {
                path: p.to_path_buf(),
            }),
        );
        if let Some(notify) = &self.on_loaded {
            notify(path);
        }
    }
}

/// The engine thread's body: runs until every sender is gone.
pub(crate) fn run(commands: Receiver<Command>, shared: Arc<Shared>) {
    let backend = match LlamaBackend::init() {
        Ok(mut backend) => {
            backend.void_logs();
            backend
        }
        Err(e) => {
            // Answer every job with the reason rather than leaving it waiting.
            for command in commands {
                if let Command::Run(job) = command {
                    let _ = job.tx.blocking_send(Err(ProviderError::Unavailable(format!(
                        "the local model runtime cannot start: {e}"
                    ))));
                }
            }
            return;
        }
    };
    let mut pending: Option<Command> = None;
    loop {
        let command = match pending.take() {
            Some(command) => command,
            None => match commands.recv() {
                Ok(command) => command,
                Err(_) => return,
            },
        };
        let job = match command {
            Command::Run(job) => job,
            Command::Unload(reply) => {
                let _ = reply.send(false);
                continue;
            }
        };
        let started = Instant::now();
        let name = job
            .path
            .file_stem()
            .map_or_else(String::new, |s| s.to_string_lossy().into_owned());
        let _ = job
            .tx
            .blocking_send(Ok(StreamEvent::Progress(Progress::LoadingModel {
                model: name,
            })));
        let model = match load(&backend, &job.path) {
            Ok(model) => model,
            Err(message) => {
                let _ = job
                    .tx
                    .blocking_send(Err(ProviderError::Unavailable(message)));
                continue;
            }
        };
        let mut made_for = context_of(&job.options);
        let Some(first) = LoadedModel::new(&backend, &model, &job.options, &job.tx) else {
            continue;
        };
        let mut loaded = Some(first);
        let path = job.path.clone();
        let idle = job.options.idle;
        let mut load_time = started.elapsed();
        shared.set_loaded(Some(&path));
        tracing::info!("loaded {} in {load_time:?}", path.display());
        let mut next = Some(Command::Run(job));
        let mut idle_out = false;
        loop {
            let command = match next.take() {
                Some(command) => command,
                None => match commands.recv_timeout(idle) {
                    Ok(command) => command,
                    Err(RecvTimeoutError::Timeout) => {
                        idle_out = true;
                        break;
                    }
                    Err(RecvTimeoutError::Disconnected) => {
                        shared.set_loaded(None);
                        return;
                    }
                },
            };
            match command {
                Command::Run(job) if job.path == path => {
                    if context_of(&job.options) != made_for {
                        // Another context size (or thread count) was asked for: the context is
                        // made anew for it, the model kept. The old one goes first: two would
                        // hold two KV caches.
                        drop(loaded.take());
                        loaded = LoadedModel::new(&backend, &model, &job.options, &job.tx);
                        made_for = context_of(&job.options);
                    }
                    // No context could be made: the job was told why; the model goes.
                    let Some(current) = loaded.as_mut() else {
                        break;
                    };
                    let (mut stats, finish) = current.serve(&job);
                    stats.load = std::mem::take(&mut load_time);
                    // The cost is recorded before the reply ends, so whoever reads it after the
                    // end sees this reply's.
                    set(&shared.last, stats);
                    if let Some(finish) = finish {
                        let _ = job.tx.blocking_send(Ok(StreamEvent::Done(finish)));
                    }
                }
                Command::Run(job) => {
                    pending = Some(Command::Run(job));
                    break;
                }
                Command::Unload(reply) => {
                    let _ = reply.send(true);
                    break;
                }
            }
        }
        drop(loaded);
        drop(model);
        shared.set_loaded(None);
        tracing::info!("unloaded {}", path.display());
        if idle_out && shared.end_when_idle {
            // The model host: its memory goes back with the process; Cairn starts it again.
            std::process::exit(0);
        }
    }
}

/// What a context is made with: a job asking for other values needs another context.
fn context_of(options: &LocalOptions) -> (u32, i32) {
    (options.context, threads(options))
}

/// The threads to run on: as configured, else one per core.
fn threads(options: &LocalOptions) -> i32 {
    if options.threads > 0 {
        options.threads
    } else {
        std::thread::available_parallelism().map_or(2, |n| n.get() as i32)
    }
}

fn set<T>(slot: &Mutex<T>, value: T) {
    if let Ok(mut slot) = slot.lock() {
        *slot = value;
    }
}

fn load(backend: &LlamaBackend, path: &Path) -> Result<LlamaModel, String> {
    if !path.is_file() {
        return Err(format!("the model file {} is missing", path.display()));
    }
    LlamaModel::load_from_file(backend, path, &LlamaModelParams::default()).map_err(|e| {
        format!(
            "the model file {} cannot be loaded ({e}): it is damaged or not a model llama.cpp reads",
            path.display()
        )
    })
}

/// A model with its context, template and the tokens its KV cache holds.
struct LoadedModel<'m> {
    model: &'m LlamaModel,
    context: LlamaContext<'m>,
    template: ChatTemplate,
    /// Exactly the tokens of sequence 0 in the KV cache, in order.
    cached: Vec<LlamaToken>,
    batch: LlamaBatch<'static>,
}

impl<'m> LoadedModel<'m> {
    fn new(
        backend: &LlamaBackend,
        model: &'m LlamaModel,
        options: &LocalOptions,
        tx: &mpsc::Sender<Result<StreamEvent, ProviderError>>,
    ) -> Option<Self> {
        let fail = |message: String| {
            let _ = tx.blocking_send(Err(ProviderError::Unavailable(message)));
        };
        let n_ctx = options.context.min(model.n_ctx_train().max(512));
        let params = LlamaContextParams::default()
            .with_n_ctx(NonZeroU32::new(n_ctx))
            .with_n_batch(BATCH as u32)
            .with_n_ubatch(BATCH as u32)
            .with_n_threads(threads(options))
            .with_n_threads_batch(threads(options));
        let context = match model.new_context(backend, params) {
            Ok(context) => context,
            Err(e) => {
                fail(format!(
                    "the local model cannot get a context of {n_ctx} tokens: {e}"
                ));
                return None;
            }
        };
        let vocab = model.vocab();
        let piece = |t: LlamaToken| {
            if t.0 < 0 {
                String::new()
            } else {
                String::from_utf8_lossy(&vocab.token_to_piece(t, true, None)).into_owned()
            }
        };
        let source = model
            .meta_val_str("tokenizer.chat_template")
            .ok()
            .filter(|s| s.contains("{%") || s.contains("{{"));
        let template = match ChatTemplate::new(source, piece(vocab.bos()), piece(vocab.eos())) {
            Ok(template) => template,
            Err(message) => {
                fail(message);
                return None;
            }
        };
        Some(Self {
            model,
            context,
            template,
            cached: Vec::new(),
            batch: LlamaBatch::new(BATCH, 1),
        })
    }

    /// Runs one job, streaming its events but the last; returns what it cost and how the reply
    /// ended (`None` when it failed, with the error sent, or nobody listens).
    fn serve(&mut self, job: &Job) -> (StepStats, Option<FinishReason>) {
        let mut stats = StepStats::default();
        match self.generate(job, &mut stats) {
            Ok(finish) => (stats, finish),
            Err(e) => {
                let _ = job.tx.blocking_send(Err(e));
                (stats, None)
            }
        }
    }

    fn generate(
        &mut self,
        job: &Job,
        stats: &mut StepStats,
    ) -> Result<Option<FinishReason>, ProviderError> {
        let bad = |message: String| ProviderError::Rejected {
            status: 500,
            message,
        };
        let prompt = self
            .template
            .render(&job.request.messages, &job.request.tools)
            .map_err(bad)?;
        let vocab = self.model.vocab();
        let mut tokens = vocab.tokenize(prompt.as_bytes(), false, true);
        if vocab.should_add_bos() && tokens.first() != Some(&vocab.bos()) {
            tokens.insert(0, vocab.bos());
        }
        let n_ctx = self.context.n_ctx() as usize;
        if tokens.len() + MIN_REPLY_ROOM > n_ctx {
            return Err(ProviderError::ContextOverflow(format!(
                "the prompt is {} tokens and the local model's context holds {n_ctx} (with {MIN_REPLY_ROOM} left for the reply)",
                tokens.len()
            )));
        }
        let max_new = job
            .request
            .max_tokens
            .map_or(DEFAULT_MAX_TOKENS, |m| m as usize)
            .min(n_ctx - tokens.len());
        stats.prompt_tokens = tokens.len();
        if !job.options.reuse_prefix {
            self.context.clear_kv_cache();
            self.cached.clear();
        }
        let started = Instant::now();
        let evaluated_first = self.prepare_system_part(job, &tokens)?;
        stats.reused_tokens = self.evaluate_prompt(&tokens, Some(&job.tx))? - evaluated_first;
        stats.prompt_time = started.elapsed();

        let offered: Vec<String> = job.request.tools.iter().map(|t| t.name.clone()).collect();
        let mut sampler = self.sampler(job);
        let mut output = String::new();
        let mut utf8 = Utf8Stream::default();
        // How much of `output` has been streamed as text; the rest may be a tool call.
        let mut shown = 0;
        let mut holding_call = false;
        let mut finish = FinishReason::Stop;
        let generation_started = Instant::now();
        let mut generated = 0;
        loop {
            if job.abandoned() {
                tracing::debug!("nobody listens any more: the local model stops");
                return Ok(None);
            }
            if generated >= max_new {
                finish = FinishReason::Length;
                break;
            }
            let token = sampler.sample(&self.context, self.batch.n_tokens() - 1);
            if generated == 0 {
                stats.first_token = generation_started.elapsed();
            }
            if vocab.is_eog(token) {
                break;
            }
            generated += 1;
            let piece = utf8.push(&vocab.token_to_piece(token, false, None));
            output.push_str(&piece);
            // The same call written a second time: the model is in a burst, the call is made once.
            if holding_call
                && (piece.contains('}') || piece.contains('>'))
                && toolcall::repeats_a_call(&output[shown..], &offered)
            {
                tracing::debug!("the local model repeats a call: generation stops");
                break;
            }
            if !holding_call {
                let at_reply_start = output[..shown].trim().is_empty();
                if let Some(at) = toolcall::first_marker(&output[shown..], at_reply_start) {
                    holding_call = true;
                    self.send_text(job, &output[shown..shown + at]);
                    shown += at;
                } else {
                    let held = toolcall::held_suffix_len(&output[shown..]);
                    let upto = output.len() - held;
                    if upto > shown {
                        self.send_text(job, &output[shown..upto]);
                        shown = upto;
                    }
                }
            }
            self.batch.clear();
            self.batch
                .add(token, self.cached.len() as i32, &[0], true)
                .map_err(|e| bad(e.to_string()))?;
            self.context
                .decode(&mut self.batch)
                .map_err(|e| bad(format!("the local model failed to generate: {e}")))?;
            self.cached.push(token);
        }
        output.push_str(&utf8.finish());
        tracing::debug!("the local model wrote {output:?}");
        stats.generated_tokens = generated;
        stats.generation_time = generation_started.elapsed();

        let reply = toolcall::parse(&output, &offered);
        if reply.text.len() > shown && reply.text.starts_with(&output[..shown]) {
            self.send_text(job, &reply.text[shown..]);
        }
        for (index, call) in reply.calls.iter().enumerate() {
            let _ = job.tx.blocking_send(Ok(StreamEvent::ToolCall {
                index,
                id: Some(call_id()),
                name: Some(call.name.clone()),
                arguments: call.arguments.clone(),
            }));
        }
        if !reply.calls.is_empty() {
            finish = FinishReason::ToolCalls;
        }
        let _ = job.tx.blocking_send(Ok(StreamEvent::Usage(Usage {
            input_tokens: stats.prompt_tokens as u64,
            output_tokens: generated as u64,
        })));
        Ok(Some(finish))
    }

    /// Greedy (or sampled at the asked temperature), and held to the offered tools' schemas from
    /// the moment the model opens a tool call, where its template writes calls in tags.
    fn sampler(&self, job: &Job) -> LlamaSampler {
        let choose = if job.options.temperature <= 0.0 {
            LlamaSampler::greedy()
        } else {
            LlamaSampler::chain_simple([
                LlamaSampler::top_k(40),
                LlamaSampler::top_p(0.95, 1),
                LlamaSampler::temp(job.options.temperature),
                LlamaSampler::dist(job.options.seed),
            ])
        };
        if !job.options.constrain_calls || !self.template.writes_tagged_calls() {
            return choose;
        }
        let Some(rules) = grammar::for_tools(&job.request.tools) else {
            return choose;
        };
        // A call the request requires is held from the first token; otherwise from the tag on.
        let calls = match job.request.tool_choice {
            ToolChoice::Required => LlamaSampler::grammar(self.model, &rules, grammar::ROOT),
            ToolChoice::Auto => LlamaSampler::grammar_lazy_patterns(
                self.model,
                &rules,
                grammar::ROOT,
                &grammar::TRIGGER_PATTERNS
                    .iter()
                    .map(|p| (*p).to_owned())
                    .collect::<Vec<_>>(),
                &[],
            ),
        };
        match calls {
            Ok(calls) => LlamaSampler::chain_simple([calls, choose]),
            Err(e) => {
                tracing::debug!("the tool-call grammar does not load ({e}): decoding is free");
                choose
            }
        }
    }

    fn send_text(&self, job: &Job, text: &str) {
        if !text.is_empty() {
            let _ = job.tx.blocking_send(Ok(StreamEvent::Text(text.to_owned())));
        }
    }

    /// When the KV cache does not hold the prompt's system part (the system message and tools),
    /// loads it from the prefix cache, or evaluates it and saves it there for the next process.
    /// Returns how many tokens it evaluated.
    fn prepare_system_part(
        &mut self,
        job: &Job,
        tokens: &[LlamaToken],
    ) -> Result<usize, ProviderError> {
        let Some(dir) = job.options.prefix_cache.as_deref() else {
            return Ok(0);
        };
        if !job.options.reuse_prefix {
            return Ok(0);
        }
        let system = match self
            .template
            .render_system_part(&job.request.messages, &job.request.tools)
        {
            Ok(Some(system)) => system,
            _ => return Ok(0),
        };
        let vocab = self.model.vocab();
        let mut prefix = vocab.tokenize(system.as_bytes(), false, true);
        if vocab.should_add_bos() && prefix.first() != Some(&vocab.bos()) {
            prefix.insert(0, vocab.bos());
        }
        // Only a prefix the whole prompt shares token for token, and not the whole prompt.
        if prefix.len() >= tokens.len() || !tokens.starts_with(&prefix) {
            return Ok(0);
        }
        if self.cached.starts_with(&prefix) {
            return Ok(0);
        }
        let file = prefix_cache::file_for(dir, &job.path, self.context.n_ctx(), &prefix);
        if prefix_cache::restore(&mut self.context, &file, &prefix) {
            self.cached = prefix;
            return Ok(0);
        }
        self.cached.clear();
        self.evaluate_prompt(&prefix, Some(&job.tx))?;
        prefix_cache::store(&self.context, &file, &prefix);
        Ok(prefix.len())
    }

    /// Makes the KV cache hold exactly `prompt`, evaluating only what differs from what it held;
    /// returns how many tokens were kept. The last prompt token's logits are ready afterwards.
    /// A prompt longer than one batch says how far the reading is after each batch (`progress`).
    fn evaluate_prompt(
        &mut self,
        prompt: &[LlamaToken],
        progress: Option<&mpsc::Sender<Result<StreamEvent, ProviderError>>>,
    ) -> Result<usize, ProviderError> {
        let bad = |message: String| ProviderError::Rejected {
            status: 500,
            message: format!("the local model failed to read the prompt: {message}"),
        };
        let mut keep = self
            .cached
            .iter()
            .zip(prompt)
            .take_while(|(a, b)| a == b)
            .count();
        if keep == prompt.len() {
            // At least one token is evaluated again, for fresh logits.
            keep -= 1;
        }
        let removed = self
            .context
            .clear_kv_cache_seq(Some(0), Some(keep as u32), None)
            .map_err(|e| bad(e.to_string()))?;
        if !removed {
            self.context.clear_kv_cache();
            keep = 0;
        }
        self.cached.truncate(keep);
        let todo = (prompt.len() - keep) as u64;
        let progress = progress.filter(|_| todo > BATCH as u64);
        let tell = |done: u64| {
            if let Some(tx) = progress {
                let _ = tx.blocking_send(Ok(StreamEvent::Progress(Progress::ReadingPrompt {
                    tokens: todo,
                    done,
                })));
            }
        };
        tell(0);
        for (i, chunk) in prompt[keep..].chunks(BATCH).enumerate() {
            self.batch.clear();
            let base = keep + i * BATCH;
            for (j, &token) in chunk.iter().enumerate() {
                let last = base + j == prompt.len() - 1;
                self.batch
                    .add(token, (base + j) as i32, &[0], last)
                    .map_err(|e| bad(e.to_string()))?;
            }
            if let Err(e) = self.context.decode(&mut self.batch) {
                self.context.clear_kv_cache();
                self.cached.clear();
                return Err(bad(e.to_string()));
            }
            self.cached.extend_from_slice(chunk);
            tell((i * BATCH + chunk.len()) as u64);
        }
        Ok(keep)
    }
}

/// A fresh id for a tool call.
fn call_id() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    format!(
        "call_{nanos:08x}{:04x}",
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// Bytes of token pieces in, whole UTF-8 characters out (a character may span two tokens).
#[derive(Default)]
struct Utf8Stream {
    pending: Vec<u8>,
}

impl Utf8Stream {
    fn push(&mut self, bytes: &[u8]) -> String {
        self.pending.extend_from_slice(bytes);
        let mut out = String::new();
        loop {
            match std::str::from_utf8(&self.pending) {
                Ok(text) => {
                    out.push_str(text);
                    self.pending.clear();
                    return out;
                }
                Err(e) => {
                    let valid = e.valid_up_to();
                    out.push_str(&String::from_utf8_lossy(&self.pending[..valid]));
                    match e.error_len() {
                        None => {
                            self.pending.drain(..valid);
                            return out;
                        }
                        Some(n) => {
                            out.push('\u{FFFD}');
                            self.pending.drain(..valid + n);
                        }
                    }
                }
            }
        }
    }

    fn finish(&mut self) -> String {
        let text = String::from_utf8_lossy(&self.pending).into_owned();
        self.pending.clear();
        text
    }
}

#[cfg(test)]
mod tests {
    use super::Utf8Stream;

    #[test]
    fn a_character_split_across_pieces_comes_out_whole() {
        let mut stream = Utf8Stream::default();
        let bytes = "né→".as_bytes();
        assert_eq!(stream.push(&bytes[..2]), "n");
        assert_eq!(stream.push(&bytes[2..4]), "é");
        assert_eq!(stream.push(&bytes[4..]), "→");
        assert_eq!(stream.push(&[0xff, b'a']), "\u{FFFD}a");
        assert_eq!(stream.finish(), "");
    }
}

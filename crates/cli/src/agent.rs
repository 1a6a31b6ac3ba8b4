//! `cairn agent`: one turn from `--message` or piped standard input, or a conversation line by line
//! (at a terminal, or with `--interactive`), the answers streamed to the terminal.

use std::io::{BufRead, IsTerminal, Read, Write};

use anyhow::{bail, Context};
use cairn_api::chat::{Chat, ChatTurn, TerminalChat};
use cairn_api::line_answers::{hint, read_line_answer, yes_no, LineAnswer};
use cairn_api::{Cairn, ModelChoice};
use cairn_protocol::{AskQuestion, ChatEvent, NoticeAbout};

#[derive(Debug, Default, clap::Args)]
pub struct AgentArgs {
    /// The task. Without it: piped standard input is one task; at a terminal, a conversation.
    #[arg(long, short)]
    pub message: Option<String>,
    /// An OpenAI-compatible API root to use instead of the configured provider
    /// (e.g. http://127.0.0.1:8080/v1); needs --model.
    #[arg(long)]
    pub base_url: Option<String>,
    /// The model: an id, or provider/model for a configured provider.
    #[arg(long)]
    pub model: Option<String>,
    /// Read the API key from this environment variable.
    #[arg(long, value_name = "VAR")]
    pub api_key_env: Option<String>,
    /// Continue this conversation id (default: a new one).
    #[arg(long)]
    pub session: Option<String>,
    /// Read standard input line by line as a conversation, even when it is not a terminal.
    #[arg(long)]
    pub interactive: bool,
}

const HELP: &str =
    "Type a message and press Enter. Ctrl-C stops a running turn. /new starts a new \
conversation, /compact replaces this one's history by a summary, /exit leaves.";

pub async fn run(cairn: &Cairn, args: AgentArgs) -> anyhow::Result<std::process::ExitCode> {
    let terminal = std::io::stdin().is_terminal();
    let conversation = args.message.is_none() && (args.interactive || terminal);
    let message = match (&args.message, conversation) {
        (Some(message), _) => Some(message.clone()),
        (None, true) => None,
        (None, false) => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .context("cannot read standard input")?;
            Some(text)
        }
    };
    let api_key = match &args.api_key_env {
        Some(var) => Some(
            std::env::var(var)
                .with_context(|| format!("the environment variable {var} is not set"))?,
        ),
        None => None,
    };
    // Checked before anything is built: an id that is no file name is the first thing said.
    let mut session = args.session.unwrap_or_else(cairn_api::mint_task_id);
    if let Some(problem) = cairn_api::session_id_problem(&session, "session") {
        bail!("{problem}");
    }
    let root = std::env::current_dir().context("cannot read the current directory")?;
    let setup = TerminalChat {
        model: ModelChoice {
            base_url: args.base_url,
            model: args.model,
            api_key,
        },
        one_shot: message.is_some(),
    };
    let chat = Chat::in_terminal(cairn.clone(), root, setup);
    // Built now: a model that cannot be used is said before anything is read.
    chat.runtime()?;
    for warning in cairn.lsp_warnings() {
        eprintln!("{warning}");
    }
    let Some(message) = message else {
        let exit = converse(&chat, &mut session, terminal).await;
        cairn.shutdown_language_servers().await;
        return exit;
    };
    if message.trim().is_empty() {
        bail!("the message is empty");
    }
    wait_for_mcp_servers(cairn).await;
    let wakeups = chat.jobs().wakeups();
    let ended = turn(
        &chat,
        &session,
        chat.send(&session, message.trim(), &[])?,
        None,
    )
    .await?;
    finish_jobs(&chat, &session, wakeups).await?;
    cairn.shutdown_language_servers().await;
    // An answer given over a failed call is not a success, whatever it says.
    Ok(match ended {
        Ended::Unresolved => std::process::ExitCode::FAILURE,
        Ended::Done | Ended::Stopped => std::process::ExitCode::SUCCESS,
    })
}

/// A one-shot turn gets the configured MCP servers' tools: those still starting after the usual
/// short wait are waited for up to their `startup_timeout`, saying which; the person is told when
/// the turn starts without one.
async fn wait_for_mcp_servers(cairn: &Cairn) {
    let not_ready = cairn
        .wait_for_mcp_servers(|waiting, longest| {
            eprintln!(
                "waiting for the MCP server{} {} to start (up to {} s)…",
                if waiting.len() == 1 { "" } else { "s" },
                waiting.join(", "),
                longest.as_secs()
            )
        })
        .await;
    for name in not_ready {
        eprintln!("the MCP server {name} is still starting: the turn begins without its tools");
    }
}

/// With nobody to ask, the jobs the prompt started are waited for (each end told to the model in
/// a turn of its own); Ctrl-C stops them instead.
async fn finish_jobs(
    chat: &Chat,
    session: &str,
    wakeups: Option<tokio::sync::mpsc::UnboundedReceiver<String>>,
) -> anyhow::Result<()> {
    let Some(mut wakeups) = wakeups else {
        return Ok(());
    };
    loop {
        if chat.jobs().has_notes(session) {
            turn(chat, session, chat.wake(session)?, None).await?;
            continue;
        }
        let running = chat.jobs().running_in(session);
        if running == 0 {
            return Ok(());
        }
        eprintln!("[waiting for {running} background job(s); Ctrl-C stops them]");
        tokio::select! {
            _ = wakeups.recv() => {}
            _ = tokio::signal::ctrl_c() => {
                chat.jobs().end_session(session);
                eprintln!("[the background jobs were stopped]");
                return Ok(());
            }
        }
    }
}

/// The line mode: each line is a turn of one conversation, until /exit or the end of input.
async fn converse(
    chat: &Chat,
    session: &mut String,
    terminal: bool,
) -> anyhow::Result<std::process::ExitCode> {
    if terminal {
        eprintln!("{HELP}");
    }
    let stdin = std::io::stdin();
    let mut lines = stdin.lock().lines();
    loop {
        if terminal {
            eprint!("› ");
            let _ = std::io::stderr().flush();
        }
        // Jobs that ended while the person typed are told first, in a turn of their own.
        if chat.jobs().has_notes(session) {
            let woken = match chat.wake(session) {
                Ok(events) => turn(chat, session, events, None).await,
                Err(e) => Err(e.into()),
            };
            if let Err(e) = woken {
                eprintln!("cairn: {e:#}");
            }
            continue;
        }
        let Some(line) = lines.next() else { break };
        let line = line.context("cannot read standard input")?;
        let text = line.trim();
        match text {
            "" => continue,
            "/exit" | "/quit" => {
                let running = chat.jobs().running_in(session);
                if running > 0 && terminal {
                    eprint!(
                        "{running} background job(s) still running: stop them and leave? [y/N] "
                    );
                    let _ = std::io::stderr().flush();
                    let sure = lines
                        .next()
                        .and_then(Result::ok)
                        .is_some_and(|l| yes_no(&l) == Some(true));
                    if !sure {
                        continue;
                    }
                }
                chat.jobs().end_session(session);
                break;
            }
            "/new" => {
                *session = cairn_api::mint_task_id();
                eprintln!("(a new conversation)");
            }
            "/help" => eprintln!("{HELP}"),
            "/compact" => match chat.compact(session).await {
                Ok(summary) => eprintln!(
                    "(compacted: the history is now a summary of {} characters)",
                    summary.chars().count()
                ),
                Err(e) => eprintln!("cairn: {e:#}"),
            },
            command if command.starts_with('/') => eprintln!("unknown command {command}: {HELP}"),
            _ => {
                let mut read = || lines.next().and_then(Result::ok);
                let sent = match chat.send(session, text, &[]) {
                    Ok(events) => turn(chat, session, events, Some(&mut read)).await,
                    Err(e) => Err(e.into()),
                };
                if let Err(e) = sent {
                    eprintln!("cairn: {e:#}");
                }
            }
        }
    }
    Ok(std::process::ExitCode::SUCCESS)
}

/// Lines of a tool's output shown under its display line (`previewLines`).
const PREVIEW_LINES: usize = 5;

/// Reads one line from the person (approvals, questions); `None` when input has ended.
type ReadLine<'a> = &'a mut dyn FnMut() -> Option<String>;

/// How a turn the terminal printed ended (a failed one is an error).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ended {
    Done,
    /// Answered over a failed tool call that nothing got past.
    Unresolved,
    Stopped,
}

/// One turn (a message, or a wake-up by jobs that ended), its answer streamed to standard
/// output; tool lines, questions and the recap go to standard error. Ctrl-C stops the turn (its
/// commands are killed), not the program.
async fn turn(
    chat: &Chat,
    session: &str,
    mut events: ChatTurn,
    mut read_line: Option<ReadLine<'_>>,
) -> anyhow::Result<Ended> {
    let mut stdout = std::io::stdout();
    let mut recalled = 0;
    let mut at_line_start = true;
    loop {
        let event = tokio::select! {
            event = events.next() => event,
            _ = tokio::signal::ctrl_c() => {
                chat.stop(session)?;
                continue;
            }
        };
        let Some(event) = event else { break };
        match event {
            ChatEvent::Recalled { hits, .. } => recalled = hits,
            ChatEvent::Text { text } => {
                print!("{text}");
                at_line_start = text.ends_with('\n');
                let _ = stdout.flush();
            }
            // The note's first two lines: the mark, and which job ended how.
            ChatEvent::JobNote { text } => {
                if !at_line_start {
                    println!();
                    at_line_start = true;
                }
                let head: Vec<&str> = text.lines().take(2).collect();
                eprintln!("⏺ {}", head.join(" "));
            }
            ChatEvent::Tool { display, .. } => {
                if !at_line_start {
                    println!();
                    at_line_start = true;
                }
                eprintln!("{display}");
            }
            ChatEvent::Approval { request, .. } => {
                let allow = match read_line.as_mut() {
                    Some(read) => {
                        eprint!("🔐 run it? [y/N] ");
                        let _ = std::io::stderr().flush();
                        read().is_some_and(|l| yes_no(&l) == Some(true))
                    }
                    None => false,
                };
                chat.approve(request, allow)?;
            }
            ChatEvent::Question { request, questions } => {
                let answer = match read_line.as_mut() {
                    Some(read) => ask(&questions, *read),
                    None => LineAsk::Cancelled,
                };
                match answer {
                    LineAsk::Answered(answers) => chat.answer(request, Some(answers))?,
                    LineAsk::Declined => chat.answer(request, None)?,
                    LineAsk::Cancelled => chat.cancel_question(request)?,
                }
            }
            ChatEvent::ToolDone { output, .. } => eprint!("{}", preview(&output)),
            // An asked agent's words and calls, as they come.
            ChatEvent::ToolProgress { text, .. } => {
                eprint!("{text}");
                let _ = std::io::stderr().flush();
            }
            ChatEvent::Notice { text, about } => eprintln!("{}", notice_words(&text, about)),
            // Only a person at a terminal reads what the turn waits for.
            ChatEvent::Status { status } if std::io::stderr().is_terminal() => {
                eprintln!("[{}]", crate::agent::status_words(&status));
            }
            ChatEvent::Status { .. } => {}
            ChatEvent::Retrying { reason, after_ms } => {
                eprintln!(
                    "[{reason}: trying again in {:.1} s]",
                    after_ms as f64 / 1000.0
                )
            }
            ChatEvent::Done {
                steps,
                input_tokens,
                output_tokens,
                tools,
                unresolved,
                ..
            } => {
                println!();
                let mut recap = format!(
                    "{steps} step(s) · {input_tokens} tokens in, {output_tokens} out · {recalled} memor{} recalled",
                    if recalled == 1 { "y" } else { "ies" }
                );
                if let Some(tools) = tools {
                    recap = format!("{tools} · {recap}");
                }
                eprintln!("({recap})");
                return Ok(if unresolved.is_some() {
                    Ended::Unresolved
                } else {
                    Ended::Done
                });
            }
            ChatEvent::Stopped { tools } => {
                println!();
                let tools = tools.map(|r| format!(" ({r})")).unwrap_or_default();
                eprintln!("[stopped]{tools}");
                return Ok(Ended::Stopped);
            }
            ChatEvent::Failed { message, .. } => {
                println!();
                bail!("{message}");
            }
        }
    }
    bail!("the agent stopped without finishing the turn")
}

/// A notice as the terminal words it (on a line of its own, in brackets).
fn notice_words(text: &str, about: Option<NoticeAbout>) -> String {
    match about {
        Some(NoticeAbout::Nudged { reason }) => format!("\n[asked again: the reply was {reason}]"),
        Some(NoticeAbout::WrappedUp { limit }) => {
            format!("\n[the {limit} was reached: the tools were withdrawn for a final answer]")
        }
        Some(NoticeAbout::Compacted) => {
            "[the earlier conversation was summarised to fit the model's context]".to_owned()
        }
        None => format!("[{text}]"),
    }
}

/// A tool's output as the terminal shows it: up to PREVIEW_LINES lines, dimmed and indented
/// (its id header left out), or `(no output)`.
fn preview(output: &str) -> String {
    let body: Vec<&str> = output
        .lines()
        .skip(usize::from(output.starts_with("[#")))
        .collect();
    let dim = std::io::stderr().is_terminal();
    let (on, off) = if dim {
        ("\x1b[2m", "\x1b[0m")
    } else {
        ("", "")
    };
    if body.iter().all(|l| l.trim().is_empty()) {
        return format!("{on}   (no output){off}\n");
    }
    let mut out = String::new();
    for line in body.iter().take(PREVIEW_LINES) {
        out.push_str(&format!("{on}   {line}{off}\n"));
    }
    if body.len() > PREVIEW_LINES {
        out.push_str(&format!(
            "{on}   … {} more line(s){off}\n",
            body.len() - PREVIEW_LINES
        ));
    }
    out
}

/// What the person made of ask_user's questions in line mode.
enum LineAsk {
    /// One answer per question.
    Answered(Vec<String>),
    /// `/skip`.
    Declined,
    /// `/abort`, or the input ended.
    Cancelled,
}

/// ask_user in line mode: each question in turn, one typed line answers it.
fn ask(questions: &[AskQuestion], read: &mut dyn FnMut() -> Option<String>) -> LineAsk {
    let mut answers = Vec::new();
    for q in questions {
        eprintln!("❓ {}", q.question);
        for (i, option) in q.options.iter().enumerate() {
            let default = if q.default.as_deref() == Some(option) {
                " (default)"
            } else {
                ""
            };
            eprintln!("  {}. {option}{default}", i + 1);
        }
        eprintln!("{}", hint(q));
        loop {
            eprint!("  ? ");
            let _ = std::io::stderr().flush();
            let Some(line) = read() else {
                return LineAsk::Cancelled;
            };
            if matches!(line.trim(), "/abort" | "/quit" | "/stop") {
                return LineAsk::Cancelled;
            }
            match read_line_answer(q, &line) {
                LineAnswer::Answer(a) => {
                    answers.push(a);
                    break;
                }
                LineAnswer::Decline => return LineAsk::Declined,
                LineAnswer::Again => eprintln!("{}", hint(q)),
            }
        }
    }
    LineAsk::Answered(answers)
}

/// What a turn waits for, in words, for the terminal.
pub(crate) fn status_words(status: &cairn_protocol::TurnStatus) -> String {
    use cairn_protocol::TurnStatus;
    match status {
        TurnStatus::LoadingModel { model } => format!("loading {model}…"),
        TurnStatus::ReadingContext { tokens, done } => format!(
            "reading {tokens} tokens of context… {}%",
            (done.saturating_mul(100) / (*tokens).max(1)).min(100)
        ),
        TurnStatus::Waiting { model } => format!("waiting for {model}…"),
        TurnStatus::Thinking => "thinking…".to_owned(),
        TurnStatus::RunningTool { name } => format!("running {name}…"),
    }
}

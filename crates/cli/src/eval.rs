//! `cairn eval locomo`, `cairn eval knowledge-update` and `cairn bench recall`: the memory's quality and speed, measured by the
//! product itself.

use std::fmt::Write;
use std::path::Path;

use anyhow::Context;
use cairn_api::Cairn;
use cairn_eval::knowledge_update::KnowledgeUpdateReport;
use cairn_eval::locomo::{evaluate, LocomoReport};
use cairn_eval::recall_bench::{self, RecallBench};

/// Runs the LoCoMo retrieval evaluation and prints it.
pub fn locomo(
    cairn: &Cairn,
    file: &Path,
    ks: &[usize],
    lexical: bool,
    dream: bool,
    json: bool,
) -> anyhow::Result<()> {
    let text =
        std::fs::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))?;
    let embedder = if lexical { None } else { cairn.load_embedder() };
    let report = evaluate(&text, ks, embedder, dream)
        .with_context(|| format!("{} is not a LoCoMo file", file.display()))?;
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", render_locomo(&report, ks));
    }
    Ok(())
}

/// Runs the knowledge-update evaluation and prints it.
pub fn knowledge_update(
    cairn: &Cairn,
    file: &Path,
    lexical: bool,
    dream: bool,
    json: bool,
    run: Option<&Path>,
) -> anyhow::Result<()> {
    let text =
        std::fs::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))?;
    let embedder = if lexical { None } else { cairn.load_embedder() };
    let report = cairn_eval::knowledge_update::evaluate(&text, embedder, dream)
        .with_context(|| format!("{} is not a knowledge-update file", file.display()))?;
    if let Some(path) = run {
        let ranking = report.runs.get("cairn").cloned().unwrap_or_default();
        std::fs::write(path, serde_json::to_string_pretty(&ranking)?)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    if json {
        let mut value = serde_json::to_value(&report)?;
        if let Some(map) = value.as_object_mut() {
            map.remove("runs");
        }
        println!("{}", serde_json::to_string_pretty(&value)?);
    } else {
        print!("{}", render_knowledge_update(&report));
    }
    Ok(())
}

fn render_knowledge_update(report: &KnowledgeUpdateReport) -> String {
    const METRICS: [(&str, &str); 7] = [
        ("latest@1", "latest@1"),
        ("latest_recall@5", "recall@5"),
        ("latest_recall@10", "recall@10"),
        ("superseded_above_latest@5", "stale>@5"),
        ("superseded_in_top5", "stale@5"),
        ("distractor_above_latest@5", "passing>@5"),
        ("latest_mrr", "mrr"),
    ];
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Knowledge updates: {} questions (6: what holds now, 7: what held before a change)",
        report.questions
    );
    let _ = writeln!(out, "{}", channels_line(report.embedding_model.as_deref()));
    let mut header = format!("{:<8}{:<15}{:>4}", "system", "category", "n");
    for (_, label) in METRICS {
        let _ = write!(header, "{label:>11}");
    }
    let _ = writeln!(out, "{header}");
    for system in ["cairn", "bm25"] {
        for category in ["current_value", "past_value"] {
            let Some(metrics) = report.systems.get(system).and_then(|s| s.get(category)) else {
                continue;
            };
            let n = report.counts.get(category).copied().unwrap_or(0);
            let mut line = format!("{system:<8}{category:<15}{n:>4}");
            for (metric, _) in METRICS {
                let _ = write!(line, "{:>11.1}", metrics.get(metric).unwrap_or(&0.0));
            }
            let _ = writeln!(out, "{line}");
        }
    }
    let _ = writeln!(
        out,
        "stale>@5: an older statement of the fact in the top 5 above the answer (lower is better); \
         passing>@5: a passing mention of an old value there."
    );
    out
}

/// Which channels Cairn's recall ran with.
fn channels_line(embedding_model: Option<&str>) -> String {
    format!(
        "Cairn's channels: lexical{}",
        embedding_model
            .map(|m| format!(" + vectors ({m})"))
            .unwrap_or_else(|| " only (no embedding model installed)".into())
    )
}

fn render_locomo(report: &LocomoReport, ks: &[usize]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "LoCoMo retrieval: {} questions (categories 1–4), {} evidence ids dropped as unresolvable",
        report.questions, report.dropped_evidence
    );
    let _ = writeln!(out, "{}", channels_line(report.embedding_model.as_deref()));
    let mut header = format!("{:<8}{:<13}{:>6}", "system", "category", "n");
    for k in ks {
        let _ = write!(header, "{:>10}", format!("turn@{k}"));
    }
    for k in ks {
        let _ = write!(header, "{:>11}", format!("session@{k}"));
    }
    let _ = writeln!(out, "{header}");
    for system in ["cairn", "bm25"] {
        let Some(groups) = report.systems.get(system) else {
            continue;
        };
        for group in [
            "overall",
            "multi_hop",
            "temporal",
            "open_domain",
            "single_hop",
        ] {
            let Some(metrics) = groups.get(group) else {
                continue;
            };
            let n = report.counts.get(group).copied().unwrap_or(0);
            let mut line = format!("{system:<8}{group:<13}{n:>6}");
            for k in ks {
                let _ = write!(
                    line,
                    "{:>10.1}",
                    metrics.get(&format!("turn_recall@{k}")).unwrap_or(&0.0)
                );
            }
            for k in ks {
                let _ = write!(
                    line,
                    "{:>11.1}",
                    metrics
                        .get(&format!("session_recall_any@{k}"))
                        .unwrap_or(&0.0)
                );
            }
            let _ = writeln!(out, "{line}");
        }
    }
    out.push_str("turn@k: share of a question's evidence turns among the top k; session@k: any evidence session among them (percent)\n");
    out
}

/// Builds a synthetic corpus of `memories` L1 traces and prints its ingest and search figures.
pub fn bench_recall(
    cairn: &Cairn,
    memories: usize,
    queries: usize,
    json: bool,
) -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let bench = recall_bench::measure(dir.path(), cairn.load_embedder(), memories, queries)?;
    let RecallBench {
        memories,
        queries,
        ingest_s,
        ingest_per_s,
        p50,
        p95,
        p99,
        ..
    } = bench;
    if json {
        let report = serde_json::json!({
            "memories": memories,
            "ingest_per_s": (ingest_per_s * 10.0).round() / 10.0,
            "search_ms": { "p50": round2(p50), "p95": round2(p95), "p99": round2(p99) },
            "queries": queries,
            "vectors": bench.vectors,
            "mean_ms_by_phase": bench.phases.iter().map(|p| (p.phase.clone(), serde_json::json!(round2(p.ms)))).collect::<serde_json::Map<_, _>>(),
            "memory_mb": { "process_resident": bench.process_mb, "vector_index": bench.index_mb, "database_on_disk": bench.database_mb },
        });
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(());
    }
    println!("ingested {memories} memories in {ingest_s:.1} s ({ingest_per_s:.0} per second)");
    match &bench.vectors {
        Some(model) => println!(
            "vector channel on: queries embedded by {model}; every vector compared, by its signs first from {} vectors on",
            recall_bench::BINARY_FIRST_FROM
        ),
        None => println!("vector channel off: no embedding model installed (run ./run setup)"),
    }
    println!(
        "search over {memories} memories, {queries} queries: p50 {p50:.2} ms, p95 {p95:.2} ms, p99 {p99:.2} ms"
    );
    let spent: Vec<String> = bench
        .phases
        .iter()
        .map(|p| format!("{} {:.2}", p.phase, p.ms))
        .collect();
    println!("where a search's time goes (mean ms): {}", spent.join(", "));
    let shown = |v: Option<f64>| v.map_or("-".to_owned(), |v| format!("{v} MB"));
    println!(
        "memory: this process {} resident (the vector index {} of it), the database {} MB on disk",
        shown(bench.process_mb),
        shown(bench.index_mb),
        bench.database_mb
    );
    Ok(())
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// What a developer says to Cairn: the technical speech `eval voice` synthesises.
const TECHNICAL_SPEECH: &[&str] = &[
    "open the header file and add the missing include",
    "run the database migration before the deploy",
    "the unit tests fail on the staging server",
    "rename the function in the parser module",
    "push the branch and open a pull request",
    "the build cache lives under the target directory",
    "restart the docker container with the new config",
    "check the error log for a null pointer exception",
    "add a retry to the webhook handler",
    "tag a new release of the cairn repository",
    "bump the version in the cargo manifest",
    "merge the feature branch after the review",
];

/// espeak-ng voices and speeds (words a minute), taken in turn: `eval voice --voices`' default.
pub const DEFAULT_VOICES: &str = "en:140,en-us:165,en+m3:130,en-gb:155,en+f2:175";

/// What `eval voice` speaks and in which voices: [`TECHNICAL_SPEECH`] and [`DEFAULT_VOICES`] unless the
/// command names its own (fresh sentences, to measure on words nobody tuned for).
pub struct Speech {
    pub sentences: Vec<String>,
    pub voices: Vec<(String, u32)>,
}

impl Speech {
    /// The sentences of `file` (one a line; blank lines and `#` comments skipped) or the built-in
    /// ones, spoken in `voices` (`voice:words-a-minute`, comma-separated; the command's default
    /// is [`DEFAULT_VOICES`]).
    pub fn new(file: Option<&Path>, voices: &str) -> anyhow::Result<Self> {
        let sentences: Vec<String> = match file {
            Some(file) => {
                let text = std::fs::read_to_string(file)
                    .with_context(|| format!("cannot read the sentences in {}", file.display()))?;
                let sentences: Vec<String> = text
                    .lines()
                    .map(str::trim)
                    .filter(|l| !l.is_empty() && !l.starts_with('#'))
                    .map(str::to_owned)
                    .collect();
                anyhow::ensure!(
                    !sentences.is_empty(),
                    "{} holds no sentence (one a line; blank lines and # comments are skipped)",
                    file.display()
                );
                sentences
            }
            None => TECHNICAL_SPEECH.iter().map(|s| (*s).to_owned()).collect(),
        };
        let voices = voices
            .split(',')
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .map(|v| {
                let (voice, speed) = v.split_once(':').unwrap_or((v, "150"));
                let speed: u32 = speed.trim().parse().ok().filter(|s| (80..=450).contains(s)).with_context(|| {
                    format!("{v:?}: a voice is written voice:words-a-minute (80–450), like en-us:165")
                })?;
                Ok((voice.trim().to_owned(), speed))
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        anyhow::ensure!(
            !voices.is_empty(),
            "no voice given: --voices en:140,en-us:165"
        );
        Ok(Self { sentences, voices })
    }

    /// Every voice is one espeak-ng has (a name, optionally `+variant`): espeak-ng speaks an
    /// unknown voice in its default one without a word, which would measure the wrong speech.
    fn check_voices(&self) -> anyhow::Result<()> {
        let known = |selector: &str| -> anyhow::Result<std::collections::HashSet<String>> {
            let out = std::process::Command::new("espeak-ng")
                .arg(selector)
                .output()
                .context("espeak-ng is needed to synthesise the speech: run ./run setup")?;
            let listing = String::from_utf8_lossy(&out.stdout).to_lowercase();
            // Columns: priority, language, age/gender, name, file (`gmw/en-US`, `!v/f2`), others.
            Ok(listing
                .lines()
                .skip(1)
                .flat_map(|line| {
                    let columns: Vec<&str> = line.split_whitespace().collect();
                    let file = columns.get(4).copied().unwrap_or_default();
                    let base = file.rsplit('/').next().unwrap_or_default();
                    [
                        columns.get(1).copied(),
                        columns.get(3).copied(),
                        Some(file),
                        Some(base),
                    ]
                })
                .flatten()
                .map(str::to_owned)
                .collect())
        };
        let (voices, variants) = (known("--voices")?, known("--voices=variant")?);
        for (voice, _) in &self.voices {
            let lower = voice.to_lowercase();
            let (name, variant) = lower.split_once('+').unwrap_or((lower.as_str(), ""));
            anyhow::ensure!(
                voices.contains(name) && (variant.is_empty() || variants.contains(variant)),
                "espeak-ng has no voice {voice:?} (espeak-ng --voices lists them; a variant \
                 follows a +, as in en+f2, from espeak-ng --voices=variant)"
            );
        }
        Ok(())
    }
}

/// Synthesises the sentences of `speech` with espeak-ng, each twice in the next two of its
/// voices, transcribes each clip three ways — plain, primed with what the person said lately,
/// from memory, decoded greedily, and so primed with beam search (what voice input does) — and
/// prints the word error rate of each.
pub fn voice(
    cairn: &Cairn,
    speech: &Speech,
    model: Option<&str>,
    json: bool,
) -> anyhow::Result<()> {
    speech.check_voices()?;
    let dir = tempfile::tempdir()?;
    let transcriber = cairn.transcriber(model)?;
    let hints = cairn.voice_hints();
    let vocabulary = hints.vocabulary.clone();
    let ways: [(&str, cairn_api::voice::Hints); 3] = [
        ("plain", cairn_api::voice::Hints::default()),
        (
            "primed with what the person said, greedy",
            cairn_api::voice::Hints {
                beam: false,
                ..hints.clone()
            },
        ),
        (
            "primed, beam search (voice input)",
            cairn_api::voice::Hints {
                beam: true,
                ..hints.clone()
            },
        ),
    ];
    let mut errors = [0.0f64; 3];
    let mut words = 0.0f64;
    // Per voice, as voice input decodes: (word errors, words).
    let mut by_voice = vec![(0.0f64, 0.0f64); speech.voices.len()];
    let mut clips = Vec::new();
    for (i, sentence) in speech.sentences.iter().enumerate() {
        for take in 0..2 {
            let which = (i * 2 + take) % speech.voices.len();
            let (voice, speed) = &speech.voices[which];
            let wav = dir.path().join(format!("s{i}-{take}.wav"));
            let status = std::process::Command::new("espeak-ng")
                .args(["-v", voice.as_str(), "-s", &speed.to_string(), "-w"])
                .arg(&wav)
                .arg(sentence)
                .status()
                .context("espeak-ng is needed to synthesise the speech: run ./run setup")?;
            anyhow::ensure!(
                status.success(),
                "espeak-ng failed on {sentence:?} in the voice {voice} (espeak-ng --voices lists them)"
            );
            let samples = cairn_api::voice::read_wav(&wav)?;
            let n = sentence.split_whitespace().count() as f64;
            words += n;
            let mut heard = Vec::new();
            let mut wrong = 0.0;
            for (at, (_, hints)) in ways.iter().enumerate() {
                let text = transcriber.transcribe_with(&samples, "en", hints)?;
                wrong = cairn_api::voice::word_error_rate(sentence, &text) * n;
                errors[at] += wrong;
                heard.push(text);
            }
            // The last way is voice input's.
            by_voice[which].0 += wrong;
            by_voice[which].1 += n;
            clips.push(serde_json::json!({
                "sentence": sentence, "voice": voice, "speed": speed,
                "plain": heard[0], "vocabulary": heard[1], "vocabulary_beam": heard[2],
            }));
        }
    }
    let percent = |errors: f64, words: f64| (errors / words.max(1.0) * 1000.0).round() / 10.0;
    let wer = |at: usize| percent(errors[at], words);
    let voices: Vec<(String, f64)> = speech
        .voices
        .iter()
        .zip(&by_voice)
        .filter(|(_, (_, n))| *n > 0.0)
        .map(|((voice, speed), (e, n))| (format!("{voice}:{speed}"), percent(*e, *n)))
        .collect();
    if json {
        let report = serde_json::json!({
            "clips": clips.len(),
            "words": words,
            "vocabulary": vocabulary,
            "said": hints.said,
            "wer": { "plain": wer(0), "vocabulary": wer(1), "vocabulary_beam": wer(2) },
            "wer_by_voice": voices
                .iter()
                .map(|(voice, wer)| (voice.clone(), serde_json::json!(wer)))
                .collect::<serde_json::Map<_, _>>(),
            "transcripts": clips,
        });
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!(
            "{} clips of technical speech ({} voices, {words:.0} words), transcribed by {}",
            clips.len(),
            speech.voices.len(),
            transcriber_name(cairn, model)
        );
        if vocabulary.is_empty() {
            println!("vocabulary from memory: none (memory holds nothing the person says often)");
        } else {
            println!("vocabulary from memory: {}", vocabulary.join(", "));
        }
        for (at, (name, _)) in ways.iter().enumerate() {
            println!("word error rate, {name}: {:.1} %", wer(at));
        }
        let each: Vec<String> = voices
            .iter()
            .map(|(v, w)| format!("{v} {w:.1} %"))
            .collect();
        println!("by voice, as voice input decodes: {}", each.join(", "));
    }
    Ok(())
}

fn transcriber_name(cairn: &Cairn, model: Option<&str>) -> String {
    model.map(str::to_owned).unwrap_or_else(|| {
        cairn
            .load_config()
            .map(|c| c.voice.model)
            .unwrap_or_default()
    })
}

/// `cairn bench dream`: a dream over a synthetic memory and its restore, timed.
pub fn bench_dream(memories: usize, json: bool) -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let bench = cairn_eval::dream_bench::measure(dir.path(), memories)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&bench)?);
        return Ok(());
    }
    println!(
        "dreamt over {} memories in {:.2} s ({:.0} per second): {} of {} restatements merged, {} read for facts first",
        bench.memories,
        bench.dream_s,
        bench.memories as f64 / bench.dream_s,
        bench.merged,
        bench.restated,
        bench.caught_up
    );
    println!(
        "restore point {:.1} MB (database {:.1} MB), restored in {:.2} s; the dream added {} of resident memory",
        bench.restore_point_mb,
        bench.database_mb,
        bench.restore_s,
        bench
            .dream_rss_mb
            .map_or_else(|| "an unknown amount".to_owned(), |mb| format!("{mb:.1} MB"))
    );
    println!("(no summary model: episode notes are not timed here; each takes one model call)");
    Ok(())
}

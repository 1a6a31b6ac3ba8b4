//! Everyday tasks of a coding agent (`tests/tasks/everyday.json`: list, count, write and run,
//! change a value, fix a bug, rename…), each given to `cairn agent --message` in a fresh folder
//! with a fresh data home on Cairn's own model (no config), and checked on disk or in the answer.
//! Prints each task's outcome — done, honestly not done (the command exited non-zero or the answer
//! says what failed), or claimed (reported as done when the checks fail) — with its seconds and
//! steps, then the success rate and the median time.
//!
//! `cargo bench -p cairn-tests --bench everyday_tasks [-- --only id,id] [--config FILE]
//! [--timeout SECONDS] [--shared-home] [--json]` (build `cairn` and `cairn-model-host` first, and
//! install the model: `./run setup`). The models are read from `$CAIRN_HOME/models` or
//! `~/.cairn/models`. `--shared-home` runs every task on one data home, as a person's would be:
//! each task then recalls the memories of the tasks before it, which must not derail it.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

type Failure = Box<dyn std::error::Error>;

/// Words with which an answer says that it did not do the task.
const OWNING_UP: &[&str] = &[
    "could not",
    "couldn't",
    "cannot",
    "can't",
    "unable",
    "failed",
    "not able",
    "⚠ unresolved",
];

/// `name` as built in this target dir (the newer of release and debug).
fn target_binary(name: &str) -> Result<PathBuf, Failure> {
    let exe = std::env::current_exe()?;
    let target = exe
        .parent()
        .and_then(Path::parent)
        .and_then(Path::parent)
        .ok_or("no target dir")?;
    // The newer build: a release one left from earlier must not measure old code.
    let newest = ["release", "debug"]
        .iter()
        .map(|profile| target.join(profile).join(name))
        .filter_map(|p| Some((p.metadata().ok()?.modified().ok()?, p)))
        .max();
    if let Some((_, path)) = newest {
        return Ok(path);
    }
    Err(
        format!("build it first: cargo build -p cairn-cli -p cairn-local ({name} is missing)")
            .into(),
    )
}

fn models_dir() -> Result<PathBuf, Failure> {
    let home = match std::env::var_os("CAIRN_HOME") {
        Some(home) => PathBuf::from(home),
        None => PathBuf::from(std::env::var_os("HOME").ok_or("no HOME")?).join(".cairn"),
    };
    let models = home.join("models");
    if !models.is_dir() {
        return Err(format!("no models at {}: run ./run setup", models.display()).into());
    }
    Ok(models)
}

struct Options {
    only: Vec<String>,
    config: Option<PathBuf>,
    timeout: Duration,
    json: bool,
    shared_home: bool,
}

fn options() -> Result<Options, Failure> {
    let mut options = Options {
        only: Vec::new(),
        config: None,
        timeout: Duration::from_secs(240),
        json: false,
        shared_home: false,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--only" => {
                options.only = args
                    .next()
                    .ok_or("--only takes ids")?
                    .split(',')
                    .map(str::to_owned)
                    .collect()
            }
            "--config" => options.config = Some(args.next().ok_or("--config takes a file")?.into()),
            "--timeout" => {
                options.timeout =
                    Duration::from_secs(args.next().ok_or("--timeout takes seconds")?.parse()?)
            }
            "--json" => options.json = true,
            "--shared-home" => options.shared_home = true,
            // cargo bench passes --bench.
            _ => {}
        }
    }
    Ok(options)
}

/// What one check found wrong, if anything.
fn check(expect: &Value, dir: &Path, answer: &str) -> Option<String> {
    let read = |file: &str| std::fs::read_to_string(dir.join(file)).unwrap_or_default();
    if let Some(words) = expect["answer_contains"].as_array() {
        let missing: Vec<&str> = words
            .iter()
            .filter_map(Value::as_str)
            .filter(|w| !answer.contains(w))
            .collect();
        return (!missing.is_empty()).then(|| format!("the answer lacks {missing:?}"));
    }
    if let Some(command) = expect["answer_contains_output_of"].as_str() {
        let wanted = Command::new("bash")
            .arg("-c")
            .arg(command)
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
            .unwrap_or_default();
        return (wanted.is_empty() || !answer.contains(&wanted))
            .then(|| format!("the answer lacks {wanted:?} (what `{command}` prints here)"));
    }
    if let Some(file) = expect["absent"].as_str() {
        return dir
            .join(file)
            .exists()
            .then(|| format!("{file} is still there"));
    }
    if let Some(command) = expect["run"].as_str() {
        let out = Command::new("bash")
            .arg("-c")
            .arg(command)
            .current_dir(dir)
            .output();
        let text = match out {
            Ok(o) => format!(
                "{}{}",
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            ),
            Err(e) => e.to_string(),
        };
        let wanted = expect["output_contains"].as_str().unwrap_or_default();
        return (!text.contains(wanted)).then(|| format!("`{command}` did not print {wanted:?}"));
    }
    let file = expect["file"].as_str().unwrap_or_default();
    let text = read(file);
    if !dir.join(file).exists() {
        return Some(format!("{file} does not exist"));
    }
    if let Some(wanted) = expect["contains"].as_str() {
        if !text.contains(wanted) {
            return Some(format!("{file} lacks {wanted:?}"));
        }
    }
    if let Some(unwanted) = expect["not_contains"].as_str() {
        if text.contains(unwanted) {
            return Some(format!("{file} still has {unwanted:?}"));
        }
    }
    None
}

/// `N step(s)` from the turn's recap on standard error.
fn steps(stderr: &str) -> Option<u64> {
    count_before(stderr, " step(s)")
}

/// The number the turn's footer gives before `what` (" step(s)", " memor" of memories recalled).
fn count_before(stderr: &str, what: &str) -> Option<u64> {
    let at = stderr.rfind(what)?;
    stderr[..at]
        .rsplit(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()
}

/// A data home with the models linked in (and the config given).
fn new_home(options: &Options, models: &Path) -> Result<tempfile::TempDir, Failure> {
    let home = tempfile::tempdir()?;
    std::os::unix::fs::symlink(models, home.path().join("models"))?;
    if let Some(config) = &options.config {
        std::fs::copy(config, home.path().join("config.toml"))?;
    }
    Ok(home)
}

/// Runs `task` on `home` (a fresh one when `None`).
fn run_task(
    task: &Value,
    options: &Options,
    cairn: &Path,
    models: &Path,
    home: Option<&Path>,
) -> Result<Value, Failure> {
    let fresh = match home {
        Some(_) => None,
        None => Some(new_home(options, models)?),
    };
    let home = match (&fresh, home) {
        (Some(fresh), _) => fresh.path(),
        (None, Some(home)) => home,
        (None, None) => return Err("no data home".into()),
    };
    let work = tempfile::tempdir()?;
    for (name, content) in task["files"].as_object().into_iter().flatten() {
        let path = work.path().join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(path, content.as_str().unwrap_or_default())?;
    }
    let prompt = task["prompt"].as_str().unwrap_or_default();
    let started = Instant::now();
    let mut child = Command::new(cairn)
        .args(["agent", "--message", prompt])
        .env("CAIRN_HOME", home)
        .current_dir(work.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let (stdout, stderr) = (child.stdout.take(), child.stderr.take());
    let out = std::thread::spawn(move || read_all(stdout));
    let err = std::thread::spawn(move || read_all(stderr));
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break Some(status);
        }
        if started.elapsed() > options.timeout {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let seconds = started.elapsed().as_secs_f64();
    let answer = out.join().unwrap_or_default();
    let stderr = err.join().unwrap_or_default();
    let wrong: Vec<String> = task["expect"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| check(e, work.path(), &answer))
        .collect();
    let exit = status.and_then(|s| s.code());
    let lower = answer.to_lowercase();
    let outcome = if wrong.is_empty() {
        "done"
    } else if exit != Some(0) || OWNING_UP.iter().any(|w| lower.contains(w)) {
        "not done, said so"
    } else {
        "claimed"
    };
    Ok(json!({
        "id": task["id"], "outcome": outcome, "seconds": (seconds * 10.0).round() / 10.0,
        "steps": steps(&stderr), "recalled": count_before(&stderr, " memor"), "exit": exit, "wrong": wrong,
        "answer": answer.trim(),
    }))
}

fn read_all(pipe: Option<impl std::io::Read>) -> String {
    let mut text = String::new();
    if let Some(mut pipe) = pipe {
        let _ = pipe.read_to_string(&mut text);
    }
    text
}

fn median(mut values: Vec<f64>) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    if values.len().is_multiple_of(2) {
        (values[mid - 1] + values[mid]) / 2.0
    } else {
        values[mid]
    }
}

fn main() -> Result<(), Failure> {
    let options = options()?;
    let cairn = target_binary("cairn")?;
    target_binary("cairn-model-host")?;
    let models = models_dir()?;
    let set: Value = serde_json::from_str(include_str!("../tasks/everyday.json"))?;
    let tasks: Vec<&Value> = set["tasks"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|t| options.only.is_empty() || options.only.iter().any(|id| t["id"] == id.as_str()))
        .collect();
    let shared = match options.shared_home {
        true => Some(new_home(&options, &models)?),
        false => None,
    };
    let mut results = Vec::new();
    for task in tasks {
        let home = shared.as_ref().map(tempfile::TempDir::path);
        let result = run_task(task, &options, &cairn, &models, home)?;
        if !options.json {
            println!(
                "{:<16} {:<18} {:>6.1} s  {:>2} step(s)  {}",
                result["id"].as_str().unwrap_or_default(),
                result["outcome"].as_str().unwrap_or_default(),
                result["seconds"].as_f64().unwrap_or_default(),
                result["steps"]
                    .as_u64()
                    .map_or("-".into(), |s| s.to_string()),
                result["wrong"]
                    .as_array()
                    .map(|w| w
                        .iter()
                        .filter_map(Value::as_str)
                        .collect::<Vec<_>>()
                        .join("; "))
                    .unwrap_or_default()
            );
        }
        results.push(result);
    }
    let count = |outcome: &str| results.iter().filter(|r| r["outcome"] == outcome).count();
    let seconds: Vec<f64> = results
        .iter()
        .filter_map(|r| r["seconds"].as_f64())
        .collect();
    let steps: Vec<f64> = results.iter().filter_map(|r| r["steps"].as_f64()).collect();
    let summary = json!({
        "tasks": results.len(),
        "done": count("done"),
        "not_done_said_so": count("not done, said so"),
        "claimed": count("claimed"),
        "median_seconds": (median(seconds) * 10.0).round() / 10.0,
        "mean_steps": (steps.iter().sum::<f64>() / steps.len().max(1) as f64 * 10.0).round() / 10.0,
    });
    if options.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({"summary": summary, "results": results}))?
        );
    } else {
        println!(
            "done {} of {} · not done but said so {} · claimed when not done {} · median {} s · mean {} step(s)",
            summary["done"], summary["tasks"], summary["not_done_said_so"], summary["claimed"],
            summary["median_seconds"], summary["mean_steps"]
        );
    }
    Ok(())
}

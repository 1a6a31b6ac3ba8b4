//! The desktop app's cold start to an interactive workbench (the page loaded and asking the
//! backend for its status) and its memory once idle (RSS of the app and its WebKit processes),
//! each over a few starts with a fresh data home. Needs a display (starts Xvfb when there is none)
//! and a built app (`cargo build -p cairn-desktop`, or `--release`).
//!
//! `cargo bench -p cairn-tests --bench desktop_start`

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn binary() -> Result<PathBuf, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let target = exe
        .parent()
        .and_then(Path::parent)
        .and_then(Path::parent)
        .ok_or("no target dir")?;
    for profile in ["release", "debug"] {
        let candidate = target.join(profile).join("cairn-desktop");
        if candidate.exists() {
            return Ok(candidate);
        }
    }
    Err("build the app first: cargo build -p cairn-desktop".into())
}

/// Memory (kB) of `pid` and every process below it: `field` of each one's smaps_rollup (`Rss:`
/// counts shared libraries once per process; `Pss:` shares them out, so the sum is what the
/// processes really take together).
fn tree_kb(pid: u32, field: &str) -> u64 {
    tree(pid).into_iter().map(|p| process_kb(p, field)).sum()
}

/// `pid` and every process below it.
fn tree(pid: u32) -> Vec<u32> {
    let mut all = Vec::new();
    let mut queue = vec![pid];
    while let Some(p) = queue.pop() {
        all.push(p);
        if let Ok(children) = std::fs::read_to_string(format!("/proc/{p}/task/{p}/children")) {
            queue.extend(
                children
                    .split_whitespace()
                    .filter_map(|c| c.parse::<u32>().ok()),
            );
        }
    }
    all
}

/// Each process of the tree by name with its PSS (kB), e.g. `cairn-desktop 120 MB`.
fn pss_by_process(pid: u32) -> Vec<(String, u64)> {
    tree(pid)
        .into_iter()
        .map(|p| {
            let name = std::fs::read_to_string(format!("/proc/{p}/comm"))
                .unwrap_or_default()
                .trim()
                .to_owned();
            (name, process_kb(p, "Pss:"))
        })
        .collect()
}

/// Memory (kB) of `pid` alone (`field` of its smaps_rollup).
fn process_kb(pid: u32, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .unwrap_or(0)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let app = binary()?;
    let mut xvfb: Option<Child> = None;
    let display = match std::env::var("DISPLAY") {
        Ok(d) if !d.is_empty() => d,
        _ => {
            xvfb = Some(
                Command::new("Xvfb")
                    .args([":197", "-screen", "0", "1280x800x24"])
                    .stderr(Stdio::null())
                    .spawn()?,
            );
            std::thread::sleep(Duration::from_millis(800));
            ":197".into()
        }
    };
    let runs = 3;
    let (mut starts, mut rss, mut pss, mut own) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    // The models setup installed, as a person's data home has them (the embedding model loads on
    // first use, so an idle app should not hold it).
    let installed = std::env::var_os("HOME")
        .map(|h| Path::new(&h).join(".cairn").join("models"))
        .filter(|m| m.exists());
    for _ in 0..runs {
        let home = tempfile::tempdir()?;
        if let Some(models) = &installed {
            std::os::unix::fs::symlink(models, home.path().join("models"))?;
        }
        let ready = home.path().join("ready");
        let started = Instant::now();
        let mut child = Command::new(&app)
            .env("DISPLAY", &display)
            .env("CAIRN_HOME", home.path())
            .env("HOME", home.path())
            .env("CAIRN_READY_FILE", &ready)
            .env_remove("CAIRN_CONFIG")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()?;
        while !ready.exists() {
            if started.elapsed() > Duration::from_secs(60) {
                let _ = child.kill();
                return Err("the workbench never became interactive".into());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        starts.push(started.elapsed());
        std::thread::sleep(Duration::from_secs(5));
        rss.push(tree_kb(child.id(), "Rss:"));
        pss.push(tree_kb(child.id(), "Pss:"));
        let each: Vec<String> = pss_by_process(child.id())
            .into_iter()
            .map(|(name, kb)| format!("{name} {:.0} MB", kb as f64 / 1024.0))
            .collect();
        println!("idle PSS by process: {}", each.join(", "));
        own.push(process_kb(child.id(), "Rss:"));
        let _ = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status();
        let _ = child.wait();
    }
    if let Some(mut x) = xvfb {
        let _ = x.kill();
    }
    starts.sort();
    rss.sort();
    pss.sort();
    own.sort();
    println!(
        "desktop app ({}): cold start to an interactive workbench median {:.2} s (runs: {}); idle memory: the app process RSS {:.0} MB; with its WebKit processes PSS {:.0} MB (RSS summed per process {:.0} MB); medians",
        app.display(),
        starts[runs / 2].as_secs_f64(),
        starts.iter().map(|d| format!("{:.2} s", d.as_secs_f64())).collect::<Vec<_>>().join(", "),
        own[runs / 2] as f64 / 1024.0,
        pss[runs / 2] as f64 / 1024.0,
        rss[runs / 2] as f64 / 1024.0
    );
    Ok(())
}

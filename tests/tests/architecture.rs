//! The layering rule, checked over `cargo metadata`: no crate under `crates/` depends on tauri or
//! leptos, directly or through another crate, so the core builds and tests without WebKit.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::process::Command;

use serde_json::Value;

fn metadata() -> Result<Value, Box<dyn std::error::Error>> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let output = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--locked"])
        .current_dir(&root)
        .output()?;
    if !output.status.success() {
        return Err(String::from_utf8_lossy(&output.stderr).into_owned().into());
    }
    Ok(serde_json::from_slice(&output.stdout)?)
}

fn is_gui_framework(name: &str) -> bool {
    name == "tauri" || name.starts_with("tauri-") || name == "leptos" || name.starts_with("leptos_")
}

#[test]
fn no_crate_under_crates_depends_on_tauri_or_leptos() -> Result<(), Box<dyn std::error::Error>> {
    let meta = metadata()?;
    let empty = Vec::new();
    let packages = meta["packages"].as_array().unwrap_or(&empty);
    let Graph { names, edges } = graph(&meta);

    let crates_dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("crates")
        .canonicalize()?;
    let mut checked = 0;
    for package in packages {
        let manifest = Path::new(package["manifest_path"].as_str().unwrap_or_default());
        if !manifest.starts_with(&crates_dir) {
            continue;
        }
        checked += 1;
        let start = package["id"].as_str().unwrap_or_default();
        let mut seen = HashSet::new();
        let mut stack = vec![(start, vec![names.get(start).copied().unwrap_or(start)])];
        while let Some((id, path)) = stack.pop() {
            if !seen.insert(id) {
                continue;
            }
            for dep in edges.get(id).into_iter().flatten() {
                let name = names.get(dep).copied().unwrap_or(dep);
                let mut path = path.clone();
                path.push(name);
                assert!(
                    !is_gui_framework(name),
                    "a core crate reaches a GUI framework: {}",
                    path.join(" → ")
                );
                stack.push((dep, path));
            }
        }
    }
    assert!(checked >= 5, "only {checked} crates found under crates/");
    Ok(())
}

#[test]
fn the_desktop_and_ui_crates_do_use_them() -> Result<(), Box<dyn std::error::Error>> {
    // Guards the check above against silently matching nothing.
    let meta = metadata()?;
    let direct = |crate_name: &str, dep: &str| {
        meta["packages"].as_array().into_iter().flatten().any(|p| {
            p["name"] == crate_name
                && p["dependencies"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|d| d["name"] == dep)
        })
    };
    assert!(direct("cairn-desktop", "tauri"));
    assert!(direct("cairn-ui", "leptos"));
    Ok(())
}

/// Package names by id, and each package's normal and build dependencies (dev-dependencies
/// never reach users).
struct Graph<'m> {
    names: HashMap<&'m str, &'m str>,
    edges: HashMap<&'m str, Vec<&'m str>>,
}

fn graph(meta: &Value) -> Graph<'_> {
    let names = meta["packages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| Some((p["id"].as_str()?, p["name"].as_str()?)))
        .collect();
    let mut edges: HashMap<&str, Vec<&str>> = HashMap::new();
    for node in meta["resolve"]["nodes"].as_array().into_iter().flatten() {
        let Some(id) = node["id"].as_str() else {
            continue;
        };
        let deps = node["deps"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|dep| {
                let shipped = dep["dep_kinds"]
                    .as_array()?
                    .iter()
                    .any(|k| k["kind"].as_str() != Some("dev"));
                shipped.then(|| dep["pkg"].as_str()).flatten()
            });
        edges.insert(id, deps.collect());
    }
    Graph { names, edges }
}

/// The packages `start` reaches through normal and build dependencies, by name.
fn reached(meta: &Value, start: &str) -> HashSet<String> {
    let Graph { names, edges } = graph(meta);
    let mut seen = HashSet::new();
    let mut stack: Vec<&str> = names
        .iter()
        .filter(|(_, name)| **name == start)
        .map(|(id, _)| *id)
        .collect();
    while let Some(id) = stack.pop() {
        if seen.insert(id) {
            stack.extend(edges.get(id).into_iter().flatten());
        }
    }
    seen.iter()
        .filter_map(|id| names.get(id).map(|n| (*n).to_owned()))
        .collect()
}

/// llama.cpp and whisper.cpp each vendor their own ggml: linked into one program they clash.
/// The language model runs in the model host (cairn-local), which never links whisper; the app
/// and the CLI link whisper and reach llama.cpp only through that child process.
#[test]
fn llama_cpp_and_whisper_never_meet_in_one_program() -> Result<(), Box<dyn std::error::Error>> {
    let meta = metadata()?;
    let host = reached(&meta, "cairn-local");
    assert!(
        host.contains("llama-cpp-sys-2"),
        "the model host runs llama.cpp"
    );
    assert!(
        !host.contains("whisper-rs-sys"),
        "the model host reaches whisper"
    );
    for program in ["cairn-desktop", "cairn-cli", "cairn-api"] {
        let deps = reached(&meta, program);
        assert!(deps.contains("whisper-rs-sys"), "{program} has voice input");
        assert!(
            !deps.contains("llama-cpp-sys-2"),
            "{program} links llama.cpp beside whisper"
        );
    }
    Ok(())
}

/// The workspace's layers, lowest first: a crate depends only on crates of lower layers (normal,
/// build and dev dependencies alike), as `../shared/DESIGN.md` draws them — `ui → protocol`;
/// `src-tauri → api, http`; `api → agent, memory, importers, voice`; `agent → llm, tools, memory`.
const LAYERS: &[&[&str]] = &[
    &["cairn-protocol", "cairn-test-support"],
    &[
        "cairn-config",
        "cairn-hub",
        "cairn-llm",
        "cairn-memory",
        "cairn-models",
        "cairn-voice",
        "cairn-webmd",
    ],
    &[
        "cairn-tools",
        "cairn-embed",
        "cairn-e5",
        "cairn-eval",
        "cairn-importers",
        "cairn-local",
        "cairn-schedule",
        "cairn-sync",
    ],
    &["cairn-agent", "cairn-mcp", "cairn-lsp"],
    &["cairn-api"],
    &["cairn-http"],
    &["cairn-cli", "cairn-desktop", "cairn-tests"],
];

#[test]
fn dependencies_between_cairn_crates_only_point_down() -> Result<(), Box<dyn std::error::Error>> {
    let meta = metadata()?;
    let layer = |name: &str| LAYERS.iter().position(|l| l.contains(&name));
    let mut edges = 0;
    for package in meta["packages"].as_array().into_iter().flatten() {
        let name = package["name"].as_str().unwrap_or_default();
        if !name.starts_with("cairn-") || package["source"].is_string() {
            continue;
        }
        let deps: Vec<&str> = package["dependencies"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|d| d["name"].as_str())
            .filter(|d| d.starts_with("cairn-"))
            .collect();
        if name == "cairn-ui" {
            // The UI sees the backend only through the wire types.
            assert_eq!(deps, ["cairn-protocol"], "cairn-ui depends on {deps:?}");
            continue;
        }
        let Some(own) = layer(name) else {
            panic!("{name} is in no layer: add it to LAYERS in tests/tests/architecture.rs");
        };
        for dep in deps {
            let Some(theirs) = layer(dep) else {
                panic!("{dep} (a dependency of {name}) is in no layer");
            };
            assert!(
                theirs < own,
                "{name} (layer {own}) depends on {dep} (layer {theirs}): dependencies point down only"
            );
            edges += 1;
        }
    }
    assert!(
        edges >= 20,
        "only {edges} dependencies between Cairn's crates were checked"
    );
    Ok(())
}

/// The front ends are thin doors: each reaches Cairn's core through `cairn-api` (and the wire
/// types), never around it, so an operation is written once whichever door calls it.
const DOORS: &[(&str, &[&str])] = &[
    (
        "cairn-desktop",
        &["cairn-api", "cairn-http", "cairn-protocol", "cairn-config"],
    ),
    // The local API also serves the MCP endpoint and the OpenAI-compatible stream.
    (
        "cairn-http",
        &[
            "cairn-api",
            "cairn-protocol",
            "cairn-config",
            "cairn-llm",
            "cairn-mcp",
        ],
    ),
    // The command line also runs the local API (`cairn serve`) and the evaluations.
    (
        "cairn-cli",
        &[
            "cairn-api",
            "cairn-http",
            "cairn-protocol",
            "cairn-config",
            "cairn-eval",
        ],
    ),
    ("cairn-ui", &["cairn-protocol"]),
];

#[test]
fn each_front_end_reaches_the_core_only_through_its_allowed_crates(
) -> Result<(), Box<dyn std::error::Error>> {
    let meta = metadata()?;
    for (door, allowed) in DOORS {
        let package = meta["packages"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|p| p["name"] == *door)
            .ok_or_else(|| format!("no package {door}"))?;
        let cairn_deps: Vec<&str> = package["dependencies"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|d| d["kind"].is_null())
            .filter_map(|d| d["name"].as_str())
            .filter(|d| d.starts_with("cairn-"))
            .collect();
        for dep in &cairn_deps {
            assert!(
                allowed.contains(dep),
                "{door} depends on {dep}: a front end goes through cairn-api (allowed: {allowed:?})"
            );
        }
        assert!(!cairn_deps.is_empty(), "{door} lists no Cairn crate");
    }
    Ok(())
}

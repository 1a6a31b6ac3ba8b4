//! Bench of edit_file's engine on a 50,000-line tab-indented source file built in memory: an
//! exact 3-line edit near the end, one that needs the indent pass, and a not-found edit (the
//! closest-region search). Run with `cargo bench -p cairn-tools --bench edit`.

use std::hint::black_box;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use cairn_tools::edit::{edit_text, Edit};

const LINES: usize = 50_000;
const RUNS: usize = 20;

/// Plausible Go, tab-indented, every function slightly different so most lines are unique.
fn synthetic_source(lines: usize) -> String {
    let mut text = String::from("package handlers\n\nimport (\n\t\"errors\"\n)\n\n");
    let mut n = 0;
    let mut count = text.lines().count();
    while count < lines {
        n += 1;
        let chunk = format!(
            "// handler{n} answers request kind {n}.\n\
             func handler{n}(req *Request) (*Response, error) {{\n\
             \tif req == nil {{\n\
             \t\treturn nil, errors.New(\"handler{n}: nil request\")\n\
             \t}}\n\
             \tvalue := req.Field * {n}\n\
             \tfor i := 0; i < {limit}; i++ {{\n\
             \t\tvalue += i\n\
             \t}}\n\
             \treturn &Response{{Value: value}}, nil\n\
             }}\n\n",
            limit = n % 7 + 1
        );
        count += chunk.lines().count();
        text.push_str(&chunk);
    }
    let mut kept: Vec<&str> = text.lines().take(lines).collect();
    kept.push("");
    kept.join("\n")
}

/// The 3 lines `value := …` to `value += i` of the handler whose number is `n`.
fn three_lines(n: usize, indent: &str) -> String {
    format!(
        "{indent}value := req.Field * {n}\n{indent}for i := 0; i < {limit}; i++ {{\n{indent}{indent}value += i",
        limit = n % 7 + 1
    )
}

struct Case {
    name: &'static str,
    edit: Edit,
    expect_ok: bool,
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let rank = ((p * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted.get(rank - 1).copied().unwrap_or_default()
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn main() -> ExitCode {
    let source = synthetic_source(LINES);
    let count = source.lines().count();
    // The last complete handler, near the end of the file.
    let last = source
        .lines()
        .rev()
        .filter_map(|l| l.strip_prefix("func handler"))
        .find_map(|l| l.split('(').next()?.parse::<usize>().ok())
        .unwrap_or(1)
        .saturating_sub(1);

    let cases = [
        Case {
            name: "exact",
            edit: Edit {
                old: three_lines(last, "\t"),
                new: three_lines(last, "\t").replace("value += i", "value += 2 * i"),
            },
            expect_ok: true,
        },
        Case {
            name: "indent pass",
            edit: Edit {
                old: three_lines(last, "    "),
                new: three_lines(last, "    ").replace("value += i", "value += 3 * i"),
            },
            expect_ok: true,
        },
        Case {
            name: "not found",
            edit: Edit {
                old: three_lines(last, "\t").replace("value += i", "value -= i"),
                new: three_lines(last, "\t"),
            },
            expect_ok: false,
        },
    ];

    let mut failed = false;
    for case in &cases {
        let edits = [case.edit.clone()];
        let mut times = Vec::with_capacity(RUNS);
        for _ in 0..RUNS {
            let started = Instant::now();
            let result = black_box(edit_text("handlers.go", black_box(&source), &edits));
            times.push(started.elapsed());
            if result.is_ok() != case.expect_ok {
                eprintln!("{}: unexpected result: {result:?}", case.name);
                failed = true;
                break;
            }
        }
        times.sort();
        println!(
            "edit_file {count} lines, {}: median {:.1} ms, p95 {:.1} ms",
            case.name,
            ms(percentile(&times, 0.5)),
            ms(percentile(&times, 0.95))
        );
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

//! `cairn-model-host`: runs Cairn's own language models for the app and the CLI, which start it
//! when a model is first needed and talk to it in JSON lines (see `cairn_llm::local`).
//! `cairn-model-host bench MODEL.gguf [--threads N]` prints what the model costs, as JSON.

fn main() -> std::process::ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("CAIRN_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .init();
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        None => std::process::ExitCode::from(cairn_local::serve_stdio() as u8),
        Some("bench") => bench(&args[1..]),
        Some(_) => {
            eprintln!("usage: cairn-model-host [bench MODEL.gguf [--threads N]]");
            std::process::ExitCode::from(2)
        }
    }
}

fn bench(args: &[String]) -> std::process::ExitCode {
    let Some(model) = args.first() else {
        eprintln!("usage: cairn-model-host bench MODEL.gguf [--threads N]");
        return std::process::ExitCode::from(2);
    };
    let threads = args
        .iter()
        .position(|a| a == "--threads")
        .and_then(|i| args.get(i + 1))
        .and_then(|t| t.parse().ok());
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("cairn-model-host: {e}");
            return std::process::ExitCode::from(1);
        }
    };
    match runtime.block_on(cairn_local::bench::measure(
        std::path::Path::new(model),
        threads,
    )) {
        Ok(figures) => match serde_json::to_string(&figures) {
            Ok(text) => {
                println!("{text}");
                std::process::ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("cairn-model-host: {e}");
                std::process::ExitCode::from(1)
            }
        },
        Err(e) => {
            eprintln!("cairn-model-host: {e}");
            std::process::ExitCode::from(1)
        }
    }
}

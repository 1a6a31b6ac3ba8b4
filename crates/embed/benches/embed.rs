//! How long one embedding takes (a query's is the vector channel's share of every recall), for a
//! short question, one of twenty words (about as many tokens as the recall benchmark's), a long
//! one and a memory at the token cap, on the model setup installed: the fast path (16-bit integer
//! weights for a few tokens) and the exact one, with the cosine between their vectors.
//!
//! `cargo bench -p cairn-embed --bench embed [-- MODEL_DIR]`

use std::path::PathBuf;
use std::time::Instant;

use cairn_embed::{MiniLm, Precision};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with('-'))
        .map(PathBuf::from)
        .or_else(|| {
            let home = std::env::var_os("CAIRN_HOME")
                .map(PathBuf::from)
                .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cairn")))?;
            Some(home.join("models/all-MiniLM-L6-v2"))
        })
        .ok_or("no model folder: pass one, or set CAIRN_HOME")?;
    let model = MiniLm::load(&dir)?;
    for (name, text) in [
        (
            "short question (9 words)",
            "what did we decide about the staging database migration",
        ),
        (
            "question of 20 words",
            "why does the staging deploy of the payments service time out when the invoices \
             migration runs before the health check passes",
        ),
        (
            "long request (60 words)",
            "the deploy of the payments service failed again last night: the migration that adds \
             the invoices index timed out after ten minutes, the health check marked the pods as \
             unready and the rollout stopped half way; can you find what we said about running \
             migrations outside the deploy, and who owned the database upgrade plan we wrote in \
             the spring, before the team moved to the new cluster",
        ),
        (
            "memory at the 256-token cap",
            &"the deploy of the payments service failed again, the migration timed out; "
                .repeat(20),
        ),
    ] {
        let reference = model.embed_with(text, Precision::Exact);
        for precision in [Precision::Fast, Precision::Exact] {
            let vector = model.embed_with(text, precision);
            let cosine: f32 = vector.iter().zip(&reference).map(|(a, b)| a * b).sum();
            let runs = 50;
            let mut times: Vec<f64> = (0..runs)
                .map(|_| {
                    let t = Instant::now();
                    model.embed_with(text, precision);
                    t.elapsed().as_secs_f64() * 1000.0
                })
                .collect();
            times.sort_by(f64::total_cmp);
            println!(
                "embed a {name}, {precision:?}: p50 {:.2} ms, p95 {:.2} ms ({runs} runs; cosine to exact {cosine:.5})",
                times[runs / 2],
                times[runs * 95 / 100]
            );
        }
    }
    Ok(())
}

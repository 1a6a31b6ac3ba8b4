//! How long multilingual-e5-small takes for one text on one core: a Chinese question, an English
//! one, and a memory of about 200 characters.
//!
//! `cargo bench -p cairn-e5 --bench e5`

use std::path::PathBuf;
use std::time::Instant;

use cairn_e5::{MultilingualE5, Role};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let home = std::env::var_os("CAIRN_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cairn")))
        .ok_or("set CAIRN_HOME")?;
    let model = MultilingualE5::load(&home.join("models"))?;
    let memory = "昨天晚上的发布失败了，因为迁移脚本超时了十分钟。".repeat(8);
    for (name, text, role) in [
        ("Chinese question", "上次发版为什么没成功？", Role::Query),
        (
            "English question of 20 words",
            "why does the staging deploy of the payments service time out when the invoices \
             migration runs before the health check passes",
            Role::Query,
        ),
        (
            "Chinese memory of 200 characters",
            memory.as_str(),
            Role::Passage,
        ),
    ] {
        let runs = 30;
        let mut times: Vec<f64> = (0..runs)
            .map(|_| {
                let t = Instant::now();
                let _ = model.embed(text, role);
                t.elapsed().as_secs_f64() * 1000.0
            })
            .collect();
        times.sort_by(f64::total_cmp);
        println!(
            "embed a {name}: p50 {:.2} ms, p95 {:.2} ms ({runs} runs)",
            times[runs / 2],
            times[runs * 95 / 100]
        );
    }
    Ok(())
}

use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

use anyhow::Context;
use clap::Args;
use linerate_engine::server::Server;
use linerate_probe::verdict::fmt_rate;

use crate::bench_cmd::BenchArgs;
use crate::output;

#[derive(Args)]
#[command(after_help = "Example:\n  linerate demo --out /tmp/demo")]
pub struct DemoArgs {
    /// Folder for the result documents.
    #[arg(long, default_value = "linerate-demo")]
    pub out: PathBuf,
    /// Seconds per bench run.
    #[arg(long, default_value = "3")]
    pub seconds: u32,
}

pub fn run(a: DemoArgs) -> anyhow::Result<()> {
    std::fs::create_dir_all(&a.out).with_context(|| format!("creating {}", a.out.display()))?;
    let log: linerate_engine::server::Logger = Arc::new(|_| {});
    let server = Server::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, 0)), log)?;
    let addr = server.local_addr()?;
    let stop = Arc::new(AtomicBool::new(false));
    let serving = {
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || server.run(false, &stop))
    };
    println!("linerate demo: server on {addr}; memory-to-memory benches on loopback\n");
    let mut rows = Vec::new();
    let result = (|| -> anyhow::Result<()> {
        for streams in [1u16, 2, 4] {
            let words: Vec<String> = [
                addr.to_string(),
                "-P".into(),
                streams.to_string(),
                "-t".into(),
                a.seconds.to_string(),
            ]
            .into();
            let args = BenchArgs::from_words(&words)?;
            let doc = crate::bench_cmd::measure(
                &args,
                ["linerate".to_string(), "bench".into()]
                    .into_iter()
                    .chain(words)
                    .collect(),
                output::Out::new(false),
            )?;
            let path = a.out.join(format!("bench-{streams}.json"));
            output::write_json(&doc, &path.to_string_lossy())?;
            rows.push((
                streams,
                doc.summary.bits_per_second,
                doc.summary.verdict.limit,
                path,
            ));
            println!();
        }
        Ok(())
    })();
    stop.store(true, Relaxed);
    let _ = serving.join();
    result?;
    println!(
        "{:>7}  {:>14}  {:<16} result",
        "streams", "throughput", "limit"
    );
    for (streams, bps, limit, path) in rows {
        println!(
            "{streams:>7}  {:>14}  {:<16} {}",
            fmt_rate(bps),
            serde_json::to_value(limit)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default(),
            path.display()
        );
    }
    Ok(())
}

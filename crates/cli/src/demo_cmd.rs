use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

use anyhow::Context;
use clap::Args;
use linerate_engine::server::Server;
use linerate_probe::verdict::fmt_rate;

use crate::bench_cmd::{BenchArgs, DEFAULT_READ_LEN};
use crate::output;
use crate::units;

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
            let args = BenchArgs {
                host: addr.to_string(),
                streams,
                time_ms: u64::from(a.seconds) * 1000,
                bytes: None,
                write_len: None,
                read_len: units::parse_size_u32(DEFAULT_READ_LEN).map_err(anyhow::Error::msg)?,
                reverse: false,
                bidir: false,
                interval_ms: 1000,
                omit_ms: 0,
                window: None,
                sndbuf: None,
                congestion: None,
                fq_rate: None,
                mss: None,
                tos: None,
                ipv4: false,
                ipv6: false,
                bind: None,
                zerocopy: false,
                skip_rx_copy: false,
                rx_poll: crate::bench_cmd::RxPollArg::Auto,
                rcvlowat: None,
                affinity: crate::bench_cmd::AffinityArg::Auto,
                json: None,
            };
            let doc =
                crate::bench_cmd::measure(&args, vec!["linerate".into(), "demo".into()], false)?;
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

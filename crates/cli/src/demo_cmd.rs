//! `linerate demo`: the whole tool on loopback with generated data, no root
//! and no setup: benches, a verified transfer, the installed peers side by
//! side, and a report of it all. `--lab` adds short lab studies (root).

use std::io::{BufRead, BufReader};
use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::time::Instant;

use anyhow::{Context, bail};
use clap::Args;
use linerate_engine::server::Server;
use linerate_probe::verdict::fmt_rate;
use linerate_result::ResultDoc;

use crate::bench_cmd::BenchArgs;
use crate::output;

#[derive(Args)]
#[command(
    after_help = "Examples:\n  linerate demo                    about 40 s, no root; opens nothing, prints where the report is\n  linerate demo --out /tmp/demo --lab   also a WAN study and a tuning study in a lab (root, +40 s)"
)]
pub struct DemoArgs {
    /// Folder for the result documents and the report.
    #[arg(long, default_value = "linerate-demo")]
    pub out: PathBuf,
    /// Seconds per bench run.
    #[arg(long, default_value = "3")]
    pub seconds: u32,
    /// Also run short WAN and tuning studies through a lab (root).
    #[arg(long)]
    pub lab: bool,
    /// Skip the side-by-side run of the installed peers.
    #[arg(long)]
    pub no_compare: bool,
}

fn limit_name(doc: &ResultDoc) -> String {
    serde_json::to_value(doc.summary.verdict.limit)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

fn bench(addr: SocketAddr, extra: &[&str], path: &Path) -> anyhow::Result<ResultDoc> {
    let mut words: Vec<String> = vec![addr.to_string()];
    words.extend(extra.iter().map(|s| s.to_string()));
    let args = BenchArgs::from_words(&words)?;
    let cmd = ["linerate".to_string(), "bench".into()]
        .into_iter()
        .chain(words)
        .collect();
    let doc = crate::bench_cmd::measure(&args, cmd, output::Out::silent())?;
    output::write_json(&doc, &path.to_string_lossy())?;
    Ok(doc)
}

pub fn run(a: DemoArgs) -> anyhow::Result<()> {
    let started = Instant::now();
    if a.lab {
        crate::lab_cmd::require()?;
    }
    std::fs::create_dir_all(&a.out).with_context(|| format!("creating {}", a.out.display()))?;
    let log: linerate_engine::server::Logger = Arc::new(|_| {});
    let server = Server::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, 0)), log)?;
    let addr = server.local_addr()?;
    let stop = Arc::new(AtomicBool::new(false));
    let serving = {
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || server.run(false, &stop))
    };
    println!(
        "linerate demo: server on {addr}; results in {}\n",
        a.out.display()
    );
    let result = (|| -> anyhow::Result<()> {
        let secs = a.seconds.to_string();
        println!("1. memory to memory, {} s per run", a.seconds);
        println!("   {:>7}  {:>14}  limit", "streams", "throughput");
        for streams in [1u16, 2, 4] {
            let n = streams.to_string();
            let doc = bench(
                addr,
                &["-P", &n, "-t", &secs, "-i", "1"],
                &a.out.join(format!("bench-P{streams}.json")),
            )?;
            println!(
                "   {streams:>7}  {:>14}  {}",
                fmt_rate(doc.summary.bits_per_second),
                limit_name(&doc)
            );
        }
        println!("\n2. write size, one stream, 1 s per run");
        for len in ["16K", "128K", "1M"] {
            let doc = bench(
                addr,
                &["-l", len, "-t", "1", "-i", "1"],
                &a.out.join(format!("bench-len-{len}.json")),
            )?;
            println!(
                "   {len:>7}  {:>14}  {}",
                fmt_rate(doc.summary.bits_per_second),
                limit_name(&doc)
            );
        }
        Ok(())
    })();
    stop.store(true, Relaxed);
    let _ = serving.join();
    result?;
    println!("\n3. a verified transfer of generated files (large and small) to a fresh folder");
    transfer(&a.out)?;
    if !a.no_compare {
        println!("\n4. the installed peers side by side (1 stream, 2 rounds of 1 s)");
        compare(&a.out)?;
    }
    if a.lab {
        println!("\n5. lab studies (WAN at 0 and 44 ms; tuning at 44 ms)");
        lab_studies(&a.out)?;
    }
    let report = a.out.join("report.html");
    let inputs = crate::report_cmd::load(std::slice::from_ref(&a.out))?;
    let figures = crate::report_cmd::write(&inputs, &report, Some(&a.out.join("csv")))?;
    println!(
        "\nreport: {} ({figures} figures from {} results), in {:.0} s",
        report.display(),
        inputs.len(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

fn transfer(out: &Path) -> anyhow::Result<()> {
    let exe = std::env::current_exe().context("locating the linerate binary")?;
    let base = if Path::new("/dev/shm").is_dir() {
        PathBuf::from("/dev/shm")
    } else {
        std::env::temp_dir()
    };
    let work = base.join(format!("linerate-demo-{}", std::process::id()));
    let result = (|| -> anyhow::Result<()> {
        let src = work.join("data");
        let bytes = crate::dataset::write_files(&src.join("large"), 4, 64 << 20, 1)?
            + crate::dataset::write_files(&src.join("small"), 1000, 4096, 2)?;
        let dest = work.join("received");
        std::fs::create_dir_all(&dest)?;
        let mut recv = Command::new(&exe)
            .args(["recv", "--foreground", "--bind", "127.0.0.1"])
            .arg(&dest)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .context("starting linerate recv")?;
        let mut url = String::new();
        BufReader::new(recv.stdout.take().context("recv stdout")?).read_line(&mut url)?;
        let json = out.join("transfer.json");
        let status = Command::new(&exe)
            .args(["send", "-q", "--verify", "--json"])
            .arg(&json)
            .arg(&src)
            .arg(url.trim())
            .stdout(Stdio::null())
            .status()
            .context("running linerate send");
        // The receiver exits by itself once the transfer is complete.
        let deadline = Instant::now() + std::time::Duration::from_secs(10);
        while recv.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        if recv.try_wait().ok().flatten().is_none() {
            let _ = recv.kill();
            let _ = recv.wait();
        }
        if !status?.success() {
            bail!("the demo transfer failed");
        }
        let doc: ResultDoc = serde_json::from_str(&std::fs::read_to_string(&json)?)?;
        let verified = doc
            .parameters
            .get("verified_files")
            .and_then(|v| v.as_u64())
            .unwrap_or(0);
        println!(
            "   1004 files, {:.0} MiB: {} ({}); {verified} files verified end to end (BLAKE3)",
            bytes as f64 / 1_048_576.0,
            fmt_rate(doc.summary.bits_per_second),
            limit_name(&doc)
        );
        Ok(())
    })();
    let _ = std::fs::remove_dir_all(&work);
    result
}

fn compare(out: &Path) -> anyhow::Result<()> {
    let args = crate::compare_cmd::CompareArgs {
        tools: ["linerate", "iperf2", "iperf3", "nuttcp"]
            .map(String::from)
            .to_vec(),
        mode: crate::compare_cmd::Mode::Mem,
        dataset: crate::compare_cmd::Dataset::Mixed,
        streams: vec![1],
        time: 1,
        rounds: 2,
        lab: None,
        json: out.join("compare.json").to_string_lossy().into_owned(),
    };
    crate::compare_cmd::run(args)
}

fn lab_studies(out: &Path) -> anyhow::Result<()> {
    use clap::Parser;
    #[derive(Parser)]
    struct Study {
        #[command(subcommand)]
        cmd: crate::study_cmd::StudyCommand,
    }
    let wan = out.join("study-wan.json");
    let tuning = out.join("study-tuning.json");
    for argv in [
        vec![
            "study",
            "wan",
            "--quick",
            "--rtts",
            "0,44",
            "--streams",
            "1",
            "--name",
            "demo",
            "--json",
            &*wan.to_string_lossy(),
        ],
        vec![
            "study",
            "tuning",
            "--quick",
            "--name",
            "demo",
            "--json",
            &*tuning.to_string_lossy(),
        ],
    ] {
        let s = Study::try_parse_from(argv.iter().map(|s| s.to_string()).collect::<Vec<_>>())?;
        crate::study_cmd::run(s.cmd)?;
    }
    Ok(())
}

//! `linerate demo`: the whole tool on loopback with generated data, no root
//! and no setup: benches, a verified transfer, the installed peers side by
//! side, and a report of it all. `--lab` adds short lab studies (root).

use linerate_engine::spec::BenchOptions;
use std::io::{BufRead, BufReader};
use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{Context, bail};
use clap::Args;
use linerate_daemon::{Running, Server};
use linerate_probe::units::fmt_rate;
use linerate_result::ResultDoc;

use linerate_engine::spec::BenchSpec;

use crate::{measure, output};

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

fn bench(addr: SocketAddr, spec: &BenchSpec, path: &Path) -> anyhow::Result<ResultDoc> {
    let doc = measure::bench(
        addr,
        spec,
        None,
        crate::argv::command_line(),
        output::Out::silent(),
        false,
    )?;
    output::write_json(&doc, &path.to_string_lossy())?;
    Ok(doc)
}

pub fn run(a: DemoArgs) -> anyhow::Result<()> {
    let started = Instant::now();
    if a.lab {
        crate::lab_cmd::require()?;
    }
    std::fs::create_dir_all(&a.out).with_context(|| format!("creating {}", a.out.display()))?;
    let server = Running::start(Server::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, 0)))?)?;
    let addr = server.addr();
    println!(
        "linerate demo: server on {addr}; results in {}\n",
        a.out.display()
    );
    let result = (|| -> anyhow::Result<()> {
        println!("1. memory to memory, {} s per run", a.seconds);
        println!("   {:>7}  {:>14}  limit", "streams", "throughput");
        for streams in [1u16, 2, 4] {
            let spec = BenchSpec {
                options: BenchOptions {
                    streams,
                    duration_ms: u64::from(a.seconds) * 1000,
                    ..BenchOptions::default()
                },
                ..BenchSpec::default()
            };
            let doc = bench(addr, &spec, &a.out.join(format!("bench-P{streams}.json")))?;
            println!(
                "   {streams:>7}  {:>14}  {}",
                fmt_rate(doc.summary.bits_per_second),
                limit_name(&doc)
            );
        }
        println!("\n2. write size, one stream, 1 s per run");
        for (len, bytes) in [("16K", 16u32 << 10), ("128K", 128 << 10), ("1M", 1 << 20)] {
            let spec = BenchSpec {
                options: BenchOptions {
                    duration_ms: 1000,
                    ..BenchOptions::default()
                },
                write_len: Some(bytes),
                ..BenchSpec::default()
            };
            let doc = bench(addr, &spec, &a.out.join(format!("bench-len-{len}.json")))?;
            println!(
                "   {len:>7}  {:>14}  {}",
                fmt_rate(doc.summary.bits_per_second),
                limit_name(&doc)
            );
        }
        latency(addr, &a.out)
    })();
    let _ = server.stop();
    result?;
    println!("\n4. a verified transfer of generated files (large and small) to a fresh folder");
    transfer(&a.out)?;
    if !a.no_compare {
        println!("\n5. the installed peers side by side (1 stream, 2 rounds of 1 s)");
        compare(&a.out)?;
    }
    if a.lab {
        println!("\n6. lab studies (WAN at 0 and 44 ms; tuning at 44 ms)");
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

/// A round-trip sweep from 1 byte to 1 MiB, a fifth of a second a size.
fn latency(addr: SocketAddr, out: &Path) -> anyhow::Result<()> {
    println!("\n3. round trip against message size (ping-pong, 0.2 s a size)");
    let spec = linerate_engine::spec::LatencySpec {
        sizes: (0..=20).map(|i| 1u32 << i).collect(),
        step_ms: 200,
        ..Default::default()
    };
    println!("   {:>7}  {:>10}  {:>10}", "size", "p50", "p99");
    let run = linerate_engine::latency::run(addr, &spec, None, &mut |step| {
        if step.request_bytes.trailing_zeros() % 4 == 0 {
            println!(
                "   {:>7}  {:>7.1} us  {:>7.1} us",
                linerate_probe::units::fmt_bytes(f64::from(step.request_bytes)),
                step.round_trip_us.p50,
                step.round_trip_us.p99
            );
        }
    })?;
    let cmd = vec![
        "linerate".into(),
        "latency".into(),
        addr.to_string(),
        "--sizes".into(),
        "1..1M".into(),
        "-t".into(),
        "0.2".into(),
    ];
    let doc = linerate_engine::latency::to_result(&run, cmd);
    println!("   {}", doc.summary.verdict.sentence);
    output::write_json(&doc, &out.join("latency.json").to_string_lossy())
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
        let bytes = linerate_compare::dataset::write_files(&src.join("large"), 4, 64 << 20, 1)?
            + linerate_compare::dataset::write_files(&src.join("small"), 1000, 4096, 2)?;
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
        // The URL's token goes by a file only its owner reads, as the
        // guide tells users to pass it: never on a command line.
        let url_file = work.join("url");
        {
            use std::io::Write;
            use std::os::unix::fs::OpenOptionsExt;
            std::fs::OpenOptions::new()
                .create_new(true)
                .write(true)
                .mode(0o600)
                .open(&url_file)?
                .write_all(url.as_bytes())?;
        }
        let json = out.join("transfer.json");
        let status = Command::new(&exe)
            .args(["send", "-q", "--verify", "--json"])
            .arg(&json)
            .arg("--url-file")
            .arg(&url_file)
            .arg(&src)
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

/// Runs this binary with `args`, as a user would type them; its output
/// is the demo's.
fn linerate(args: &[&str]) -> anyhow::Result<()> {
    let exe = std::env::current_exe().context("locating the linerate binary")?;
    let status = Command::new(exe)
        .args(args)
        .status()
        .with_context(|| format!("running linerate {}", args.join(" ")))?;
    if !status.success() {
        bail!("linerate {} failed ({status})", args.join(" "));
    }
    Ok(())
}

fn compare(out: &Path) -> anyhow::Result<()> {
    let json = out.join("compare.json");
    linerate(&[
        "compare",
        "--tools",
        "linerate,iperf2,iperf3,nuttcp",
        "--mode",
        "mem",
        "--dataset",
        "mixed",
        "--streams",
        "1",
        "--time",
        "1",
        "--rounds",
        "2",
        "--json",
        &json.to_string_lossy(),
    ])
}

fn lab_studies(out: &Path) -> anyhow::Result<()> {
    let wan = out.join("study-wan.json");
    let tuning = out.join("study-tuning.json");
    linerate(&[
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
        &wan.to_string_lossy(),
    ])?;
    linerate(&[
        "study",
        "tuning",
        "--quick",
        "--name",
        "demo",
        "--json",
        &tuning.to_string_lossy(),
    ])
}

//! `linerate compare`: linerate and the installed peer tools under the same
//! conditions, in alternating order, repeated, into one result document.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use anyhow::{Context, bail};
use clap::{Args, ValueEnum};
use linerate_peers::convert::{self, Cpu};
use linerate_peers::process::{Server, run_client};
use linerate_peers::tool::{PeerTool, Ports, find_on_path, not_runnable};
use linerate_peers::{Tool, parse};
use linerate_probe::units::fmt_rate;
use linerate_result::{ResultDoc, StudyPoint};

use crate::compare_place::{Place, free_port, run_against};
use serde_json::json;

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Mode {
    /// Memory to memory: linerate bench, iperf2, iperf3, nuttcp.
    Mem,
    /// Files from page cache to a directory: linerate send, rsync (daemon).
    Files,
    /// Ping-pong round trips: linerate latency, sockperf, qperf, iperf2 --bounceback.
    Latency,
    /// UDP at one rate: linerate bench --udp, iperf2 -u, iperf3 -u.
    Udp,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Dataset {
    /// One 512 MiB file.
    Large,
    /// 4000 files of 4 KiB.
    Small,
    /// 8 files of 32 MiB and 2000 of 4 KiB.
    Mixed,
}

#[derive(Args)]
#[command(
    after_help = "Examples:\n  linerate compare                                   loopback, mem, 1 and 4 streams, 3 rounds\n  linerate compare --mode latency --rounds 5          64-byte TCP ping-pong against sockperf, qperf, iperf2\n  linerate compare --mode udp -b 2G                   one UDP stream at 2 Gbit/s against iperf2 -u, iperf3 -u\n  linerate compare --tools linerate,iperf2 -P 1,2,4,8 --json cmp.json\n  linerate compare --mode files --dataset small --tools linerate,rsync\n  linerate compare --lab wan                          inside `linerate lab up --name wan` (h1 -> h2)\n\nMissing tools are reported as skipped with the Debian package that provides them."
)]
pub struct CompareArgs {
    /// Tools to run, in this order in the first round (default: linerate,iperf2,iperf3,nuttcp;
    /// files mode: linerate,rsync,scp,lftp,gridftp,wdt, those without an adapter reported as
    /// skipped; latency mode: linerate,sockperf,qperf,iperf2; udp mode: linerate,iperf2,iperf3).
    #[arg(long, value_delimiter = ',')]
    pub tools: Vec<String>,
    #[arg(long, value_enum, default_value = "mem")]
    pub mode: Mode,
    /// Files mode: what to send.
    #[arg(long, value_enum, default_value = "mixed")]
    pub dataset: Dataset,
    /// Stream counts (mem mode; files mode uses the largest for linerate).
    #[arg(short = 'P', long, value_delimiter = ',', default_value = "1,4")]
    pub streams: Vec<u32>,
    /// Seconds per run (mem, latency and udp modes).
    #[arg(short = 't', long, default_value = "5")]
    pub time: u32,
    /// Latency mode: request and reply size in bytes (64: iperf2 --bounceback's client hangs
    /// below it; sockperf takes 14 and up).
    #[arg(long, default_value = "64", value_parser = clap::value_parser!(u32).range(1..=65507))]
    pub size: u32,
    /// Latency mode: the ping-pong over UDP (linerate --udp, sockperf, qperf udp_lat).
    #[arg(long)]
    pub udp: bool,
    /// UDP mode: the rate of the one stream, bits/s (e.g. 500M, 2G).
    #[arg(short = 'b', long = "bitrate", value_name = "RATE", default_value = "1G", value_parser = crate::units::parse_rate)]
    pub bitrate: u64,
    /// UDP mode: datagram payload bytes.
    #[arg(short = 'l', long = "len", default_value = "1472", value_parser = clap::value_parser!(u32).range(16..=65507))]
    pub len: u32,
    /// Rounds; the order of the tools rotates each round.
    #[arg(long, default_value = "3")]
    pub rounds: u32,
    /// Run inside a lab: servers in h2, clients in h1 (root).
    #[arg(long)]
    pub lab: Option<String>,
    /// Where to write the linerate.result/1 document (kind compare).
    #[arg(long, default_value = "-")]
    pub json: String,
}

struct Ready {
    name: String,
    /// The memory-mode adapter; files mode knows its tools by name.
    tool: Option<Tool>,
    exe: String,
}

fn resolve(names: &[String], mode: Mode) -> anyhow::Result<(Vec<Ready>, Vec<serde_json::Value>)> {
    let mut ready = Vec::new();
    let mut skipped = Vec::new();
    for name in names {
        let name = name.trim().to_lowercase();
        if mode == Mode::Files {
            match name.as_str() {
                "linerate" | "rsync" => {}
                other => {
                    let why = not_runnable(other)
                        .unwrap_or("no files-mode adapter (files mode runs linerate and rsync)");
                    skipped.push(json!({"tool": other, "reason": why}));
                    continue;
                }
            }
            let exe = if name == "linerate" {
                Some(std::env::current_exe()?.to_string_lossy().into_owned())
            } else {
                find_on_path("rsync").map(|p| p.to_string_lossy().into_owned())
            };
            match exe {
                Some(exe) => ready.push(Ready {
                    name: name.clone(),
                    tool: None,
                    exe,
                }),
                None => skipped
                    .push(json!({"tool": name, "reason": "not installed", "package": "rsync"})),
            }
            continue;
        }
        if let Some(tool) = Tool::from_name(&name) {
            let exe = if tool == Tool::Linerate {
                Some(std::env::current_exe()?.to_string_lossy().into_owned())
            } else {
                find_on_path(tool.binary()).map(|p| p.to_string_lossy().into_owned())
            };
            match exe {
                Some(exe) => ready.push(Ready {
                    name: name.clone(),
                    tool: Some(tool),
                    exe,
                }),
                None => skipped.push(json!({"tool": name, "reason": format!("{} is not installed", tool.binary()), "package": tool.package()})),
            }
        } else if let Some(why) = not_runnable(&name) {
            skipped.push(json!({"tool": name, "reason": why}));
        } else {
            bail!(
                "unknown tool {name:?}; known: linerate, iperf2, iperf3, nuttcp (mem), rsync (files), and wdt, scp, lftp, gridftp, bbcp are recognised but not run"
            );
        }
    }
    Ok((ready, skipped))
}

pub fn run(a: CompareArgs) -> anyhow::Result<()> {
    if a.streams.is_empty() || a.streams.iter().any(|&n| n == 0 || n > 128) {
        bail!("--streams takes counts from 1 to 128");
    }
    if a.rounds == 0 || a.time == 0 {
        bail!("--rounds and --time must be at least 1");
    }
    let place = Place::new(a.lab.as_deref())?;
    let default: &[&str] = match a.mode {
        Mode::Mem => &["linerate", "iperf2", "iperf3", "nuttcp"],
        Mode::Files => &["linerate", "rsync", "scp", "lftp", "gridftp", "wdt"],
        Mode::Latency => &["linerate", "sockperf", "qperf", "iperf2"],
        Mode::Udp => &["linerate", "iperf2", "iperf3"],
    };
    let tools: Vec<String> = if a.tools.is_empty() {
        default.iter().map(|s| s.to_string()).collect()
    } else {
        a.tools.iter().map(|t| t.trim().to_lowercase()).collect()
    };
    let settings = || crate::compare_rounds::Settings {
        time: a.time,
        rounds: a.rounds,
        size: a.size,
        udp: a.udp,
        bitrate: a.bitrate,
        len: a.len,
        json: a.json.clone(),
    };
    match a.mode {
        Mode::Latency => return crate::compare_rounds::latency(&settings(), &place, &tools),
        Mode::Udp => return crate::compare_rounds::udp(&settings(), &place, &tools),
        Mode::Mem | Mode::Files => {}
    }
    let (ready, skipped) = resolve(&tools, a.mode)?;
    for s in &skipped {
        eprintln!(
            "linerate compare: skipping {}: {}{}",
            s["tool"].as_str().unwrap_or("?"),
            s["reason"].as_str().unwrap_or(""),
            s["package"]
                .as_str()
                .map(|p| format!(" (Debian package {p})"))
                .unwrap_or_default()
        );
    }
    if ready.is_empty() {
        bail!("none of the requested tools can run here");
    }
    let started = SystemTime::now();
    let points = match a.mode {
        Mode::Files => files::run(&a, &place, &ready)?,
        _ => mem(&a, &place, &ready)?,
    };
    let (findings, table) = summarise(&points);
    eprintln!("{table}");
    let params = json!({
        "mode": if a.mode == Mode::Files { "files" } else { "mem" },
        "dataset": match a.dataset { Dataset::Large => "large", Dataset::Small => "small", Dataset::Mixed => "mixed" },
        "tools": ready.iter().map(|r| r.name.clone()).collect::<Vec<_>>(),
        "streams": a.streams, "seconds": a.time, "rounds": a.rounds,
        "placement": place.label, "skipped": skipped,
    });
    let mut definitions = BTreeMap::new();
    definitions.insert(
        "median_bps".into(),
        "For each tool and stream count, the median over rounds of the throughput the tool reports (received payload; iperf2's client reports bytes sent). Files mode: bytes of the data set over the client's wall-clock time.".into(),
    );
    definitions.insert(
        "linerate_over_best_peer".into(),
        "linerate's median divided by the best peer's median at the same stream count.".into(),
    );
    crate::study_doc::finish_as(
        "compare",
        params["mode"].as_str().unwrap_or("mem"),
        started,
        params.clone(),
        points,
        0,
        findings,
        definitions,
        &a.json,
    )
}

/// Medians per tool and stream count, linerate against the best peer, and
/// a table for people.
fn summarise(points: &[StudyPoint]) -> (BTreeMap<String, f64>, String) {
    let mut by: BTreeMap<(u64, String), Vec<f64>> = BTreeMap::new();
    for p in points {
        let n = p
            .factors
            .get("streams")
            .and_then(|v| v.as_u64())
            .unwrap_or(0);
        let v = linerate_report::data::point_bps(p);
        by.entry((n, p.series.clone())).or_default().push(v);
    }
    let median = |v: &Vec<f64>| linerate_result::stats::median(v.iter().copied());
    let mut findings = BTreeMap::new();
    let mut tools: Vec<String> = by.keys().map(|k| k.1.clone()).collect();
    tools.sort();
    tools.dedup();
    if let Some(i) = tools.iter().position(|t| t == "linerate") {
        let l = tools.remove(i);
        tools.insert(0, l);
    }
    let mut streams: Vec<u64> = by.keys().map(|k| k.0).collect();
    streams.dedup();
    let mut table = format!("{:>8}", "streams");
    for t in &tools {
        table.push_str(&format!("{t:>16}"));
    }
    table.push_str("   linerate/best peer\n");
    for n in streams {
        table.push_str(&format!("{n:>8}"));
        let mut best_peer = 0.0f64;
        let mut mine = None;
        for t in &tools {
            match by.get(&(n, t.clone())) {
                Some(v) => {
                    let m = median(v);
                    findings.insert(format!("median_bps/{t}/P{n}"), m);
                    if t == "linerate" {
                        mine = Some(m);
                    } else {
                        best_peer = best_peer.max(m);
                    }
                    table.push_str(&format!("{:>16}", fmt_rate(m)));
                }
                None => table.push_str(&format!("{:>16}", "-")),
            }
        }
        match mine {
            Some(m) if best_peer > 0.0 => {
                findings.insert(format!("linerate_over_best_peer/P{n}"), m / best_peer);
                table.push_str(&format!("   {:.2}\n", m / best_peer));
            }
            _ => table.push_str("   -\n"),
        }
    }
    (findings, table)
}

fn mem(a: &CompareArgs, place: &Place, ready: &[Ready]) -> anyhow::Result<Vec<StudyPoint>> {
    let mut servers = Vec::new();
    for (r, tool) in ready.iter().filter_map(|r| r.tool.map(|t| (r, t))) {
        let ports = Ports {
            control: free_port()?,
            data: free_port()?,
        };
        let argv = Place::wrap(&place.server_prefix, tool.server_argv(&r.exe, ports));
        let server = Server::start(argv, ports.control, Duration::from_secs(5))?;
        servers.push((r, tool, ports, server));
    }
    let mut points = Vec::new();
    let total = a.rounds as usize * a.streams.len() * servers.len();
    let mut done = 0;
    for round in 0..a.rounds {
        for &n in &a.streams {
            for k in 0..servers.len() {
                // Rotate the order each round so no tool always runs first.
                let (r, tool, ports, server) = &servers[(k + round as usize) % servers.len()];
                let tool = *tool;
                let argv = Place::wrap(
                    &place.client_prefix,
                    tool.client_argv(&r.exe, &place.host, *ports, n, a.time),
                );
                let run = run_against(tool.name(), &argv, a.time, server)?;
                let doc = to_doc(tool, &run.stdout, n, argv, run.when, run.cpu)?;
                done += 1;
                eprintln!(
                    "  [{done}/{total}] round {} {:<8} P{n:<3} {:>14}",
                    round + 1,
                    tool.name(),
                    fmt_rate(doc.summary.bits_per_second)
                );
                points.push(StudyPoint {
                    series: tool.name().into(),
                    factors: serde_json::from_value(
                        json!({"tool": tool.name(), "streams": n, "round": round + 1}),
                    )
                    .unwrap_or_default(),
                    result: doc,
                });
            }
        }
    }
    Ok(points)
}

fn to_doc(
    tool: Tool,
    stdout: &str,
    streams: u32,
    argv: Vec<String>,
    when: SystemTime,
    cpu: Cpu,
) -> anyhow::Result<ResultDoc> {
    let params = json!({"streams": streams});
    let run = match tool {
        Tool::Linerate => {
            let doc: ResultDoc =
                serde_json::from_str(stdout).context("linerate bench printed no result")?;
            return Ok(doc);
        }
        Tool::Iperf2 => parse::iperf2_csv(stdout)?,
        Tool::Iperf3 => parse::iperf3_json(stdout)?,
        Tool::Nuttcp => parse::nuttcp_parse(stdout, streams)?,
    };
    Ok(convert::to_result(
        tool.name(),
        &run,
        argv,
        when,
        cpu,
        params,
    ))
}

mod files {
    //! Files mode: a generated data set in page cache sent to a fresh
    //! directory by each tool, timed by wall clock.

    use super::*;

    pub fn dataset(dir: &Path, d: Dataset) -> anyhow::Result<(u64, u64)> {
        let (big, big_len, small) = match d {
            Dataset::Large => (1, 512u64 << 20, 0),
            Dataset::Small => (0, 0, 4000),
            Dataset::Mixed => (8, 32 << 20, 2000),
        };
        let bytes = crate::dataset::write_files(dir, big, big_len, 1)?
            + crate::dataset::write_files(&dir.join("small"), small, 4096, 2)?;
        Ok((bytes, big + small))
    }

    pub fn run(a: &CompareArgs, place: &Place, ready: &[Ready]) -> anyhow::Result<Vec<StudyPoint>> {
        let base = if Path::new("/dev/shm").is_dir() {
            PathBuf::from("/dev/shm")
        } else {
            std::env::temp_dir()
        };
        let work = base.join(format!("linerate-compare-{}", std::process::id()));
        let result = (|| {
            let src = work.join("src");
            let (bytes, count) = dataset(&src, a.dataset)?;
            let dest = work.join("dest");
            std::fs::create_dir_all(&dest)?;
            let conf = work.join("rsyncd.conf");
            std::fs::write(
                &conf,
                format!(
                    "[data]\npath = {}\nread only = false\nuse chroot = false\n{}",
                    dest.display(),
                    if rustix::process::geteuid().is_root() {
                        "uid = root\ngid = root\n"
                    } else {
                        ""
                    }
                ),
            )?;
            let mut servers = Vec::new();
            for r in ready {
                let (name, exe) = (r.name.as_str(), r.exe.as_str());
                let port = free_port()?;
                let argv: Vec<String> = if name == "linerate" {
                    vec![
                        exe.into(),
                        "serve".into(),
                        "--port".into(),
                        port.to_string(),
                        "--root".into(),
                        dest.to_string_lossy().into(),
                    ]
                } else {
                    vec![
                        exe.into(),
                        "--daemon".into(),
                        "--no-detach".into(),
                        "--port".into(),
                        port.to_string(),
                        "--config".into(),
                        conf.to_string_lossy().into(),
                    ]
                };
                let server = Server::start(
                    Place::wrap(&place.server_prefix, argv),
                    port,
                    Duration::from_secs(5),
                )?;
                servers.push((name.to_string(), exe.to_string(), port, server));
            }
            let n = a.streams.iter().copied().max().unwrap_or(2);
            let mut points = Vec::new();
            for round in 0..a.rounds {
                for k in 0..servers.len() {
                    let (name, exe, port, server) = &servers[(k + round as usize) % servers.len()];
                    let run_dir = format!("r{round}-{name}");
                    let argv: Vec<String> = if name == "linerate" {
                        vec![
                            exe.clone(),
                            "send".into(),
                            "-q".into(),
                            "-P".into(),
                            n.to_string(),
                            src.to_string_lossy().into(),
                            format!("{}:{port}:/{run_dir}", place.host),
                            "--json".into(),
                            "-".into(),
                        ]
                    } else {
                        vec![
                            exe.clone(),
                            "-a".into(),
                            format!("{}/", src.display()),
                            format!("rsync://{}:{port}/data/{run_dir}/", place.host),
                        ]
                    };
                    let argv = Place::wrap(&place.client_prefix, argv);
                    let cpu0 = server.cpu_seconds();
                    let when = SystemTime::now();
                    let out = run_client(&argv, Duration::from_secs(600))?;
                    let cpu = Cpu {
                        client: out.cpu_seconds,
                        server: server.cpu_seconds() - cpu0,
                    };
                    if !out.success {
                        bail!("{name} failed: {}", out.stderr.trim());
                    }
                    let wall_bps = bytes as f64 * 8.0 / out.wall_seconds;
                    let doc = if name == "linerate" {
                        serde_json::from_str::<ResultDoc>(&out.stdout)
                            .context("linerate send printed no result")?
                    } else {
                        let run = linerate_peers::PeerRun {
                            bits_per_second: wall_bps,
                            bytes,
                            seconds: out.wall_seconds,
                            streams: 1,
                            intervals: Vec::new(),
                            retransmits: None,
                            cpu_percent: None,
                            counted: "received",
                        };
                        convert::to_result(
                            "rsync",
                            &run,
                            argv.clone(),
                            when,
                            cpu,
                            json!({"files": count}),
                        )
                    };
                    let _ = std::fs::remove_dir_all(dest.join(&run_dir));
                    eprintln!(
                        "  round {} {name:<8} {:>14} wall, {:.0} files/s",
                        round + 1,
                        fmt_rate(wall_bps),
                        count as f64 / out.wall_seconds
                    );
                    points.push(StudyPoint {
                        series: name.clone(),
                        factors: serde_json::from_value(json!({
                            "tool": name, "streams": n, "round": round + 1, "bytes": bytes, "files": count,
                            "wall_seconds": out.wall_seconds, "wall_bps": wall_bps, "files_per_second": count as f64 / out.wall_seconds,
                        })).unwrap_or_default(),
                        result: doc,
                    });
                }
            }
            Ok(points)
        })();
        let _ = std::fs::remove_dir_all(&work);
        result
    }
}

//! Files mode: a generated data set in page cache sent to a fresh
//! directory by each tool through its own server, timed by wall clock.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::tools::FileTool;
use crate::tools::convert;
use crate::tools::process::Server;
use crate::tools::tool::ComparedTool;
use linerate_probe::units::fmt_rate;
use linerate_result::StudyPoint;
use serde_json::json;

use super::{Asked, CompareSpec, Dataset, Ran};
use crate::place::{Place, on_free_port, run_against};
use crate::rounds::{Event, Progress, Ready, linerate_doc, nth_in_round, point, resolve};
use crate::{CompareError, dataset};

/// The longest one file copy may take.
const COPY_WITHIN_SECONDS: u64 = 540;

/// Writes data set `d` under `dir`: its bytes and files.
pub(crate) fn write_dataset(dir: &Path, d: Dataset) -> Result<(u64, u64), CompareError> {
    let (big, big_len, small) = match d {
        Dataset::Large => (1, 512u64 << 20, 0),
        Dataset::Small => (0, 0, 4000),
        Dataset::Mixed => (8, 32 << 20, 2000),
    };
    let bytes = dataset::write_files(dir, big, big_len, 1)
        .and_then(|b| Ok(b + dataset::write_files(&dir.join("small"), small, 4096, 2)?))
        .map_err(CompareError::io_at("writing the data set in", dir))?;
    Ok((bytes, big + small))
}

/// Where the data set and the copies live: memory where there is a
/// tmpfs, so the disk does not set the pace.
fn work_dir() -> PathBuf {
    let base = if Path::new("/dev/shm").is_dir() {
        PathBuf::from("/dev/shm")
    } else {
        std::env::temp_dir()
    };
    base.join(format!("linerate-compare-{}", std::process::id()))
}

pub(super) fn run(asked: Asked, on: &mut dyn FnMut(Event)) -> Result<Ran, CompareError> {
    let Asked { spec, place, names } = asked;
    let (ready, skipped) = resolve::<FileTool>(names, &spec.linerate, &|_| None)?;
    skipped.iter().for_each(|s| on(Event::Skipped(s.clone())));
    let work = work_dir();
    let started = SystemTime::now();
    let points = copy_rounds(spec, place, &ready, &work, on);
    let _ = std::fs::remove_dir_all(&work);
    let points = points?;
    Ok(Ran::new(
        started,
        &ready,
        skipped,
        json!({"dataset": spec.dataset.as_str(), "streams": spec.streams}),
        points,
    ))
}

/// The server of each tool, receiving into `dest`.
fn start_servers(
    ready: &[Ready<FileTool>],
    place: &Place,
    work: &Path,
    dest: &Path,
) -> Result<Vec<(FileTool, String, u16, Server)>, CompareError> {
    let conf = work.join("rsyncd.conf");
    let as_root = if rustix::process::geteuid().is_root() {
        "uid = root\ngid = root\n"
    } else {
        ""
    };
    let rsyncd = format!(
        "[data]\npath = {}\nread only = false\nuse chroot = false\n{as_root}",
        dest.display()
    );
    std::fs::write(&conf, rsyncd).map_err(CompareError::io("writing rsyncd.conf"))?;
    let mut servers = Vec::new();
    for r in ready {
        let (dest, conf) = (dest.to_string_lossy(), conf.to_string_lossy());
        let words: Vec<&str> = match r.tool {
            FileTool::Linerate => vec!["serve", "--root", &dest],
            FileTool::Rsync => vec!["--daemon", "--no-detach", "--config", &conf],
        };
        let (port, server) = on_free_port(|port| {
            let argv = std::iter::once(r.exe.clone())
                .chain(words.iter().map(|w| w.to_string()))
                .chain(["--port".into(), port.to_string()])
                .collect();
            Ok(Server::start(
                place.server(argv),
                port,
                Duration::from_secs(5),
            )?)
        })?;
        servers.push((r.tool, r.exe.clone(), port, server));
    }
    Ok(servers)
}

fn copy_rounds(
    spec: &CompareSpec,
    place: &Place,
    ready: &[Ready<FileTool>],
    work: &Path,
    on: &mut dyn FnMut(Event),
) -> Result<Vec<StudyPoint>, CompareError> {
    let src = work.join("src");
    let (bytes, count) = write_dataset(&src, spec.dataset)?;
    let dest = work.join("dest");
    std::fs::create_dir_all(&dest).map_err(CompareError::io("making the destination"))?;
    let servers = start_servers(ready, place, work, &dest)?;
    let n = spec.streams.iter().copied().max().unwrap_or(2);
    let mut progress = Progress::of(spec.rounds as usize * servers.len());
    let mut points = Vec::new();
    for round in 0..spec.rounds {
        for k in 0..servers.len() {
            let (tool, exe, port, server) = &servers[nth_in_round(round, k, servers.len())];
            let name = tool.name();
            let run_dir = format!("r{round}-{name}");
            let argv: Vec<String> = match tool {
                FileTool::Linerate => vec![
                    exe.clone(),
                    "send".into(),
                    "-q".into(),
                    "-P".into(),
                    n.to_string(),
                    src.to_string_lossy().into(),
                    format!("{}:{port}:/{run_dir}", place.host),
                    "--json".into(),
                    "-".into(),
                ],
                FileTool::Rsync => vec![
                    exe.clone(),
                    "-a".into(),
                    format!("{}/", src.display()),
                    format!("rsync://{}:{port}/data/{run_dir}/", place.host),
                ],
            };
            let argv = place.client(argv);
            let out = run_against(name, &argv, COPY_WITHIN_SECONDS, server)?;
            let wall_bps = bytes as f64 * 8.0 / out.wall_seconds;
            let doc = match tool {
                FileTool::Linerate => linerate_doc("send", &out.stdout)?,
                FileTool::Rsync => {
                    let run = crate::tools::ToolRun {
                        bits_per_second: wall_bps,
                        bytes,
                        seconds: out.wall_seconds,
                        streams: 1,
                        intervals: Vec::new(),
                        retransmits: None,
                        cpu_percent: None,
                        counted: "received",
                    };
                    let params = json!({"files": count});
                    convert::to_result(name, &run, argv.clone(), out.when, out.cpu, params)
                }
            };
            let _ = std::fs::remove_dir_all(dest.join(&run_dir));
            let files_per_second = count as f64 / out.wall_seconds;
            on(progress.ran(
                round,
                name,
                format!(
                    "{:>14} wall, {files_per_second:.0} files/s",
                    fmt_rate(wall_bps)
                ),
            ));
            let factors = json!({
                "tool": name, "streams": n, "round": round + 1, "bytes": bytes, "files": count,
                "wall_seconds": out.wall_seconds, "wall_bps": wall_bps,
                "files_per_second": files_per_second,
            });
            points.push(point(name, factors, doc));
        }
    }
    Ok(points)
}

/// What each finding's name means.
pub(super) const DEFINITIONS: [(&str, &str); 2] = [
    (
        "median_bps",
        "For each tool, the median over rounds of the bytes of the data set over the client's wall-clock time.",
    ),
    (
        "linerate_over_best_peer",
        "linerate's median divided by the best peer's median.",
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_small_data_set_is_4000_files_of_4_kib() {
        let dir = std::env::temp_dir().join(format!("lr-harness-ds-{}", std::process::id()));
        let (bytes, files) = write_dataset(&dir, Dataset::Small).unwrap();
        assert_eq!((bytes, files), (4000 * 4096, 4000));
        assert_eq!(std::fs::read_dir(dir.join("small")).unwrap().count(), 4000);
        std::fs::remove_dir_all(dir).unwrap();
    }
}

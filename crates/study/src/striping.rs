//! The striping study (seeds 000 and 004): what N parallel links give one
//! host pair. One link alone; the N links bonded (a layer 3+4 hash per
//! flow) with 1, N and 4N streams; the N links striped explicitly, one
//! path a link; memory to memory and a file transfer. All on one lab of
//! N links, whose first link and whose bond have addresses of their own.

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use linerate_engine::spec::{BenchSpec, Stripe, TransferSpec};
use linerate_lab::spec::BondMode;
use linerate_lab::{BackendChoice, Conditions, LabSpec};
use linerate_result::StudyPoint;
use serde_json::json;

use super::bed::Bed;
use super::{Collector, StudyCommon, StudyEvent, mark_invalid_runs, timed};
use crate::StudyError;
use linerate_compare::document::ManyRuns;

/// What the striping study sets.
#[derive(Debug, Clone)]
pub struct StripingStudy {
    /// What every study takes.
    pub common: StudyCommon,
    /// Parallel links (2 with --quick unless given).
    pub links: Option<u8>,
    /// Each link's rate.
    pub rate_bps: u64,
    /// Size of the file each transfer sends (64 MiB with --quick unless given).
    pub file_bytes: Option<u64>,
}

/// Where the study runs: the lab, the source file and the receiving root.
struct Setting<'a> {
    bed: &'a Bed,
    links: u8,
    source: PathBuf,
    seconds: f64,
    command_line: &'a [String],
}

impl Setting<'_> {
    /// h2's address on its first link, on the bond, and each link's pair.
    fn one_link(&self) -> IpAddr {
        self.bed.lab.hosts[1].links[0].v4.into()
    }

    fn bond(&self) -> IpAddr {
        self.bed.lab.hosts[1].v4.into()
    }

    fn stripes(&self) -> Vec<Stripe> {
        let (h1, h2) = (&self.bed.lab.hosts[0], &self.bed.lab.hosts[1]);
        h1.links
            .iter()
            .zip(&h2.links)
            .map(|(a, b)| Stripe {
                remote: b.v4.into(),
                local: Some(a.v4.into()),
            })
            .collect()
    }

    fn bench(
        &self,
        to: IpAddr,
        streams: u16,
        stripes: Vec<Stripe>,
    ) -> Result<linerate_result::ResultDoc, StudyError> {
        let spec = BenchSpec {
            stripes,
            ..timed(self.seconds, streams)
        };
        self.bed.bench_to(to, spec, self.command_line)
    }

    /// A transfer of the source file in the clear into `dest`, written
    /// without fsync: what is measured is the links, not the disk's flush.
    fn send(
        &self,
        (to, dest): (IpAddr, &str),
        streams: u16,
        stripes: Vec<Stripe>,
    ) -> Result<linerate_result::ResultDoc, StudyError> {
        let spec = TransferSpec {
            streams,
            fsync: false,
            stripes,
            count_members: true,
            ..TransferSpec::default()
        };
        let what = (vec![self.source.clone()], dest);
        self.bed.send_to(to, &spec, what, self.command_line)
    }
}

/// Runs the striping study, telling `on` of every run.
pub fn striping(a: &StripingStudy, on: &mut dyn FnMut(StudyEvent)) -> Result<ManyRuns, StudyError> {
    let c = &a.common;
    let started = SystemTime::now();
    let links = a.links.unwrap_or(if c.quick { 2 } else { 4 });
    let file_bytes = a
        .file_bytes
        .unwrap_or(if c.quick { 64 << 20 } else { 1 << 30 });
    let scratch = Scratch::new(&c.lab_name, file_bytes)?;
    let source = scratch.0.join("source.bin");
    write_file(&source, file_bytes)?;
    let spec = LabSpec {
        name: c.lab_name.clone(),
        hosts: 2,
        router: false,
        mtu: 1500,
        backend: BackendChoice::Auto,
        conditions: Conditions {
            rate_bps: Some(a.rate_bps),
            seed: 1,
            ..Conditions::default()
        },
        fabric: None,
        links,
        bond: Some(BondMode::Lacp),
    };
    let bed = Bed::up_receiving(spec, &c.linerate, Some(scratch.0.join("received")))?;
    let mut col = Collector {
        points: Vec::new(),
        on,
    };
    (col.on)(StudyEvent::LabUp(format!(
        "{links} links of {} Gbit/s, bonded: {}",
        a.rate_bps as f64 / 1e9,
        bed.lab.bond.as_ref().map_or("", |b| b.reason.as_str())
    )));
    let s = Setting {
        bed: &bed,
        links,
        source,
        seconds: c.seconds(),
        command_line: &c.command_line,
    };
    let n = u16::from(links);
    let point =
        |path: &str, streams: u16| json!({"path": path, "streams": streams, "links": links});
    col.add(
        "memory/one_link",
        point("one link", n),
        s.bench(s.one_link(), n, Vec::new())?,
    );
    for p in [1, n, 4 * n] {
        col.add(
            "memory/bond",
            point("bond", p),
            s.bench(s.bond(), p, Vec::new())?,
        );
    }
    col.add(
        "memory/striped",
        point("striped", n),
        s.bench(s.one_link(), n, s.stripes())?,
    );
    col.add(
        "transfer/one_link",
        point("one link", n),
        s.send((s.one_link(), "one_link"), n, Vec::new())?,
    );
    col.add(
        "transfer/bond",
        point("bond", 4 * n),
        s.send((s.bond(), "bond"), 4 * n, Vec::new())?,
    );
    col.add(
        "transfer/striped",
        point("striped", n),
        s.send((s.one_link(), "striped"), n, s.stripes())?,
    );
    let points = col.points;
    let (mut findings, mut definitions) = findings(&points, s.links);
    mark_invalid_runs(&points, &mut findings, &mut definitions);
    let parameters = json!({
        "links": links,
        "rate_bps": a.rate_bps,
        "file_bytes": file_bytes,
        "seconds": s.seconds,
        "quick": c.quick,
        "bond": bed.lab.bond.as_ref().map(|b| &b.reason),
        "scratch": scratch.0,
    });
    let headline = points
        .iter()
        .position(|p| p.series == "memory/striped")
        .unwrap_or(0);
    Ok(ManyRuns {
        kind: "study",
        detail: "striping".into(),
        started,
        parameters,
        points,
        headline,
        findings,
        definitions,
    })
}

/// Each variant's rate over one link's, and the sentence that sums them up.
fn findings(points: &[StudyPoint], links: u8) -> (BTreeMap<String, f64>, BTreeMap<String, String>) {
    let rate = |series: &str, streams: Option<u16>| {
        points
            .iter()
            .find(|p| {
                p.series == series
                    && streams.is_none_or(|n| {
                        p.factors.get("streams").and_then(|v| v.as_u64()) == Some(u64::from(n))
                    })
            })
            .map(|p| p.result.summary.bits_per_second)
    };
    let n = u16::from(links);
    let mut f = BTreeMap::new();
    let mut said = Vec::new();
    for kind in ["memory", "transfer"] {
        let Some(one) = rate(&format!("{kind}/one_link"), None).filter(|&r| r > 0.0) else {
            continue;
        };
        if let Some(x) = rate(&format!("{kind}/striped"), None) {
            f.insert(format!("{kind}_striped_over_one_link"), x / one);
        }
        let bond_streams: &[u16] = if kind == "memory" {
            &[1, n, 4 * n]
        } else {
            &[4 * n]
        };
        for &p in bond_streams {
            if let Some(x) = rate(&format!("{kind}/bond"), Some(p)) {
                f.insert(format!("{kind}_bond_P{p}_over_one_link"), x / one);
            }
        }
    }
    let g = |k: &str| f.get(k).map_or("?".to_string(), |x| format!("{x:.1}x"));
    said.push(format!(
        "{links} striped links carried {} one link; the bond carried {} with 1 stream, {} with {n}, \
         {} with {} (a hash puts each flow on one link, so few flows leave links idle). \
         A file transfer: striped {}, bonded with {} streams {}.",
        g("memory_striped_over_one_link"),
        g("memory_bond_P1_over_one_link"),
        g(&format!("memory_bond_P{n}_over_one_link")),
        g(&format!("memory_bond_P{}_over_one_link", 4 * n)),
        4 * n,
        g("transfer_striped_over_one_link"),
        4 * n,
        g(&format!("transfer_bond_P{}_over_one_link", 4 * n)),
    ));
    let mut d = BTreeMap::new();
    d.insert(
        "*_over_one_link".into(),
        format!(
            "Rate of the variant divided by one link's with {n} streams (memory to memory, or \
             the same file transfer in the clear, without fsync, from and into \
             parameters.scratch: /dev/shm, in memory, where it has room)."
        ),
    );
    d.insert("sentence".into(), said.join(" "));
    (f, d)
}

/// A directory for the source file and what is received, removed at the
/// end: in memory (/dev/shm) where it holds three times the file, so the
/// transfers measure the links rather than this host's disk, else the
/// temporary directory.
struct Scratch(PathBuf);

impl Scratch {
    fn new(tag: &str, file_bytes: u64) -> Result<Scratch, StudyError> {
        let shm = Path::new("/dev/shm");
        let room = rustix::fs::statvfs(shm)
            .map(|v| v.f_bavail.saturating_mul(v.f_frsize))
            .unwrap_or(0);
        let base = if room / 3 >= file_bytes {
            shm.to_path_buf()
        } else {
            std::env::temp_dir()
        };
        let dir = base.join(format!("linerate-study-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("received"))
            .map_err(StudyError::io_at("creating", &dir))?;
        Ok(Scratch(dir))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A file of `bytes` of a pattern that does not compress to nothing.
fn write_file(path: &Path, bytes: u64) -> Result<(), StudyError> {
    use std::io::Write;
    let mut f = std::fs::File::create(path).map_err(StudyError::io_at("creating", path))?;
    let block: Vec<u8> = (0..1u32 << 20)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let mut left = bytes;
    while left > 0 {
        let n = left.min(block.len() as u64) as usize;
        f.write_all(&block[..n])
            .map_err(StudyError::io_at("writing", path))?;
        left -= n as u64;
    }
    Ok(())
}

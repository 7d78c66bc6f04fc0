//! The interference study of seed 002 (its section VIII): a bandwidth-heavy
//! job (halo3d) and a latency-sensitive one (all-to-all) on disjoint random
//! allocations of one leaf-spine fabric; the latency job alone, the
//! bandwidth job alone, then both (the latency job starting a while after
//! the bandwidth job) without classes, with ETS 50/50, with strict
//! priority for the latency job, and with PFC on the bandwidth class. Each
//! job runs as `linerate job` on the lab, so its document is the one a
//! user gets; the study keeps them all, with the switches' pause counters.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

use linerate_emulator::fabric::sim::{PortCounters, pauses_by_switch};
use linerate_emulator::fabric::{FabricSpec, FabricSpecError, Taper, Topology, TrafficClass};
use linerate_lab::{BackendChoice, Conditions, Lab, LabSpec};
use linerate_result::ResultDoc;
use serde_json::json;

use super::{Collector, StudyCommon, StudyEvent};
use crate::StudyError;
use linerate_compare::document::ManyRuns;

/// What the interference study runs.
#[derive(Debug, Clone)]
pub struct InterferenceStudy {
    /// What every study takes.
    pub common: StudyCommon,
    /// Every host link's rate.
    pub rate_bps: u64,
    /// The leaves' uplinks' oversubscription.
    pub taper: Taper,
    /// How long the bandwidth job runs before the latency job starts
    /// (the paper: 10 s).
    pub stagger: Duration,
    /// Iterations of the latency job.
    pub latency_iterations: u32,
    /// Bytes the latency job sends every other rank per iteration.
    pub latency_message: u64,
    /// Cells per side of each bandwidth-job rank.
    pub halo_cells: u32,
    /// Each switch port's buffer per class.
    pub buffer_bytes: u64,
    /// Seed of the random allocations.
    pub seed: u64,
    /// What the fabric's switches are made of.
    pub backend: BackendChoice,
}

/// One configuration of the fabric and which jobs run on it.
struct Config {
    name: &'static str,
    classes: &'static [&'static str],
    latency_job: bool,
    bandwidth_job: bool,
}

/// The paper's configurations, in its order.
const CONFIGS: [Config; 6] = [
    Config {
        name: "latency-alone",
        classes: &[],
        latency_job: true,
        bandwidth_job: false,
    },
    Config {
        name: "bandwidth-alone",
        classes: &[],
        latency_job: false,
        bandwidth_job: true,
    },
    Config {
        name: "no-classes",
        classes: &[],
        latency_job: true,
        bandwidth_job: true,
    },
    Config {
        name: "ets",
        classes: &["lat:dscp=ef:ets=50", "bulk:dscp=*:ets=50"],
        latency_job: true,
        bandwidth_job: true,
    },
    Config {
        name: "strict",
        classes: &["lat:dscp=ef:strict", "bulk:dscp=*:ets=100"],
        latency_job: true,
        bandwidth_job: true,
    },
    Config {
        name: "pfc",
        classes: &["lat:dscp=ef:ets=50", "bulk:dscp=*:ets=50:lossless"],
        latency_job: true,
        bandwidth_job: true,
    },
];

/// Leaves and hosts per leaf of the study's fabric (the paper's 48-node
/// allocations, scaled to the hosts one machine holds).
const LEAVES: u8 = 2;
const HOSTS_PER_LEAF: u8 = 4;

/// Two disjoint random allocations of the fabric's hosts, each with half
/// of every leaf (so both jobs cross the spine, as allocations spread over
/// a large fabric do): the bandwidth job's and the latency job's, in rank
/// order.
pub fn allocations(leaves: u8, per_leaf: u8, seed: u64) -> (Vec<String>, Vec<String>) {
    let mut rng = fastrand::Rng::with_seed(seed);
    let (mut bandwidth, mut latency) = (Vec::new(), Vec::new());
    for leaf in 0..leaves {
        let mut hosts: Vec<u8> = (1..=per_leaf).map(|i| leaf * per_leaf + i).collect();
        rng.shuffle(&mut hosts);
        let half = hosts.len() / 2;
        bandwidth.extend(hosts[..half].iter().map(|h| format!("h{h}")));
        latency.extend(hosts[half..].iter().map(|h| format!("h{h}")));
    }
    rng.shuffle(&mut bandwidth);
    rng.shuffle(&mut latency);
    (bandwidth, latency)
}

/// Runs the study, telling `on` of every job as it ends.
pub fn interference(
    a: &InterferenceStudy,
    on: &mut dyn FnMut(StudyEvent),
) -> Result<ManyRuns, StudyError> {
    let started = SystemTime::now();
    let (bandwidth_hosts, latency_hosts) = allocations(LEAVES, HOSTS_PER_LEAF, a.seed);
    let mut col = Collector {
        points: Vec::new(),
        on,
    };
    let mut findings = BTreeMap::new();
    let scratch =
        std::env::temp_dir().join(format!("linerate-interference-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).map_err(StudyError::io_at("creating", &scratch))?;
    let mut latency_alone_s = None;
    for config in &CONFIGS {
        let lossless = config.classes.iter().any(|c| c.ends_with(":lossless"));
        if lossless && a.backend == BackendChoice::Htb {
            (col.on)(StudyEvent::LabUp(format!(
                "{}: skipped, kernel switches send no pause frames (PFC needs --backend emulator)",
                config.name
            )));
            continue;
        }
        let lab = FabricLab::up(a, config)?;
        (col.on)(StudyEvent::LabUp(format!(
            "{}: leaf-spine, {} leaves of {} hosts, taper {}, classes {}",
            config.name,
            LEAVES,
            HOSTS_PER_LEAF,
            a.taper,
            if config.classes.is_empty() {
                "none".to_string()
            } else {
                config.classes.join(" ")
            }
        )));
        let ran = run_config(
            a,
            config,
            &lab.0,
            &scratch,
            (&bandwidth_hosts, &latency_hosts),
            latency_alone_s,
        )?;
        if let Some(doc) = &ran.latency {
            let seconds = job_seconds(doc);
            if config.name == "latency-alone" {
                latency_alone_s = Some(seconds);
            }
            findings.insert(format!("latency_job_seconds_{}", config.name), seconds);
        }
        if let Some(doc) = &ran.bandwidth {
            findings.insert(
                format!("bandwidth_job_median_iteration_us_{}", config.name),
                job_median_us(doc),
            );
            findings.insert(
                format!("bandwidth_job_seconds_{}", config.name),
                job_seconds(doc),
            );
        }
        for s in pauses_by_switch(&lab.ports()).iter().filter(|_| lossless) {
            findings.insert(
                format!("pause_received_us_{}_{}", config.name, s.switch),
                s.received_us as f64,
            );
            findings.insert(
                format!("pause_sent_us_{}_{}", config.name, s.switch),
                s.sent_us as f64,
            );
        }
        for (job, doc) in [("latency", ran.latency), ("bandwidth", ran.bandwidth)] {
            if let Some(doc) = doc {
                let factors = json!({"config": config.name, "job": job, "classes": config.classes});
                col.add(&format!("{job}/{}", config.name), factors, doc);
            }
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);
    if let Some(alone) = latency_alone_s.filter(|s| *s > 0.0) {
        for c in CONFIGS.iter().filter(|c| c.latency_job && c.bandwidth_job) {
            if let Some(s) = findings
                .get(&format!("latency_job_seconds_{}", c.name))
                .copied()
            {
                findings.insert(format!("latency_slowdown_{}", c.name), s / alone);
            }
        }
    }
    let mut definitions = BTreeMap::new();
    definitions.insert(
        "latency_job_seconds_{config} / bandwidth_job_seconds_{config}".into(),
        "Each job's run time in the configuration, from its first rank's start to its last rank's end.".into(),
    );
    definitions.insert(
        "latency_slowdown_{config}".into(),
        "The latency job's run time beside the bandwidth job, divided by its run time alone on the same fabric.".into(),
    );
    definitions.insert(
        "pause_received_us_{config}_{switch} / pause_sent_us_{config}_{switch}".into(),
        "The switch's pause duration counters summed over its ports (the paper's Table II): time its ports were paused by their neighbours, and time they paused them.".into(),
    );
    definitions.insert("sentence".into(), sentence(&findings));
    let parameters = json!({
        "rate_bps": a.rate_bps, "taper": a.taper.to_string(), "stagger_seconds": a.stagger.as_secs_f64(),
        "latency_iterations": a.latency_iterations, "latency_message_bytes": a.latency_message,
        "halo_cells": a.halo_cells, "buffer_bytes": a.buffer_bytes, "seed": a.seed, "quick": a.common.quick,
        "backend": if a.backend == BackendChoice::Htb { "htb" } else { "emulator" },
        "bandwidth_hosts": bandwidth_hosts, "latency_hosts": latency_hosts,
    });
    let headline = col
        .points
        .iter()
        .position(|p| p.series == "latency/ets")
        .unwrap_or(0);
    Ok(ManyRuns {
        kind: "study",
        detail: "interference".into(),
        started,
        parameters,
        points: col.points,
        headline,
        findings,
        definitions,
    })
}

/// The finding as the paper states it, then what the sharing cost the
/// bandwidth job, which every shared configuration also runs.
pub fn sentence(findings: &BTreeMap<String, f64>) -> String {
    let get = |c: &str| findings.get(&format!("latency_slowdown_{c}")).copied();
    let latency = match (get("ets"), get("strict"), get("no-classes")) {
        (Some(ets), Some(strict), Some(none)) => format!(
            "ETS kept the all-to-all within {ets:.1}x of its time alone and strict priority within \
             {strict:.1}x; without classes it took {none:.1}x."
        ),
        _ => "The latency job did not complete in every configuration; see each run.".into(),
    };
    let halo = |c: &str| findings.get(&format!("bandwidth_job_seconds_{c}")).copied();
    match (
        halo("bandwidth-alone"),
        halo("no-classes"),
        halo("ets"),
        halo("strict"),
    ) {
        (Some(alone), Some(none), Some(ets), Some(strict)) if alone > 0.0 => {
            let shared = [none, ets, strict];
            let (low, high) = shared
                .iter()
                .fold((f64::MAX, 0.0f64), |(l, h), &s| (l.min(s), h.max(s)));
            // Classes that change only which job's packets wait leave the
            // bandwidth job what the fabric carries in all: say so when
            // its times agree.
            let alike = if high <= low * 1.02 {
                " The same within 2 % whatever the classes: they decided which job's packets \
                 waited, not how much the halo3d job moved in all."
            } else {
                ""
            };
            format!(
                "{latency} The halo3d job took {alone:.2} s alone and, beside the all-to-all, \
                 {none:.2} s without classes ({:.2}x), {ets:.2} s with ETS ({:.2}x) and \
                 {strict:.2} s with strict priority ({:.2}x).{alike}",
                none / alone,
                ets / alone,
                strict / alone
            )
        }
        _ => format!("{latency} The halo3d job did not complete in every configuration."),
    }
}

/// A fabric lab, taken down when dropped.
struct FabricLab(Lab);

impl FabricLab {
    fn up(a: &InterferenceStudy, config: &Config) -> Result<FabricLab, StudyError> {
        let classes: Vec<TrafficClass> = if config.classes.is_empty() {
            linerate_emulator::fabric::classes::best_effort()
        } else {
            config
                .classes
                .iter()
                .map(|c| {
                    c.parse().map_err(|e: FabricSpecError| {
                        linerate_lab::LabError::from(linerate_lab::SpecError::from(e))
                    })
                })
                .collect::<Result<_, _>>()?
        };
        let fabric = FabricSpec {
            topology: Topology::LeafSpine {
                leaves: LEAVES,
                spines: 1,
                hosts_per_leaf: HOSTS_PER_LEAF,
            },
            host_rate_bps: a.rate_bps,
            taper: a.taper,
            buffer_bytes: a.buffer_bytes,
            classes,
            ..FabricSpec::default()
        };
        let spec = LabSpec {
            name: a.common.lab_name.clone(),
            hosts: LEAVES * HOSTS_PER_LEAF,
            router: false,
            mtu: 1500,
            backend: a.backend,
            conditions: Conditions::default(),
            fabric: Some(fabric),
            links: 1,
            bond: None,
        };
        Ok(FabricLab(Lab::up(spec, &a.common.linerate)?))
    }

    fn ports(&self) -> Vec<PortCounters> {
        self.0
            .counters()
            .and_then(|c| serde_json::from_value(c.get("ports")?.clone()).ok())
            .unwrap_or_default()
    }
}

// A lab left up must not go unsaid, and a drop cannot return the error.
#[expect(clippy::print_stderr, reason = "the one report a drop can make")]
impl Drop for FabricLab {
    fn drop(&mut self) {
        if let Err(e) = self.0.down() {
            let name = &self.0.spec.name;
            eprintln!(
                "linerate: could not remove lab {name}: {e} (run `linerate lab down --name {name}`)"
            );
        }
    }
}

/// The documents of one configuration's jobs.
struct Ran {
    latency: Option<ResultDoc>,
    bandwidth: Option<ResultDoc>,
}

/// Runs a configuration's jobs: the bandwidth job first, the latency job
/// `stagger` later; the bandwidth job is interrupted once the latency job
/// is done (alone, it runs as long as the latency job ran alone, plus the
/// stagger).
fn run_config(
    a: &InterferenceStudy,
    config: &Config,
    lab: &Lab,
    scratch: &Path,
    (bandwidth_hosts, latency_hosts): (&[String], &[String]),
    latency_alone_s: Option<f64>,
) -> Result<Ran, StudyError> {
    let file = |job: &str| scratch.join(format!("{}-{job}.json", config.name));
    // The paper's TCP: a loss-based congestion control that fills the
    // switches' buffers (bbr, this host's default, keeps them short).
    let cc = a.common.cc.as_deref().unwrap_or("cubic");
    let mut bandwidth = None;
    if config.bandwidth_job {
        // It runs for a set time that covers the latency job even ten times
        // slower than alone (alone, as long as the latency job ran alone),
        // and reports what it completed.
        let alone = latency_alone_s.unwrap_or(2.0);
        let cover = if config.latency_job {
            10.0 * alone
        } else {
            alone
        };
        let limit_ms = ((a.stagger.as_secs_f64() + cover + 2.0) * 1000.0).ceil() as u64;
        let (cells, limit) = (a.halo_cells.to_string(), format!("{limit_ms}ms"));
        let args = [
            "halo3d",
            "-n",
            "100000",
            "--cells",
            &cells,
            "--compute",
            "0",
            "--limit",
            &limit,
            "--cc",
            cc,
        ];
        bandwidth = Some(JobProcess::start(
            a,
            lab,
            &args,
            bandwidth_hosts,
            &file("bandwidth"),
        )?);
        std::thread::sleep(a.stagger);
    }
    let mut latency = None;
    if config.latency_job {
        let (n, m) = (
            a.latency_iterations.to_string(),
            a.latency_message.to_string(),
        );
        let args = [
            "all-to-all",
            "-n",
            &n,
            "--message",
            &m,
            "--dscp",
            "ef",
            "--cc",
            cc,
        ];
        let job = JobProcess::start(a, lab, &args, latency_hosts, &file("latency"))?;
        latency = Some(job.wait()?);
    }
    let bandwidth = match bandwidth {
        Some(job) => Some(job.wait()?),
        None => None,
    };
    Ok(Ran { latency, bandwidth })
}

/// A `linerate job` on the lab, its document going to a file.
struct JobProcess {
    child: Child,
    json: PathBuf,
    what: String,
}

impl JobProcess {
    fn start(
        a: &InterferenceStudy,
        lab: &Lab,
        args: &[&str],
        hosts: &[String],
        json: &Path,
    ) -> Result<JobProcess, StudyError> {
        let what = format!("linerate job {}", args[0]);
        let child = Command::new(&a.common.linerate)
            .arg("job")
            .args(args)
            .args(["--lab", &lab.spec.name, "--lab-hosts", &hosts.join(",")])
            .arg("--json")
            .arg(json)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(StudyError::io_at("starting", &a.common.linerate))?;
        Ok(JobProcess {
            child,
            json: json.to_owned(),
            what,
        })
    }

    /// Waits for the job to end; its document.
    fn wait(mut self) -> Result<ResultDoc, StudyError> {
        let mut stderr = String::new();
        if let Some(mut e) = self.child.stderr.take() {
            let _ = std::io::Read::read_to_string(&mut e, &mut stderr);
        }
        let _ = self.child.wait();
        read_doc(&self.json).ok_or_else(|| StudyError::ToolFailed {
            tool: self.what.clone(),
            stderr: stderr.trim().to_string(),
        })
    }
}

impl Drop for JobProcess {
    fn drop(&mut self) {
        // Ended by PID when the study fails half-way.
        let deadline = Instant::now() + Duration::from_secs(10);
        while matches!(self.child.try_wait(), Ok(None)) && Instant::now() < deadline {
            if let Some(pid) = rustix::process::Pid::from_raw(self.child.id() as i32) {
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::INT);
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn read_doc(path: &Path) -> Option<ResultDoc> {
    serde_json::from_slice(&std::fs::read(path).ok()?).ok()
}

fn job_of(doc: &ResultDoc) -> Option<&linerate_result::fleet::JobResult> {
    doc.fleet.as_ref()?.steps.first()?.job.as_ref()
}

/// A job's run time: its slowest rank's.
fn job_seconds(doc: &ResultDoc) -> f64 {
    job_of(doc).map_or(0.0, |j| j.total_seconds)
}

fn job_median_us(doc: &ResultDoc) -> f64 {
    job_of(doc).map_or(0.0, |j| j.median_iteration_us)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocations_are_disjoint_random_and_half_of_every_leaf() {
        let (b, l) = allocations(2, 4, 7);
        assert_eq!((b.len(), l.len()), (4, 4));
        assert!(b.iter().all(|h| !l.contains(h)));
        let leaf1 = |v: &[String]| {
            v.iter()
                .filter(|h| h[1..].parse::<u8>().unwrap() <= 4)
                .count()
        };
        assert_eq!((leaf1(&b), leaf1(&l)), (2, 2));
        assert_eq!(
            allocations(2, 4, 7),
            (b.clone(), l.clone()),
            "a seed gives one allocation"
        );
        let others: Vec<_> = (0..20).map(|s| allocations(2, 4, s)).collect();
        assert!(
            others.iter().any(|o| o.0 != b),
            "other seeds, other allocations"
        );
    }

    #[test]
    fn the_sentence_gives_each_configuration_its_slowdown() {
        let mut f = BTreeMap::new();
        f.insert("latency_slowdown_ets".to_string(), 1.08);
        f.insert("latency_slowdown_strict".to_string(), 1.04);
        f.insert("latency_slowdown_no-classes".to_string(), 4.23);
        for (c, s) in [
            ("bandwidth-alone", 4.30),
            ("no-classes", 6.94),
            ("ets", 5.16),
            ("strict", 6.02),
        ] {
            f.insert(format!("bandwidth_job_seconds_{c}"), s);
        }
        assert_eq!(
            sentence(&f),
            "ETS kept the all-to-all within 1.1x of its time alone and strict priority within 1.0x; \
             without classes it took 4.2x. The halo3d job took 4.30 s alone and, beside the \
             all-to-all, 6.94 s without classes (1.61x), 5.16 s with ETS (1.20x) and 6.02 s with \
             strict priority (1.40x)."
        );
        // Shared times within 2 % of each other are said to be alike.
        let mut alike = f.clone();
        for c in ["no-classes", "ets", "strict"] {
            alike.insert(format!("bandwidth_job_seconds_{c}"), 9.62);
        }
        assert!(sentence(&alike).ends_with("not how much the halo3d job moved in all."));
        assert!(!sentence(&f).contains("within 2 %"));
        f.remove("latency_slowdown_ets");
        assert!(sentence(&f).starts_with("The latency job did not complete"));
        f.remove("bandwidth_job_seconds_ets");
        assert!(sentence(&f).ends_with("The halo3d job did not complete in every configuration."));
    }
}

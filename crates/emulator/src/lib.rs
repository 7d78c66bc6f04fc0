//! The user-space network emulator a lab uses where the kernel lacks
//! netem: a TUN device in each host's namespace, one forwarding thread per
//! host applying the WAN's impairments ([`model`], reloaded from a file
//! while running), or one thread driving the sans-IO model of a switched
//! fabric ([`fabric`]) with real packets ([`fabric_driver`]).
#![warn(missing_docs)]

pub mod fabric;
pub mod fabric_driver;
pub mod forward;
pub mod model;
pub mod packet;
mod tun;

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use forward::{Counters, Port, Shared};
use model::Impairments;

/// Scheduling priority of the emulator (and so of its forwarding threads).
pub const EMULATOR_NICE: i32 = -20;

/// Name of the emulator's device inside every host namespace.
pub const DEVICE: &str = "lab0";

/// Everything the emulator process needs, written by `lab up` as JSON.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct EmulatorPlan {
    /// Per host: its name, its namespace file and the addresses routed to it.
    pub hosts: Vec<EmulatedHost>,
    /// Impairments file, re-read when it changes (`lab set`).
    pub impairments: PathBuf,
    /// Where the emulator copies each impairments file once it is in force,
    /// so `lab set` returns only then. Absent in plans of older builds.
    #[serde(default)]
    pub applied: Option<PathBuf>,
    /// Counters file, rewritten every second (`lab status`).
    pub counters: PathBuf,
    /// The fabric between the hosts, when the lab has switches: then the
    /// impairments are not used.
    #[serde(default)]
    pub fabric: Option<crate::fabric::FabricSpec>,
}

/// A lab host as the emulator serves it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct EmulatedHost {
    /// Its name (h1, h2, ...).
    pub name: String,
    /// Its namespace, as a path under /run/netns.
    pub netns: PathBuf,
    /// Its addresses.
    pub addrs: Vec<IpAddr>,
}

/// Why the emulator could not start or stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EmulatorError {
    /// The impairments file could not be read.
    #[error("{}: {error}", .path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The error the system gave.
        error: std::io::Error,
    },
    /// A host's TUN device could not be opened in its namespace.
    #[error("TUN device in {host} ({}): {error}", .netns.display())]
    Tun {
        /// The host's name.
        host: String,
        /// Its namespace's file.
        netns: PathBuf,
        /// The error the system gave.
        error: std::io::Error,
    },
    /// An impairments file that does not read back.
    #[error("{}: unreadable impairments: {error}", .path.display())]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// Why it does not parse.
        error: serde_json::Error,
    },
    /// The fabric's forwarding failed.
    #[error("emulator: fabric: {0}")]
    Fabric(std::io::Error),
    /// A forwarding thread stopped.
    #[error("emulator: a forwarding thread stopped")]
    ThreadStopped,
}

/// Writes `bytes` to `path` through a temporary file and a rename, so a
/// reader sees the old content or the new, never a part.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::File::create(&tmp)?.write_all(bytes)?;
    std::fs::rename(&tmp, path)
}

/// The impairments file's bytes and what they say.
fn read_impairments(path: &Path) -> Result<(Vec<u8>, Impairments), EmulatorError> {
    let bytes = std::fs::read(path).map_err(|error| EmulatorError::Io {
        path: path.to_owned(),
        error,
    })?;
    let imp = serde_json::from_slice(&bytes).map_err(|error| EmulatorError::Corrupt {
        path: path.to_owned(),
        error,
    })?;
    Ok((bytes, imp))
}

/// Puts `imp` in force: every forwarding thread takes it before it handles
/// its next packet. Then acknowledges `bytes` for `lab set`.
fn apply(plan: &EmulatorPlan, shared: &Shared, bytes: &[u8], imp: Impairments) {
    if let Ok(mut g) = shared.impairments.lock() {
        *g = Arc::new(imp);
    }
    shared.generation.fetch_add(1, Relaxed);
    if let Some(applied) = &plan.applied {
        let _ = crate::write_atomic(applied, bytes);
    }
}

/// How often the emulator looks for new impairments: `lab set` waits this
/// long at most, and traffic started right after it meets the new conditions.
const RELOAD_POLL: Duration = Duration::from_millis(5);
/// The counters file is rewritten every 50 ms: often enough to sample the
/// bottleneck's queue (`backlog_bytes`) through a run.
const COUNTER_TICKS: u64 = 10;

/// Creates the devices, calls `ready` once they exist, then forwards until
/// a device fails or the process is killed; `warn` hears what could not be
/// arranged and only makes the emulation less exact.
pub fn run(
    plan: &EmulatorPlan,
    ready: impl FnOnce(),
    warn: impl Fn(&str),
) -> Result<(), EmulatorError> {
    let mut ports = Vec::new();
    for h in &plan.hosts {
        let fd = tun::open_in(&h.netns, DEVICE).map_err(|error| EmulatorError::Tun {
            host: h.name.clone(),
            netns: h.netns.clone(),
            error,
        })?;
        ports.push(Port {
            fd,
            addrs: h.addrs.clone(),
        });
    }
    let shared = Shared::default();
    let (mut seen, imp) = read_impairments(&plan.impairments)?;
    apply(plan, &shared, &seen, imp);
    let counters: Vec<Counters> = plan.hosts.iter().map(|_| Counters::default()).collect();
    // netem runs in softirq, ahead of every application; at nice 0 the bulk
    // senders and receivers sharing the cores delay packets past their due
    // time. The forwarding threads inherit this; set before `ready` so a
    // lab that is up already runs at this priority.
    if let Err(e) = rustix::process::setpriority_process(None, EMULATOR_NICE) {
        warn(&format!(
            "could not raise its priority ({e}); delays may run late under CPU load"
        ));
    }
    if let Some(spec) = &plan.fabric {
        return fabric_driver::run(&ports, spec, &plan.counters, ready)
            .map_err(EmulatorError::Fabric);
    }
    // Counters exist once the lab is up: `lab status` right after `lab up`
    // shows zeros, not nothing.
    write_host_counters(plan, &counters);
    ready();
    std::thread::scope(|s| {
        let mut workers = Vec::new();
        for from in 0..ports.len() {
            let (ports, shared, counters) = (&ports, &shared, &counters[from]);
            workers.push(s.spawn(move || forward::forward(from, ports, shared, counters)));
        }
        let mut ticks = 0u64;
        loop {
            std::thread::sleep(RELOAD_POLL);
            if workers.iter().any(|w| w.is_finished()) {
                return Err(EmulatorError::ThreadStopped);
            }
            // Compared by content: two `lab set`s within one tick of the
            // file system's clock leave the same modification time.
            if let Ok(bytes) = std::fs::read(&plan.impairments)
                && bytes != seen
            {
                // A file that does not parse is read again at the next
                // change; the old rules stay.
                if let Ok(imp) = serde_json::from_slice(&bytes) {
                    apply(plan, &shared, &bytes, imp);
                }
                seen = bytes;
            }
            ticks += 1;
            if ticks.is_multiple_of(COUNTER_TICKS) {
                write_host_counters(plan, &counters);
            }
        }
    })
}

/// Each host's counters, by host name, to the plan's counters file.
fn write_host_counters(plan: &EmulatorPlan, counters: &[Counters]) {
    let snapshot: BTreeMap<&str, _> = plan
        .hosts
        .iter()
        .zip(counters)
        .map(|(h, c)| (h.name.as_str(), c.snapshot()))
        .collect();
    if let Ok(text) = serde_json::to_vec_pretty(&snapshot) {
        let _ = crate::write_atomic(&plan.counters, &text);
    }
}

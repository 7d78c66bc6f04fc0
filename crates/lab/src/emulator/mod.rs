//! The user-space WAN emulator: a TUN device in each host's namespace, one
//! forwarding thread per host, impairments reloaded from a file while running.

pub mod forward;
pub mod model;
pub mod packet;
mod tun;

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

use crate::LabError;
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
    /// Counters file, rewritten every second (`lab status`).
    pub counters: PathBuf,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct EmulatedHost {
    pub name: String,
    pub netns: PathBuf,
    pub addrs: Vec<IpAddr>,
}

fn read_impairments(path: &Path) -> Result<Impairments, LabError> {
    let text = std::fs::read_to_string(path).map_err(|e| LabError::io(path, e))?;
    serde_json::from_str(&text).map_err(|e| LabError::Corrupt(path.to_owned(), e.to_string()))
}

fn modified(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

/// Creates the devices, calls `ready` once they exist, then forwards until
/// a device fails or the process is killed.
pub fn run(plan: &EmulatorPlan, ready: impl FnOnce()) -> Result<(), LabError> {
    let mut ports = Vec::new();
    for h in &plan.hosts {
        let fd = tun::open_in(&h.netns, DEVICE)
            .map_err(|e| LabError::io(&h.netns, e).context(format!("TUN device in {}", h.name)))?;
        ports.push(Port {
            fd,
            addrs: h.addrs.clone(),
        });
    }
    let shared = Shared::default();
    let mut seen = modified(&plan.impairments);
    *shared.impairments.lock().map_err(|_| LabError::Poisoned)? =
        Arc::new(read_impairments(&plan.impairments)?);
    let counters: Vec<Counters> = plan.hosts.iter().map(|_| Counters::default()).collect();
    // netem runs in softirq, ahead of every application; at nice 0 the bulk
    // senders and receivers sharing the cores delay packets past their due
    // time. The forwarding threads inherit this; set before `ready` so a
    // lab that is up already runs at this priority.
    if let Err(e) = rustix::process::setpriority_process(None, EMULATOR_NICE) {
        eprintln!(
            "linerate emulator: could not raise its priority ({e}); delays may run late under CPU load"
        );
    }
    ready();
    std::thread::scope(|s| {
        let mut workers = Vec::new();
        for from in 0..ports.len() {
            let (ports, shared, counters) = (&ports, &shared, &counters[from]);
            workers.push(s.spawn(move || forward::forward(from, ports, shared, counters)));
        }
        let mut ticks = 0u64;
        loop {
            std::thread::sleep(Duration::from_millis(100));
            if workers.iter().any(|w| w.is_finished()) {
                return Err(LabError::Emulator("a forwarding thread stopped".into()));
            }
            let now = modified(&plan.impairments);
            if now != seen {
                seen = now;
                // A half-written file is read again at the next change; keep the old rules.
                if let Ok(imp) = read_impairments(&plan.impairments) {
                    if let Ok(mut g) = shared.impairments.lock() {
                        *g = Arc::new(imp);
                    }
                    shared.generation.fetch_add(1, Relaxed);
                }
            }
            ticks += 1;
            if ticks.is_multiple_of(10) {
                let snapshot: BTreeMap<&str, _> = plan
                    .hosts
                    .iter()
                    .zip(&counters)
                    .map(|(h, c)| (h.name.as_str(), c.snapshot()))
                    .collect();
                if let Ok(text) = serde_json::to_vec_pretty(&snapshot) {
                    let _ = crate::state::write_atomic(&plan.counters, &text);
                }
            }
        }
    })
}

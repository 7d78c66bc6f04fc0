//! The machine under the network: CPU clock, interrupt balancing, SMT,
//! and how a guest's memory is backed.

use super::{Fix, Rules, Severity, sentences};
use crate::bounds::Target;

pub(super) fn cpu_rules(r: &mut Rules, t: &Target) {
    let facts = r.facts;
    let governors = &facts.cpu.governors;
    if governors.is_empty() {
        r.push(
            "host",
            "cpu governor",
            None,
            "performance".into(),
            true,
            Severity::Ok,
            "no cpufreq driver: the clock is fixed (or set by a hypervisor)",
            None,
        );
    } else {
        let all_perf = governors.keys().all(|g| g == "performance");
        r.push(
            "host",
            "cpu governor",
            Some(governors.iter().map(|(g, c)| format!("{g} x{c}")).collect::<Vec<_>>().join(", ")),
            "performance".into(),
            all_perf,
            Severity::Warn,
            "a power-saving governor lowers the clock between bursts and the per-packet work becomes slower",
            Some(Fix::Command("cpupower frequency-set -g performance".into())),
        );
    }
    if let Some(running) = facts.irqbalance_running {
        r.push(
            "host",
            "irqbalance",
            Some(if running { "running" } else { "not running" }.into()),
            "not running".into(),
            !running || t.rate_bps < 40e9,
            Severity::Warn,
            "irqbalance moves NIC interrupts away from the node they were bound to",
            Some(Fix::Command("systemctl disable --now irqbalance".into())),
        );
    }
    if let Some(active) = facts.cpu.smt_active {
        r.push(
            "host",
            "smt",
            Some(format!(
                "{} ({})",
                if active { "on" } else { "off" },
                facts.cpu.smt_control.as_deref().unwrap_or("?")
            )),
            "off".into(),
            !active || t.rate_bps < 100e9,
            Severity::Info,
            "sibling threads share one core's caches and ports with the stream threads",
            Some(Fix::Command(
                "echo off > /sys/devices/system/cpu/smt/control".into(),
            )),
        );
    }
}

/// A guest whose freed memory goes back to the hypervisor pays for it again
/// at the first write: measured on the VM this project is built on.
pub(super) fn memory_rules(r: &mut Rules) {
    let m = &r.facts.memory;
    let Some(reporting) = m.free_page_reporting else {
        return;
    };
    let chunk = m
        .page_reporting_order
        .map_or(String::new(), sentences::reporting_chunk);
    r.push(
        "host",
        "free page reporting",
        Some(if reporting {
            format!("on (virtio balloon{chunk})")
        } else {
            "off (virtio balloon)".into()
        }),
        "off on a host that benchmarks".into(),
        !reporting,
        Severity::Info,
        "memory this guest frees goes back to the hypervisor, which backs it again at the first write, \
         so writes into fresh memory (a new file in tmpfs, the first runs after idle) are slow and vary: \
         on the VM linerate is developed on, one writer put a median 5.4 Gbit/s into a new tmpfs file \
         3 s after the memory was freed, against 36.1 over the same pages once backed \
         (bench/fresh_memory.py); turn it off in the VM's balloon device, or compare runs only after a warm-up",
        None,
    );
}

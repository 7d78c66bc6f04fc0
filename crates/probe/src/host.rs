//! Facts about the machine that every result carries.

use std::collections::BTreeMap;

use linerate_result::HostFacts;

/// The sysctls that decide what a TCP stream can reach.
pub const TCP_SYSCTLS: &[&str] = &[
    "net/core/rmem_max",
    "net/core/wmem_max",
    "net/core/rmem_default",
    "net/core/wmem_default",
    "net/core/optmem_max",
    "net/core/netdev_max_backlog",
    "net/core/default_qdisc",
    "net/ipv4/tcp_rmem",
    "net/ipv4/tcp_wmem",
    "net/ipv4/tcp_congestion_control",
    "net/ipv4/tcp_available_congestion_control",
    "net/ipv4/tcp_mtu_probing",
    "net/ipv4/tcp_window_scaling",
    "net/ipv4/tcp_timestamps",
    "net/ipv4/tcp_sack",
    "net/ipv4/tcp_no_metrics_save",
    "net/ipv4/tcp_slow_start_after_idle",
    "net/ipv4/tcp_notsent_lowat",
];

/// This host's facts (kernel, CPUs, memory, NICs, sysctls) for a result.
pub fn collect() -> HostFacts {
    let read = |p: &str| {
        std::fs::read_to_string(p)
            .map(|s| s.split_whitespace().collect::<Vec<_>>().join(" "))
            .ok()
    };
    let uname = rustix::system::uname();
    let mut sysctls = BTreeMap::new();
    for key in TCP_SYSCTLS {
        if let Some(v) = read(&format!("/proc/sys/{key}")) {
            sysctls.insert(key.replace('/', "."), v);
        }
    }
    HostFacts {
        hostname: uname.nodename().to_string_lossy().into_owned(),
        kernel: format!(
            "{} {}",
            uname.sysname().to_string_lossy(),
            uname.release().to_string_lossy()
        ),
        cpu_model: std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|s| cpu_model(&s))
            .unwrap_or_else(|| "unknown".into()),
        cpus: crate::cpu::cpus(),
        boot_id: read("/proc/sys/kernel/random/boot_id").unwrap_or_default(),
        sysctls,
        cgroup: crate::cgroup::Cgroup::own()
            .and_then(|c| c.limits())
            .map(Box::new),
    }
}

fn cpu_model(cpuinfo: &str) -> Option<String> {
    cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string())
}

#[cfg(test)]
mod tests {
    #[test]
    fn collects_this_host() {
        let h = super::collect();
        assert!(h.kernel.starts_with("Linux"));
        assert!(h.cpus >= 1);
        assert!(h.sysctls.contains_key("net.ipv4.tcp_rmem"));
    }
}

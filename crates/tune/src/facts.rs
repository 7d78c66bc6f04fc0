//! What a host's settings are, read from a [`SysRoot`]. Nothing here judges;
//! unreadable items are listed with the reason instead of failing the audit.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::ethtool::EthtoolFacts;
use crate::source::SysRoot;

/// The sysctls that decide what a TCP stream can reach, by dotted name.
pub const SYSCTLS: &[&str] = &[
    "net.core.rmem_max",
    "net.core.wmem_max",
    "net.core.rmem_default",
    "net.core.wmem_default",
    "net.core.optmem_max",
    "net.core.netdev_max_backlog",
    "net.core.default_qdisc",
    "net.core.somaxconn",
    "net.ipv4.tcp_rmem",
    "net.ipv4.tcp_wmem",
    "net.ipv4.tcp_congestion_control",
    "net.ipv4.tcp_available_congestion_control",
    "net.ipv4.tcp_mtu_probing",
    "net.ipv4.tcp_window_scaling",
    "net.ipv4.tcp_timestamps",
    "net.ipv4.tcp_sack",
    "net.ipv4.tcp_no_metrics_save",
    "net.ipv4.tcp_slow_start_after_idle",
];

/// What the audit and the plan read of a host.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Facts {
    /// `uname -r`.
    pub kernel_release: Option<String>,
    /// Every sysctl read, by key.
    pub sysctls: BTreeMap<String, String>,
    /// Every network interface.
    pub interfaces: Vec<Iface>,
    /// CPUs, governors and SMT.
    pub cpu: Cpu,
    /// Memory and ballooning.
    #[serde(default)]
    pub memory: Memory,
    /// Whether an irqbalance process runs; None when /proc could not be listed.
    pub irqbalance_running: Option<bool>,
    /// Qdisc and congestion-control modules the kernel has, loaded or loadable.
    pub modules: Vec<String>,
    /// What could not be read, and why.
    pub unreadable: Vec<Unreadable>,
}

/// Something the host did not let be read.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Unreadable {
    /// What it was.
    pub item: String,
    /// Why.
    pub reason: String,
}

/// A network interface.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Iface {
    /// Its name.
    pub name: String,
    /// Its index.
    pub ifindex: Option<u32>,
    /// True for a device backed by hardware (or a paravirtual NIC), false
    /// for loopback, veth, bridges and the like.
    pub physical: bool,
    /// Its MTU.
    pub mtu: Option<u32>,
    /// Link speed, Mbit/s, where the driver tells it.
    pub speed_mbps: Option<u64>,
    /// `up`, `down`, ...
    pub operstate: Option<String>,
    /// Its transmit queue length, packets.
    pub tx_queue_len: Option<u32>,
    /// The root qdisc's kind.
    pub root_qdisc: Option<String>,
    /// The NUMA node of its device.
    pub numa_node: Option<i32>,
    /// That node's CPUs.
    pub numa_cpus: Option<String>,
    /// Its interrupts.
    pub irqs: Vec<Irq>,
    /// What ethtool says of it.
    pub ethtool: EthtoolFacts,
}

/// One interrupt of an interface.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Irq {
    /// Its number.
    pub number: u32,
    /// The CPUs it may run on (smp_affinity_list).
    pub affinity: Option<String>,
}

/// The host's CPUs.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Cpu {
    /// Online CPUs (`0-15`).
    pub online: Option<String>,
    /// Governor -> number of CPUs using it; empty without cpufreq.
    pub governors: BTreeMap<String, u32>,
    /// Simultaneous multithreading is on.
    pub smt_active: Option<bool>,
    /// The SMT control (`on`, `off`, `notsupported`).
    pub smt_control: Option<String>,
}

/// How the hypervisor, if any, takes back memory the guest frees.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Memory {
    /// Whether a virtio balloon negotiated free page reporting
    /// (VIRTIO_BALLOON_F_REPORTING); None without a virtio balloon.
    pub free_page_reporting: Option<bool>,
    /// Free chunks of 2^order pages are reported
    /// (/sys/module/page_reporting/parameters/page_reporting_order).
    pub page_reporting_order: Option<u32>,
}

/// Bit 5 of the virtio balloon's feature bits.
const VIRTIO_BALLOON_F_REPORTING: usize = 5;

impl Facts {
    /// Sysctl `key`'s value, as read.
    pub fn sysctl(&self, key: &str) -> Option<&str> {
        self.sysctls.get(key).map(String::as_str)
    }

    /// The third field of tcp_rmem / tcp_wmem.
    pub fn sysctl_max(&self, key: &str) -> Option<u64> {
        self.sysctl(key)?.split_whitespace().nth(2)?.parse().ok()
    }

    /// Sysctl `key` as a number.
    pub fn sysctl_u64(&self, key: &str) -> Option<u64> {
        self.sysctl(key)?.trim().parse().ok()
    }

    /// Whether the kernel has module (or built-in) `name`.
    pub fn has_module(&self, name: &str) -> bool {
        self.modules.iter().any(|m| m == name)
    }
}

/// Reads everything; `only` restricts interfaces to one name (otherwise all
/// physical ones are read).
pub fn collect(root: &SysRoot, only: Option<&str>) -> Facts {
    let mut f = Facts::default();
    let mut missing = |item: &str, e: std::io::Error| {
        f.unreadable.push(Unreadable {
            item: item.to_string(),
            reason: e.to_string(),
        })
    };
    let mut sysctls = BTreeMap::new();
    for key in SYSCTLS {
        match root.sysctl(key) {
            Ok(v) => {
                sysctls.insert(key.to_string(), v);
            }
            Err(e) => missing(key, e),
        }
    }
    let kernel_release = root.read("proc/sys/kernel/osrelease").ok();
    let modules = modules(root, kernel_release.as_deref(), &sysctls);
    let irqbalance = match root.list("proc") {
        Ok(entries) => Some(entries.iter().any(|pid| {
            pid.bytes().all(|b| b.is_ascii_digit())
                && root
                    .read(&format!("proc/{pid}/comm"))
                    .is_ok_and(|c| c == "irqbalance")
        })),
        Err(e) => {
            missing("irqbalance (process list)", e);
            None
        }
    };
    let qdiscs = match root.root_qdiscs() {
        Ok(q) => q,
        Err(e) => {
            missing("root qdiscs (rtnetlink)", e);
            BTreeMap::new()
        }
    };
    let names = match root.list("sys/class/net") {
        Ok(n) => n,
        Err(e) => {
            missing("sys/class/net", e);
            Vec::new()
        }
    };
    let mut interfaces = Vec::new();
    for name in names {
        let physical = root.exists(&format!("sys/class/net/{name}/device"));
        let wanted = match only {
            Some(o) => o == name,
            None => physical,
        };
        if wanted {
            interfaces.push(iface(root, &name, physical, &qdiscs, &mut f.unreadable));
        }
    }
    f.cpu = cpu(root);
    f.memory = memory(root);
    f.kernel_release = kernel_release;
    f.sysctls = sysctls;
    f.modules = modules;
    f.irqbalance_running = irqbalance;
    f.interfaces = interfaces;
    f
}

fn iface(
    root: &SysRoot,
    name: &str,
    physical: bool,
    qdiscs: &BTreeMap<u32, String>,
    unreadable: &mut Vec<Unreadable>,
) -> Iface {
    let dir = format!("sys/class/net/{name}");
    let num = |attr: &str| {
        root.read(&format!("{dir}/{attr}"))
            .ok()?
            .parse::<i64>()
            .ok()
    };
    let ifindex = num("ifindex").and_then(|v| u32::try_from(v).ok());
    // Virtual and down devices refuse to report a speed (EINVAL) or say -1.
    let speed_mbps = num("speed").and_then(|v| u64::try_from(v).ok());
    // A paravirtual NIC's net device hangs under a virtio device whose
    // parent is the PCI function that owns the MSI vectors and NUMA node.
    let device = if physical {
        root.resolve(&format!("{dir}/device"))
    } else {
        None
    };
    let bus = device
        .iter()
        .flat_map(|d| [Some(d.clone()), d.parent().map(Path::to_path_buf)])
        .flatten()
        .map(|d| d.to_string_lossy().into_owned())
        .find(|d| root.exists(&format!("{d}/msi_irqs")) || root.exists(&format!("{d}/numa_node")));
    let numa_node = bus
        .as_ref()
        .and_then(|d| root.read(&format!("{d}/numa_node")).ok())
        .and_then(|v| v.parse::<i32>().ok());
    let numa_cpus = numa_node.filter(|n| *n >= 0).and_then(|n| {
        root.read(&format!("sys/devices/system/node/node{n}/cpulist"))
            .ok()
    });
    let mut irqs = Vec::new();
    if let Some(d) = &bus
        && let Ok(list) = root.list_names(&format!("{d}/msi_irqs"))
    {
        for n in list.iter().filter_map(|s| s.parse::<u32>().ok()) {
            let affinity = root.read(&format!("proc/irq/{n}/smp_affinity_list"));
            if let Err(e) = &affinity {
                unreadable.push(Unreadable {
                    item: format!("{name}: affinity of IRQ {n}"),
                    reason: e.to_string(),
                });
            }
            irqs.push(Irq {
                number: n,
                affinity: affinity.ok(),
            });
        }
        irqs.sort_by_key(|i| i.number);
    }
    let ethtool = root.ethtool(name);
    if let Some(e) = &ethtool.error {
        unreadable.push(Unreadable {
            item: format!("{name}: ethtool"),
            reason: e.clone(),
        });
    }
    Iface {
        name: name.to_string(),
        ifindex,
        physical,
        mtu: num("mtu").and_then(|v| u32::try_from(v).ok()),
        speed_mbps,
        operstate: root.read(&format!("{dir}/operstate")).ok(),
        tx_queue_len: num("tx_queue_len").and_then(|v| u32::try_from(v).ok()),
        root_qdisc: ifindex.and_then(|i| qdiscs.get(&i).cloned()),
        numa_node,
        numa_cpus,
        irqs,
        ethtool,
    }
}

fn memory(root: &SysRoot) -> Memory {
    let driver = "sys/bus/virtio/drivers/virtio_balloon";
    // The `features` file spells the negotiated bits as '0'/'1', bit 0 first.
    let reporting = root.list(driver).ok().map(|devices| {
        devices.iter().filter(|d| d.starts_with("virtio")).any(|d| {
            root.read(&format!("{driver}/{d}/features"))
                .is_ok_and(|bits| bits.as_bytes().get(VIRTIO_BALLOON_F_REPORTING) == Some(&b'1'))
        })
    });
    Memory {
        free_page_reporting: reporting,
        page_reporting_order: root
            .read("sys/module/page_reporting/parameters/page_reporting_order")
            .ok()
            .and_then(|v| v.parse().ok()),
    }
}

fn cpu(root: &SysRoot) -> Cpu {
    let mut c = Cpu {
        online: root.read("sys/devices/system/cpu/online").ok(),
        smt_active: root
            .read("sys/devices/system/cpu/smt/active")
            .ok()
            .map(|v| v == "1"),
        smt_control: root.read("sys/devices/system/cpu/smt/control").ok(),
        ..Cpu::default()
    };
    for entry in root.list("sys/devices/system/cpu").unwrap_or_default() {
        let is_cpu = entry
            .strip_prefix("cpu")
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
        if is_cpu
            && let Ok(g) = root.read(&format!(
                "sys/devices/system/cpu/{entry}/cpufreq/scaling_governor"
            ))
        {
            *c.governors.entry(g).or_default() += 1;
        }
    }
    c
}

/// Which of the modules tuning cares about the kernel has: loaded (in
/// /sys/module), built as a loadable module, or listed as available.
fn modules(
    root: &SysRoot,
    release: Option<&str>,
    sysctls: &BTreeMap<String, String>,
) -> Vec<String> {
    let mut have = Vec::new();
    let available_cc = sysctls
        .get("net.ipv4.tcp_available_congestion_control")
        .cloned()
        .unwrap_or_default();
    for m in ["sch_fq", "sch_fq_codel", "sch_netem", "tcp_bbr", "tcp_htcp"] {
        let cc = m.strip_prefix("tcp_");
        let listed = cc.is_some_and(|cc| available_cc.split_whitespace().any(|a| a == cc));
        let loaded = root.exists(&format!("sys/module/{m}"));
        let loadable = release.is_some_and(|r| {
            let dir = if m.starts_with("sch_") {
                "net/sched"
            } else {
                "net/ipv4"
            };
            ["", ".xz", ".zst", ".gz"]
                .iter()
                .any(|z| root.exists(&format!("lib/modules/{r}/kernel/{dir}/{m}.ko{z}")))
        });
        let builtin = release.is_some_and(|r| {
            root.read(&format!("lib/modules/{r}/modules.builtin"))
                .is_ok_and(|text| text.lines().any(|l| l.ends_with(&format!("/{m}.ko"))))
        });
        if listed || loaded || loadable || builtin {
            have.push(m.to_string());
        }
    }
    have
}

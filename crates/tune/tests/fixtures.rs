//! The auditor and planner on fixture trees: one captured from the machine
//! the project is developed on, two written by hand (see fixtures/README.md).

use linerate_tune::audit::{Fix, Severity, audit};
use linerate_tune::{Finding, SysRoot, Target, facts, plan};

fn fixture(name: &str) -> linerate_tune::Facts {
    let dir = format!("{}/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    facts::collect(&SysRoot::fixture(dir), None)
}

fn target(rate: f64, rtt_ms: f64) -> Target {
    Target {
        rate_bps: rate,
        rtt_s: rtt_ms / 1e3,
        loss: None,
        streams: None,
        mss: None,
    }
}

fn find<'a>(f: &'a [Finding], scope: &str, item: &str) -> &'a Finding {
    f.iter()
        .find(|x| x.scope == scope && x.item == item)
        .unwrap_or_else(|| panic!("no finding {scope}/{item}"))
}

#[test]
fn captured_machine_small_send_buffer_is_the_critical_finding_at_44ms() {
    let f = fixture("this-machine");
    assert_eq!(f.sysctl("net.ipv4.tcp_wmem"), Some("4096 16384 4194304"));
    assert!(f.unreadable.is_empty(), "{:?}", f.unreadable);
    let eth0 = &f.interfaces[0];
    assert_eq!(eth0.name, "eth0");
    assert_eq!(eth0.ethtool.driver.as_deref(), Some("virtio_net"));
    assert_eq!(eth0.irqs.len(), 3);
    assert_eq!(eth0.root_qdisc.as_deref(), Some("pfifo_fast"));
    let a = audit(&f, &target(10e9, 44.0));
    let wmem = find(&a, "host", "net.ipv4.tcp_wmem");
    assert_eq!(wmem.severity, Severity::Critical);
    assert_eq!(
        wmem.fix,
        Some(Fix::Sysctl {
            key: "net.ipv4.tcp_wmem".into(),
            value: "4096 16384 134217728".into()
        })
    );
    // Each buffer's line gives what its own maximum holds a stream to: the
    // send buffer's 4 MiB, the receive buffer's 32 MiB.
    let rmem = find(&a, "host", "net.ipv4.tcp_rmem");
    for (finding, max) in [(wmem, 4194304), (rmem, 33554432)] {
        let near =
            linerate_probe::units::fmt_rate(linerate_tune::bounds::window_ceiling_bps(max, 0.044));
        assert!(
            finding.why.contains(&format!("tops out near {near}")),
            "{}: {}",
            finding.item,
            finding.why
        );
    }
    // The hypervisor takes freed memory back in 2 MiB chunks: named, with no fix to run here.
    assert_eq!(f.memory.free_page_reporting, Some(true));
    let reporting = find(&a, "host", "free page reporting");
    assert!(!reporting.satisfied);
    assert_eq!(reporting.severity, Severity::Info);
    assert_eq!(reporting.fix, None);
    assert!(
        reporting
            .current
            .as_deref()
            .is_some_and(|c| c.contains("2.0 MiB")),
        "{:?}",
        reporting.current
    );
    // No cpufreq in a VM: nothing to fix, and no fq in this kernel: no fix offered.
    assert!(find(&a, "host", "cpu governor").satisfied);
    assert_eq!(find(&a, "host", "net.core.default_qdisc").fix, None);
    // The window law says 4 MiB of send buffer holds 44 ms to about 381 Mbit/s.
    let p = plan::make(&f, target(10e9, 44.0));
    let now = p.current_per_stream_bps.unwrap();
    assert!((now - 381.3e6).abs() < 1e6, "{now}");
    assert!(p.planned_per_stream_bps >= 10e9);
    assert!(
        p.sysctl_d("x")
            .contains("net.ipv4.tcp_wmem = 4096 16384 134217728")
    );
}

#[test]
fn untuned_100g_host_gets_every_classic_fix() {
    let f = fixture("cx6-100g");
    assert_eq!(f.interfaces.len(), 2);
    assert!(f.has_module("sch_fq") && f.has_module("tcp_bbr"));
    assert_eq!(f.irqbalance_running, Some(true));
    // Bare metal: no balloon, so no memory finding at all.
    assert_eq!(f.memory.free_page_reporting, None);
    let t = Target {
        loss: Some(0.0002),
        streams: Some(8),
        ..target(100e9, 44.0)
    };
    let a = audit(&f, &t);
    let nic = "ens1f0np0";
    assert_eq!(
        find(&a, nic, "mtu").fix,
        Some(Fix::Command(format!("ip link set dev {nic} mtu 9000")))
    );
    assert_eq!(
        find(&a, nic, "rings").fix,
        Some(Fix::Command(format!("ethtool -G {nic} rx 8192 tx 8192")))
    );
    let irq = find(&a, nic, "irq affinity");
    assert_eq!(
        irq.current.as_deref(),
        Some("4 of 8 IRQs may run off node 1")
    );
    assert_eq!(irq.severity, Severity::Warn);
    assert!(!find(&a, "host", "irqbalance").satisfied);
    assert!(!find(&a, "host", "cpu governor").satisfied);
    assert_eq!(find(&a, "host", "net.core.default_qdisc").recommended, "fq");
    // Lossy long path with bbr available: bbr.
    assert_eq!(
        find(&a, "host", "net.ipv4.tcp_congestion_control").recommended,
        "bbr"
    );
    // The 1G management port is not the data interface.
    assert_eq!(find(&a, "eno1", "speed").severity, Severity::Info);
    assert!(a.iter().all(|x| !(x.scope == "eno1" && x.item == "mtu")));
    // 8 streams share 550 MB of BDP, 69 MB each; twice that rounds up to 256 MiB.
    let p = plan::make(&f, t);
    assert_eq!(p.streams, 8);
    assert_eq!(p.buffer_bytes, 256 << 20);
    assert!(
        p.settings
            .iter()
            .any(|s| s.key == "net.core.netdev_max_backlog" && s.value == "250000")
    );
    assert!(p.script("x").contains("systemctl disable --now irqbalance"));
}

#[test]
fn tuned_400g_host_passes_at_its_design_point() {
    let f = fixture("dtn-400g");
    // 400G at 44 ms over 16 streams: 137 MB each, 512 MiB buffers, as set.
    let t = Target {
        streams: Some(16),
        ..target(400e9, 44.0)
    };
    let a = audit(&f, &t);
    let open: Vec<_> = a
        .iter()
        .filter(|x| !x.satisfied)
        .map(|x| (&x.scope, &x.item))
        .collect();
    assert!(open.is_empty(), "{open:?}");
    // At 88 ms the same buffers are short: the audit says so.
    let longer = audit(&f, &Target { rtt_s: 0.088, ..t });
    assert!(!find(&longer, "host", "net.ipv4.tcp_rmem").satisfied);
}

/// The same 100G host behind an overlay (MTU 1450): jumbo frames are the
/// underlay's to set, so no `mtu 9000` fix is offered for it.
#[test]
fn an_overlay_interface_is_not_told_to_take_jumbo_frames() {
    let src = format!("{}/fixtures/cx6-100g", env!("CARGO_MANIFEST_DIR"));
    let dir = std::env::temp_dir().join(format!("linerate-overlay-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let copied = std::process::Command::new("cp")
        .args(["-r", &src])
        .arg(&dir)
        .status()
        .unwrap();
    assert!(copied.success());
    std::fs::write(dir.join("sys/class/net/ens1f0np0/mtu"), "1450\n").unwrap();
    let f = facts::collect(&SysRoot::fixture(dir.to_string_lossy().into_owned()), None);
    let a = audit(&f, &target(100e9, 44.0));
    let _ = std::fs::remove_dir_all(&dir);
    let mtu = find(&a, "ens1f0np0", "mtu");
    assert!(mtu.satisfied, "{mtu:?}");
    assert!(mtu.fix.is_none(), "{mtu:?}");
    assert!(mtu.why.contains("overlay"), "{mtu:?}");
    let native = audit(&fixture("cx6-100g"), &target(100e9, 44.0));
    let jumbo = find(&native, "ens1f0np0", "mtu");
    assert!(matches!(jumbo.fix, Some(Fix::Command(ref c)) if c.contains("mtu 9000")));
}

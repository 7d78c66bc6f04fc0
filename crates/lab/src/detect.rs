//! What this kernel and host offer a lab, found by trying rather than assuming.

use std::process::Command;

use serde::Serialize;

use crate::{LabError, Missing};

/// What the running kernel offers a lab.
#[derive(Clone, Debug, Default, Serialize)]
pub struct KernelSupport {
    /// The netem qdisc.
    pub netem: bool,
    /// The TBF qdisc (a rate on plain veth).
    pub tbf: bool,
    /// The HTB qdisc.
    pub htb: bool,
    /// TUN devices (the emulator).
    pub tun: bool,
    /// The bonding driver (a kernel LACP bond for `--bond lacp`).
    pub bonding: bool,
}

/// Fails at once, saying what is missing, when labs cannot work here.
pub fn require_lab_privileges() -> Result<(), LabError> {
    if !rustix::process::geteuid().is_root() {
        return Err(Missing::Root.into());
    }
    if !std::path::Path::new("/proc/self/ns/net").exists() {
        return Err(Missing::Namespaces.into());
    }
    if Command::new("ip").arg("-V").output().is_err() {
        return Err(Missing::IpCommand.into());
    }
    Ok(())
}

/// Tries each qdisc on the loopback device of a throwaway namespace.
pub fn probe() -> Result<KernelSupport, LabError> {
    let ns = format!("lr-probe-{}", std::process::id());
    crate::exec::run(&["ip", "netns", "add", &ns])?;
    let tries = |args: &[&str]| {
        let mut cmd = vec![
            "tc",
            "-n",
            ns.as_str(),
            "qdisc",
            "replace",
            "dev",
            "lo",
            "root",
        ];
        cmd.extend_from_slice(args);
        crate::exec::run(&cmd).is_ok()
    };
    let support = KernelSupport {
        netem: tries(&["netem", "delay", "1ms"]),
        tbf: tries(&["tbf", "rate", "1gbit", "burst", "64k", "limit", "1m"]),
        htb: tries(&["handle", "1:", "htb"]),
        tun: std::path::Path::new("/dev/net/tun").exists(),
        bonding: crate::exec::run(&["ip", "-n", &ns, "link", "add", "probe0", "type", "bond"])
            .is_ok(),
    };
    crate::exec::run(&["ip", "netns", "del", &ns])?;
    Ok(support)
}

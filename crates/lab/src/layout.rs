//! What a lab is made of, as asked for and as recorded on disk: the data
//! that building it ([`crate::topology`]) and running it ([`crate::lab`])
//! both read.

use std::net::{Ipv4Addr, Ipv6Addr};

use serde::{Deserialize, Serialize};

use crate::LabError;
use crate::conditions::{Backend, BackendChoice, Conditions};
use crate::detect::KernelSupport;
use crate::fabric::{FabricSpec, MAX_FABRIC_HOSTS};
use crate::state::ProcessId;

/// The most hosts a lab has.
pub const MAX_HOSTS: u8 = 8;

/// What the user asked for.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LabSpec {
    /// The lab's name.
    pub name: String,
    /// Host namespaces (h1, h2, ...).
    pub hosts: u8,
    /// A router namespace between the hosts.
    pub router: bool,
    /// The links' MTU.
    pub mtu: u32,
    /// The backend asked for.
    pub backend: BackendChoice,
    /// The links' conditions.
    pub conditions: Conditions,
    /// Switches between the hosts (`--topology`); none for hosts on one
    /// link or one router.
    #[serde(default)]
    pub fabric: Option<FabricSpec>,
}

impl LabSpec {
    /// Whether the spec can be built.
    pub fn validate(&self) -> Result<(), LabError> {
        let ok_name = !self.name.is_empty()
            && self.name.len() <= 8
            && self
                .name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
        if !ok_name {
            return Err(LabError::Spec(format!(
                "lab name {:?}: use 1 to 8 lowercase letters or digits",
                self.name
            )));
        }
        if let Some(f) = &self.fabric {
            f.validate().map_err(LabError::Spec)?;
            if self.hosts != f.topology.hosts() {
                return Err(LabError::Spec(format!(
                    "--hosts {} does not match the {} topology's {} hosts",
                    self.hosts,
                    f.topology.as_str(),
                    f.topology.hosts()
                )));
            }
            if self.conditions.needs_emulation() || self.conditions.rate_bps.is_some() {
                return Err(LabError::Spec(
                    "a fabric's links take --rate, --queue and --hop-delay from its own flags; \
                     WAN conditions (--rtt, --loss, ...) are for labs without --topology"
                        .into(),
                ));
            }
        } else if !(2..=MAX_HOSTS).contains(&self.hosts) {
            return Err(LabError::Spec(format!(
                "--hosts must be 2 to {MAX_HOSTS} (a --topology takes up to {MAX_FABRIC_HOSTS})"
            )));
        }
        if !(1280..=65_000).contains(&self.mtu) {
            return Err(LabError::Spec(
                "--mtu must be 1280 to 65000 (IPv6 needs 1280)".into(),
            ));
        }
        self.conditions.validate().map_err(LabError::Spec)
    }
}

/// A host of a lab.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Host {
    /// h1, h2, ...
    pub name: String,
    /// Its network namespace.
    pub netns: String,
    /// Its IPv4 address.
    pub v4: Ipv4Addr,
    /// Its IPv6 address.
    pub v6: Ipv6Addr,
    /// The router's address on this host's link (used when there is a kernel router).
    pub gateway_v4: Ipv4Addr,
    /// The router's IPv6 address on this host's link.
    pub gateway_v6: Ipv6Addr,
}

/// A lab as recorded on disk.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Lab {
    /// What was asked.
    pub spec: LabSpec,
    /// Its index among the labs up, which picks its addresses.
    pub index: u8,
    /// The backend in use.
    pub backend: Backend,
    /// Its hosts.
    pub hosts: Vec<Host>,
    /// Router namespace, when there is one.
    pub router: Option<String>,
    /// The emulator's process, when the emulator is the backend.
    pub emulator: Option<ProcessId>,
    /// Why this backend was chosen, in words.
    pub backend_reason: String,
    /// What the kernel offered when the lab came up.
    pub kernel: Option<KernelSupportRecord>,
}

/// What the kernel offered a lab, as recorded.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct KernelSupportRecord {
    /// The netem qdisc.
    pub netem: bool,
    /// The TBF qdisc.
    pub tbf: bool,
    /// The HTB qdisc.
    pub htb: bool,
    /// TUN devices.
    pub tun: bool,
}

impl From<KernelSupport> for KernelSupportRecord {
    fn from(k: KernelSupport) -> Self {
        KernelSupportRecord {
            netem: k.netem,
            tbf: k.tbf,
            htb: k.htb,
            tun: k.tun,
        }
    }
}

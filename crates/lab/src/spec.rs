//! What a lab is made of, as asked for and as recorded on disk: the data
//! that building it ([`crate::topology`]) and running it ([`crate::lifecycle`])
//! both read.

use std::collections::BTreeMap;
use std::net::{Ipv4Addr, Ipv6Addr};

use serde::{Deserialize, Serialize};

use crate::conditions::{Backend, BackendChoice, Conditions};
use crate::detect::KernelSupport;
use crate::state::ProcessId;
use crate::{LabError, SpecError};
use linerate_emulator::fabric::{FabricSpec, MAX_FABRIC_HOSTS};

/// The most hosts a lab has.
pub const MAX_HOSTS: u8 = 8;
/// The most parallel links a host has.
pub const MAX_LINKS: u8 = 8;

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
    /// Parallel links per host (`--links`), each its own rate and queue.
    #[serde(default = "one_link")]
    pub links: u8,
    /// The bond that joins a host's links (`--bond`), if any.
    #[serde(default)]
    pub bond: Option<BondMode>,
}

fn one_link() -> u8 {
    1
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
            return Err(SpecError::Name(self.name.clone()).into());
        }
        if let Some(f) = &self.fabric {
            f.validate().map_err(SpecError::from)?;
            if self.hosts != f.topology.hosts() {
                return Err(SpecError::HostsForTopology {
                    hosts: self.hosts,
                    topology: f.topology.as_str(),
                    needs: f.topology.hosts(),
                }
                .into());
            }
            if self.conditions.needs_emulation() || self.conditions.rate_bps.is_some() {
                return Err(SpecError::WanOnFabric.into());
            }
        } else if !(2..=MAX_HOSTS).contains(&self.hosts) {
            return Err(SpecError::Hosts {
                most: MAX_HOSTS,
                most_fabric: MAX_FABRIC_HOSTS,
            }
            .into());
        }
        validate_links(self)?;
        if !(1280..=65_000).contains(&self.mtu) {
            return Err(SpecError::Mtu.into());
        }
        self.conditions.validate()
    }
}

/// Whether a spec's links and bond can be built.
fn validate_links(spec: &LabSpec) -> Result<(), LabError> {
    if !(1..=MAX_LINKS).contains(&spec.links) {
        return Err(SpecError::Links(MAX_LINKS).into());
    }
    if spec.links > 1 && spec.fabric.is_some() {
        return Err(SpecError::LinksOnFabric.into());
    }
    if spec.bond.is_some() && spec.links < 2 {
        return Err(SpecError::BondOfOne.into());
    }
    if spec.links > 1 && !spec.router && spec.hosts > 2 {
        return Err(SpecError::LinksWithoutRouter.into());
    }
    Ok(())
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
    /// Each of its links, when it has more than one (`--links`): their
    /// devices and addresses. Then `v4` and `v6` are the first link's, or
    /// the bond's where the links are bonded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub links: Vec<LinkAddr>,
}

/// One of a host's parallel links.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LinkAddr {
    /// Its number, 1 to `--links`, as `lab set --link` names it.
    pub link: u8,
    /// Its device in the host's namespace (link1, link2, ...).
    pub device: String,
    /// Its IPv4 address.
    pub v4: Ipv4Addr,
    /// Its IPv6 address.
    pub v6: Ipv6Addr,
    /// The router's (or the peer's) IPv4 address on this link.
    pub gateway_v4: Ipv4Addr,
    /// The router's (or the peer's) IPv6 address on this link.
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
    /// How the bond is made, when the links are bonded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bond: Option<BondRecord>,
    /// Conditions of single links that `lab set --link` changed, by link
    /// number; every other link has the lab's.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub link_conditions: BTreeMap<u8, Conditions>,
    /// Conditions of the router's link into one host that `lab set
    /// --host` changed, by host name; every other host's link has the
    /// lab's.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub host_conditions: BTreeMap<String, Conditions>,
}

impl Lab {
    /// The conditions of the router's link into `host`.
    pub fn conditions_into(&self, host: &str) -> &Conditions {
        self.host_conditions
            .get(host)
            .unwrap_or(&self.spec.conditions)
    }
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
    /// The bonding driver.
    #[serde(default)]
    pub bonding: bool,
}

impl From<KernelSupport> for KernelSupportRecord {
    fn from(k: KernelSupport) -> Self {
        KernelSupportRecord {
            netem: k.netem,
            tbf: k.tbf,
            htb: k.htb,
            tun: k.tun,
            bonding: k.bonding,
        }
    }
}

/// How a host's links are bonded (`--bond`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BondMode {
    /// One logical link that hashes each flow to a member by layer 3+4, as
    /// an LACP (802.3ad) bond with `xmit_hash_policy=layer3+4` does.
    Lacp,
}

/// What makes a lab's bond.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BondMaker {
    /// The kernel's bonding driver, mode 802.3ad.
    Driver,
    /// Multipath routes hashed by layer 3+4 at every end.
    Hash,
}

/// How a lab's bond was made, and why, in words.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct BondRecord {
    /// What makes it.
    pub made_by: BondMaker,
    /// Why, in words.
    pub reason: String,
}

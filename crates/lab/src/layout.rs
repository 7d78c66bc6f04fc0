//! What a lab is made of, as asked for and as recorded on disk: the data
//! that building it ([`crate::topology`]) and running it ([`crate::lab`])
//! both read.

use std::net::{Ipv4Addr, Ipv6Addr};

use serde::{Deserialize, Serialize};

use crate::LabError;
use crate::conditions::{Backend, BackendChoice, Conditions};
use crate::detect::KernelSupport;
use crate::state::ProcessId;

pub const MAX_HOSTS: u8 = 8;

/// What the user asked for.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LabSpec {
    pub name: String,
    pub hosts: u8,
    pub router: bool,
    pub mtu: u32,
    pub backend: BackendChoice,
    pub conditions: Conditions,
}

impl LabSpec {
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
        if !(2..=MAX_HOSTS).contains(&self.hosts) {
            return Err(LabError::Spec(format!("--hosts must be 2 to {MAX_HOSTS}")));
        }
        if !(1280..=65_000).contains(&self.mtu) {
            return Err(LabError::Spec(
                "--mtu must be 1280 to 65000 (IPv6 needs 1280)".into(),
            ));
        }
        self.conditions.validate().map_err(LabError::Spec)
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Host {
    /// h1, h2, ...
    pub name: String,
    pub netns: String,
    pub v4: Ipv4Addr,
    pub v6: Ipv6Addr,
    /// The router's address on this host's link (used when there is a kernel router).
    pub gateway_v4: Ipv4Addr,
    pub gateway_v6: Ipv6Addr,
}

/// A lab as recorded on disk.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Lab {
    pub spec: LabSpec,
    pub index: u8,
    pub backend: Backend,
    pub hosts: Vec<Host>,
    /// Router namespace, when there is one.
    pub router: Option<String>,
    pub emulator: Option<ProcessId>,
    /// Why this backend was chosen, in words.
    pub backend_reason: String,
    pub kernel: Option<KernelSupportRecord>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct KernelSupportRecord {
    pub netem: bool,
    pub tbf: bool,
    pub htb: bool,
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
